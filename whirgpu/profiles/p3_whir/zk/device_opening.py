"""The hiding PCS's proof in ONE device session on a GPU backend (``DeviceOpening``), recorded once per shape and
replayed: commitment, statement, every masked sumcheck batch, every code switch, the base case, with the
transcript on the device and the field steps between its ops as ``EfAlgebra`` ops (``device_run.OpeningRun``);
the proof region read back once.

Contract: ``DeviceOpening(backend, config, field).prove(polynomial, points, rng, canonical)`` -> (``MerkleCap``,
``ZkWhirProof``) equal to ``prover.zk_prove``'s byte for byte, ``rng`` left where that leaves it; or None, with
``rng`` left there too, where the device run met what it leaves to the step-by-step prover
(``backend_prover.ZkBackendProver``'s other path, which the caller then runs from a clone of the generator taken
before): a proof-of-work search that found no witness in its range (odds below e^-32), an eps challenge of 0 or an
OOD point with 1 + z^(2^j) = 0 (odds about 2^-100 each). ``canonical``: the polynomial's words are canonical
(converted and range-checked on the device; a word >= P raises ``non_canonical``'s error). Called under
``P3_WHIR_LAYOUT(field, "prefix")`` and the backend's proof lock (the caller's).

Record and replay (as ``backends/gpu/replay.py`` does for the plain proof, with its ``Recorder``,
``LaunchProgram`` and region sets): per backend and shape (the configuration, the number of points, canonical or
not, the backend's limits) the first proof runs unrecorded (it fills the kernel and twiddle caches), the second is
recorded, and from the third on a proof is the recording's program run again: each of its writes takes the new
proof's input of that name (``device_inputs.DeviceInputs``: the polynomial, the points, the two forks' keys; the
algebra's staged constants rebuilt segment by segment), its launches replayed; each session's proof region is
read once and resolved by the recorded run (the first session's while the device runs the second, after the host
absorbed the blinded vectors in a compiled call). The second session's submissions are encoded while the device runs
the first (``PreparedProgram.prime``), so that after the host's absorb it is only written and sent; so is the next
proof's first session, on a spare region set (``LaunchProgram.prime_spare``), so that the next replay's device work
starts once its inputs are written. A proof is not replayed while a pooled buffer of the program is held elsewhere
(it then runs unrecorded).

What stays on the host: forking the generator (two keys, ``device_inputs``) and absorbing the blinded vectors.
Every mask is drawn on the device from the keys (``device_draws``), every oracle built, committed and opened
there.
"""

from __future__ import annotations

import time
import weakref
from collections import OrderedDict

import numpy as np

from ....backends.base import non_canonical
from ....backends.device_transcript import NOT_FOUND
from ....backends.device_values import POW_MAX_COUNTERS, STATE_WORDS
from ....backends.gpu.algebra import DeviceAlgebra
from ....backends.gpu.geometry import EF_BYTES
from ....backends.gpu.replay import MAX_PROGRAMS, RECORD_AFTER, LaunchProgram, Recorder
from ....backends.gpu.transcript import (
    challenger_words,
    copy_challenger,
    from_host_challenger,
    load_challenger,
)
from ....errors import ProverBusy
from ....field import Field
from ....native.permute import HostWorker, search_helpers
from .config import ZkWhirConfig
from .device_draws import KEY_SLOT, commitment_samples, opening_layout
from .device_inputs import DeviceInputs
from .device_reads import DIGEST
from .device_run import OpeningRun, log2
from .host_draws import HostDraws, PendingDraws
from .prover import zk_challenger


class _Programs:
    """One backend's recorded hiding proofs: (``LaunchProgram``, the recorded ``OpeningRun``) by shape key, least
    recently used first, and how often each key was seen."""

    def __init__(self):
        self.kept: OrderedDict = OrderedDict()
        self.seen: dict = {}

    def close(self, pool) -> None:
        """Drop every kept program (their free region sets back to ``pool``)."""
        for kept in self.kept.values():
            for program in kept[:2]:
                program.close(pool)
        self.kept.clear()
        self.seen.clear()


_PROGRAMS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# The most proof-of-work bits the host searches for the second session (2^12 candidates expected: well under a
# millisecond on one core with the compiled search, where the device's search and draws cost a session's kernels)
HOST_GRIND_BITS = 12
# How long the absorb's worker thread spins for its call (``HostWorker``) when started as the words arrive, just
# before the call's arguments are made (some 0.1-0.2 ms of Python): this only bounds a proof that fails between
WORKER_SPIN_SECONDS = 0.005
# A replay on a GPU whose last wait for its first session's words (from the end of the host's work beside it) was at
# most this starts the worker as that wait begins: its thread's start and its core's wake-up are then off the
# proof's path. Longer waits (a slow device) and CPU devices (lavapipe, msl-cpu: the spin would take a core the
# device computes on) start it at the words.
EARLY_WORKER_MAX_WAIT = 0.02
# How long such an early worker spins at most: its call normally comes within the wait (it is cancelled at once when
# the proof fails first), so this only bounds a stray one; a wait's length varies (a garbage collection, a busy host)
EARLY_WORKER_SPIN_SECONDS = 0.1


def recorded_programs(backend) -> _Programs:
    """``backend``'s recorded hiding proofs (made on first use; dropped by ``backend.close()``)."""
    programs = _PROGRAMS.get(backend)
    if programs is None:
        programs = _PROGRAMS[backend] = _Programs()
        owner, pool = weakref.ref(backend), backend.state.pool

        def drop():  # the backend's programs go: these too, and a later proof starts afresh
            programs.close(pool)
            if owner() is not None and _PROGRAMS.get(owner()) is programs:
                del _PROGRAMS[owner()]

        backend.replay.on_close.append(drop)
    return programs


class DeviceOpening:
    def __init__(self, backend, config: ZkWhirConfig, field: Field):
        self.backend, self.config, self.field = backend, config, field
        self._config_key = repr(config)  # the shape key's part that does not change between proofs
        self._cpu_device = None  # _on_cpu's answer

    @staticmethod
    def supported(backend, config: ZkWhirConfig) -> bool:
        """Whether ``backend`` runs this configuration's proof as one session: a GPU backend with pruned openings
        in the running layout, whose bindings hold every randomness block an interleaved encoding reads and every
        mask oracle's coefficient matrix, and whose buffers hold the base case's coefficients whole."""
        state = getattr(backend, "state", None)
        if state is None or not hasattr(backend, "masked") or state.layout.openings != "pruned":
            return False
        rounds = len(config.inner.round_parameters)
        blocks = [4 * (config.oracle_randomness[0] << config.fold(0))]
        blocks += [16 * (config.oracle_randomness[r + 1] << config.fold(r + 1)) for r in range(rounds)]
        pow2 = lambda n: 1 << (int(n) - 1).bit_length()  # noqa: E731
        # the mask oracles' coefficient matrices (Commitments.commit_matrix: one binding each)
        blocks += [EF_BYTES * config.sumcheck_mask.domain_size * pow2(config.fold(r)) for r in range(rounds + 1)]
        blocks += [EF_BYTES * g.shape.domain_size * pow2(g.width) for g in config.mask_groups()]
        message_len, randomness_len, _ = config.source_code()
        return max(blocks) <= state.window_limit and EF_BYTES * pow2(message_len + randomness_len) <= \
            state.buffer_limit and all(config.fold(r) > 0 for r in range(rounds + 1))

    # -- the proof --------------------------------------------------------------------------------------------
    def prove(self, polynomial, points, rng, canonical: bool = False):
        config, field, backend = self.config, self.field, self.backend
        n = config.num_variables
        polynomial = np.ascontiguousarray(polynomial, np.uint32)
        if polynomial.shape != (1 << n,):
            raise ValueError(f"commit: expected 2^{n} evaluations, got shape {polynomial.shape}")
        points = np.asarray(points, np.uint32).reshape(-1, n, 4)
        inputs = DeviceInputs.draw(config, field, polynomial, points, rng)
        state = backend.state
        key = (self._config_key, field.name, bool(canonical), len(points), state.binding_limit, state.buffer_limit,
               state.storage, self.host_draws)  # the draws' place: part of the recording
        replays = backend.replay
        if not replays.replayable():
            return self._run(inputs, canonical, None)
        programs = recorded_programs(backend)
        kept = programs.kept.get(key)
        free_now = state.pool.free_ids() if kept is not None else None
        if kept is not None and all(program.buffers_free(state.pool, free_now) for program in kept[:2]):
            programs.kept.move_to_end(key)
            return self._replay(*kept, inputs)
        seen = programs.seen.get(key, 0)
        programs.seen[key] = seen + 1
        return self._run(inputs, canonical, key if seen >= RECORD_AFTER and kept is None else None)

    def _run(self, inputs: DeviceInputs, canonical: bool, record_key):
        """The proof as two sessions (``device_run``), each recorded under ``record_key`` (None: not recorded)."""
        backend, state = self.backend, self.backend.state
        n = self.config.num_variables
        sizes = self._sizes(inputs.points.size // (4 * n))
        if not state.building.acquire(blocking=False):
            raise ProverBusy(f"a proof is already being built on this {state.rt.name} backend")
        programs = []
        try:
            first, run = self._session(sizes, record_key,
                                       lambda session: self._record(session, inputs, canonical, sizes[3]),
                                       lambda run: run.held)
            programs.append(first[1])
            drawn = self._second_inputs(run, first[0])
            second, _ = self._session(sizes, record_key,
                                      lambda session: self._record_queries(session, run, drawn),
                                      lambda run: run.held_queries)
            programs.append(second[1])
        finally:
            state.building.release()
        backend.memory.check_canonical(first[2])
        if record_key is not None and all(p is not None for p in programs):
            self._keep(record_key, (programs[0], programs[1], run))
        return run.resolve(first[0], second[0], drawn)

    def _record(self, session, inputs: DeviceInputs, canonical: bool, arena: int) -> OpeningRun:
        state = self.backend.state
        from_host_challenger(state, session, zk_challenger(self.config, self.field))
        run = OpeningRun(self.backend, self.config, self.field, session, DeviceAlgebra(state, session, self.field,
                                                                                     arena), inputs)
        run.record(canonical)
        run.final_state = copy_challenger(state, session)
        run.draws_on_host = self.host_draws
        return run

    def _record_queries(self, session, run: OpeningRun, drawn: HostDraws) -> OpeningRun:
        if ("challenger",) in drawn.inputs:  # the draws made on the device, from the host's challenger
            self.backend.state.drivers.write(session.regions.scratch.buffer, drawn.inputs[("challenger",)],
                                             session.regions.state.offset, source=("challenger",))
            run.record_queries(session)
        else:
            run.record_queries(session, drawn)
        return run

    @property
    def host_draws(self) -> bool:
        """Whether the second session's proof of work and positions are found on the host (then the session only
        opens): where its search is short (``HOST_GRIND_BITS``). Not whether the compiled search is loaded yet:
        a shape's recording must not change with that (without it the numpy search takes some milliseconds)."""
        return self.config.final_pow_bits <= HOST_GRIND_BITS

    def _on_cpu(self) -> bool:
        """Whether the backend's device is the host's CPU (asked once)."""
        if self._cpu_device is None:
            self._cpu_device = self.backend.state.rt.limits().device_type == "CPU"
        return self._cpu_device

    def _worker_wanted(self, run: OpeningRun) -> bool:
        """Whether the second session's inputs are one compiled call a ``HostWorker`` can make (``_second_inputs``)."""
        return run.draws_on_host and self.config.final_pow_bits > 0

    def _pending_draws(self, run: OpeningRun) -> "PendingDraws | None":
        """The second session's draws as one compiled call made ready (``PendingDraws``) for a worker, before the
        first session's words are back; None where ``_second_inputs`` will not hand them to one."""
        if not self._worker_wanted(run):
            return None
        blinded = run.blinded_words
        nwords = blinded.stop - blinded.start if isinstance(blinded, slice) else blinded.size
        return PendingDraws.prepare(self.config, self._host_challenger(run), nwords, self._align_words(),
                                    run.prune_keys)

    def _host_challenger(self, run: OpeningRun):
        """The host's challenger at the proof's start (its domain separator absorbed): one made per recording."""
        if run.host_challenger is None:
            run.host_challenger = zk_challenger(self.config, self.field)
        return run.host_challenger

    def _align_words(self) -> int:
        return max(1, int(self.backend.state.rt.offset_alignment) // 4)

    def _second_inputs(self, run: OpeningRun, words: np.ndarray, meanwhile=None, worker=None,
                       pending: "PendingDraws | None" = None) -> HostDraws:
        """The host challenger after the first session and the blinded vectors (read back there; one compiled
        absorb), then the second session's named inputs: the witness and positions drawn from it (``host_draws``),
        else its words as the device challenger's ("challenger",). ``meanwhile()``: host work run once, while a
        worker thread (``HostWorker``: ``worker`` when given, started earlier, else one started here) makes the
        compiled absorb, search and draws where it can; ``worker`` is used up either way. ``pending``
        (``_pending_draws``, made earlier): that call's buffers, used where the device's challenger left no input
        buffer (then no host challenger is built here)."""
        if meanwhile is None or not self._worker_wanted(run):
            if worker is not None:
                worker.finish()
            worker = None
        elif worker is None:  # started first: its thread is spinning by the time the call's arguments are ready
            worker = HostWorker.start(WORKER_SPIN_SECONDS, search_helpers())
        device_challenger = run.final_state.read(words)
        if pending is not None and meanwhile is not None and int(device_challenger[16]) == 0:
            if isinstance(run.blinded_words, slice):
                pending.words[:] = words[run.blinded_words]
            else:
                np.take(words, run.blinded_words, out=pending.words)
            return pending.draw(device_challenger[:16], meanwhile, worker)
        challenger = self._host_challenger(run).clone()
        load_challenger(challenger, device_challenger)
        # one absorb of them all: observing words in order does not depend on how the calls split them
        if run.draws_on_host:
            return HostDraws.draw(self.config, challenger, words[run.blinded_words], self._align_words(), meanwhile,
                                  worker, run.prune_keys)
        if meanwhile is not None:
            meanwhile()
        challenger.observe_many(words[run.blinded_words])
        return HostDraws.device(challenger_words(challenger.sponge_state, challenger.input_buffer,
                                                 len(challenger.output_buffer)))

    def _session(self, sizes: tuple, record_key, body, release):
        """One session of ``sizes`` (proof, scratch, points words; the arena), ``body(session)`` recording into it,
        ``release(what body returned)`` back to the pool once it is submitted (before its program is made, which
        then checks their storage free to replay): ((its proof words, its ``LaunchProgram`` or None, the
        session), what ``body`` returned)."""
        state = self.backend.state
        proof_words, scratch_words, points_words, _ = sizes
        align = max(EF_BYTES, int(state.rt.offset_alignment))
        session = state.open_session(4 * proof_words + 4 * align, 4 * (STATE_WORDS + scratch_words + 1) + 8 * align,
                                     max(EF_BYTES, 4 * points_words), state.transcript_variant)
        session.recorder = Recorder(record_key) if record_key is not None else None
        state.session = session
        try:
            out = body(session)
            session.submit()
        except BaseException:
            state.session = None
            session.recorder = None
            state.finish_session(session, read=False)
            raise
        state.session = None
        self.backend.release(*release(out))  # submitted: no host write reaches their storage before the work
        state.free_submitted(session)
        recorder, session.recorder = session.recorder, None
        program = None
        if recorder is not None and recorder.valid:
            program = LaunchProgram(recorder, session, state.layout, None, state.pool, [])
            first_set = program.adopt_recorded_regions(state)
        session.words = state.finish_session(session, keep_regions=program is not None)
        if program is not None:
            program.release(state.pool, first_set)
        return (session.words, program, session), out

    def _keep(self, key, kept: tuple) -> None:
        programs = recorded_programs(self.backend)
        programs.kept[key] = kept
        while len(programs.kept) > MAX_PROGRAMS:
            dropped = programs.kept.popitem(last=False)[1]
            for program in dropped[:2]:
                program.close(self.backend.state.pool)

    def _replay(self, first: LaunchProgram, second: LaunchProgram, run: OpeningRun, inputs: DeviceInputs):
        """The recorded sessions run again with ``inputs``."""
        state = self.backend.state

        def words_of(source):
            if source[0] == "algebra":
                return DeviceAlgebra.assemble(run.alg.blocks[source[1]], inputs.words)
            return inputs.words(source)

        if not state.building.acquire(blocking=False):
            raise ProverBusy(f"a proof is already being built on this {state.rt.name} backend")
        try:
            second_set = second.region_set(state)

            early, pending = [], []

            def ahead():  # while the device runs the first session: the second's encoding, then the next proof's first
                second_set.prepared.prime()
                first.prime_spare(state)
                pending.append(self._pending_draws(run))  # and the draws' call, all but its words
                wait = run.first_wait
                early.append(time.perf_counter())  # then the absorb's worker, spinning as the words come back
                if self._worker_wanted(run) and 0 < wait <= EARLY_WORKER_MAX_WAIT and not self._on_cpu():
                    early.append(HostWorker.start(EARLY_WORKER_SPIN_SECONDS, search_helpers()))

            parts = []
            try:  # the second session encoded while the device runs the first: then only written and sent
                words = self._run_program(first, words_of, ahead)
                if early:
                    run.first_wait = time.perf_counter() - early[0]
                # the first session's part resolved here while a spinning worker thread absorbs the blinded vectors
                # and draws (a Python worker cost 0.1-0.4 ms a hand-off on the H200's host, and waited for the
                # interpreter lock besides)
                drawn = self._second_inputs(run, words, lambda: parts.append(run.resolve_first(words)),
                                            early[1] if len(early) > 1 else None, pending[0] if pending else None)
            except BaseException:
                second.release(state.pool, second_set)
                raise
            # the second session's words gathered by the plan made while it runs, from the staging memory itself
            # where the runtime maps it (not the whole region copied first)
            query_words = self._run_program(second, lambda source: drawn.inputs[source] if source in drawn.inputs
                                            else words_of(source), lambda: parts.append(run.pruning(drawn)),
                                            second_set, lambda view: run.second_words(view, parts[1:]))
            first_part, pruning = parts
        finally:
            state.building.release()
        self.backend.replay.replays += 1
        for check, _, what in first.checks:
            index = int(check.read(words)[0])
            if index != NOT_FOUND:
                raise non_canonical(index, int(inputs.polynomial[index]), what, prime=self.field.P)
        return None if first_part is None else run.resolve_queries(first_part, query_words, drawn, pruning,
                                                                    gathered=pruning is not None)

    def _run_program(self, program: LaunchProgram, words_of, meanwhile=None, region_set=None, pick=None):
        """One recorded session executed with the inputs ``words_of`` gives: its proof region's words, or
        ``pick(them)`` (``Runtime.read_later``'s: a read-only view valid during the call). ``meanwhile()``: host
        work done once the session is submitted, before its words are waited for. ``region_set``: the program's
        region set to run on (one it handed out; default: a free one), released after."""
        state = self.backend.state
        region_set = program.region_set(state) if region_set is None else region_set
        try:
            region_set.prepared.run(lambda w: w.data if w.source is None else words_of(w.source))
            state.stats.copied += program.copied
            # the readback asked for now, behind the session: its copy (the program's last launch where the runtime
            # stages reads) and map are done as the device finishes, not asked for then (a round trip of its own,
            # some 0.15-0.3 ms on wgpu)
            words = region_set.read_later(state)
            try:
                if meanwhile is not None:
                    meanwhile()
            finally:  # collected even when meanwhile raised: the set's staging is unmapped before it runs again
                collected = words(pick)
            return collected
        finally:
            program.release(state.pool, region_set)

    def _sizes(self, statements: int) -> tuple[int, int, int, int]:
        """Upper bounds of the session's proof, scratch and points words and of the algebra's arena (twice what
        the proof's values take, and an aligned slot for every value)."""
        config, n = self.config, self.config.num_variables
        inner = config.inner
        slot = self.backend.state.alignment() // 4
        ell, mask_q = config.sumcheck_mask.message_len, config.mask_queries
        w = max(ell, 3) - 1
        takes = 66 + 2 * statements  # the two keys' slots (device_draws) among them
        data = 4 * statements * (n + 2) + 2 * KEY_SLOT
        # the draws: both streams in the arena
        scratch_takes, arena, points, m = 64, 4096 + commitment_samples(config) + 4 * opening_layout(config).total, \
            statements * n * 4, n
        for r in range(len(inner.round_parameters) + 1):
            k = config.fold(r)
            takes += 8 + 4 * k
            data += 16 + k * (12 + 4 * w)
            arena += k * 12 * (w + ell + 4) + 4 * (1 << k) + 64
            scratch_takes += 3 * k + 8
            m -= k
            if r == len(inner.round_parameters):
                break
            params = inner.round_parameters[r]
            s, q, t = params.ood_samples, params.num_queries, config.oracle_randomness[r]
            depth = log2(params.domain_size) + 1
            takes += 3 * s + 16
            data += 4 * s + 16 + q * ((4 << k) + DIGEST * depth + 2)
            arena += 4 * ((t << k) + 2 * q * (t + m + 8) + s * (4 * m + t + s + 16) + 4 * (t + s)
                          + 2 * config.switch_masks[r].randomness_len + q * (1 << k) + 256)
            scratch_takes += s + 16
            points += 8 * s * (m + k + 1)
        message_len, randomness_len, domain_size = config.source_code()
        groups = config.mask_groups()
        lens = sum(g.width * (g.shape.message_len + g.shape.randomness_len) for g in groups)
        final_depth = log2(domain_size) + 1
        widest = max((4 << config.fold(r)) for r in range(len(inner.round_parameters) + 1))
        takes += 16 + 4 * sum(g.width for g in groups) + 4 * len(groups)
        data += (4 * (message_len + randomness_len + lens) + 64
                 + 2 * config.final_queries * (widest + 4 + DIGEST * (final_depth + 8) + 2)
                 + len(groups) * mask_q * (4 * max(g.width for g in groups) + DIGEST * 16 + 2))
        arena += 4 * (4 * (1 << m) + 2 * (message_len + randomness_len) + 3 * lens + 256)
        scratch_takes += 2 * len(groups) + 8
        queries = sum(p.num_queries for p in inner.round_parameters) + config.final_queries + len(groups) * mask_q
        arena *= 2
        proof_words = 2 * (takes * slot + data)
        scratch_words = arena + 2 * (scratch_takes * slot + 5 * queries + POW_MAX_COUNTERS) + STATE_WORDS
        return proof_words, scratch_words, points + 64, arena
