"""Record once, replay: every proof of one shape makes the same launches on the same pooled buffers with the same
params, so the GPU backend records one proof's launch list and replays it for the later proofs of that shape.

A *recording* captures, in order, everything the host sends the device between ``begin_proof`` and the proof's last
submission, as a ``runtime.program.Program`` of typed steps: the host's writes (the challenger, the statement's
points, the table: the last two are marked as the proof's inputs), the dispatches and copies of the session's
batch, and where it was submitted. The first proof of a shape runs unrecorded (it fills the kernel, twiddle and
bind-group caches, so its writes to them are not the proof's); the second is recorded; from the third on, a proof
is the recording replayed: the program executed again (``PreparedProgram.run``): its writes (the inputs replaced by
the new proof's), then each submission's launches as the runtime's ``recorded_batch`` (on wgpu and Dawn: pipelines
and bind groups resolved once, params in a uniform buffer of the recording's own), then the proof region read back
and turned into the proof by the recorded proof's own ``resolve``, which reads fixed offsets of that region.

What makes it sound: the shape key (a ``backends.program_key.ProgramKey``: the prover's, with the backend's
limits, search range and storage) fixes every launch; the transcript, challenges, queries and PoW live on the device, so no launch depends on a
value the host would read; a recording that sees a host read, or launches from another batch, is dropped.
Buffers are shared with the pool as in unrecorded proofs (work on one queue runs in order), except the three
per-proof regions: a replay owns a *region set* (proof, scratch, points buffers) until it is collected, so
proofs in flight each read back their own. A region set's launches are the recording's with its buffers put
in place of the recording's. A proof is not replayed (it runs as recorded proofs do) while any pooled buffer its
launches use is held elsewhere, e.g. by a commitment a host-valued primitive returned. A proof whose outputs its
caller keeps (``end_proof(outputs=)``: a stacked table and its commitment) keeps their storage as ``held``: it
is replayed only when that storage is free in the pool again, and a replay claims it back before anything else
is allocated (and frees it again if it fails); the recorded ``resolve(read, prover)`` then returns new objects
over it. Inputs besides the table and the points: ``replay_proof(..., inputs=)`` by name ("root", "stack:T").
At most ``MAX_PROGRAMS`` shapes are kept (least recently used dropped).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from ...errors import ProverBusy
from ...runtime import program as launch_program
from ...runtime.base import RtBuffer
from ...runtime.program import Copy, PreparedProgram, Program, Submit, Write
from ..base import PowRangeExceeded, non_canonical
from ..device_transcript import NOT_FOUND
from ..device_values import resolve_value
from ..program_key import ProgramKey
from . import instanced
from .pool import DevicePool

MAX_PROGRAMS = 8  # shapes whose recordings are kept (each pins its region sets: a few hundred KB)
RECORD_AFTER = 1  # unrecorded proofs of a shape before one is recorded (the first fills the caches)


class Recorder:
    """Collects one proof's writes and launches as a ``Program`` (module docstring); ``valid`` turns False, with
    ``reason``, at anything a replay could not repeat."""

    def __init__(self, key):
        self.key = key
        self.program = Program()
        self.batch = None
        self.valid = True
        self.reason = ""

    def drop(self, reason: str) -> None:
        if self.valid:
            self.valid, self.reason = False, reason

    def write(self, buffer: RtBuffer, data: np.ndarray, offset: int, source: tuple | None) -> None:
        """A host write; ``source`` names the input its words come from (module docstring), else they are kept."""
        self.program.steps.append(Write(buffer, offset, None if source else data.copy(), source, int(data.nbytes)))

    def _same_batch(self, batch) -> bool:
        if self.batch is None:
            self.batch = batch
        elif batch is not self.batch:
            self.drop("launches from a second batch")
        return self.valid

    def dispatch(self, batch, kernel, buffers, params, n_groups) -> None:
        if self._same_batch(batch):
            self.program.steps.append(launch_program.dispatch(kernel, buffers, params, n_groups))

    def copy(self, batch, src, src_offset, dst, dst_offset, nbytes) -> None:
        if self._same_batch(batch):
            self.program.steps.append(Copy(src, src_offset, dst, dst_offset, nbytes))

    def submit(self, batch) -> None:
        if self._same_batch(batch):
            self.program.steps.append(Submit())


class _RegionSet:
    """One replay's own proof, scratch and points buffers, and the program re-pointed at them, prepared."""

    def __init__(self, rt, program: Program, buffers: tuple, remap: dict[int, RtBuffer], proof_bytes: int, write):
        self.buffers = buffers
        # the proof region's readback the program ends with (its staged copy, where the runtime stages reads)
        self.prepared = PreparedProgram(rt, program.repointed(remap) if remap else program, (buffers[0], proof_bytes),
                                        write)
        self.busy = False

    def read_later(self, state):
        """After a run: the function that waits for it and gives the proof region's words (``drivers.read_later``
        of this set's prepared readback)."""
        return state.drivers.read_later(self.buffers[0], self.prepared.read[1], self.prepared)

    def close(self) -> None:
        self.prepared.close()


class LaunchProgram:
    """One shape's recording: its submissions, the region sizes and value offsets a replay reads, the recorded
    proof's ``resolve``. ``region_set`` hands out a free region set (a new one when all are in flight)."""

    def __init__(self, recorder: Recorder, session, layout, resolve: Callable, pool: DevicePool, held: list):
        self.program = recorder.program
        self.copied = self.program.counts().copied_bytes
        self.layout = layout
        regions = session.regions
        self.recorded = (regions.proof.buffer, regions.scratch.buffer, regions.points.buffer)
        self.proof_bytes = regions.proof.top
        # each range check with the input its words come from and what a refusal calls them
        self.checks = [(check, getattr(source, "input", None) or "table", getattr(source, "what", "evaluations"))
                       for check, source in session.canonical]
        self.witnesses = list(session.transcript.witnesses)
        self.resolve = resolve
        self.sets: list[_RegionSet] = []
        self.closed = False
        # The pooled buffers the launches use (released by the recorded proof, so free in the pool now): a replay
        # needs every one of them free (none held by a caller of a host-valued primitive, say).
        free_now = pool.free_ids()
        self.pooled = [b for b in self.program.buffers() if id(b) in free_now]
        # the storage of the proof's outputs its caller keeps (``end_proof(outputs=)``): a replay claims it again
        self.held = list(held)
        self.instanced: dict[int, Any] = {}  # instances -> instanced.InstancedProgram (prove_many's batches)
        self.instance_limit: int | None = None  # how many instances one launch takes (None: not asked yet)

    def buffers_free(self, pool: DevicePool, free_now: set | None = None) -> bool:
        """Whether every pooled buffer the launches use, and the outputs' storage, is free in ``pool`` (else the
        proof is not replayed). ``free_now``: ``pool.free_ids()`` when the caller has it."""
        free_now = pool.free_ids() if free_now is None else free_now
        return all(id(b) in free_now for b in self.pooled) and all(id(b) in free_now for b in self.held)

    def claim_held(self, pool: DevicePool) -> None:
        """Take the outputs' storage out of ``pool`` (free there: ``buffers_free``) for the replay's outputs."""
        pool.claim(self.held)

    def adopt_recorded_regions(self, state) -> _RegionSet:
        """The recording's own regions as the first region set (busy: that proof is still being read back)."""
        region_set = _RegionSet(state.rt, self.program, self.recorded, {}, self.proof_bytes, state.drivers.write)
        region_set.busy = True
        self.sets.append(region_set)
        return region_set

    def region_set(self, state) -> _RegionSet:
        """A free region set, marked busy: one encoded ahead (``prime_spare``) first, else any, else a new one."""
        free = [region_set for region_set in self.sets if not region_set.busy]
        region_set = next((s for s in free if s.prepared.primed), free[0] if free else None)
        if region_set is None:
            region_set = self._new_set(state)
        region_set.busy = True
        return region_set

    def prime_spare(self, state) -> None:
        """Encode the next run's submissions ahead on a free region set (a new one when none is free), left free:
        the next ``region_set`` hands it out, and that run only writes and sends. Call it while the device runs
        earlier work; a set so primed stays valid until it runs (its buffers are the program's own)."""
        free = [region_set for region_set in self.sets if not region_set.busy]
        spare = next((s for s in free if s.prepared.primed), free[0] if free else None)
        (spare or self._new_set(state)).prepared.prime()

    def _new_set(self, state) -> _RegionSet:
        fresh = tuple(state.pool.alloc(b.nbytes, host_facing=True) for b in self.recorded)
        region_set = _RegionSet(state.rt, self.program, fresh,
                                {id(old): new for old, new in zip(self.recorded, fresh)}, self.proof_bytes,
                                state.drivers.write)
        self.sets.append(region_set)
        return region_set

    def release(self, pool: DevicePool, region_set: _RegionSet) -> None:
        """A collected replay's region set is free again (returned to the pool if the program was dropped)."""
        region_set.busy = False
        if self.closed:
            self._free(pool, region_set)

    def close(self, pool: DevicePool) -> None:
        """Drop the program: free region sets go back to the pool now, busy ones when collected."""
        self.closed = True
        for region_set in list(self.sets):
            if not region_set.busy:
                self._free(pool, region_set)
        for many in self.instanced.values():
            many.close()
        self.instanced.clear()

    def _free(self, pool: DevicePool, region_set: _RegionSet) -> None:
        if region_set in self.sets:
            self.sets.remove(region_set)
            region_set.close()
            pool.free(*region_set.buffers)


def _input(inputs: dict, source: tuple) -> np.ndarray:
    """The new proof's words for an input write: ("points",), ("root",), or (name, start, stop) of "table" or a
    stacked table "stack:T"."""
    return inputs[source[0]] if len(source) == 1 else inputs[source[0]][source[1]:source[2]]


class Replays:
    """The GPU backend's record-and-replay (module docstring) over its ``DeviceState``: ``record_proof`` before
    ``begin_proof`` asks for a recording; ``replay_proof`` runs a recorded shape. ``programs``: the kept
    ``LaunchProgram``s by full key (least recently used first); ``replays`` counts the proofs replayed (tests read
    it); ``last_program`` is the ``LaunchProgram`` the last recorded or replayed proof ran (its ``program``: the
    typed steps ``whirgpu bench --kernels`` counts and labels; None before any); ``enabled = False`` turns
    replay off."""

    def __init__(self, state, memory):  # state: the backend's DeviceState; memory: its DeviceMemory
        self.state = state
        self.memory = memory
        self.programs: OrderedDict[Any, LaunchProgram] = OrderedDict()
        self.pending_record = None  # the full key the next begin_proof records under
        self.last_program: LaunchProgram | None = None
        self.replays = 0
        self.batches: list[tuple[int, int]] = []  # (proofs, instances) of every replay_many run (tests read it)
        self.enabled = True
        self._seen: dict[Any, int] = {}
        self.on_close: list[Callable[[], None]] = []  # other recorded programs' owners, dropped with these

    def full_key(self, key: ProgramKey) -> ProgramKey:
        """``key`` with what the backend adds: its layout limits, search range and storage."""
        state = self.state
        return key.on_device(state.binding_limit, state.buffer_limit, state.pow_full_range, state.storage)

    def replayable(self) -> bool:
        state = self.state
        return self.enabled and not state.profile and not state.pow_full_range

    def record_proof(self, key) -> None:
        """The next ``begin_proof`` records its launches under ``key`` once the shape has been proved before."""
        self.pending_record = None
        if key is None or not self.replayable():
            return
        full = self.full_key(key)
        if len(self._seen) > 4 * MAX_PROGRAMS * MAX_PROGRAMS:  # many shapes: forget the counts, not the programs
            self._seen.clear()
        seen = self._seen.get(full, 0)
        self._seen[full] = seen + 1
        if seen >= RECORD_AFTER and full not in self.programs:
            self.pending_record = full

    def start_recording(self, session) -> None:
        """At ``begin_proof``, before its first write: the recording ``record_proof`` asked for, if any, becomes
        ``session.recorder``."""
        full, self.pending_record = self.pending_record, None
        session.recorder = Recorder(full) if full is not None else None

    def cancel(self) -> None:
        """A proof that failed: no recording waits for the next one."""
        self.pending_record = None

    def finish_recording(self, session, resolve, outputs=()):
        """End the recording (after the proof's last submission): (its program, the recorded regions as the
        program's first region set) when the program is kept, else None. ``outputs``: what the proof's caller
        keeps (``end_proof``), whose storage a replay claims again."""
        state = self.state
        recorder, session.recorder = session.recorder, None
        if recorder is None or not recorder.valid:
            return None
        held = [b for item in outputs for b in self.memory.storage_of(item)]
        program = LaunchProgram(recorder, session, state.layout, resolve, state.pool, held)
        self.programs[recorder.key] = program
        while len(self.programs) > MAX_PROGRAMS:
            self.programs.popitem(last=False)[1].close(state.pool)
        self.last_program = program
        return program, program.adopt_recorded_regions(state)

    def forget_program(self, program: LaunchProgram) -> None:
        """Drop ``program`` without handing back the region set still busy (its owner frees those buffers)."""
        for key, kept in list(self.programs.items()):
            if kept is program:
                del self.programs[key]
        program.sets = [s for s in program.sets if not s.busy]
        program.close(self.state.pool)

    def close(self) -> None:
        """Drop every program (their free region sets back to the pool), and those of ``on_close``'s owners."""
        for program in self.programs.values():
            program.close(self.state.pool)
        self.programs.clear()
        self.last_program = None
        for drop in self.on_close:
            drop()
        self.on_close.clear()

    def instances_for(self, key, wanted: int) -> int:
        """How many proofs of ``key``'s recording ``replay_many`` runs in one set of launches (at most
        ``wanted``); 1 where it runs none (no recording, replay off, a runtime without instanced launches, a
        proof whose outputs its caller keeps)."""
        program = self.programs.get(self.full_key(key)) if key is not None and self.replayable() else None
        if program is None or program.held or not self.state.rt.instances:
            return 1
        return max(1, instanced.limit(program, self.state, wanted))

    def replay_many(self, key, items: list, prover=None):
        """Prove every (words, points, inputs) of ``items`` (at most ``instances_for``; ``inputs`` a dict or
        None) in one instanced run of ``key``'s recording (``instanced``): a list of deferred collects, one per
        item, each giving what ``replay_proof`` does; None where ``instances_for`` would say 1. The instanced
        program stays for the next batch of the shape until ``drop_batches``."""
        if self.instances_for(key, len(items)) < len(items) or len(items) < 2:
            return None
        state = self.state
        program = self.programs[self.full_key(key)]
        self.programs.move_to_end(self.full_key(key))
        if not state.building.acquire(blocking=False):
            raise ProverBusy(f"replay_many: a proof is already being built on this {state.rt.name} backend")
        try:
            state.layout = program.layout
            ran = instanced.replay(program, state, items, prover, _replayed_result)
        finally:
            state.building.release()
        if ran is None:
            return None
        collects, instances = ran
        self.replays += len(items)
        self.batches.append((len(items), instances))
        self.last_program = program
        return collects

    def drop_batches(self) -> None:
        """Free every instanced program's buffers (K copies of a proof's buffers each): ``prove_many`` calls this
        when it ends, so a batch's memory does not outlive it; the next batch builds its program again."""
        for program in self.programs.values():
            for many in program.instanced.values():
                many.close()
            program.instanced.clear()

    def replay_proof(self, key, words: np.ndarray | None, points: np.ndarray, deferred: bool,
                     inputs: dict | None = None, prover=None):
        """Prove ``words`` (2^n canonical uint32, or None) at ``points`` (m, n, 4) Montgomery by replaying the
        recording of ``key``, with ``inputs`` (name -> words) for the recording's other input writes: returns
        what ``end_proof`` (``deferred``: ``end_proof_deferred``) would return with the recorded proof's
        ``resolve`` (given ``prover``, the prover asking), or None when ``key`` has no recording (or replay is
        off)."""
        if key is None or not self.replayable():
            return None
        state, pool = self.state, self.state.pool
        full = self.full_key(key)
        program = self.programs.get(full)
        if program is None or not program.buffers_free(pool):
            return None
        self.programs.move_to_end(full)
        if not state.building.acquire(blocking=False):
            raise ProverBusy(f"replay_proof: a proof is already being built on this {state.rt.name} backend")
        program.claim_held(pool)  # first: nothing allocated below may take the outputs' storage
        region_set = program.region_set(state)
        inputs = {**(inputs or {}), "table": words, "points": np.ascontiguousarray(points, np.uint32).reshape(-1)}
        try:
            state.layout = program.layout
            region_set.prepared.run(lambda w: w.data if w.source is None else _input(inputs, w.source))
            state.stats.copied += program.copied
        except BaseException:
            program.release(pool, region_set)
            pool.free(*program.held)
            raise
        finally:
            state.building.release()
        self.replays += 1
        self.last_program = program
        try:
            pending = region_set.read_later(state)
        except BaseException:
            program.release(pool, region_set)
            pool.free(*program.held)
            raise

        def collect():
            try:
                try:
                    proof_words = pending()
                finally:
                    program.release(pool, region_set)
                return _replayed_result(program, proof_words, inputs, prover)
            except BaseException:  # no outputs for the caller: their storage goes back to the pool
                pool.free(*program.held)
                raise

        return collect if deferred else collect()


def _replayed_result(program: LaunchProgram, words: np.ndarray, inputs: dict, prover=None):
    for check, name, what in program.checks:
        index = int(check.read(words)[0])
        if index != NOT_FOUND:
            raise non_canonical(index, int(inputs[name][index]), what, prime=program.layout.field.P)
    if any(w.read(words).reshape(-1)[0] == NOT_FOUND for w in program.witnesses):
        raise PowRangeExceeded("a proof-of-work search found no nonce in its encoded range")
    read = lambda value: resolve_value(words, value)  # noqa: E731
    return program.resolve(read) if prover is None else program.resolve(read, prover)
