"""``EfAlgebra`` (``backends/algebra.py``) on a GPU session's device values: each op an ``ef_program`` op on the
session's scratch and proof words, its result a new ``DeviceValue`` in an arena of the scratch region.

Ordering: ops wait in a pending ``EfProgram``; it is recorded (``flush``) before any other launch of the session
(``ProofSession.batch``) and before any transcript op is added (the transcript calls ``flush``), and the
transcript's pending ops are recorded before an algebra op is added: the session's launches keep the order in
which the prover asked for them. Constants are host words for arena slots of their own, never reused; those
taken since the session's last submission go up as one write just before the next (``write_staged``, which
``ProofSession.submit`` calls): the slots between them are results no submitted launch has written yet.
Operands in the scratch or proof region (not the points region).
"""

from __future__ import annotations

import numpy as np

from ...field import Field
from ...kernels.ef_program import STEM, EfProgram, in_proof, no_transcript
from ...ref.field_np import field_ops
from ..device_transcript import TailLaunch
from ..device_values import DeviceValue

EF_WORDS = 4


class DeviceAlgebra:
    """``EfAlgebra`` over ``session`` (a ``ProofSession`` of ``state``, the backend's ``DeviceState``) with an
    arena of ``arena_words`` scratch words for results and constants."""

    def __init__(self, state, session, field: Field, arena_words: int):
        self.state, self.session, self.field = state, session, field
        self.ops = field_ops(field)
        slot = session.regions.scratch.take((arena_words,))
        self._buffer, self._top, self._end = slot.buffer, slot.offset, slot.offset + slot.nbytes
        self._start = slot.offset
        self._proof = session.regions.proof.buffer
        self.pending = EfProgram()
        self.launches = 0
        self._staged: list[tuple] = []  # (byte offset, words, source) of constants not yet written
        self.blocks: list[tuple] = []  # the named inputs' staged writes (``write_staged``)
        session.algebra = self
        one = self.ops.ef_from_base(self.ops.ONE)
        self._one = self.const(one)
        self._minus_one = self.const(self.ops.ef_neg(one))

    # -- values ---------------------------------------------------------------------------------------------------
    def _take(self, shape: tuple[int, ...]) -> DeviceValue:
        value = DeviceValue(self._buffer, self._top, tuple(int(s) for s in shape))
        end = self._top + -(-value.nbytes // 16) * 16  # every value starts on an EF boundary
        if end > self._end:
            raise RuntimeError(f"device algebra arena overflow: {end - self._end} bytes past its end (a bug in its "
                               "sizing)")
        self._top = end
        return value

    @property
    def used_words(self) -> int:
        """Arena words taken so far (constants and results)."""
        return (self._top - self._start) // 4

    def _at(self, value: DeviceValue) -> int:
        if value.buffer is self._proof:
            return in_proof(value.word)
        if value.buffer is not self._buffer:
            raise ValueError("an algebra operand must live in the session's scratch or proof region")
        return value.word

    @staticmethod
    def _count(value: DeviceValue) -> int:
        return 1 if len(value.shape) == 1 else value.shape[0]

    def reserve(self, shape: tuple[int, ...]) -> DeviceValue:
        """Arena room for a value that a launch the caller records fills (before any op that reads it)."""
        return self._take(shape)

    def const(self, array, source: tuple | None = None) -> DeviceValue:
        """A host array as a value; ``source``: the proof input its words are (a recording keeps the name, and a
        replay writes that input's new words there: ``blocks``)."""
        array = np.ascontiguousarray(array, np.uint32)
        value = self._take(array.shape)
        if array.size:
            self._staged.append((value.offset, array.reshape(-1), source))
        return value

    def write_staged(self) -> None:
        """The constants taken since the last submission, as one host write (before the next submission). Where
        any of them is a named input, the write is the input ("algebra", i): block i of ``blocks``, its segments
        (word offset in the write, the words' source or None, the words) from which ``assemble`` rebuilds it."""
        if not self._staged:
            return
        staged, self._staged = self._staged, []
        first = staged[0][0]
        words = np.zeros((staged[-1][0] - first) // 4 + staged[-1][1].size, np.uint32)
        for offset, data, _ in staged:
            at = (offset - first) // 4
            words[at:at + data.size] = data
        source = None
        if any(named is not None for _, _, named in staged):
            source = ("algebra", len(self.blocks))
            self.blocks.append((words.size, [((offset - first) // 4, named, None if named else data)
                                             for offset, data, named in staged]))
        self.state.drivers.write(self._buffer, words, first, source=source)

    @staticmethod
    def assemble(block: tuple, words_of) -> np.ndarray:
        """A staged write's words for other inputs: ``words_of(source)`` gives each named segment's words."""
        size, segments = block
        words = np.zeros(size, np.uint32)
        for at, named, data in segments:
            data = data if named is None else np.ascontiguousarray(words_of(named), np.uint32).reshape(-1)
            words[at:at + data.size] = data
        return words

    # -- ops ------------------------------------------------------------------------------------------------------
    def _add_op(self):
        """The pending program, after the transcript's pending ops are recorded (they come first)."""
        transcript = self.session.transcript
        if transcript is not None and (transcript.pending or transcript.tail is not None):
            transcript.flush()
        return self.pending

    def flush(self) -> None:
        """Record the pending ops into the session's batch: a launch per ``MAX_SLOTS`` op slots, each table an arena
        constant. In a session with a transcript of the algebra's field the last launch is its tail: the transcript ops
        recorded next run as its epilogue."""
        if not self.pending.ops:
            return
        program, self.pending = self.pending, EfProgram()
        transcript = self.session.transcript
        if transcript is not None and transcript.variant.field.name != self.field.name:
            transcript = None  # the epilogue would run in the algebra's field: only a transcript of that field rides
        drivers = self.state.drivers
        kernel = drivers.kernel(STEM, field=self.field.name) if transcript is None else transcript.kernel(STEM)
        tables = program.launches()
        for i, table in enumerate(tables):
            at = self.const(table)  # staged: written before the submission that runs it
            params = program.params(table, at.word)
            if transcript is not None and i == len(tables) - 1:
                io = [self._buffer, self._proof, self.session.regions.points.buffer, transcript.round_constants()]
                transcript.defer(TailLaunch(kernel, [(io, params, 1)], window_field=2))
            else:
                self.session.runtime_batch.dispatch(
                    kernel, [self._buffer, self._proof] + no_transcript(drivers, self.field), params, 1)
            self.launches += 1

    def lift(self, base: DeviceValue) -> DeviceValue:
        n = base.words  # every word: a matrix of base words lifts whole
        out = self._take((n, EF_WORDS))
        self._add_op().lift(self._at(out), self._at(base), n)
        return out

    def linear(self, s: DeviceValue, a: DeviceValue, b: DeviceValue | None = None) -> DeviceValue:
        out = self._take(a.shape)
        self._add_op().linear(self._at(out), self._at(a), self._at(s), None if b is None else self._at(b),
                              self._count(a))
        return out

    def add(self, a: DeviceValue, b: DeviceValue) -> DeviceValue:
        return self.linear(self._one, a, b)

    def sub(self, a: DeviceValue, b: DeviceValue) -> DeviceValue:
        return self.linear(self._minus_one, b, a)

    def scale(self, a: DeviceValue, s: DeviceValue) -> DeviceValue:
        return self.linear(s, a)

    def mul(self, a: DeviceValue, b: DeviceValue) -> DeviceValue:
        out = self._take(a.shape)
        self._add_op().dot(self._at(out), self._at(a), self._at(b), 1, m=self._count(a), ja=1, jb=1)
        return out

    def dot(self, a: DeviceValue, b: DeviceValue) -> DeviceValue:
        out = self._take((EF_WORDS,))
        self._add_op().dot(self._at(out), self._at(a), self._at(b), self._count(a))
        return out

    def total(self, a: DeviceValue) -> DeviceValue:
        out = self._take((EF_WORDS,))
        self._add_op().dot(self._at(out), self._at(a), self._at(self._one), self._count(a), sb=0)
        return out

    def matvec(self, matrix: DeviceValue, rows: int, v: DeviceValue) -> DeviceValue:
        c = self._count(v)
        out = self._take((rows, EF_WORDS))
        self._add_op().dot(self._at(out), self._at(matrix), self._at(v), c, m=rows, ja=c, jb=0)
        return out

    def vecmat(self, v: DeviceValue, matrix: DeviceValue) -> DeviceValue:
        r = self._count(v)
        c = self._count(matrix) // r
        out = self._take((c, EF_WORDS))
        self._add_op().dot(self._at(out), self._at(v), self._at(matrix), r, m=c, sb=c, ja=0, jb=1)
        return out

    def inv(self, a: DeviceValue) -> DeviceValue:
        out = self._take(a.shape)
        for i in range(self._count(a) if a.words else 0):
            self._add_op().inv(self._at(out) + EF_WORDS * i, self._at(a) + EF_WORDS * i)
        return out

    def powers_each(self, xs: DeviceValue, n: int) -> DeviceValue:
        m = self._count(xs) if xs.words else 0
        out = self._take((m * n, EF_WORDS))
        if m and n:
            self._add_op().powers(self._at(out), self._at(xs), n, m=m)
        return out

    def squares_each(self, xs: DeviceValue, n: int, reverse: bool = False) -> DeviceValue:
        m = self._count(xs) if xs.words else 0
        out = self._take((m * n, EF_WORDS))
        if m and n:
            self._add_op().squares(self._at(out), self._at(xs), n, reverse, m=m)
        return out

    def column(self, matrix: DeviceValue, cols: int, j: int) -> DeviceValue:
        rows = self._count(matrix) // cols
        out = self._take((rows, EF_WORDS))
        if rows:
            self._add_op().linear(self._at(out), self._at(matrix) + EF_WORDS * j, self._at(self._one), None, rows,
                                  sa=cols)
        return out

    def from_table(self, table) -> DeviceValue:
        """A copy of a backend table (a ``DeviceBuffer``, its buffers in order) in the arena: an EF table as a
        vector, a base table as base words."""
        out = self._take(table.shape)
        self.flush()
        batch = self.session.batch()
        per = table.handle.buffer_rows * table.handle.row_bytes
        for i, buffer in enumerate(table.handle.buffers):
            batch.copy(buffer, 0, out.buffer, out.offset + i * per, min(per, out.nbytes - i * per))
        return out

    def powers(self, x: DeviceValue, n: int, start: DeviceValue | None = None) -> DeviceValue:
        out = self._take((n, EF_WORDS))
        if n:
            self._add_op().powers(self._at(out), self._at(x), n, None if start is None else self._at(start))
        return out

    def squares(self, x: DeviceValue, n: int, reverse: bool = False) -> DeviceValue:
        out = self._take((n, EF_WORDS))
        if n:
            self._add_op().squares(self._at(out), self._at(x), n, reverse)
        return out

    def eq(self, point: DeviceValue) -> DeviceValue:
        k = self._count(point) if point.words else 0
        out = self._take((1 << k, EF_WORDS))
        self._add_op().eq(self._at(out), self._at(point), k)
        return out

    def concat(self, values) -> DeviceValue:
        counts = [self._count(v) for v in values]
        out = self._take((sum(counts), EF_WORDS))
        at = 0
        for value, n in zip(values, counts):
            if n:
                self._add_op().linear(self._at(out) + EF_WORDS * at, self._at(value), self._at(self._one), None, n)
            at += n
        return out

    def publish(self, value: DeviceValue) -> DeviceValue:
        if value.buffer is self._proof:
            return value
        out = self.session.regions.proof.take(value.shape)
        n = self._count(value) if value.words else 0
        if n:
            self._add_op().linear(self._at(out), self._at(value), self._at(self._one), None, n)
        return out
