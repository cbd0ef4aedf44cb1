"""The prover of stacked multi-table commitments in the p3-whir profile: upstream Plonky3 5dc50e51's
``MultilinearPcs::commit`` + ``open`` (points from the transcript) and ``PrescribedPointPcs::open_at`` (the
caller's points) on ``WhirProver<..., L>`` with ``L`` = ``SuffixProver`` (layout "suffix", ``Witness::new``) or
``PrefixProver`` (layout "prefix", ``Witness::new_interleaved``), byte for byte.

Contract: ``prove_tables(config, field, backend, columns, protocol, layout, points=None) -> TablesProved``.
- ``config``: the ``P3WhirConfig`` of the *stacked* arity (``plan_layout(protocol, config.fold(0),
  layout).num_variables``; a ``ConfigError`` otherwise): upstream's domain separator binds that arity and the WHIR
  parameters only, not the shapes, the schedule or the layout.
- ``columns``: one array per table, in table order, of shape (columns, 2^log_rows): column c's values in row order
  (upstream's ``Table``: one matrix row per column), **canonical** words of ``field``. The methods
  ``P3TablesProver.prove_tables`` / ``commit`` also take ``col_major=False``: each (2^log_rows, columns) row-major,
  as a trace is held, handed to ``Backend.stack_columns`` as it is (no host transpose).
- ``protocol``: a ``TablesProtocol`` (shapes and batches, ``shapes``); ``layout``: "suffix" or "prefix".
- ``points``: None (each batch's point drawn from the transcript: z sampled, ``expand_from_univariate(z, m)``), or
  one (m_b, 4) **Montgomery** array per batch in protocol order (m_b = the committed arity of the batch's table);
  prescribed points are not observed (upstream's ``open_at``: the caller binds them), their values are.
- Returns ``TablesProved``: ``commitment`` (``MerkleCap``), ``proof`` (``PcsProof``, ``evals[b]`` = batch b's
  current then next values), ``points`` (one (m_b, 4) Montgomery array per batch), ``stacked`` (the
  ``StackedLayout``).

A commitment used more than once (upstream's ``WhirProverData``, cloned per opening): ``P3TablesProver.commit(columns)
-> TablesProverData`` stacks, encodes and Merkle-commits once (the prover data holds the stacked table, the
codeword and its tree on the backend, and the checked columns); ``P3TablesProver.open(data, protocol, points=None)
-> TablesProved`` proves one opening of it (``protocol``: any ``TablesProtocol`` of the committed shapes) from a
fresh transcript (domain separator, root observed, initial OOD, then the batches: upstream's challenger after
``commit``), with no upload, encoding or hashing of the initial table: each opening is byte for byte the
``prove_tables`` of the same columns, protocol and points. The held table and commitment are never released by an
opening (``_release``); ``TablesProverData.release()`` gives them back. ``prove_tables`` itself commits inside its
one proof, as before. ``commit`` records the commitment in a proof bracket of its own (``begin_proof`` ..
``end_proof``, which reads the root back), so a backend that proves tables must keep the table, codeword and tree
of that bracket alive after it, take the held root into a later proof (``Backend.adopt_root``: a GPU backend writes
it into that proof's region, which its transcript observes), and not free the held table in a fused
``sumcheck_rounds`` (the cpu and GPU backends do all three: a GPU backend fuses only EF tables' rounds).

Replay (a GPU backend's record-and-replay, ``backends/gpu/replay``): an opening of a held commitment is keyed by
the configuration, the layout, the protocol, whether points are prescribed and the held table's and tree's device
storage (``Backend.residency``), with the held root as the replay's input "root" (``_replay_inputs``); so from its
third opening of a shape on, an opening is its recorded launches replayed, whichever ``P3Tables`` or commitment
asks (a commitment made again in the same pooled buffers replays too), its proof resolved by the asking prover.
``prove_tables`` and ``commit`` are recorded too, keyed by each table's held shape and orientation, the tables'
words their inputs ("stack:T"); ``commit`` hands its outputs to ``end_proof(outputs=)``, so that a replay claims
their storage back (free only once the last commitment of the shape was released). Device tables are not
replayed.

Transcript (both layouts): domain separator, root, initial OOD answers of the stacked polynomial, then per batch
in protocol order {its point; observe its current values; observe its next values}, alpha, then the WHIR rounds
(prefix: x_0 bound first, [h(0), c_inf] messages, codewords of 2^k contiguous column blocks; suffix: as the
single-column profile). Alpha's powers batch the claims in placement order (``claims``).

Runs on backends that say ``proves_tables`` (cpu and the GPU backends; a ``ConfigError`` names the backend
otherwise) through their table primitives, on the device for a GPU backend (issue 38 item 2): ``stack_columns``
(the checked canonical columns placed and converted: one launch per table), per batch ``evaluate_columns`` (its
current and next values from the stacked table: the point's eq table, then one launch pair for all its columns)
and ``column_weights`` (the claims' eq and next-row weights without lifted points: one launch per batch after the
eq table), ``adopt_root`` (a held commitment observed in a later proof); prescribed points travel as the
statement's points (``_statement_points``), drawn ones are replayed on the host from the proof (``_opened_points``).
The rest (commit, OOD weights, rounds in either order, openings, transcript) is the backends' existing primitives.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ....backends.base import Backend, Commitment, DeviceBuffer, DeviceTables, TransferStats
from ....backends.program_key import ProgramKey
from ....errors import ConfigError
from ....field import Field
from ...p3_whir.config import P3WhirConfig
from ...p3_whir.proof import MerkleCap, OpeningEvals, PcsProof
from ...p3_whir.prover import P3WhirProver
from ...p3_whir.verifier import p3_challenger
from ....ref.multilinear import expand_from_univariate
from ....protocol.prover import PolynomialSource
from .claims import claim_terms, column_descriptors
from .shapes import TablesProtocol
from .stacking import StackedLayout, plan_layout


@dataclass
class TablesProverData:
    """What ``P3TablesProver.commit`` returns (module contract): ``commitment`` (the ``MerkleCap``), ``stacked``
    (the ``StackedLayout``), ``shapes`` (the committed ``TableShape``s), and on ``backend`` the stacked ``table``
    and its ``committed`` codeword and tree, ``columns`` each table's canonical words as checked (the claims are
    evaluated from the stacked table). Bound to the prover that made it (``config``, ``field``,
    ``backend``); ``release()`` frees the backend's copies (an opening after it is a ``ConfigError``)."""

    commitment: MerkleCap
    stacked: StackedLayout
    shapes: tuple
    config: P3WhirConfig
    field: Field
    backend: Backend
    table: DeviceBuffer | None
    committed: Commitment | None
    columns: list

    @property
    def released(self) -> bool:
        return self.table is None

    def release(self) -> None:
        """Give the table, codeword and tree back to the backend; idempotent."""
        if self.table is not None:
            table, committed = self.table, self.committed
            self.table = self.committed = None
            self.backend.release(table, committed)


@dataclass(frozen=True)
class TablesProved:
    """What ``prove_tables`` returns (module contract). ``points`` drawn from the transcript are replayed on the host
    from the proof on first use (as ``P3Proved.points``): a caller that never asks pays nothing for them.
    ``point_source``: the points, or a callable returning them."""

    commitment: MerkleCap
    proof: PcsProof
    point_source: Any
    stacked: StackedLayout

    @functools.cached_property
    def points(self) -> tuple[np.ndarray, ...]:
        return self.point_source() if callable(self.point_source) else self.point_source


def check_columns(columns, protocol: TablesProtocol, field: Field, col_major: bool = True) -> list[np.ndarray]:
    """Each table's words as a C-contiguous uint32 array, its shape checked (``ConfigError``): (columns,
    2^log_rows), or with ``col_major=False`` (2^log_rows, columns) row-major, as the user holds a trace (kept as
    it is: no transposed copy; a C-contiguous uint32 array is not copied at all). Values are checked canonical by
    ``Backend.stack_columns`` (uint32: on the device for a GPU backend) or here (other integer types)."""
    columns = list(columns)
    if len(columns) != len(protocol.shapes):
        raise ConfigError(f"expected one column array per table ({len(protocol.shapes)}), got {len(columns)}")
    out = []
    for t, (array, shape) in enumerate(zip(columns, protocol.shapes)):
        expected = (shape.columns, 1 << shape.log_rows)
        expected = expected if col_major else expected[::-1]
        if isinstance(array, DeviceTables):  # on the device: checked there (``Backend.stack_columns``)
            if array.shape != expected:
                raise ConfigError(f"table {t} ({shape}): expected a device table of shape {expected}, got "
                                  f"{array.shape}")
            out.append(array)
            continue
        array = np.asarray(array)
        if array.shape != expected:
            raise ConfigError(f"table {t} ({shape}): expected column values of shape {expected}, got {array.shape}")
        # uint32 words are range-checked where they are stacked (``Backend.stack_columns``: one read of the table);
        # other integer types are narrowed here, so checked first
        if array.dtype.kind not in "ui" or (array.dtype != np.uint32 and array.size and
                                            (array.min() < 0 or array.max() >= field.P)):
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
    (per-batch evals, the batch points), ``_replay_key`` / ``_replay_inputs`` (an opening of a held commitment is
    replayed), ``variable_order`` (the layout's)."""

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
        self._held: TablesProverData | None = None  # the commitment ``open`` proves from
        self._pending: list | None = None  # the tables ``prove_tables`` / ``commit`` stack (``_stack``)

    def prove_tables(self, columns, points=None, col_major: bool = True) -> TablesProved:
        """See the module contract; ``col_major=False``: each table (rows, columns) row-major (``check_columns``)."""
        self._prescribed = None if points is None else check_points(points, self.protocol, self.config.fold(0),
                                                                     self.field)
        self._pending = self._stack(columns, col_major)
        try:
            (commitment, proof, points_out), _ = self.prove_retrying(PolynomialSource(None, canonical=False),
                                                                     self._statement_points(), None)
        finally:
            self._pending = None
        return TablesProved(commitment, proof, points_out, self.stacked)

    def commit(self, columns, col_major: bool = True) -> TablesProverData:
        """Stack, encode and Merkle-commit ``columns`` once (module contract; ``col_major`` as ``prove_tables``);
        the batches of this prover's protocol play no part."""
        backend, n = self.backend, self.config.num_variables
        self._pending = self._stack(columns, col_major)
        no_points = np.zeros((0, n, 4), np.uint32)
        with backend.proof_lock:
            self.stats = backend.stats = TransferStats()
            try:
                key = self._commit_key()
                made = None if key is None else backend.replay_proof(key, None, no_points, False,
                                                                     self._replay_inputs(), self)
                if made is None:
                    made = self._commit_recorded(key, no_points)
                root, table, committed = made
            finally:
                self._pending = None
        return TablesProverData(MerkleCap(root), self.stacked, self.protocol.shapes, self.config, self.field, backend,
                                table, committed, self._columns)

    def _commit_key(self):
        """What fixes every launch of ``commit``: the configuration, the layout and the shapes, each table's held
        shape and orientation (host uint32 arrays only: device tables are not replayed)."""
        held = self._held_shapes()
        return None if held is None else ProgramKey(type(self), self.config, 0, field=self.field.name,
                                                    stacked=self.stacked, protocol=self.protocol.shapes,
                                                    held_inputs=held, phase="commit")

    def _held_shapes(self):
        """Each pending table's shape and orientation, or None when one is a device table (not replayed)."""
        if not self._pending or not all(isinstance(entry[0], np.ndarray) for entry in self._pending):
            return None
        return tuple((entry[0].shape, entry[4]) for entry in self._pending)

    def _commit_recorded(self, key, no_points):
        """``commit``'s proof bracket, recorded under ``key`` when the backend asks: (root (1, 8), the stacked
        table, the commitment). A replay claims the same storage again and gets new objects over it from
        ``resolve`` (``Backend.end_proof(outputs=)``)."""
        backend = self.backend
        backend.record_proof(key)
        _, statement = backend.begin_proof(self._shape(0), self.new_transcript(), no_points)
        try:
            table, committed, _ = self._commit_table(PolynomialSource(None, canonical=False), statement, False)
            root_value = committed.root
            kept = (table.handle, table.shape, table.mode, committed.height, committed.width, committed.is_ext,
                    committed.handle)

            def resolve(read, prover=None):
                root = np.asarray(read(root_value), np.uint32).reshape(1, 8)
                if prover is None:  # this proof
                    return root, table, committed
                handle, shape, mode, height, width, is_ext, tree = kept  # a replay: the same storage, claimed again
                return root, DeviceBuffer(handle, shape, mode), Commitment(root.reshape(8), height, width, is_ext,
                                                                           handle=tree)

            return backend.end_proof(resolve, outputs=(table, committed))
        except BaseException:
            backend.abort_proof()
            raise

    def open(self, data: TablesProverData, protocol: TablesProtocol | None = None, points=None) -> TablesProved:
        """One opening of ``data`` (this prover's ``commit``) as ``protocol`` says (default: this prover's), points
        drawn or prescribed as ``prove_tables`` takes them (module contract)."""
        protocol = self.protocol if protocol is None else protocol
        if not isinstance(data, TablesProverData):
            raise ConfigError(f"expected the TablesProverData of commit(), got {type(data).__name__}")
        if data.backend is not self.backend or data.config != self.config or data.field is not self.field or \
                data.stacked != self.stacked:
            raise ConfigError("this prover data was committed under another configuration, layout or backend")
        if data.released:
            raise ConfigError("this prover data was released; commit again")
        if not isinstance(protocol, TablesProtocol) or protocol.shapes != data.shapes:
            raise ConfigError("an opening's protocol must have the committed table shapes "
                              f"({','.join(map(str, data.shapes))})")
        prescribed = None if points is None else check_points(points, protocol, self.config.fold(0), self.field)
        with self.backend.proof_lock:  # the state below is this opening's until it is proved
            saved = self.protocol
            self.protocol, self._prescribed, self._columns, self._held = protocol, prescribed, data.columns, data
            try:
                (commitment, proof, points_out), _ = self.prove_retrying(PolynomialSource(None, canonical=False),
                                                                         self._statement_points(), None)
            finally:
                self.protocol, self._held = saved, None
        return TablesProved(commitment, proof, points_out, self.stacked)

    def _stack(self, columns, col_major: bool = True) -> list:
        """The ``Backend.stack_columns`` tables of checked ``columns`` (canonical, column-major or with
        ``col_major=False`` row-major, as held: the backend reads either, in placement order); keeps them."""
        canonical = check_columns(columns, self.protocol, self.field, col_major)
        self._columns = canonical
        prefix = self.stacked.layout == "prefix"
        return [(canonical[p.table], p.first_slot, p.log_rows, prefix, bool(col_major), f"table {p.table}")
                for p in self.stacked.placements]

    def _statement_points(self) -> np.ndarray:
        """The prescribed points as the proof's statement points (b, n, 4): batch b's (m_b, 4) in row b's first
        m_b coordinates, so that a backend holds them where it holds a statement (``_statement`` slices them);
        (0, n, 4) when the points are drawn."""
        n = self.config.num_variables
        if self._prescribed is None:
            return np.zeros((0, n, 4), np.uint32)
        packed = np.zeros((len(self._prescribed), n, 4), np.uint32)
        for b, point in enumerate(self._prescribed):
            packed[b, :len(point)] = point
        return packed

    # -- hooks ---------------------------------------------------------------------------------------------------
    def _shape(self, n_points: int):
        """Room for every batch's point and every claim (the backend's regions are sized by the shape)."""
        # + one proof slot per table's range check (each a point's 4 words: room for its 1)
        checks = len(self._pending or ())
        return super()._shape(max(n_points, len(self.protocol.batches), self.protocol.n_claims) + checks)

    def _commit_table(self, polynomial, statement_points, evaluate_claims):
        """The columns stacked by the backend (``Backend.stack_columns``) and committed; or the held commitment,
        when ``open`` runs: no upload, no encoding, no hashing."""
        if self._held is None:
            config, backend = self.config, self.backend
            n, k0 = config.num_variables, config.fold(0)
            with self.timer.phase("upload"):
                table = backend.stack_columns(n, self._pending)
            return table, backend.commit(table, k0, n + config.starting_log_inv_rate - k0), None
        root = self._held.commitment.roots[0]
        return self._held.table, self.backend.adopt_root(self._held.committed, root), None

    def _release(self, *items) -> None:
        """Everything but the held table and commitment."""
        held = () if self._held is None else (self._held.table, self._held.committed)
        super()._release(*(item for item in items if not any(item is h for h in held)))

    def _replay_key(self, polynomial, points, values):
        """What fixes every launch of a tables proof: the configuration, the layout, the protocol (shapes and
        batches), whether points are prescribed, and then for an opening of a held commitment (``open``) the
        device storage of the held table and tree (``Backend.residency``: a later commitment made in the same
        pooled buffers replays the same launches), for a proof that stacks its columns (``prove_tables``) each
        table's held shape and orientation (host uint32 arrays only: device tables are not replayed)."""
        if values is not None:
            return None
        key = ProgramKey(type(self), self.config, int(points.shape[0]), field=self.field.name, stacked=self.stacked,
                         protocol=self.protocol, prescribed=self._prescribed is not None)
        if self._held is not None:
            return key.with_fields(residency=self.backend.residency(self._held.table, self._held.committed))
        held = self._held_shapes()
        return None if held is None else key.with_fields(held_inputs=held)

    def _replay_inputs(self) -> dict | None:
        """The held commitment's root (the recording's ``adopt_root`` write), or each stacked table's words in
        the order given to ``Backend.stack_columns`` ("stack:T")."""
        if self._held is not None:
            return {"root": np.asarray(self._held.commitment.roots[0], np.uint32)}
        return {f"stack:{t}": entry[0].reshape(-1) for t, entry in enumerate(self._pending or ())}

    def _statement(self, transcript, table, statement_points, claims):
        """Per batch in protocol order: its point (drawn and expanded, or prescribed), its current values, then its
        next values (evaluated by the backend from the stacked table, one call per batch), observed; the claims are
        returned in that order."""
        backend = self.backend
        points, values = [], []
        with self.timer.phase("claims"):
            for b, batch in enumerate(self.protocol.batches):
                m = self.stacked.table_log_rows[batch.table]
                if self._prescribed is None:
                    point = backend.expand_point(transcript.sample_ef(), m)
                else:
                    point = statement_points[b][:m]
                answers = backend.evaluate_columns(table, point, column_descriptors(self.stacked, batch.table,
                                                                                    batch.current, batch.next))
                c = len(batch.current)
                if c:
                    transcript.observe(answers[:c])
                if len(batch.next):
                    transcript.observe(answers[c:])
                points.append(point)
                values.extend(answers[i] for i in range(batch.n_claims))
        self._batch_points = points
        return statement_points, values

    def _initial_weights(self, statement_points, ood_points: list, alpha):
        """Alpha's powers: the claims in placement order (``claim_terms``: eq and next-row weights, built per batch
        by ``Backend.column_weights``), then the initial OOD claims."""
        backend = self.backend
        n_claims, t = self.protocol.n_claims, len(ood_points)
        coefficients = backend.challenge_powers(alpha, n_claims + t)
        power = {(term.batch, term.next, term.position): term.power for term in claim_terms(self.stacked,
                                                                                              self.protocol)}
        batches = []
        for b, batch in enumerate(self.protocol.batches):
            columns = column_descriptors(self.stacked, batch.table, batch.current, batch.next)
            powers = [power[(b, False, j)] for j in range(len(batch.current))]
            powers += [power[(b, True, j)] for j in range(len(batch.next))]
            batches.append((self._batch_points[b], np.hstack([columns, np.asarray(powers, np.int64)[:, None]])))
        weights = backend.column_weights(self.config.num_variables, batches, coefficients)
        if not t:
            return weights
        return backend.add_constraint_weights(weights, backend.concat_points(ood_points),
                                              coefficients[n_claims:], np.zeros(0, np.uint32),
                                              np.zeros((0, 4), np.uint32))

    def _opening_evals(self, claimed: np.ndarray) -> tuple[OpeningEvals, ...]:
        evals, at = [], 0
        for batch in self.protocol.batches:
            c, d = len(batch.current), len(batch.next)
            evals.append(OpeningEvals(claimed[at:at + c].reshape(-1, 4), claimed[at + c:at + c + d].reshape(-1, 4)))
            at += c + d
        return tuple(evals)

    def _opened_points(self, commitment, whir, claimed, read):
        """The batches' points: the prescribed ones, or those the transcript drew, replayed on the host from the
        proof's own values (root, initial OOD answers, claims: what the verifier draws them from), so that no
        backend reads its points region back."""
        if self._prescribed is not None:
            return tuple(self._prescribed)
        protocol = self.protocol  # the opening's: the prover's protocol is restored when the opening returns
        return lambda: self._replay_batch_points(protocol, commitment, whir, claimed)

    def _replay_batch_points(self, protocol: TablesProtocol, commitment, whir, claimed) -> tuple[np.ndarray, ...]:
        challenger = p3_challenger(self.config, self.field)
        challenger.observe_many(commitment.roots[0])
        for answer in whir.initial_ood_answers:
            challenger.sample_ef()
            challenger.observe_many(answer)
        points, at = [], 0
        claimed = np.asarray(claimed, np.uint32).reshape(-1, 4)
        for batch in protocol.batches:
            m = self.stacked.table_log_rows[batch.table]
            points.append(expand_from_univariate(challenger.sample_ef(), m, self.field))
            challenger.observe_many(claimed[at:at + batch.n_claims])
            at += batch.n_claims
        return tuple(np.asarray(p, np.uint32).reshape(-1, 4) for p in points)


def prove_tables(config: P3WhirConfig, field: Field, backend: Backend, columns, protocol: TablesProtocol,
                 layout: str = "suffix", points=None) -> TablesProved:
    """Commit to ``columns`` stacked in ``layout`` and open them as ``protocol`` says (module contract)."""
    return P3TablesProver(config, field, backend, protocol, layout).prove_tables(columns, points)
