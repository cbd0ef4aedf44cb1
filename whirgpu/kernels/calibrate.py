"""Device ceilings and host overheads, measured on one runtime: what kernel and proof timings are compared with.

Ceilings (kernel time from ``kernel_times``, so they need a runtime that can time its kernels, ``kernel_timing``):
- copy bandwidth: bytes moved per second (read + write) by ``copy_vec4`` (contract in ``calibrate.wgsl``);
- Montgomery products per second with the runtime's multiply variant, over independent ``mul_chain`` chains.
Host overheads (host wall time, ``time.perf_counter``; need no timestamps):
- dispatch: the extra wall time of one more tiny dispatch in a submission (slope between batches of 1 and
  ``DISPATCHES`` one-workgroup ``mul_chain`` launches, each submitted and waited for);
- round trip: submit + wait of a batch holding one tiny dispatch;
- readback latency (16 bytes) and bulk readback / upload bandwidth (``Runtime.read`` / ``write``), on buffers of
  the storage mode the caller's proofs read and write (``mode``);
- table upload bandwidth at fixed sizes (``UPLOAD_BYTES``: 16 and 64 MiB): what uploading a polynomial costs,
  through exactly its path (``Runtime.write`` of a new array into a ``mode`` buffer, waited for), with the
  runtime's staging buffers already made, so sizes and runtimes compare directly.
Sizes adapt to the device: each measurement grows its size until one run takes ``target_s`` or a cap is met
(256 MiB copies bounded by the storage-binding and buffer limits; 2^20 threads x 1024 rounds; 64 MiB
transfers), so a software adapter finishes in seconds and a large GPU is timed on large enough work.
"""

from __future__ import annotations

import itertools
import statistics
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from ..devices.limits import StorageMode
from ..runtime.base import Runtime

WG = 256
CHAINS = 8  # independent product chains per thread in mul_chain
MiB = 1 << 20
COPY_BYTES = (4 * MiB, 256 * MiB)  # first and largest buffer of the copy measurement
MUL_THREADS = (1 << 14, 1 << 20)
MUL_ROUNDS = (64, 1024)
TRANSFER_BYTES = (MiB, 64 * MiB)
UPLOAD_BYTES = (16 * MiB, 64 * MiB)
DISPATCHES = 64  # tiny dispatches in the long batch of the dispatch-overhead slope
TARGET_S = 0.005  # a measurement stops growing once one run takes this long
GROWTH = 4

# What ``kernel_times`` measures on each runtime (metal_rt times whole command buffers; msl-cpu times each
# launch on the host's clock, its CPU being the 'GPU').
_TIMING = {"wgpu": "GPU timestamps per dispatch", "dawn": "GPU timestamps per dispatch", "metal": "command-buffer GPU time",
           "msl-cpu": "host wall time per launch, on the CPU"}


def kernel_timing(rt: Runtime) -> str | None:
    """How ``rt.kernel_times`` times kernels, in words; None when the runtime cannot (a wgpu adapter without
    ``timestamp-query``)."""
    if rt.name in ("wgpu", "dawn") and not rt.limits().has_timestamps:
        return None
    return _TIMING.get(rt.name)


@dataclass(frozen=True)
class Calibration:
    """One runtime's ceilings and overheads (SI units: bytes/s, products/s, seconds). The ceilings are None when
    the runtime cannot time kernels (``timing`` None). ``sizes`` records what was measured: ``copy_bytes`` (per
    buffer), ``mul_threads``, ``mul_rounds``, ``dispatches``, ``transfer_bytes``. ``upload_bytes_per_s``: table
    upload bandwidth per size in bytes (keys are decimal strings, as JSON keeps them; sizes over the device's
    buffer limit are left out)."""

    device: str
    runtime: str
    mul: str
    timing: str | None
    copy_bytes_per_s: float | None
    products_per_s: float | None
    dispatch_s: float
    round_trip_s: float
    read_latency_s: float
    read_bytes_per_s: float
    write_bytes_per_s: float
    mode: str
    sizes: dict[str, int] = field(default_factory=dict)
    upload_bytes_per_s: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


# -- ceilings (kernel time) ------------------------------------------------------------------------------------
def _median_kernel_ns(rt: Runtime, record, runs: int) -> float:
    rt.set_profiling(True)
    try:
        rt.kernel_times()  # drop times recorded before (Metal records command buffers all the time)
        times = []
        for _ in range(runs + 1):
            batch = rt.batch()
            record(batch)
            batch.submit()
            times.append(sum(ns for _, ns in rt.kernel_times()))
        return statistics.median(times[1:])
    finally:
        rt.set_profiling(False)


def copy_bandwidth(rt: Runtime, nbytes: int = 1 << 28, runs: int = 5) -> float:
    """Bytes moved per second (read + write) by ``copy_vec4`` over two ``nbytes`` buffers (fewer if the
    storage-binding limit is lower)."""
    return _copy_ns(rt, nbytes, runs)[0]


def _copy_ns(rt: Runtime, nbytes: int, runs: int) -> tuple[float, float, int]:
    """(bytes/s, kernel ns, bytes per buffer) of one copy measurement."""
    n = max(1, min(nbytes, rt.limits().max_storage_binding_size) // 16)
    src, dst = rt.alloc(16 * n), rt.alloc(16 * n)
    rt.write(src, np.arange(4 * n, dtype=np.uint32) % 1000)  # written, so no page is a shared zero page
    kernel = rt.kernel("calibrate", "copy_vec4")
    ns = _median_kernel_ns(rt, lambda b: b.dispatch(kernel, [src, dst], np.array([n, 0], np.uint32),
                                                      -(-n // (4 * WG))), runs)
    return 2 * 16 * n / (ns * 1e-9), ns, 16 * n


def mul_throughput(rt: Runtime, threads: int = 1 << 20, rounds: int = 256, runs: int = 5) -> float:
    """Montgomery products per second (the runtime's multiply variant) over independent chains."""
    return _mul_ns(rt, threads, rounds, runs)[0]


def _mul_ns(rt: Runtime, threads: int, rounds: int, runs: int) -> tuple[float, float]:
    out = rt.alloc(4 * threads)
    kernel = rt.kernel("calibrate", "mul_chain")
    ns = _median_kernel_ns(rt, lambda b: b.dispatch(kernel, [out], np.array([threads, rounds], np.uint32),
                                                      -(-threads // WG)), runs)
    return threads * rounds * CHAINS / (ns * 1e-9), ns


def _copy_cap(rt: Runtime) -> int:
    limits = rt.limits()
    return max(16, min(COPY_BYTES[1], limits.max_storage_binding_size, limits.max_buffer_size))


def adaptive_copy_bandwidth(rt: Runtime, runs: int = 5, target_s: float = TARGET_S) -> tuple[float, int]:
    """(bytes/s, bytes per buffer): buffers grow from 4 MiB until one copy takes ``target_s`` or the cap."""
    nbytes, cap = min(COPY_BYTES[0], _copy_cap(rt)), _copy_cap(rt)
    while True:
        _, ns, used = _copy_ns(rt, nbytes, 1)
        if ns * 1e-9 >= target_s or nbytes >= cap:
            break
        nbytes = min(cap, nbytes * GROWTH)
    return _copy_ns(rt, used, runs)[0], used


def adaptive_mul_throughput(rt: Runtime, runs: int = 5, target_s: float = TARGET_S) -> tuple[float, int, int]:
    """(products/s, threads, rounds): threads grow to 2^20 first (to fill the device), then rounds to 1024,
    until one launch takes ``target_s``."""
    threads, rounds = MUL_THREADS[0], MUL_ROUNDS[0]
    while True:
        _, ns = _mul_ns(rt, threads, rounds, 1)
        if ns * 1e-9 >= target_s or (threads >= MUL_THREADS[1] and rounds >= MUL_ROUNDS[1]):
            break
        if threads < MUL_THREADS[1]:
            threads = min(MUL_THREADS[1], threads * GROWTH)
        else:
            rounds = min(MUL_ROUNDS[1], rounds * GROWTH)
    return _mul_ns(rt, threads, rounds, runs)[0], threads, rounds


# -- host overheads (wall time) --------------------------------------------------------------------------------
def _median_wall_s(fn, runs: int) -> float:
    fn()  # warm-up: pipelines, bind groups, staging and params buffers
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def dispatch_overhead(rt: Runtime, dispatches: int = DISPATCHES, runs: int = 9) -> tuple[float, float]:
    """(seconds per extra dispatch in one submission, seconds of one submit + wait round trip with one
    dispatch). Every dispatch is one workgroup of ``mul_chain`` doing no products."""
    out = rt.alloc(4 * WG)
    kernel = rt.kernel("calibrate", "mul_chain")
    params = np.array([1, 0], np.uint32)

    def submit(k: int):
        batch = rt.batch()
        for _ in range(k):
            batch.dispatch(kernel, [out], params, 1)
        batch.submit()
        rt.wait()

    one = _median_wall_s(lambda: submit(1), runs)
    many = _median_wall_s(lambda: submit(dispatches), runs)
    # Timer noise can make the slope of a very cheap dispatch negative; an overhead is never below zero.
    return max((many - one) / (dispatches - 1), 0.0), one


def readback_latency(rt: Runtime, mode: StorageMode = StorageMode.SHARED, runs: int = 21) -> float:
    """Seconds to read back 16 bytes of a ``mode`` buffer (no work pending)."""
    buffer = rt.alloc(16, mode)
    rt.write(buffer, np.arange(4, dtype=np.uint32))
    rt.wait()
    return _median_wall_s(lambda: rt.read(buffer, 16), runs)


def transfer_bandwidth(rt: Runtime, mode: StorageMode = StorageMode.SHARED, runs: int = 5,
                       target_s: float = TARGET_S) -> tuple[float, float, int]:
    """(readback bytes/s, upload bytes/s, bytes) for one ``mode`` buffer that grows from 1 MiB until a readback
    takes ``target_s`` or reaches 64 MiB (bounded by the buffer limit)."""
    cap = max(16, min(TRANSFER_BYTES[1], rt.limits().max_buffer_size))
    nbytes = min(TRANSFER_BYTES[0], cap)
    while True:
        buffer = rt.alloc(nbytes, mode)
        data = np.arange(nbytes // 4, dtype=np.uint32)
        rt.write(buffer, data)
        rt.wait()
        start = time.perf_counter()
        rt.read(buffer)
        if time.perf_counter() - start >= target_s or nbytes >= cap:
            break
        nbytes = min(cap, nbytes * GROWTH)

    def upload():
        rt.write(buffer, data)
        rt.wait()

    read_s = _median_wall_s(lambda: rt.read(buffer), runs)
    write_s = _median_wall_s(upload, runs)
    return nbytes / read_s, nbytes / write_s, nbytes


def table_upload_bandwidth(rt: Runtime, nbytes: int, mode: StorageMode = StorageMode.SHARED, runs: int = 5) -> float:
    """Bytes/s of a table upload of ``nbytes``: ``Runtime.write`` of a whole array into a ``mode`` buffer, then
    ``wait``; the median of ``runs`` after a warm-up write (which makes the runtime's staging buffers). The writes
    alternate between two arrays of different words, each already in memory, so every one carries new content."""
    buffer = rt.alloc(nbytes, mode)
    words = np.arange(nbytes // 4, dtype=np.uint32) * np.uint32(2654435761)
    tables = itertools.cycle([words, words ^ np.uint32(0x5A5A5A5A)])

    def upload():
        rt.write(buffer, next(tables))
        rt.wait()

    return nbytes / _median_wall_s(upload, runs)


# -- all of it ----------------------------------------------------------------------------------------------------
def calibrate(rt: Runtime, mode: StorageMode = StorageMode.SHARED, runs: int = 5,
              target_s: float = TARGET_S) -> Calibration:
    """Every ceiling and overhead of ``rt`` (``mode``: the storage mode of the buffers transfers are timed on;
    ``runs``: the median is over this many runs after a warm-up)."""
    limits = rt.limits()
    timing = kernel_timing(rt)
    sizes: dict[str, int] = {}
    copy_bps = products_ps = None
    if timing is not None:
        copy_bps, sizes["copy_bytes"] = adaptive_copy_bandwidth(rt, runs, target_s)
        products_ps, sizes["mul_threads"], sizes["mul_rounds"] = adaptive_mul_throughput(rt, runs, target_s)
    dispatch_s, round_trip_s = dispatch_overhead(rt, runs=max(runs, 9))
    sizes["dispatches"] = DISPATCHES
    read_latency_s = readback_latency(rt, mode, runs=max(runs, 21))
    read_bps, write_bps, sizes["transfer_bytes"] = transfer_bandwidth(rt, mode, runs, target_s)
    uploads = {str(n): table_upload_bandwidth(rt, n, mode, runs) for n in UPLOAD_BYTES if n <= limits.max_buffer_size}
    kind = f" [{limits.device_type}]" if limits.device_type else ""
    return Calibration(
        device=f"{limits.name}{kind}", runtime=rt.name, mul=getattr(rt, "mul", "?"), timing=timing,
        copy_bytes_per_s=copy_bps, products_per_s=products_ps, dispatch_s=dispatch_s, round_trip_s=round_trip_s,
        read_latency_s=read_latency_s, read_bytes_per_s=read_bps, write_bytes_per_s=write_bps, mode=mode.value,
        sizes=sizes, upload_bytes_per_s=uploads)
