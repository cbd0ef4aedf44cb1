"""The rounds of one masked sumcheck batch of the hiding PCS (upstream ``p3_sumcheck::zk``), as a backend runs
them in one step (``Backend.masked_rounds``): what the host fixes before the rounds (``MaskedRoundsPlan``) and
what the rounds leave (``MaskedRoundsTrace``).

Round j = 0 .. k-1 over the residual tables (f, W) in the running layout (the p3-whir prefix order, [c0, c_inf]
sums), with past_0 = 0 and past_j = past_{j-1} + sum_i masks[j-1][i] gamma_{j-1}^i:
  (c0, c_inf) = the backend's sums of the tables;
  wire_j = templates[j]; wire_j[0] += lives[j] * past_j + e * c0; wire_j[1] += e * c_inf;
  the challenger observes wire_j; if pow_bits, a proof-of-work witness (``Backend.grind``'s); gamma_j = a sampled
  EF challenge; the tables fold by gamma_j.
Everything is EF Montgomery words (4,); ``e`` carries the residual's scale (eps times the weights' factor), so
the sums are the backend's own, unscaled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MaskedRoundsPlan:
    """templates (k, w, 4) with w >= 2; lives (k, 4); e (4,); masks (k, ell, 4); pow_bits >= 0; read_tables: the
    folded tables come back host-valued in the trace as well (``MaskedRoundsTrace.tables``, where the backend
    can), for the batch whose tables the host takes next."""

    templates: np.ndarray
    lives: np.ndarray
    e: np.ndarray
    masks: np.ndarray
    pow_bits: int
    read_tables: bool = False

    @property
    def rounds(self) -> int:
        return int(self.templates.shape[0])

    @property
    def wire_len(self) -> int:
        return int(self.templates.shape[1])


@dataclass(frozen=True)
class MaskedRoundsTrace:
    """sums (k, 2, 4): each round's (c0, c_inf) as the backend summed them; wires (k, w, 4); witnesses (k,)
    uint32 Montgomery (empty when pow_bits is 0); gammas (k, 4); tables: None, or (when the plan asked and the
    backend could) the folded (evals, weights) as host arrays, (2^(m-k), 4) each, the backend's own words."""

    sums: np.ndarray
    wires: np.ndarray
    witnesses: np.ndarray
    gammas: np.ndarray
    tables: tuple | None = None
