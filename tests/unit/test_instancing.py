"""``kernels.instancing``: the WGSL rewrite that runs one launch over K instances. Every kernel file is rewritten
(line numbers kept, every runtime-sized storage access offset, comments and fields untouched); a small kernel's
rewrite is checked word for word; slots past the stride table are refused. The rewritten kernels' results are
checked on the devices by tests/backend/test_instanced.py."""

from __future__ import annotations

import re

import pytest

from whirgpu.kernels.compose import compose, shader_root
from whirgpu.kernels.instancing import (MAX_SLOTS, STRIDE_BINDING, InstancingError, instanced_wgsl, layout_of)

STEMS = sorted(p.stem for p in (shader_root("wgsl") / "kernels").glob("*.wgsl"))

SMALL = """// a kernel: table[i] is read
@group(0) @binding(0) var<storage, read> table: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<storage, read> rc: array<vec4<u32>, 8>;
@group(0) @binding(3) var<uniform> params: Params;
fn get(i: u32) -> u32 { return out[out[i] & 3u] + params.n[i]; }
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    out[gid.x] = table[gid.x].x + rc[gid.x % 8u].y + get(gid.x);
}
"""


def test_a_small_kernel_word_for_word():
    assert instanced_wgsl(SMALL) == """// a kernel: table[i] is read
@group(0) @binding(0) var<storage, read> table: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<storage, read> rc: array<vec4<u32>, 8>;
@group(0) @binding(3) var<uniform> params: Params;
fn get(i: u32) -> u32 { return out[_io_out + (out[_io_out + (i)] & 3u)] + params.n[i]; }
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) _wi: vec3<u32>) { \
_io_table = _wi.z * (_whir_strides[0u][0u] / 16u); _io_out = _wi.z * (_whir_strides[0u][1u] / 4u);
    out[_io_out + (gid.x)] = table[_io_table + (gid.x)].x + rc[gid.x % 8u].y + get(gid.x);
}
var<private> _io_table: u32;
var<private> _io_out: u32;
@group(0) @binding(16) var<uniform> _whir_strides: array<vec4<u32>, 4>;
"""
    layout = layout_of(SMALL)
    assert layout.writable_slots == {1} and layout.fixed_slots == {2}


def test_an_entry_with_its_own_workgroup_id_uses_it():
    text = SMALL.replace("(@builtin(global_invocation_id) gid: vec3<u32>)",
                         "(@builtin(workgroup_id) wid: vec3<u32>, @builtin(global_invocation_id) gid: vec3<u32>)")
    out = instanced_wgsl(text)
    assert "_wi" not in out and "_io_out = wid.z * (_whir_strides[0u][1u] / 4u);" in out


def _undone(line: str) -> str:
    """``line`` with what the rewrite inserts taken out again: entry prologues, the added workgroup id, and every
    ``_io_name + (`` with its closing parenthesis."""
    line = re.sub(r" _io_\w+ = \w+\.z \* \(_whir_strides\[\du\]\[\du\] / (4|16)u\);", "", line)
    line = line.replace(", @builtin(workgroup_id) _wi: vec3<u32>", "").replace("@builtin(workgroup_id) _wi: vec3<u32>", "")
    while (m := re.search(r"_io_\w+ \+ \(", line)) is not None:
        depth, end = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(line[end], 0)
            end += 1
        line = line[:m.start()] + line[m.end():end - 1] + line[end:]
    return line


@pytest.mark.parametrize("stem", STEMS)
def test_every_kernel_is_rewritten(stem):
    source = compose("wgsl", stem, (("bb_mul", "u64"),), "babybear")
    out = instanced_wgsl(source.text)
    original, rewritten = source.text.splitlines(), out.splitlines()
    names = set(re.findall(r"var<storage,\s*(?:read|read_write)>\s*(\w+)\s*:\s*array<(?:u32|vec4<u32>|atomic<u32>)>;",
                           source.text))
    assert len(rewritten) == len(original) + len(names) + 1  # one offset per array, the stride table
    for before, after in zip(original, rewritten):
        assert _undone(after) == before  # only insertions, on the lines they belong to (comments untouched)
        for name in names:  # no access in code left without its offset
            assert not re.search(rf"(?<![\w.]){name}\s*\[(?!_io_{name} \+ \()", after.split("//")[0])
    assert rewritten[-1] == f"@group(0) @binding({STRIDE_BINDING}) var<uniform> _whir_strides: array<vec4<u32>, 4>;"
    entries = len(re.findall(r"@compute", source.text))
    assert sum(" _io_" in line and "_whir_strides[" in line for line in rewritten) == entries


def test_slots_past_the_stride_table_are_refused():
    late = SMALL.replace("@binding(1) var<storage, read_write> out", f"@binding({MAX_SLOTS}) var<storage, "
                                                                     "read_write> out")
    with pytest.raises(InstancingError, match="storage binding 16 outside slots 0 .. 15"):
        instanced_wgsl(late)
    with pytest.raises(InstancingError, match="no @compute entry point"):
        instanced_wgsl(SMALL.replace("@compute", ""))
    with pytest.raises(InstancingError, match="not closed"):
        instanced_wgsl(SMALL.replace("table[gid.x].x", "table[gid.x.x"))
