"""``GpuBackend``: the ``Backend`` interface on a GPU ``Runtime``, composed of parts that each own one job over one
shared, explicitly owned ``DeviceState`` (the pool, the runtime wrapper, limits, the running proof's session and
recording): ``memory`` (tables), ``commitments``, ``reductions`` (sumcheck and weights), ``tables`` (stacked
tables' claims), ``replays`` (record once, replay) and ``proofs`` (a proof's lifetime and transcript scalars)."""

from __future__ import annotations

import numpy as np

from ...runtime.base import Runtime
from ..base import Backend, DeviceBuffer, DeviceLimits, StorageMode, TableLayout, TransferStats, resolve_storage
from .code_switch import CodeSwitch
from .commit import Commitments
from .device_memory import DeviceMemory
from .masked_rounds import MaskedRounds
from .query_openings import QueryOpenings
from .replay import Replays
from .state import DeviceState
from .sumcheck import Reductions
from .tables import TableClaims
from .transcript import Proofs


class GpuBackend(Backend):
    """WHIR primitives on a GPU ``Runtime`` (wgpu, Metal, msl-cpu). ``profile=True`` waits at each sub-phase
    boundary (ntt / merkle, and each primitive of a proof) so host timers attribute time correctly, at the cost
    of one round trip each. ``storage``: the storage policy (hybrid, shared, private; None: ``WHIRGPU_STORAGE``,
    else hybrid). ``pow_full_range``: proof-of-work searches encode launches over every nonce (the retry after a
    ``PowRangeExceeded``). From the second proof of a shape on, proofs are recorded once and replayed
    (``replays``; ``replay_enabled = False`` turns that off). ``binding_limit`` / ``buffer_limit``: the limits
    tables are laid out for (the device's; tests lower them to cross every seam at small sizes)."""

    proves_tables = True  # stacked tables' claims and weights on the device (``tables``, ``add_next_weights``)

    def __init__(self, runtime: Runtime | None = None, profile: bool = False, storage: str | None = None):
        if runtime is None:
            from ...runtime.wgpu_rt import WgpuRuntime  # noqa: PLC0415 - wgpu is an optional dependency

            runtime = WgpuRuntime()
        self.rt = runtime
        self.name = runtime.name
        self.storage = resolve_storage(storage)
        self.state = DeviceState(runtime, profile, self.storage)
        super().__init__()
        state = self.state
        self.memory = DeviceMemory(state)
        self.commitments = Commitments(state, self.phase)
        self.reductions = Reductions(state, self.memory)
        self.masked = MaskedRounds(state, self.reductions, self.memory)
        self.tables = TableClaims(state, self.memory, self.reductions)
        self.replay = Replays(state, self.memory)
        self.proofs = Proofs(state, self.memory, self.replay)
        self.switch = CodeSwitch(state, self.commitments, self.reductions, self.proofs, self.memory)
        self.queries = QueryOpenings(state, self.commitments)

    def close(self) -> None:
        """Free the pooled buffers, then close the runtime (its device goes with it); idempotent."""
        self.replay.close()  # the programs' region sets return to the pool first
        self.state.close()
        self.rt.close()

    # -- the state the prover and tests set and read -----------------------------------------------------------
    def _state_field(name: str, doc: str):  # noqa: N805 - a property factory used in the class body
        return property(lambda self: getattr(self.state, name), lambda self, v: setattr(self.state, name, v),
                        doc=doc)

    stats: TransferStats = _state_field("stats", "Bytes uploaded, downloaded and copied (the prover resets it).")
    layout: TableLayout = _state_field("layout", "The running proof's layout (``begin_proof`` sets it).")
    profile: bool = _state_field("profile", "Whether each sub-phase is waited for (timing).")
    pow_full_range: bool = _state_field("pow_full_range", "Searches encode launches over every nonce.")
    binding_limit: int = _state_field("binding_limit", "The storage binding size tables are laid out for.")
    buffer_limit: int = _state_field("buffer_limit", "The buffer size tables are laid out for.")
    del _state_field

    @property
    def pool_bytes(self) -> int:
        """Bytes of every buffer the pool created: it frees none before close, so this is its high-water mark
        (what the device planner's ``MemoryPlan.pool_bytes`` plans)."""
        return self.state.pool.pool_bytes

    @property
    def replays(self) -> int:
        """Proofs replayed so far."""
        return self.replay.replays

    @property
    def replay_enabled(self) -> bool:
        return self.replay.enabled

    @replay_enabled.setter
    def replay_enabled(self, enabled: bool) -> None:
        self.replay.enabled = enabled

    @property
    def last_program(self):
        """The ``LaunchProgram`` the last recorded or replayed proof ran, or None."""
        return self.replay.last_program

    @property
    def transcript_variant(self):
        return self.state.transcript_variant

    @property
    def overlaps_proofs(self) -> bool:
        return self.proofs.overlaps_proofs

    @property
    def device(self):
        """The WebGPU device tables for ``device_table`` must be created on (wgpu and dawn runtimes), else None."""
        return self.memory.device

    def limits(self) -> DeviceLimits:
        return self.state.limits

    def mode_for(self, host_facing: bool) -> StorageMode:
        """The mode this backend's policy gives a buffer the host writes or reads (True) or an intermediate."""
        return self.state.pool.mode_for(host_facing)

    def sync(self) -> None:
        self.state.sync()

    # -- the Backend interface, by part (each part's method states its contract) ----------------------------------
    def upload(self, array: np.ndarray, mode: StorageMode = StorageMode.SHARED) -> DeviceBuffer:
        return self.memory.upload(array, mode)

    def upload_canonical(self, source):
        return self.memory.upload_canonical(source)

    def device_table(self, buffer, n_words: int, what: str = "evaluations"):
        return self.memory.device_table(buffer, n_words, what)

    def download(self, buffer: DeviceBuffer) -> np.ndarray:
        return self.memory.download(buffer)

    def release(self, *items) -> None:
        self.memory.release(*items)

    def storage_of(self, item) -> list:
        return self.memory.storage_of(item)

    def residency(self, *items) -> tuple:
        return self.memory.residency(*items)

    def commit(self, table, log_folding: int, log_height: int):
        return self.commitments.commit(table, log_folding, log_height)

    def interleave_columns(self, table, randomness, log_folding: int, rows: int):
        out = self.commitments.interleave_columns(table, randomness, log_folding, rows)
        return Backend.interleave_columns(self, table, randomness, log_folding, rows) if out is None else out

    def open_rows(self, commitment, indices, capacity: int | None = None):
        return self.commitments.open_rows(commitment, indices, capacity)

    def evaluate(self, table, point):
        return self.reductions.evaluate(table, point)

    def code_switch(self, table, source, challenger, plan):
        return self.switch.run(table, source, challenger, plan)

    def masked_rounds(self, table, weights, challenger, plan):
        return self.masked.run(table, weights, challenger, plan)

    def query_openings(self, challenger, pow_bits: int, domain_size: int, folding: int, num_queries: int,
                       commitments: list):
        return self.queries.run(challenger, pow_bits, domain_size, folding, num_queries, commitments)

    def evaluate_points(self, table, points):
        return self.reductions.evaluate_points(table, points)

    def univariate(self, table, z):
        return self.reductions.univariate(table, z)

    def sumcheck_round(self, table, weights):
        return self.reductions.sumcheck_round(table, weights)

    def sumcheck_rounds(self, table, weights, transcript, rounds: int):
        return self.reductions.sumcheck_rounds(table, weights, transcript, rounds)

    def fold(self, table, weights, r):
        return self.reductions.fold(table, weights, r)

    def fold_and_sum(self, table, weights, r):
        return self.reductions.fold_and_sum(table, weights, r)

    def eq_weights(self, points, coefficients):
        return self.reductions.eq_weights(points, coefficients)

    def add_constraint_weights(self, weights, eq_points, eq_coefficients, select_vars, select_coefficients,
                               select_capacity=None):
        return self.reductions.add_constraint_weights(weights, eq_points, eq_coefficients, select_vars,
                                                      select_coefficients, select_capacity)

    def add_next_weights(self, weights, points, windows, coefficients):
        return self.reductions.add_next_weights(weights, points, windows, coefficients)

    def stack_columns(self, num_variables: int, tables):
        return self.tables.stack_columns(num_variables, tables)

    def evaluate_columns(self, table, point, columns):
        return self.tables.evaluate_columns(table, point, columns)

    def column_weights(self, num_variables: int, batches, coefficients):
        return self.tables.column_weights(num_variables, batches, coefficients)

    def adopt_root(self, commitment, root):
        return self.tables.adopt_root(commitment, root)

    def begin_proof(self, shape, transcript, statement_points, variant=None):
        return self.proofs.begin_proof(shape, transcript, statement_points, variant)

    def end_proof(self, resolve, outputs=()):
        return self.proofs.end_proof(resolve, outputs)

    def end_proof_deferred(self, resolve):
        return self.proofs.end_proof_deferred(resolve)

    def abort_proof(self) -> None:
        self.proofs.abort_proof()

    def record_proof(self, key) -> None:
        self.replay.record_proof(key)

    def replay_proof(self, key, words, points, deferred: bool, inputs: dict | None = None, prover=None):
        return self.replay.replay_proof(key, words, points, deferred, inputs, prover)

    def instances_for(self, key, wanted: int) -> int:
        return self.replay.instances_for(key, wanted)

    def replay_many(self, key, items: list, prover=None):
        return self.replay.replay_many(key, items, prover)

    def drop_batches(self) -> None:
        self.replay.drop_batches()

    def expand_point(self, z, num_variables: int):
        return self.proofs.expand_point(z, num_variables)

    def concat_points(self, points: list):
        return self.proofs.concat_points(points)

    def challenge_powers(self, x, n: int, queries=None):
        return self.proofs.challenge_powers(x, n, queries)

    def domain_points(self, queries, log_folded_domain: int):
        return self.proofs.domain_points(queries, log_folded_domain)

    def final_poly(self, table):
        return self.proofs.final_poly(table)

    def grind(self, challenger, bits: int) -> np.uint32:
        return self.proofs.grind(challenger, bits)
