"""The prover of stacked multi-table commitments in the p3-whir profile: upstream Plonky3 5dc50e51's
``MultilinearPcs::commit`` + ``open`` (points from the transcript) and ``PrescribedPointPcs::open_at`` (the
caller's points) on ``WhirProver<..., L>`` with ``L`` = ``SuffixProver`` (layout "suffix", ``Witness::new``) or
``PrefixProver`` (layout "prefix", ``Witness::new_interleaved``), byte for byte.

Contract: ``prove_tables(config, field, backend, columns, protocol, layout, points=None) -> TablesProved``.
- ``config``: the ``P3WhirConfig`` of the *stacked* arity (``plan_layout(protocol, config.fold(0),
  layout).num_variables``; a ``ConfigError`` otherwise): upstream's domain separator binds that arity and the WHIR
  parameters only, not the shapes, the schedule or the layout.
- ``columns``: one array per table, in table order, of shape (columns, 2^log_rows): column c's values in row order
  (upstream's ``Table``: one matrix row per column), **canonical** words of ``field``.
- ``protocol``: a ``TablesProtocol`` (shapes and batches, ``shapes``); ``layout``: "suffix" or "prefix".
- ``points``: None (each batch's point drawn from the transcript: z sampled, ``expand_from_univariate(z, m)``), or
  one (m_b, 4) **Montgomery** array per batch in protocol order (m_b = the committed arity of the batch's table);
  prescribed points are not observed (upstream's ``open_at``: the caller binds them), their values are.
- Returns ``TablesProved``: ``commitment`` (``MerkleCap``), ``proof`` (``PcsProof``, ``evals[b]`` = batch b's
  current then next values), ``points`` (one (m_b, 4) Montgomery array per batch), ``stacked`` (the
  ``StackedLayout``).

Transcript (both layouts): domain separator, root, initial OOD answers of the stacked polynomial, then per batch
in protocol order {its point; observe its current values; observe its next values}, alpha, then the WHIR rounds
(prefix: x_0 bound first, [h(0), c_inf] messages, codewords of 2^k contiguous column blocks; suffix: as the
single-column profile). Alpha's powers batch the claims in placement order (``claims``).

Runs on backends that say ``proves_tables`` (the cpu backend; a ``ConfigError`` names the backend otherwise):
their proof values are host arrays, so the stacking and the claims are evaluated on the host from the columns.
Doing both on the device (one launch per batch), ``add_next_weights`` there, and a [h(0), c_inf] prefix-order
sumcheck kernel variant (the prefix layout's rounds) are the GPU backends' next step (issue 38 item 2); the rest
(commit, eq / OOD / select weights, suffix rounds, openings, transcript) is the backends' existing primitives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....backends.base import Backend
from ....errors import ConfigError
from ....field import Field
from ....ref.field_np import field_ops
from ...p3_whir.config import P3WhirConfig
from ...p3_whir.proof import MerkleCap, OpeningEvals, PcsProof
from ...p3_whir.prover import P3WhirProver
from ....protocol.prover import PolynomialSource
from .claims import evaluate_batch, stacked_claims
from .shapes import TablesProtocol
from .stacking import StackedLayout, plan_layout


@dataclass(frozen=True)
class TablesProved:
    """What ``prove_tables`` returns (module contract)."""

    commitment: MerkleCap
    proof: PcsProof
    points: tuple[np.ndarray, ...]
    stacked: StackedLayout


def check_columns(columns, protocol: TablesProtocol, field: Field) -> list[np.ndarray]:
    """Each table's (columns, 2^log_rows) canonical words as a uint32 array, checked (``ConfigError``)."""
    columns = list(columns)
    if len(columns) != len(protocol.shapes):
        raise ConfigError(f"expected one column array per table ({len(protocol.shapes)}), got {len(columns)}")
    out = []
    for t, (array, shape) in enumerate(zip(columns, protocol.shapes)):
        array = np.asarray(array)
        expected = (shape.columns, 1 << shape.log_rows)
        if array.shape != expected:
            raise ConfigError(f"table {t} ({shape}): expected column values of shape {expected}, got {array.shape}")
        if array.dtype.kind not in "ui" or (array.size and (array.min() < 0 or array.max() >= field.P)):
            raise ConfigError(f"table {t}: column values must be canonical field elements below p = {field.P}")
        out.append(np.ascontiguousarray(array, dtype=np.uint32))
    return out


def check_points(points, protocol: TablesProtocol, fold: int, field: Field) -> tuple[np.ndarray, ...]:
    """Prescribed points: one (m_b, 4) array of Montgomery words per batch, checked (``ConfigError``)."""
    arities = protocol.batch_log_rows(fold)
    points = list(points)
    if len(points) != len(arities):
        raise ConfigError(f"expected one prescribed point per opening batch ({len(arities)}), got {len(points)}")
    out = []
    for b, (point, m) in enumerate(zip(points, arities)):
        point = np.asarray(point)
        if point.shape != (m, 4):
            raise ConfigError(f"batch {b}: a prescribed point of shape ({m}, 4) is needed, got {point.shape}")
        if point.dtype.kind not in "ui" or (point.size and (point.min() < 0 or point.max() >= field.P)):
            raise ConfigError(f"batch {b}: prescribed point coordinates must be field elements below p = {field.P}")
        out.append(np.ascontiguousarray(point, dtype=np.uint32))
    return tuple(out)


class P3TablesProver(P3WhirProver):
    """Proves stacked multi-table openings under one ``P3WhirConfig`` over ``field`` in one layout (module
    contract). The hooks it overrides: ``_statement`` (per batch: point, claims observed), ``_initial_weights``
    (eq and next-row weights in placement order, then the OOD claims), ``_opening_evals`` / ``_opened_points``
    (per-batch evals, the batch points), ``_replay_key`` (no replays yet), ``variable_order`` (the layout's)."""

    def __init__(self, config: P3WhirConfig, field: Field, backend: Backend, protocol: TablesProtocol, layout: str):
        if not getattr(backend, "proves_tables", False):
            raise ConfigError(f"the {getattr(backend, 'name', type(backend).__name__)} backend does not prove stacked "
                              f"tables yet (stacking and claim evaluation on the device are the next step); use "
                              f"backend='cpu'")
        super().__init__(config, field, backend)
        self.protocol = protocol
        self.stacked = plan_layout(protocol, config.fold(0), layout)
        self.variable_order = layout
        if self.stacked.num_variables != config.num_variables:
            raise ConfigError(f"the tables stack into 2^{self.stacked.num_variables} values; the configuration is "
                              f"for num_variables = {config.num_variables}")
        self._columns: list[np.ndarray] = []
        self._prescribed: tuple[np.ndarray, ...] | None = None
        self._batch_points: list = []

    def prove_tables(self, columns, points=None) -> TablesProved:
        """See the module contract."""
        ops = field_ops(self.field)
        canonical = check_columns(columns, self.protocol, self.field)
        self._prescribed = None if points is None else check_points(points, self.protocol, self.config.fold(0),
                                                                     self.field)
        padded = []
        for array, m in zip(canonical, self.stacked.table_log_rows):
            table = np.zeros((array.shape[0], 1 << m), np.uint32)
            table[:, :array.shape[1]] = ops.to_monty(array)
            padded.append(table)
        self._columns = padded
        words = self.stacked.stack(padded)
        n = self.config.num_variables
        (commitment, proof, points_out), _ = self._prove_retrying(PolynomialSource(words, canonical=False),
                                                                  np.zeros((0, n, 4), np.uint32), None)
        return TablesProved(commitment, proof, points_out, self.stacked)

    # -- hooks ---------------------------------------------------------------------------------------------------
    def _replay_key(self, polynomial, points, values):
        return None  # a replay would need the schedule and the layout in its key: not recorded yet

    def _statement(self, transcript, table, statement_points, claims):
        """Per batch in protocol order: its point (drawn and expanded, or prescribed), its current values, then its
        next values, observed; the claims are returned in that order."""
        backend = self.backend
        points, values = [], []
        with self.timer.phase("claims"):
            for b, batch in enumerate(self.protocol.batches):
                m = self.stacked.table_log_rows[batch.table]
                if self._prescribed is None:
                    point = backend.expand_point(transcript.sample_ef(), m)
                else:
                    point = self._prescribed[b]
                current, following = evaluate_batch(self._columns[batch.table], batch.current, batch.next,
                                                    np.asarray(point, np.uint32), self.field)
                if len(current):
                    transcript.observe(current)
                if len(following):
                    transcript.observe(following)
                points.append(point)
                values.extend(current)
                values.extend(following)
        self._batch_points = points
        return statement_points, values

    def _initial_weights(self, statement_points, ood_points: list, alpha):
        """Alpha's powers: the claims in placement order (eq weights at lifted points, next-row weights), then the
        initial OOD claims."""
        backend = self.backend
        host_points = [np.asarray(p, np.uint32) for p in self._batch_points]
        claims = stacked_claims(self.stacked, self.protocol, host_points, self.field)
        t = len(ood_points)
        coefficients = backend.challenge_powers(alpha, claims.n_claims + t)
        weights = backend.eq_weights(claims.eq_points, coefficients[claims.eq_powers])
        if len(claims.next_powers):
            weights = backend.add_next_weights(weights, claims.next_points, claims.next_windows,
                                               coefficients[claims.next_powers])
        if not t:
            return weights
        return backend.add_constraint_weights(weights, backend.concat_points(ood_points),
                                              coefficients[claims.n_claims:], np.zeros(0, np.uint32),
                                              np.zeros((0, 4), np.uint32))

    def _opening_evals(self, claimed: np.ndarray) -> tuple[OpeningEvals, ...]:
        evals, at = [], 0
        for batch in self.protocol.batches:
            c, d = len(batch.current), len(batch.next)
            evals.append(OpeningEvals(claimed[at:at + c].reshape(-1, 4), claimed[at + c:at + c + d].reshape(-1, 4)))
            at += c + d
        return tuple(evals)

    def _opened_points(self, commitment, whir, claimed, read):
        return tuple(np.asarray(read(p), np.uint32).reshape(-1, 4) for p in self._batch_points)


def prove_tables(config: P3WhirConfig, field: Field, backend: Backend, columns, protocol: TablesProtocol,
                 layout: str = "suffix", points=None) -> TablesProved:
    """Commit to ``columns`` stacked in ``layout`` and open them as ``protocol`` says (module contract)."""
    return P3TablesProver(config, field, backend, protocol, layout).prove_tables(columns, points)
