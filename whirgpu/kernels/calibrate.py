"""Device ceilings, measured with GPU timestamps: copy bandwidth (bytes/s) and Montgomery products per second.

Kernel figures elsewhere are reported as fractions of these, measured in the same run on the same device.
Needs a runtime with timestamps (``set_profiling``); contracts of the kernels are in ``calibrate.wgsl``.
"""

from __future__ import annotations

import statistics

import numpy as np

from ..runtime.base import Runtime

WG = 256
CHAINS = 8  # independent product chains per thread in mul_chain


def _median_kernel_ns(rt: Runtime, record, runs: int) -> float:
    rt.set_profiling(True)
    try:
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
    """Bytes moved per second (read + write) by ``copy_vec4`` over ``nbytes`` buffers."""
    n = min(nbytes, rt.limits().max_storage_binding_size) // 16
    src, dst = rt.alloc(16 * n), rt.alloc(16 * n)
    rt.write(src, np.arange(4 * n, dtype=np.uint32) % 1000)
    kernel = rt.kernel("calibrate", "copy_vec4")
    ns = _median_kernel_ns(rt, lambda b: b.dispatch(kernel, [src, dst], np.array([n, 0], np.uint32),
                                                      -(-n // (4 * WG))), runs)
    return 2 * 16 * n / (ns * 1e-9)


def mul_throughput(rt: Runtime, threads: int = 1 << 20, rounds: int = 256, runs: int = 5) -> float:
    """Montgomery products per second (the runtime's multiply variant) over independent chains."""
    out = rt.alloc(4 * threads)
    kernel = rt.kernel("calibrate", "mul_chain")
    ns = _median_kernel_ns(rt, lambda b: b.dispatch(kernel, [out], np.array([threads, rounds], np.uint32),
                                                      -(-threads // WG)), runs)
    return threads * rounds * CHAINS / (ns * 1e-9)
