"""The msl-cpu runtime's own semantics, with small kernels written here: threadgroup memory shared by a group
and private to it, barriers that every thread must reach, 32-lane simd-group shuffles, the call-graph check
that lets barrier-free kernels skip fibers, and compiler messages mapped back to file:line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from whirgpu.errors import KernelFault, ShaderCompileError
from whirgpu.kernels.compose import ComposedSource, prelude
from whirgpu.kernels.registry import KernelSpec, Entry
from whirgpu.runtime.msl_cpu_rt import synchronising_entries

from .conftest import open_runtime

KERNELS = """\
struct Params { uint n; uint _pad0; uint _pad1; uint _pad2; };

uint pass_through(uint x) {
    return x;
}

void wait_for_group() {
    threadgroup_barrier(mem_flags::mem_threadgroup);
}

// out[g * T + t] = in[g * T + (T - 1 - t)]: a reversal through threadgroup memory
kernel void reverse_groups(device const uint* src [[buffer(0)]], device uint* dst [[buffer(1)]],
                           constant Params& params [[buffer(2)]], uint lid [[thread_index_in_threadgroup]],
                           uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint tile[256];
    uint base = (wid.x + wid.y * nwg.x) * 256u;
    if (base >= params.n) {
        return;  // the 2-D grid's overhang: uniform per group
    }
    tile[lid] = src[base + lid];
    wait_for_group();
    dst[base + lid] = pass_through(tile[255u - lid]);
}

// out = (shuffle_xor(v, 5), shuffle_down(v, 3), shuffle_up(v, 2), broadcast(v, 7)) per thread
kernel void shuffles(device const uint* src [[buffer(0)]], device uint4* dst [[buffer(1)]],
                     constant Params& params [[buffer(2)]], uint3 gid [[thread_position_in_grid]]) {
    uint v = src[gid.x];
    dst[gid.x] = uint4(simd_shuffle_xor(v, ushort(5)), simd_shuffle_down(v, ushort(3)),
                       simd_shuffle_up(v, ushort(2)), simd_broadcast(v, ushort(7)));
}

// thread 0 leaves before the barrier: undefined on a GPU, an error here
kernel void diverge(device const uint* src [[buffer(0)]], device uint* dst [[buffer(1)]],
                    constant Params& params [[buffer(2)]], uint lid [[thread_index_in_threadgroup]]) {
    if (lid == 0u) {
        return;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    dst[lid] = src[lid];
}

kernel void plain(device const uint* src [[buffer(0)]], device uint* dst [[buffer(1)]],
                  constant Params& params [[buffer(2)]], uint3 gid [[thread_position_in_grid]]) {
    dst[gid.x] = pass_through(src[gid.x]) + 1u;
}
"""

SPEC = KernelSpec("runtime_selftest", ("n", "_pad0", "_pad1", "_pad2"), {
    "reverse_groups": Entry(("src", "dst"), 256),
    "shuffles": Entry(("src", "dst"), 64),
    "diverge": Entry(("src", "dst"), 64),
    "plain": Entry(("src", "dst"), 64),
})


def _source(body: str) -> ComposedSource:
    head = prelude("msl").splitlines()
    lines = head + body.splitlines()
    origins = [("<prelude>", i + 1) for i in range(len(head))] + \
        [("selftest.metal", i + 1) for i in range(len(body.splitlines()))]
    return ComposedSource("\n".join(lines) + "\n", tuple(origins))


@pytest.fixture(scope="module")
def rt():
    return open_runtime("msl-cpu", "mulhi", max_groups_per_dim=7, workers=2)


def _run(rt, entry: str, src: np.ndarray, out_words: int, n_groups: int) -> np.ndarray:
    kernel = rt.kernel_from_source(_source(KERNELS), SPEC, entry)
    a, b = rt.alloc(src.nbytes), rt.alloc(4 * out_words)
    rt.write(a, src)
    batch = rt.batch()
    batch.dispatch(kernel, [a, b], np.array([src.size], np.uint32), n_groups)
    batch.submit()
    return rt.read(b)


def test_threadgroup_memory_is_shared_within_a_group_and_private_to_it(rt):
    # 40 groups over a 2-D grid (7 per row) and 2 OS threads: groups run concurrently, each with its own tile
    src = np.random.default_rng(3).integers(0, 2**32, 40 * 256, dtype=np.uint64).astype(np.uint32)
    out = _run(rt, "reverse_groups", src, src.size, 40)
    np.testing.assert_array_equal(out, src.reshape(40, 256)[:, ::-1].reshape(-1))


def test_simd_shuffles_exchange_within_32_lanes(rt):
    src = np.arange(1000, 1064, dtype=np.uint32)
    out = _run(rt, "shuffles", src, 4 * 64, 1).reshape(64, 4)
    lane = np.arange(64) % 32
    first = np.arange(64) - lane
    np.testing.assert_array_equal(out[:, 0], src[first + (lane ^ 5)])
    np.testing.assert_array_equal(out[:, 1], src[first + np.where(lane + 3 < 32, lane + 3, lane)])
    np.testing.assert_array_equal(out[:, 2], src[first + np.where(lane >= 2, lane - 2, lane)])
    np.testing.assert_array_equal(out[:, 3], src[first + 7])


def test_a_barrier_not_every_thread_reaches_is_a_fault(rt):
    src = np.arange(64, dtype=np.uint32)
    with pytest.raises(KernelFault, match="barrier divergence: of 64 threads, 63 wait at threadgroup_barrier"):
        _run(rt, "diverge", src, 64, 1)
    out = _run(rt, "plain", src, 64, 1)  # the runtime is usable afterwards
    np.testing.assert_array_equal(out, src + 1)


def test_call_graph_finds_the_kernels_that_synchronise():
    found = synchronising_entries(_source(KERNELS).text)
    assert {"reverse_groups", "shuffles", "diverge", "wait_for_group"} <= found
    assert not {"plain", "pass_through"} & found


def test_compile_errors_name_the_file_and_line(rt):
    broken = KERNELS.replace("dst[gid.x] = pass_through(src[gid.x]) + 1u;", "dst[gid.x] = no_such_function(1u);")
    line = broken.splitlines().index("    dst[gid.x] = no_such_function(1u);") + 1
    with pytest.raises(ShaderCompileError, match=f"selftest.metal:{line}:"):
        rt.kernel_from_source(_source(broken), SPEC, "plain")


SEQUENCE = """
import numpy as np
from whirgpu.cli.commands import main
for backend in ("msl-cpu", "wgpu"):
    main(["prove", "-n", "8", "-k", "2", "-r", "1", "--security", "32", "--pow-bits", "5", "--seed", "4",
          "--backend", backend, "-o", OUT])
from whirgpu.runtime.msl_cpu_rt import MslCpuRuntime
from whirgpu.kernels import ntt
rt = MslCpuRuntime()
data = np.arange(1 << 14, dtype=np.uint32)
buffer = rt.alloc(data.nbytes)
rt.write(buffer, data)
batch = rt.batch()
ntt.ntt_columns(rt, batch, buffer, 10, 4)
batch.submit()
print("survived")
"""


def test_a_second_runtime_after_wgpu_work_survives(tmp_path):
    """A proof on msl-cpu, one on wgpu, then a fresh msl-cpu runtime: this sequence once crashed the process
    (each runtime had its own cffi FFI and library handles; now both are loaded once per process). In a child
    process, so a regression fails this test instead of killing the run."""
    open_runtime("wgpu", "u64")  # the sequence needs wgpu (skip, or fail when required)
    script = f"OUT = {str(tmp_path / 'p.whir')!r}\n" + SEQUENCE
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0 and done.stdout.strip().endswith("survived"), (done.returncode, done.stderr[-2000:])
