"""The device part of one code-switching round of the hiding PCS (upstream ``HidingWhirPcs``, eprint 2026/391
section 9), as a backend runs it in one step (``Backend.code_switch``): what the host fixes before it
(``CodeSwitchPlan``) and what it leaves (``CodeSwitchTrace``).

In transcript order, from the host challenger's state:
  commit the interleaved encoding of the residual f (2^m EF entries) with the plan's ``fresh`` randomness rows
  (``Backend.interleave_columns(f, fresh, log_folding, rows)`` then ``Backend.commit(.., log_folding,
  log_height)``) and observe its root; observe ``mask_root``;
  per OOD sample: z = a sampled EF challenge, a = sum_b f[b] z^b, answer = a + z^(2^m) sum_i mask_message[i] z^i,
  observe the answer;
  a proof-of-work witness when ``pow_bits`` > 0; one sample dropped; the query indices
  (``protocol.query_indices.distinct_query_indices(challenger, domain_size, folding, num_queries)``); the source
  commitment's rows and pruned multiproof at them; the combination challenge (a sampled EF element).
EF values are (4,) Montgomery words.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CodeSwitchPlan:
    """fresh (t 2^log_folding, 4) EF rows; rows: entries per column of the interleaved table; log_height: the new
    oracle's; mask_root (8,); mask_message (M, 4); ood_samples, pow_bits; domain_size, folding, num_queries: the
    source commitment's query draw."""

    fresh: np.ndarray
    log_folding: int
    rows: int
    log_height: int
    mask_root: np.ndarray
    mask_message: np.ndarray
    ood_samples: int
    pow_bits: int
    domain_size: int
    folding: int
    num_queries: int


@dataclass
class CodeSwitchTrace:
    """commitment: the new oracle (a backend ``Commitment``, its root a host (8,) array); zs, evaluations (a per
    sample), answers: (s, 4); witness (0 without proof of work); indices (q,) int64 ascending; rows and siblings:
    the source's openings as ``open_rows`` gives them host-valued; combination (4,)."""

    commitment: object
    zs: np.ndarray
    evaluations: np.ndarray
    answers: np.ndarray
    witness: int
    indices: np.ndarray
    rows: np.ndarray
    siblings: np.ndarray
    combination: np.ndarray
