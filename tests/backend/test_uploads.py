"""Host -> device writes (``Runtime.write``) are bit-exact on every runtime, on both sides of the staged-upload
threshold and across the staging chunks (``runtime/upload.py``), at any 4-byte offset, in any order with other
writes and with batches; the staging buffers are made once and reused. The runtimes run with a tiny
``UploadPlan`` (64-byte threshold, 256-byte chunks, 3 slots, 2 threads with 16-byte shares) so that arrays of a
few hundred words take every path. The Metal runtime runs these checks against the fake Objective-C runtime
(``test_metal_runtime.py``)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from whirgpu.kernels import calibrate
from whirgpu.devices.limits import StorageMode
from whirgpu.runtime import upload
from whirgpu.runtime.upload import UploadPlan, chunk_ranges, copy_into

from .conftest import open_runtime

SHARED, PRIVATE = StorageMode.SHARED, StorageMode.PRIVATE
PLAN = UploadPlan(threshold=64, chunk_bytes=256, slots=3, threads=2)
BUFFER_WORDS = 1024
# (words, byte offset): below the threshold (1, 15), at it (16), just above with an odd count (17), one chunk
# (64), a chunk and a word (65), two chunks and a word (129), more chunks than slots (333, the ring wraps); offsets
# off 8 (wgpu's map alignment) and 16 bytes, one on a chunk boundary, and the last word of the buffer.
WRITES = [(1, 0), (15, 4), (16, 0), (17, 12), (64, 256), (65, 4), (129, 1020), (333, 8), (1, 4 * BUFFER_WORDS - 4),
          (BUFFER_WORDS, 0)]
# Back to back, no read between: disjoint, overlapping (staged over direct and direct over staged), nested.
SEQUENCE = [(200, 0), (100, 1200), (17, 40), (300, 28), (5, 1196), (129, 600), (64, 604), (1, 2000), (333, 1996)]
RUNTIMES = [("wgpu", "emulated"), ("dawn", "emulated"), ("msl-cpu", "mulhi")]


@pytest.fixture(autouse=True)
def _small_copy_shares(monkeypatch):
    monkeypatch.setattr(upload, "MIN_SHARE_BYTES", 16)  # a 256-byte chunk is copied by two threads


@pytest.fixture(scope="module", params=RUNTIMES, ids=[f"{name}-{mul}" for name, mul in RUNTIMES])
def runtime(request):
    """Every runtime; the staging ones (wgpu, dawn) with ``PLAN``."""
    name, mul = request.param
    return open_runtime(name, mul, **({} if name == "msl-cpu" else {"upload": PLAN}))


def _words(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)


def _filled(rt, mode: StorageMode, seed: int) -> tuple:
    """A ``mode`` buffer of BUFFER_WORDS random words (written whole, so staged), and its numpy model."""
    model = _words(BUFFER_WORDS, seed)
    buffer = rt.alloc(4 * BUFFER_WORDS, mode)
    rt.write(buffer, model)
    return buffer, model


def _write(rt, buffer, model: np.ndarray, words: int, offset: int, seed: int) -> None:
    data = _words(words, seed)
    rt.write(buffer, data, offset)
    model[offset // 4:offset // 4 + words] = data


# ---- checks shared with the Metal runtime on the fake Objective-C runtime -------------------------------------------

def check_writes(rt, mode: StorageMode) -> None:
    """Every write of WRITES lands where it should, each read back alone and with its surroundings."""
    buffer, model = _filled(rt, mode, 1)
    np.testing.assert_array_equal(rt.read(buffer), model)
    for seed, (words, offset) in enumerate(WRITES):
        _write(rt, buffer, model, words, offset, 100 + seed)
        np.testing.assert_array_equal(rt.read(buffer, 4 * words, offset), model[offset // 4:offset // 4 + words])
        np.testing.assert_array_equal(rt.read(buffer), model)
    rt.write(buffer, np.zeros(0, np.uint32), 8)  # an empty write is a no-op
    np.testing.assert_array_equal(rt.read(buffer), model)


def check_back_to_back(rt, mode: StorageMode) -> None:
    """SEQUENCE written without a read between: the last write to a word wins."""
    buffer, model = _filled(rt, mode, 2)
    for seed, (words, offset) in enumerate(SEQUENCE):
        _write(rt, buffer, model, words, offset, 200 + seed)
    np.testing.assert_array_equal(rt.read(buffer), model)


def check_writes_and_batches(rt, mode: StorageMode) -> None:
    """A batch submitted after a write sees it (a device copy and a kernel read the buffer), and a write after a
    submitted batch does not change what that batch read."""
    src, model = _filled(rt, mode, 3)
    first = model.copy()
    copied, kernel_out = rt.alloc(4 * BUFFER_WORDS, PRIVATE), rt.alloc(4 * BUFFER_WORDS, PRIVATE)
    _write(rt, src, model, 333, 8, 300)
    batch = rt.batch()
    batch.copy(src, 0, copied, 0, 4 * BUFFER_WORDS)
    vec4s = BUFFER_WORDS // 4
    batch.dispatch(rt.kernel("calibrate", "copy_vec4"), [src, kernel_out], np.array([vec4s, 0], np.uint32),
                   -(-vec4s // (4 * calibrate.WG)))
    batch.submit()
    rt.write(src, first)  # after the batch: it must have read the data written before it
    np.testing.assert_array_equal(rt.read(copied), model)
    np.testing.assert_array_equal(rt.read(kernel_out), model)
    np.testing.assert_array_equal(rt.read(src), first)


# ---- every runtime --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", [SHARED, PRIVATE], ids=["shared", "private"])
def test_writes_are_bit_exact(runtime, mode):
    check_writes(runtime, mode)


@pytest.mark.parametrize("mode", [SHARED, PRIVATE], ids=["shared", "private"])
def test_back_to_back_writes_last_wins(runtime, mode):
    check_back_to_back(runtime, mode)


@pytest.mark.parametrize("mode", [SHARED, PRIVATE], ids=["shared", "private"])
def test_writes_are_ordered_with_batches(runtime, mode):
    check_writes_and_batches(runtime, mode)


def test_staging_buffers_are_made_once(runtime, monkeypatch):
    """The first staged write makes the whole ring; later writes, large and small, allocate no buffer."""
    if runtime.name not in ("wgpu", "dawn"):
        pytest.skip(f"{runtime.name} writes host memory directly")
    buffer = runtime.alloc(4 * BUFFER_WORDS)
    runtime.write(buffer, _words(20, 4))  # one chunk
    ring = list(runtime._uploads)
    assert len(ring) == PLAN.slots
    usage = runtime.wgpu.BufferUsage
    assert all(b.size == PLAN.chunk_bytes and b.usage == usage.MAP_WRITE | usage.COPY_SRC for b in ring)
    made = []
    create = runtime.device.create_buffer
    monkeypatch.setattr(runtime.device, "create_buffer", lambda **kw: made.append(kw) or create(**kw))
    for seed, (words, offset) in enumerate(SEQUENCE + WRITES):
        runtime.write(buffer, _words(words, 400 + seed), offset)
    assert made == [] and runtime._uploads == ring


@pytest.mark.parametrize("words", [1, 100], ids=["direct", "staged"])
def test_wgpu_refuses_offsets_off_four_bytes(runtime, words):
    if runtime.name not in ("wgpu", "dawn"):
        pytest.skip(f"{runtime.name} writes host memory directly")
    buffer, model = _filled(runtime, PRIVATE, 6)
    with pytest.raises(ValueError, match="offset 6: wgpu writes need offsets that are multiples of 4"):
        runtime.write(buffer, _words(words, 7), 6)
    _write(runtime, buffer, model, 333, 4, 8)  # the ring is still usable
    np.testing.assert_array_equal(runtime.read(buffer), model)


# ---- the plan and the host-side copy --------------------------------------------------------------------------------

def test_chunk_ranges_cover_the_transfer():
    assert chunk_ranges(0, 8) == []
    assert chunk_ranges(4, 8) == [(0, 4)]
    assert chunk_ranges(8, 8) == [(0, 8)]
    assert chunk_ranges(20, 8) == [(0, 8), (8, 8), (16, 4)]


@pytest.mark.parametrize("nbytes", [0, 4, 16, 100, 1028, 4096 + 60])
@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_copy_into_is_exact_however_split(nbytes, threads):
    src = _words(nbytes // 4, nbytes).view(np.uint8)
    dst = np.zeros(nbytes, np.uint8)
    copy_into(dst, src, threads)
    np.testing.assert_array_equal(dst, src)


@pytest.mark.parametrize("bad", [dict(chunk_bytes=0), dict(chunk_bytes=12), dict(slots=0), dict(threads=0),
                                 dict(threshold=-1)])
def test_bad_plans_are_refused(bad):
    with pytest.raises(ValueError, match="bad upload plan"):
        UploadPlan(**bad)


def test_default_plan():
    plan = UploadPlan()
    assert (plan.threshold, plan.chunk_bytes, plan.slots) == (1 << 20, 32 << 20, 4) and 1 <= plan.threads <= 4


def test_a_write_is_spread_over_the_slots():
    """Chunks are the write over the slots in whole MiB (a write that fits the ring never waits for a slot), at most
    ``chunk_bytes``, and at least ``min_chunk`` (a write of up to 8 MiB is one chunk); a plan whose chunks are
    below a MiB keeps them."""
    plan, mib = UploadPlan(), 1 << 20
    assert [plan.chunk_for(n) for n in (4, mib, 4 * mib + 4, 8 * mib, 16 * mib, 64 * mib, 256 * mib)] == \
        [mib, mib, 5 * mib, 8 * mib, 8 * mib, 16 * mib, 32 * mib]
    assert UploadPlan(min_chunk=0).chunk_for(4 * mib) == mib  # spread over the four slots
    assert [PLAN.chunk_for(n) for n in (64, 1332)] == [256, 256]


def test_a_larger_write_grows_the_ring(monkeypatch):
    """A write that needs larger chunks than the ring has makes the ring anew, larger; the data stays exact and
    a later smaller write allocates nothing."""
    plan = UploadPlan(threshold=64, chunk_bytes=4 << 20, slots=2, threads=1)
    rt = open_runtime("wgpu", "emulated", upload=plan)
    buffer = rt.alloc(8 << 20, PRIVATE)
    small, large = _words(1 << 18, 1), _words(1 << 21, 2)  # 1 MiB (1 MiB chunks), 8 MiB (4 MiB chunks)
    rt.write(buffer, small)
    assert [b.size for b in rt._uploads] == [1 << 20] * 2
    rt.write(buffer, large)
    assert [b.size for b in rt._uploads] == [4 << 20] * 2
    ring = list(rt._uploads)
    rt.write(buffer, small, 4 << 20)
    assert rt._uploads == ring
    np.testing.assert_array_equal(rt.read(buffer), np.concatenate([large[:1 << 20], small, large[(1 << 20) + (1 << 18):]]))


def test_a_read_later_maps_the_upload_slots_again(runtime):
    """A staged write leaves its slot unmapped (its copy in flight); a ``read_later`` asks for every unmapped
    slot's map with its own, and its words settle them: afterwards every slot is mapped and no map is pending, so
    the next write finds its slot ready; the data read back and written later stay exact."""
    if runtime.name not in ("wgpu", "dawn"):
        pytest.skip(f"{runtime.name} writes host memory directly")
    buffer, model = _filled(runtime, PRIVATE, 11)
    assert any(slot.map_state == "unmapped" for slot in runtime._uploads)
    words = runtime.read_later(buffer, 4 * BUFFER_WORDS)
    np.testing.assert_array_equal(words(), model)
    assert all(slot.map_state == "mapped" for slot in runtime._uploads)
    assert all(pending is None for pending in runtime._upload_maps)
    _write(runtime, buffer, model, 333, 8, 12)  # the ring wraps: every slot taken mapped, one again unmapped
    np.testing.assert_array_equal(runtime.read(buffer), model)


def test_a_read_later_spins_only_off_cpu_adapters_and_reads_the_same(runtime, monkeypatch):
    """``read_later`` spins on non-blocking polls before it blocks, on wgpu-native off a CPU adapter (lavapipe: its
    work runs on the host's cores; Dawn: its map callbacks do not fire on a device poll); made to spin on lavapipe
    anyway, it polls, stops when the map resolves and reads the same words."""
    if runtime.name not in ("wgpu", "dawn"):
        pytest.skip(f"{runtime.name} reads host memory directly")
    cpu = runtime.adapter.info.get("adapter_type") == "CPU"
    assert (runtime.read_spin_seconds == 0) == (cpu or runtime.name == "dawn")
    if runtime.name == "dawn":
        return
    buffer, model = _filled(runtime, PRIVATE, 13)
    monkeypatch.setattr(runtime, "read_spin_seconds", 5.0)
    polls = []
    poll = getattr(runtime.device, "_poll", None)
    if poll is not None:
        monkeypatch.setattr(runtime.device, "_poll", lambda block=False: polls.append(block) or poll(block))
    start = time.perf_counter()
    np.testing.assert_array_equal(runtime.read_later(buffer, 4 * BUFFER_WORDS)(), model)
    # the spin ends when the map resolves, not at its bound (a correctness bound, far above any device's time)
    assert time.perf_counter() - start < 2.5, "the spin ran to its bound: it does not see the map resolve"
    assert all(block is False for block in polls)
