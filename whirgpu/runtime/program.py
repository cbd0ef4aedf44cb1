"""A launch program: what the host sends a device for one proof, as typed steps that every runtime executes.

Steps, in the order the device sees them:
- ``Write(buffer, offset, data, source)``: host -> device words; ``data`` the words written, or None with
  ``source`` naming the program *input* they come from (``("table", start, stop)``, ``("points",)``,
  ``("root",)``, ``("stack:T", start, stop)``), supplied anew at each execution.
- ``Dispatch(kernel, bindings, params, groups, instances=1, strides=None)``: a kernel over ``groups`` workgroups,
  ``bindings`` the ``RtBuffer`` / ``RtView`` of slots 0.., ``params`` uint32 words (or None) at the next slot
  (``runtime.base``); an instanced launch (``kernels.instancing``: ``kernel`` is an instanced variant) repeats the
  grid for ``instances`` instances, ``strides`` (one uint32 per slot: bytes between instances) bound at
  ``STRIDE_BINDING``.
- ``Copy(src, src_offset, dst, dst_offset, nbytes)``: a device-side copy.
- ``Submit()``: the launches since the last ``Submit`` go to the device as one submission (one encoder /
  command buffer); writes before it precede them.
``Dispatch`` and ``Copy`` are the *launches*: each ``issue(batch)``s itself into a ``Batch``, and ``Runtime.recorded_batch``
prepares for repeated submission.

``Program(steps)`` holds a proof's steps: ``segments()`` splits them at each ``Submit`` into (writes, launches);
``buffers()`` lists every buffer they touch; ``repointed(remap)`` is the same program on other buffers (a replay's
own regions); ``counts()`` its submissions, dispatches, copies, writes and bytes. ``PreparedProgram(rt, program)``
is a program made ready on one runtime (each segment's launches a ``recorded_batch``); ``run(words)`` executes it,
writing ``words(step)`` for every ``Write`` (the caller supplies inputs; through the program's own write stage
where it was prepared with one) and submitting each segment; ``prime()``
encodes its submissions ahead, so that the next ``run`` only writes and sends them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Union

import numpy as np

from .base import RtBuffer, RtView


@dataclass(frozen=True, eq=False)
class Write:
    """Host -> device: ``data`` (uint32 words, copied at recording) or, when None, the input ``source``;
    ``nbytes``: the bytes written when recorded (an input's size; None: ``data``'s)."""

    buffer: RtBuffer
    offset: int
    data: np.ndarray | None
    source: tuple | None = None
    nbytes: int | None = None


@dataclass(frozen=True, eq=False)
class Dispatch:
    """A kernel launch over ``groups`` workgroups (2-D when the device needs it; ``runtime.base``), times
    ``instances`` with ``strides`` (module docstring; only a ``recorded_batch`` runs those)."""

    kernel: Any
    bindings: tuple
    params: np.ndarray | None
    groups: int
    instances: int = 1
    strides: np.ndarray | None = None

    def issue(self, batch) -> None:
        """Record this launch into ``batch`` (a ``runtime.base.Batch``)."""
        if self.instances != 1 or self.strides is not None:
            raise ValueError("an instanced launch runs only in a recorded batch")
        batch.dispatch(self.kernel, list(self.bindings), self.params, self.groups)


@dataclass(frozen=True, eq=False)
class Copy:
    """A device-side copy of ``nbytes`` bytes."""

    src: RtBuffer
    src_offset: int
    dst: RtBuffer
    dst_offset: int
    nbytes: int

    def issue(self, batch) -> None:
        """Record this copy into ``batch`` (a ``runtime.base.Batch``)."""
        batch.copy(self.src, self.src_offset, self.dst, self.dst_offset, self.nbytes)


@dataclass(frozen=True)
class Submit:
    """The end of one submission."""


Launch = Union[Dispatch, Copy]
Step = Union[Write, Dispatch, Copy, Submit]


def dispatch(kernel, buffers, params, n_groups) -> Dispatch:
    """A ``Dispatch`` of what a ``Batch.dispatch`` call gets: ``params`` copied as uint32 words."""
    words = None if params is None else np.array(params, np.uint32).reshape(-1)
    return Dispatch(kernel, tuple(buffers), words, int(n_groups))


def launch_buffers(launch: Launch) -> Iterator[RtBuffer]:
    """The whole buffers a launch binds or copies between, in slot order."""
    bindings = (launch.src, launch.dst) if isinstance(launch, Copy) else launch.bindings
    for b in bindings:
        yield b.buffer if isinstance(b, RtView) else b


def repoint_launch(launch: Launch, remap: dict[int, RtBuffer]) -> Launch:
    """``launch`` with each buffer whose id is in ``remap`` replaced (views keep their window)."""
    def buffer(b):
        if isinstance(b, RtView):
            return RtView(remap[id(b.buffer)], b.offset, b.nbytes) if id(b.buffer) in remap else b
        return remap.get(id(b), b)

    if isinstance(launch, Copy):
        return Copy(buffer(launch.src), launch.src_offset, buffer(launch.dst), launch.dst_offset, launch.nbytes)
    return Dispatch(launch.kernel, tuple(buffer(b) for b in launch.bindings), launch.params, launch.groups,
                    launch.instances, launch.strides)


@dataclass
class Counts:
    """What a program sends: submissions, dispatches, copies (and their bytes), writes (and their bytes)."""

    submissions: int = 0
    dispatches: int = 0
    copies: int = 0
    copied_bytes: int = 0
    writes: int = 0
    write_bytes: int = 0


@dataclass
class Program:
    """A proof's steps (module docstring); empty segments are kept out of ``segments``."""

    steps: list = field(default_factory=list)

    def segments(self) -> list[tuple[list[Write], list[Launch]]]:
        out, writes, launches = [], [], []
        for step in self.steps:
            if isinstance(step, Write):
                writes.append(step)
            elif isinstance(step, Submit):
                if writes or launches:
                    out.append((writes, launches))
                writes, launches = [], []
            else:
                launches.append(step)
        if writes or launches:
            out.append((writes, launches))
        return out

    def launches(self) -> list[Launch]:
        return [s for s in self.steps if isinstance(s, (Dispatch, Copy))]

    def buffers(self) -> list[RtBuffer]:
        """Every buffer the steps write, bind or copy, once each, in first-use order."""
        seen: dict[int, RtBuffer] = {}
        for step in self.steps:
            if isinstance(step, Write):
                seen.setdefault(id(step.buffer), step.buffer)
            elif not isinstance(step, Submit):
                for b in launch_buffers(step):
                    seen.setdefault(id(b), b)
        return list(seen.values())

    def repointed(self, remap: dict[int, RtBuffer]) -> "Program":
        steps = []
        for step in self.steps:
            if isinstance(step, Write):
                step = Write(remap.get(id(step.buffer), step.buffer), step.offset, step.data, step.source,
                             step.nbytes)
            elif not isinstance(step, Submit):
                step = repoint_launch(step, remap)
            steps.append(step)
        return Program(steps)

    def counts(self) -> Counts:
        counts = Counts()
        for writes, launches in self.segments():
            counts.writes += len(writes)
            counts.write_bytes += sum(write_bytes(w) for w in writes)
            if launches:
                counts.submissions += 1
            for launch in launches:
                if isinstance(launch, Copy):
                    counts.copies += 1
                    counts.copied_bytes += launch.nbytes
                else:
                    counts.dispatches += 1
        return counts


def write_bytes(write: Write) -> int:
    """The bytes ``write`` writes: its recorded ``nbytes``, else its data's, else its input range's."""
    if write.nbytes is not None:
        return int(write.nbytes)
    if write.data is not None:
        return int(write.data.nbytes)
    source = write.source or ()
    return 4 * (source[2] - source[1]) if len(source) == 3 else 0


class PreparedProgram:
    """``program`` made ready on ``rt`` (module docstring): run as often as asked, then ``close``. ``read``:
    (buffer, nbytes) a run is read back from (``read_later``); where the runtime stages reads
    (``Runtime.staged_read``), the copy into its staging buffer is the last submission's last launch. ``write``:
    (buffer, words, offset) -> None, how a ``Write``'s words reach the device (default ``rt.write``). ``stage``:
    where the runtime gives one (``Runtime.write_stage``), every ``Write`` goes instead through a staging buffer
    of the program's own: a run copies all its words into it on the host, each write's device-side copy stands
    where the write stood, ahead of the launches after it, and the whole run is one submission (``staged_writes``
    then says how many bytes a run stages), so a run neither waits for a shared staging slot nor makes a call per
    write or per recorded submission."""

    def __init__(self, rt, program: Program, read: tuple | None = None, write=None, stage: bool = False):
        self.program, self.rt, self.read = program, rt, read
        self.write = rt.write if write is None else write
        segments = [(writes, list(launches)) for writes, launches in program.segments()]
        self.stage = rt.write_stage([w for writes, _ in segments for w in writes]) if stage else None
        if self.stage is not None:
            copies = iter(self.stage.copies)  # one per write, in order; None for an empty one
            for writes, launches in segments:
                launches[:0] = [c for c in (next(copies) for _ in writes) if c is not None]
            # every write is on the device's side of the stage now, so the submissions need not stay apart: one
            # submission, its launches (the stage's copies among them) in the program's order, costs the host
            # one submit where there were several
            segments = [([w for writes, _ in segments for w in writes],
                         [launch for _, launches in segments for launch in launches])]
        self.staged = rt.staged_read(*read) if read is not None else None
        if self.staged is not None:
            last = next((k for k in reversed(range(len(segments))) if segments[k][1]), None)
            if last is None:
                segments.append(([], []))
                last = len(segments) - 1
            segments[last][1].append(self.staged.copy)
        self.parts = [(writes, rt.recorded_batch(launches) if launches else None) for writes, launches in segments]

    @property
    def staged_writes(self) -> int:
        """Bytes a run copies through the program's write stage (0 without one)."""
        return 0 if self.stage is None else self.stage.nbytes

    def read_later(self):
        """After ``run``: the function that waits for the run and gives ``read``'s words (the staged copy's map
        asked now, else ``rt.read_later``). Call it before the next ``run``. With a write stage, the stage's map
        (asked after the run's submissions) is settled once the words have come: no map outlives the read."""
        words = self.staged.later() if self.staged is not None else self.rt.read_later(*self.read)
        stage = self.stage
        if stage is None:
            return words

        def settled(pick=None):
            try:
                return words(pick)
            finally:
                stage.settle()

        return settled

    def run(self, words: Callable[[Write], np.ndarray]) -> None:
        """Execute the program once: ``words(step)`` gives every ``Write``'s uint32 words (its ``data`` or the input
        it names), written before the submission that follows it; then each submission is sent. With a write stage
        every write's words are copied into it first (``ValueError``, before anything is sent, for words of
        another size than the recording's)."""
        if self.stage is not None:
            self.stage.fill([(step, words(step)) for writes, _ in self.parts for step in writes])
            for _, batch in self.parts:
                if batch is not None:
                    batch.submit()
            self.stage.sent()
            return
        for writes, batch in self.parts:
            for step in writes:
                self.write(step.buffer, words(step), step.offset)
            if batch is not None:
                batch.submit()

    def prime(self) -> None:
        """Encode every submission ahead (``recorded_batch``'s ``prime``): the next ``run`` only writes and sends.
        Call it while the device is busy with earlier work; a later ``run`` is correct whether or not it was."""
        for _, batch in self.parts:
            if batch is not None:
                batch.prime()

    @property
    def primed(self) -> bool:
        """Whether a submission waits encoded ahead (a runtime that re-issues its launches never has one)."""
        return any(getattr(batch, "primed", None) is not None for _, batch in self.parts)

    def close(self) -> None:
        for _, batch in self.parts:
            if batch is not None:
                batch.close()
        self.parts = []
        if self.staged is not None:
            self.staged.close()
            self.staged = None
        if self.stage is not None:
            self.stage.close()
            self.stage = None
