"""Instanced replays: K proofs of one recorded shape in the same launches (``prove_many`` on a WebGPU backend).

A ``LaunchProgram`` (``replay``) is one proof's launches. ``InstancedProgram(program, state, K)`` is the same
program over K instances: every buffer the program writes (a host write, a copy's destination, a ``read_write``
binding of some kernel, the proof, scratch and points regions) becomes K copies side by side, ``stride`` bytes
apart, and every dispatch runs its kernel (compiled ``kernels.instancing``-rewritten) over a grid of K layers,
layer k on copy k (its strides bound with it). Where one launch would bind overlapping ranges of a buffer, one of them
writable, on a runtime that checks that (Dawn: Merkle levels written in place), it runs once per instance on
that instance's windows instead. Buffers the program only reads (twiddles, round constants) are copied once
and shared. Host writes and copies are made once per instance. The proof regions of all K instances are read
back together; instance k's words are cut out and resolved by the recorded proof's own ``resolve``, so the proofs
are byte for byte those of K replays.

Contracts: ``K`` >= 1. Built once per (shape, K) and kept with its ``LaunchProgram`` (``instanced``), closed with
it. Every buffer is the instanced program's own (initialised, at build, to the recorded buffer's words: counters
and tickets kernels leave at zero stay so), so an instanced run never waits for the pool. A *run set* per batch
in flight (its own proof, scratch and points copies) lets a batch be written while the one before runs. ``run(items)`` takes
K (words, points, inputs) triples and returns a ``collect()`` giving K results, or raises before any launch.
"""

from __future__ import annotations

import numpy as np

from ...devices.overrides import max_gpu_bytes_from_env
from ...errors import DeviceOutOfMemory
from ...kernels.instancing import MAX_SLOTS, layout_of
from ...runtime.base import RtBuffer, RtView, binding_range
from ...runtime.program import Copy, Dispatch, PreparedProgram, Program, Submit, Write

STRIDE_ALIGN = 256  # bytes: every instance's copy starts at a multiple of the storage offset alignment
MAX_INSTANCES = 32  # instances per launch at most (a prove_many batch)
MEMORY_BUDGET = 4 << 30  # bytes an instanced program's buffers may take (two run sets counted), at most


class NotInstanceable(ValueError):
    """A program this module cannot run instanced (the reason says why); its proofs replay one by one."""


def _align(nbytes: int) -> int:
    return -(-int(nbytes) // STRIDE_ALIGN) * STRIDE_ALIGN


def _whole(b) -> RtBuffer:
    return binding_range(b)[0]


def storage_layout(kernel):
    """A compiled WGSL kernel's ``instancing.InstancedLayout`` (its composed source's storage slots)."""
    return layout_of(kernel.source_text())


def per_instance_buffers(program: Program, regions: tuple, storage_layout) -> set[int]:
    """Ids of the buffers ``program`` writes (module docstring); ``storage_layout(kernel)`` gives a kernel's
    ``instancing.InstancedLayout``. ``NotInstanceable`` when a fixed-size array's slot is bound to one of them."""
    written = {id(b) for b in regions}
    dispatches = []
    for step in program.steps:
        if isinstance(step, Write):
            written.add(id(step.buffer))
        elif isinstance(step, Copy):
            written.add(id(_whole(step.dst)))
        elif isinstance(step, Dispatch):
            layout = storage_layout(step.kernel)
            dispatches.append((step, layout))
            written.update(id(_whole(b)) for slot, b in enumerate(step.bindings) if slot in layout.writable_slots)
    for step, layout in dispatches:
        if len(step.bindings) > MAX_SLOTS:
            raise NotInstanceable(f"{step.kernel.label} binds {len(step.bindings)} slots (at most {MAX_SLOTS})")
        for slot in layout.fixed_slots:
            if slot < len(step.bindings) and id(_whole(step.bindings[slot])) in written:
                raise NotInstanceable(f"{step.kernel.label}: fixed-size slot {slot} is bound to a written buffer")
    return written


def instance_count(program: Program, regions: tuple, rt, storage_layout, wanted: int) -> int:
    """How many instances of ``program`` one launch takes on ``rt``: ``wanted`` at most, MAX_INSTANCES at most,
    every binding and buffer within the device's limits, the instances within its workgroups per dimension (they
    are the grid's z), the buffers (the run sets' regions and write stages twice) within MEMORY_BUDGET, ``WHIRGPU_MAX_GPU_BYTES``
    where set and the device's recommended working set where it reports one. 0: not even one."""
    per = per_instance_buffers(program, regions, storage_layout)
    strides = [_align(b.nbytes) for b in program.buffers() if id(b) in per and all(b is not r for r in regions)]
    strides += [2 * _align(b.nbytes) for b in regions]
    strides.append(2 * program.counts().write_bytes)  # each run set's write stage (host-visible memory)
    biggest = max(_align(b.nbytes) for b in program.buffers() + list(regions))
    limits = rt.limits()
    budget = min([MEMORY_BUDGET] + [cap for cap in (max_gpu_bytes_from_env(),
                                                    getattr(limits, "recommended_working_set", 0)) if cap])
    return min(int(wanted), MAX_INSTANCES, limits.max_storage_binding_size // biggest,
               limits.max_buffer_size // biggest, limits.max_workgroups_per_dimension, budget // max(1, sum(strides)))


class _RunSet:
    """One batch's own proof, scratch and points copies, and the program on them, prepared."""

    def __init__(self, rt, program: Program, proof: RtBuffer, read_bytes: int, owned: list, write):
        # its writes (K instances' tables and points) through a stage of its own (``PreparedProgram``): the next
        # batch is written while this one runs, where the runtime's few upload slots made it wait
        self.prepared = PreparedProgram(rt, program, (proof, read_bytes), write, stage=True)
        self.proof = proof
        self.owned = owned
        self.busy = False


class InstancedProgram:
    """``program`` (a ``replay.LaunchProgram``) over ``count`` instances (module docstring)."""

    def __init__(self, program, state, count: int):
        self.source, self.state, self.count = program, state, int(count)
        rt = state.rt
        self.rt = rt
        recorded = program.recorded  # (proof, scratch, points) of the recording
        self.per = per_instance_buffers(program.program, recorded, storage_layout)
        self.buffers: list[RtBuffer] = []  # every buffer this program owns (freed at close)
        self.shared: dict[int, RtBuffer] = {}  # id(recorded buffer) -> its copy, read by every instance
        self.stride: dict[int, int] = {}  # id(recorded buffer) -> bytes between instances
        self.kernels = {}
        rt.wait()  # the recorded buffers' words are copied below: nothing may still write them
        batch = rt.batch()
        common: dict[int, RtBuffer] = {}
        try:
            for b in program.program.buffers():
                if id(b) in {id(r) for r in recorded}:
                    continue
                common[id(b)] = self._copy_of(batch, b, id(b) in self.per)
        except BaseException:  # out of memory, say: what was allocated goes back
            for b in self.buffers:
                rt.free(b)
            raise
        batch.submit()
        self.common = common
        self.sets: list[_RunSet] = []
        self.closed = False

    def _copy_of(self, batch, b: RtBuffer, per_instance: bool) -> RtBuffer:
        """A buffer of this program holding ``b``'s words once (shared) or once per instance."""
        stride = _align(b.nbytes)
        copies = self.count if per_instance else 1
        new = self.rt.alloc(stride * (copies - 1) + b.nbytes, b.mode)
        self.buffers.append(new)
        for k in range(copies):
            batch.copy(b, 0, new, k * stride, b.nbytes)
        if per_instance:
            self.stride[id(b)] = stride
        else:
            self.shared[id(b)] = new
        return new

    def _instanced_program(self, remap: dict[int, RtBuffer]) -> Program:
        """The recorded steps over the instances' buffers ``remap`` (id(recorded) -> this program's buffer)."""
        count, rt = self.count, self.rt
        steps = []
        for step in self.source.program.steps:
            if isinstance(step, Write):
                stride = self.stride[id(step.buffer)]
                for k in range(count):
                    source = None if step.source is None else (k,) + tuple(step.source)
                    steps.append(Write(remap[id(step.buffer)], step.offset + k * stride, step.data, source,
                                       step.nbytes))
            elif isinstance(step, Copy):
                src, dst = _whole(step.src), _whole(step.dst)
                src_stride = self.stride.get(id(src), 0)
                for k in range(count):
                    steps.append(Copy(remap[id(src)], step.src_offset + k * src_stride, remap[id(dst)],
                                      step.dst_offset + k * self.stride[id(dst)], step.nbytes))
            elif isinstance(step, Dispatch) and self._aliased(step):
                for k in range(count):  # each instance's launch on its own windows (module docstring)
                    bindings = []
                    for b in step.bindings:
                        whole, offset, nbytes = binding_range(b)
                        bindings.append(RtView(remap[id(whole)], offset + k * self.stride.get(id(whole), 0), nbytes))
                    steps.append(Dispatch(step.kernel, tuple(bindings), step.params, step.groups))
            elif isinstance(step, Dispatch):
                bindings, strides = [], np.zeros(MAX_SLOTS, np.uint32)
                for slot, b in enumerate(step.bindings):
                    whole, offset, nbytes = binding_range(b)
                    stride = self.stride.get(id(whole), 0)
                    strides[slot] = stride
                    bindings.append(RtView(remap[id(whole)], offset, stride * (count - 1) + nbytes))
                kernel = self.kernels.get(id(step.kernel))
                if kernel is None:
                    kernel = self.kernels[id(step.kernel)] = rt.instanced_kernel(step.kernel)
                steps.append(Dispatch(kernel, tuple(bindings), step.params, step.groups, count, strides))
            else:
                steps.append(Submit())
        return Program(steps)

    def _aliased(self, step: Dispatch) -> bool:
        """Whether ``step``'s instanced bindings would overlap a writable one in the same buffer, on a runtime
        that refuses that (Dawn validates WebGPU's aliasing rule by byte ranges, though each instance's accesses
        stay in its own copy)."""
        if not getattr(self.rt, "checks_aliasing", False):
            return False
        writable = storage_layout(step.kernel).writable_slots
        ranges: dict[int, list] = {}
        for slot, b in enumerate(step.bindings):
            whole, offset, nbytes = binding_range(b)
            end = offset + self.stride.get(id(whole), 0) * (self.count - 1) + nbytes
            for other_slot, start, stop in ranges.get(id(whole), []):
                if (slot in writable or other_slot in writable) and offset < stop and start < end:
                    return True
            ranges.setdefault(id(whole), []).append((slot, offset, end))
        return False

    def _new_set(self) -> _RunSet:
        state, count = self.state, self.count
        remap = dict(self.common)
        owned = []
        try:
            for b in self.source.recorded:
                stride = _align(b.nbytes)
                self.stride[id(b)] = stride
                new = self.rt.alloc(stride * (count - 1) + b.nbytes, state.pool.mode_for(True))
                owned.append(new)
                remap[id(b)] = new
            proof = remap[id(self.source.recorded[0])]
            read_bytes = self.stride[id(self.source.recorded[0])] * (count - 1) + self.source.proof_bytes
            run_set = _RunSet(self.rt, self._instanced_program(remap), proof, read_bytes, owned,
                              state.drivers.write)
        except BaseException:
            for b in owned:
                self.rt.free(b)
            raise
        self.sets.append(run_set)
        return run_set

    def run(self, items: list) -> tuple:
        """Write and submit ``count`` instances, ``items`` (a dict of every input the recording writes, each);
        returns (the run set, the function giving its words)."""
        if len(items) != self.count:
            raise ValueError(f"an instanced program of {self.count} instances got {len(items)}")
        run_set = next((s for s in self.sets if not s.busy), None) or self._new_set()
        run_set.busy = True

        def words(step: Write) -> np.ndarray:
            if step.source is None:
                return step.data
            inputs = items[step.source[0]]
            source = step.source[1:]
            return inputs[source[0]] if len(source) == 1 else inputs[source[0]][source[1]:source[2]]

        try:
            run_set.prepared.run(words)
            staged = run_set.prepared.staged_writes
            self.state.stats.uploaded += staged
            self.state.stats.copied += staged
            pending = self.state.drivers.read_later(run_set.proof, run_set.prepared.read[1], run_set.prepared)
        except BaseException:
            run_set.busy = False
            raise
        return run_set, pending

    def instance_words(self, words: np.ndarray, k: int) -> np.ndarray:
        """Instance ``k``'s proof-region words out of a run's words."""
        start = k * self.stride[id(self.source.recorded[0])] // 4
        return words[start:start + self.source.proof_bytes // 4]

    def release(self, run_set: _RunSet) -> None:
        run_set.busy = False
        if self.closed:
            self._free(run_set)

    def _free(self, run_set: _RunSet) -> None:
        if run_set in self.sets:
            self.sets.remove(run_set)
            run_set.prepared.close()
            for b in run_set.owned:
                self.rt.free(b)

    def close(self) -> None:
        """Free this program's buffers now (those of a run still being collected when it is)."""
        if self.closed:
            return
        self.closed = True
        for run_set in list(self.sets):
            if not run_set.busy:
                self._free(run_set)
        for b in self.buffers:
            self.rt.free(b)
        self.buffers = []


def limit(program, state, wanted: int) -> int:
    """``instance_count`` of a ``replay.LaunchProgram``, worked out once per program (0 or 1: none)."""
    if program.instance_limit is None:
        try:
            program.instance_limit = instance_count(program.program, program.recorded, state.rt, storage_layout,
                                                    MAX_INSTANCES)
        except NotInstanceable:
            program.instance_limit = 1
    return min(int(wanted), program.instance_limit)


def replay(program, state, items: list, prover, resolved) -> list:
    """Run ``items`` ((words, points, inputs) each) as one instanced run of ``program`` (a
    ``replay.LaunchProgram``); returns (one deferred collect per item, the instances the run took: its program's
    count, padded), or None when the device ran out of memory for it (nothing was launched; the shape is not
    batched again). ``resolved(program, words, inputs, prover)``: a proof's result from its region's words
    (``replay._replayed_result``)."""
    count = len(items)
    # a shorter batch (the last of a prove_many) runs on a program built for more, its last item repeated
    fits = [n for n in program.instanced if n >= count]
    many = program.instanced[min(fits)] if fits else None
    inputs = [{**(extra or {}), "table": words, "points": np.ascontiguousarray(points, np.uint32).reshape(-1)}
              for words, points, extra in items]
    try:
        if many is None:
            many = program.instanced[count] = InstancedProgram(program, state, count)
        run_set, pending = many.run(inputs + [inputs[-1]] * (many.count - count))
    except DeviceOutOfMemory:
        # the device could not hold the batch after all: this shape's proofs go one by one from now on
        for kept in program.instanced.values():
            kept.close()
        program.instanced.clear()
        program.instance_limit = 1
        return None
    state.stats.copied += program.copied * many.count
    outcome: dict = {}

    def words() -> np.ndarray:
        if not outcome:
            try:
                outcome["words"] = pending()
            except BaseException as exc:  # every proof of the run fails with it
                outcome["error"] = exc
            finally:
                many.release(run_set)
        if "error" in outcome:
            raise outcome["error"]
        return outcome["words"]

    def collect_one(k: int):
        return lambda: resolved(program, many.instance_words(words(), k), inputs[k], prover)

    return [collect_one(k) for k in range(count)], many.count
