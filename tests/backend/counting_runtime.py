"""A runtime wrapper for tests that counts what really reaches the runtime: submissions, dispatches, copies,
reads (and their bytes), writes (and their bytes), replayed recordings included. Launch-count tests compare it
with what a proof's launch program says (``GpuBackend.last_program``), and count primitives outside a proof."""

from __future__ import annotations

import numpy as np

from whirgpu.bench.proof_profile import Counts  # the counts bench --kernels reports


class _Batch:
    def __init__(self, counter: "CountingRuntime"):
        self._counter = counter
        self._batch = counter.rt.batch()

    def dispatch(self, kernel, buffers, params, n_groups) -> None:
        self._counter.counts.dispatches += 1
        self._batch.dispatch(kernel, buffers, params, n_groups)

    def copy(self, src, src_offset, dst, dst_offset, nbytes) -> None:
        self._counter.counts.copies += 1
        self._batch.copy(src, src_offset, dst, dst_offset, nbytes)

    def submit(self) -> None:
        self._counter.counts.submissions += 1
        self._batch.submit()


class _Recorded:
    def __init__(self, counter: "CountingRuntime", launches: list):
        self._counter = counter
        self._launches = launches
        self._inner = counter.rt.recorded_batch(launches)

    def submit(self) -> None:
        counts = self._counter.counts
        counts.submissions += 1
        for launch in self._launches:
            if hasattr(launch, "kernel"):
                counts.dispatches += 1
            else:
                counts.copies += 1
        self._inner.submit()

    def close(self) -> None:
        self._inner.close()


class CountingRuntime:
    """``rt`` as the backend sees it, forwarding everything, counting into ``counts`` (``reset`` clears it)."""

    def __init__(self, rt):
        self.rt = rt
        self.reset()

    def reset(self) -> None:
        self.counts = Counts()

    def batch(self) -> _Batch:
        return _Batch(self)

    def recorded_batch(self, launches) -> _Recorded:
        return _Recorded(self, launches)

    def read(self, buffer, nbytes=None, offset=0):
        out = self.rt.read(buffer, nbytes, offset)
        self.counts.reads += 1
        self.counts.read_bytes += out.nbytes
        return out

    def staged_read(self, buffer, nbytes):
        return None  # every read through read_later, where it is counted

    def read_later(self, buffer, nbytes):
        pending = self.rt.read_later(buffer, nbytes)

        def words(pick=None):
            out = pending()
            self.counts.reads += 1
            self.counts.read_bytes += out.nbytes
            return out if pick is None else pick(out)

        return words

    def write(self, buffer, data, offset=0):
        self.rt.write(buffer, data, offset)
        self.counts.writes += 1
        self.counts.write_bytes += np.asarray(data).nbytes

    def __getattr__(self, name):
        return getattr(self.rt, name)
