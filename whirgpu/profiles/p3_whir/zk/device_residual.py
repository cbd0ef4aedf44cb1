"""The hiding prover's residual sumcheck state on a ``Backend`` (``DeviceResidual``), and the eq form of an EF
point's powers (``power_point``), which lets the backend's eq primitives add the weights x^b.

``DeviceResidual`` has ``sumcheck.ResidualSumcheck``'s interface (``claim``, ``ops``, ``field``,
``round_coefficients``, ``fold``, ``scale``), so ``sumcheck.prove_batch`` runs on it unchanged, over backend tables
in the p3-whir prefix layout (``P3_WHIR_LAYOUT(field, "prefix")``, set on the backend by the caller):
- ``evals``: the residual f, a backend table of 2^m entries (base before the first fold, EF after);
- ``weights``: a backend EF table W_dev with the true weights w = ``factor`` * W_dev (``factor`` an EF scalar on the
  host). ``scale(eps)`` multiplies ``factor`` and the claim by eps and touches no table; everything the backend
  computes from W_dev (round sums, folds) is linear in it, so c0 and c_inf are the backend's times ``factor``,
  exactly (field arithmetic). Adding a term t to w adds t / factor to W_dev. (A zero eps zeroes the weights: a new
  zero table and ``factor`` 1.)
- ``claim``: S = <f, w> (host EF, (4,)), kept by the same formulas as the reference.
A fold of a table of 4 entries or more also sums the folded tables' round (``Backend.fold_and_sum``: one GPU
session for both), and the next ``round_coefficients`` of those same tables takes those sums.

Contract of the additions: ``add_switch_weights(ood_points, ood_coefficients, query_points, query_coefficients)``
adds, at every index b < 2^m, sum_z c_z z^b (EF points z, in eq form when ``power_point`` gives one, else on the
host) + sum_x c_x x^b (base points x, the backend's select weights) to w; the claim is the caller's
(``accumulate_claim``). ``univariate(z)`` = sum_b f[b] z^b for an EF point z (``Backend.univariate``: on the GPU
the evaluation kernel's powers mode at z's expansion, for every z). ``host_weights()`` downloads w (2^m, 4).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ....backends.base import Backend
from ....field import Field
from ....ref.field_np import field_ops
from .sumcheck import extrapolate


def power_point(ops, z: np.ndarray, num_variables: int):
    """(point (m, 4), scale (4,)) with scale * eq(b, point) = z^b for every b < 2^m (point[0] <-> b's most
    significant bit), or None when 1 + z^(2^j) = 0 for some j < m (no such eq form exists then).

    With y_t = z^(2^(m-1-t)): z^b = prod_t y_t^(b_t), and y^(b_t) = (1 + y) * (b_t p + (1 - b_t)(1 - p)) for
    p = y / (1 + y)."""
    z = np.asarray(z, np.uint32).reshape(4)
    one = ops.ef_from_base(ops.ONE)
    squares = [z]
    for _ in range(num_variables - 1):
        squares.append(ops.ef_square(squares[-1]))
    ys = np.array(squares[::-1][:num_variables], np.uint32).reshape(num_variables, 4)  # y_0 = z^(2^(m-1)) ... y_{m-1} = z
    denominators = ops.ef_add(one, ys)
    if not np.all(np.any(denominators, axis=1)):
        return None
    point = ops.ef_mul(ys, ops.ef_inv(denominators))  # one vectorised inversion for all m factors
    scale = one
    for denominator in denominators:
        scale = ops.ef_mul(scale, denominator)
    return point, scale


class DeviceResidual:
    def __init__(self, backend: Backend, evals, weights, claim: np.ndarray, field: Field):
        self.backend, self.evals, self.weights, self.field = backend, evals, weights, field
        self.claim = np.asarray(claim, np.uint32)
        self.ops = field_ops(field)
        self.factor = self.ops.ef_from_base(self.ops.ONE)
        self._sums = None  # (evals, weights, raw sums): the next round's, summed by the last fold
        self._host = None  # (evals, weights, (host evals, host weights)): what the last batch read back

    @property
    def num_variables(self) -> int:
        return int(self.evals.shape[0]).bit_length() - 1

    def round_coefficients(self) -> tuple[np.ndarray, np.ndarray]:
        sums, self._sums = self._sums, None
        if sums is not None and sums[0] is self.evals and sums[1] is self.weights:
            h = sums[2]
        else:
            h = self.backend.sumcheck_round(self.evals, self.weights)
        h = np.asarray(h, np.uint32).reshape(2, 4)
        return self.ops.ef_mul(h[0], self.factor), self.ops.ef_mul(h[1], self.factor)

    def masked_rounds(self, plan, challenger):
        """A batch's rounds in one backend step (``Backend.masked_rounds``) where the backend has it: the trace,
        with the tables folded and the claim kept as ``fold`` keeps it; None to leave them to the host loop."""
        # The backend takes the host challenger itself (the prover may hand a wrapper that grinds on the backend).
        host = getattr(challenger, "challenger", challenger)
        scaled = replace(plan, e=self.ops.ef_mul(plan.e, self.factor))  # the backend's sums are W_dev's
        out = self.backend.masked_rounds(self.evals, self.weights, host, scaled)
        if out is None:
            return None
        evals, weights, trace = out
        self._host = None if trace.tables is None else (evals, weights, trace.tables)
        for (c0, c_inf), gamma in zip(trace.sums, trace.gammas):
            c0, c_inf = self.ops.ef_mul(c0, self.factor), self.ops.ef_mul(c_inf, self.factor)
            self.claim = extrapolate(self.ops, c0, self.ops.ef_sub(self.claim, c0), c_inf, gamma)
        self.backend.release(self.evals, self.weights)
        self.evals, self.weights, self._sums = evals, weights, None
        return trace

    def fold(self, c0: np.ndarray, c_inf: np.ndarray, gamma: np.ndarray) -> None:
        self.claim = extrapolate(self.ops, c0, self.ops.ef_sub(self.claim, c0), c_inf, gamma)
        old = (self.evals, self.weights)
        gamma = np.asarray(gamma, np.uint32)
        if self.evals.shape[0] >= 4:  # the folded tables have a round: sum it in the same step
            self.evals, self.weights, sums = self.backend.fold_and_sum(self.evals, self.weights, gamma)
            self._sums = (self.evals, self.weights, sums)
        else:
            self.evals, self.weights = self.backend.fold(self.evals, self.weights, gamma)
        self.backend.release(*old)

    def scale(self, factor: np.ndarray) -> None:
        ops = self.ops
        self.claim = ops.ef_mul(self.claim, factor)
        self.factor = ops.ef_mul(self.factor, factor)
        if not np.any(self.factor):  # eps = 0: w is zero from now on
            self.backend.release(self.weights)
            self.weights = self.backend.upload(np.zeros((self.evals.shape[0], 4), np.uint32))
            self.factor = ops.ef_from_base(ops.ONE)

    def accumulate_claim(self, delta: np.ndarray) -> None:
        self.claim = self.ops.ef_add(self.claim, delta)

    def add_switch_weights(self, ood_points, ood_coefficients, query_points, query_coefficients) -> None:
        ops, m = self.ops, self.num_variables
        self._sums = None  # a backend may add to the weights in place
        inverse = ops.ef_inv(self.factor)
        eq_points, eq_coefficients, on_host = [], [], []
        for z, coefficient in zip(ood_points, ood_coefficients):
            form = power_point(ops, z, m)
            if form is None:
                on_host.append((z, ops.ef_mul(coefficient, inverse)))
            else:
                eq_points.append(form[0])
                eq_coefficients.append(ops.ef_mul(ops.ef_mul(coefficient, form[1]), inverse))
        select = np.asarray(query_points, np.uint32).reshape(-1)
        select_coefficients = ops.ef_mul(np.asarray(query_coefficients, np.uint32).reshape(-1, 4), inverse)
        self.weights = self.backend.add_constraint_weights(
            self.weights, np.asarray(eq_points, np.uint32).reshape(-1, m, 4),
            np.asarray(eq_coefficients, np.uint32).reshape(-1, 4), select, select_coefficients)
        if on_host:  # 1 + z^(2^j) = 0 (odds about 2^m / |EF|): add those powers on the host
            weights = self.backend.download(self.weights)
            for z, coefficient in on_host:
                weights = ops.ef_add(weights, ops.ef_mul(coefficient, ops.ef_powers(z, 1 << m)))
            self.backend.release(self.weights)
            self.weights = self.backend.upload(weights)

    def univariate(self, z: np.ndarray) -> np.ndarray:
        return self.backend.univariate(self.evals, z)

    def _read(self, which: int):
        """Table ``which`` (0 evals, 1 weights) as the last batch read it back, else downloaded."""
        held = self._host
        if held is not None and held[0] is self.evals and held[1] is self.weights:
            return held[2][which]
        return self.backend.download((self.evals, self.weights)[which])

    def host_evals(self) -> np.ndarray:
        evals = self._read(0)
        return evals if evals.ndim == 2 else self.ops.ef_from_base(evals)

    def host_weights(self) -> np.ndarray:
        return self.ops.ef_mul(self._read(1), self.factor)
