"""Instanced WGSL: one launch over K independent copies of a kernel's data (``prove_many``'s instanced replays).
The WebGPU runtime compiles every kernel so rewritten; a launch whose strides are all zero is one instance.

``instanced_wgsl(text)`` rewrites a composed WGSL kernel so that workgroup (x, y, z) works on instance z: every
access ``name[i]`` to a runtime-sized storage array becomes ``name[_io_name + (i)]``, where ``_io_name`` is the
instance's element offset, ``workgroup_id.z * stride(slot) / element bytes``, set at the top of every entry
point. The strides (bytes per instance, one per binding slot 0 .. MAX_SLOTS - 1; 0: every instance reads the same
words) come in a uniform ``array<vec4<u32>, STRIDE_VEC4S>`` at binding ``STRIDE_BINDING`` (past every slot, so
entry points whose params sit at different slots share it).

Contracts:
- Fixed-size storage arrays (``array<T, N>``: the round constants) are not rewritten: their slot's stride must be
  0, and ``InstancedLayout.fixed_slots`` names them so the caller can check.
- The x and y grid and everything a kernel computes from them are unchanged; kernels must not read ``.z`` of a
  workgroup or invocation id or of ``num_workgroups`` (none does: their grids are 2-D).
- Line numbers are kept (declarations go at the end, parameters and offsets on the entry's own line), so a
  compiler diagnostic still maps to the kernel's file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STRIDE_VEC4S = 4
MAX_SLOTS = 4 * STRIDE_VEC4S  # binding slots 0 .. 15 may be storage arrays
STRIDE_BINDING = MAX_SLOTS

_STORAGE = re.compile(r"@group\(0\)\s*@binding\((\d+)\)\s*var<storage,\s*(read|read_write)>\s*(\w+)\s*:\s*"
                      r"array<\s*(atomic<u32>|u32|vec4<u32>)\s*(,\s*\w+\s*)?>\s*;")
_UNIFORM = re.compile(r"@group\(0\)\s*@binding\((\d+)\)\s*var<uniform>")
_ENTRY = re.compile(r"@compute\s*@workgroup_size\([^)]*\)\s*fn\s+(\w+)\s*\(")
_WORKGROUP_ID = re.compile(r"@builtin\(workgroup_id\)\s*(\w+)\s*:")
_ELEMENT_BYTES = {"u32": 4, "atomic<u32>": 4, "vec4<u32>": 16}


class InstancingError(ValueError):
    """A kernel this transform cannot instance (a declaration or an access it does not recognise)."""


@dataclass(frozen=True)
class InstancedLayout:
    """A kernel's storage slots: ``writable_slots`` (bound ``read_write`` by some entry point), ``fixed_slots``
    (fixed-size arrays: stride 0 only)."""

    writable_slots: frozenset
    fixed_slots: frozenset


def layout_of(text: str) -> InstancedLayout:
    """The binding slots of a composed WGSL kernel, rewritten or not (``InstancedLayout``)."""
    if any(MAX_SLOTS <= int(m.group(1)) != STRIDE_BINDING for m in _UNIFORM.finditer(text)):
        raise InstancingError(f"a uniform binding past slot {MAX_SLOTS - 1}")
    writable, fixed = set(), set()
    for m in _STORAGE.finditer(text):
        slot = int(m.group(1))
        if slot >= MAX_SLOTS:
            raise InstancingError(f"storage binding {slot} outside slots 0 .. {MAX_SLOTS - 1}")
        if m.group(2) == "read_write":
            writable.add(slot)
        if m.group(5):
            fixed.add(slot)
    return InstancedLayout(frozenset(writable), frozenset(fixed))


def _close_bracket(text: str, open_at: int) -> int:
    """Index of the ``]`` matching the ``[`` at ``open_at``."""
    depth = 0
    for i in range(open_at, len(text)):
        c = text[i]
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i
    raise InstancingError("an index bracket is not closed")


def _close_paren(text: str, open_at: int) -> int:
    """Index of the ``)`` matching the ``(`` at ``open_at``."""
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise InstancingError("an entry point's parameter list is not closed")


def _rewrite_accesses(text: str, names: list[str]) -> str:
    """Every ``name[expr]`` in code (not in a comment, not a field ``.name[``) as ``name[_io_name + (expr)]``,
    nested accesses included."""
    code = re.sub(r"//[^\n]*", lambda m: " " * len(m.group()), text)  # comments blanked, positions kept
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, names)) + r")\s*\[")
    inserts = []  # (position, text); sorted stably, so nested closings keep their order
    for m in pattern.finditer(code):
        open_at = m.end() - 1
        inserts.append((open_at + 1, f"_io_{m.group(1)} + ("))
        inserts.append((_close_bracket(code, open_at), ")"))
    out, at = [], 0
    for position, piece in sorted(inserts, key=lambda item: item[0]):
        out.append(text[at:position])
        out.append(piece)
        at = position
    out.append(text[at:])
    return "".join(out)


def _entry_prologue(text: str, offsets: list[tuple[str, int, int]]) -> str:
    """Each entry point given a workgroup id (its own, or ``_wi``) and its first statement setting the offsets."""
    out, at = [], 0
    for m in _ENTRY.finditer(text):
        close_at = _close_paren(text, m.end() - 1)
        params = text[m.end():close_at]
        own = _WORKGROUP_ID.search(params)
        wid = own.group(1) if own else "_wi"
        if own is None:
            params = (params.rstrip() + ", " if params.strip() else "") + "@builtin(workgroup_id) _wi: vec3<u32>"
        body_at = text.index("{", close_at)
        sets = " ".join(f"_io_{name} = {wid}.z * (_whir_strides[{slot // 4}u][{slot % 4}u] / {size}u);"
                        for name, slot, size in offsets)
        out.append(text[at:m.end()] + params + text[close_at:body_at + 1] + " " + sets)
        at = body_at + 1
    out.append(text[at:])
    return "".join(out)


def instanced_wgsl(text: str) -> str:
    """``text`` (a composed WGSL kernel) rewritten for K instances per launch (module docstring)."""
    layout_of(text)  # refuses slots past the stride table
    offsets = []  # (variable, slot, element bytes) of every runtime-sized storage array
    for m in _STORAGE.finditer(text):
        if not m.group(5):
            offsets.append((m.group(3), int(m.group(1)), _ELEMENT_BYTES[m.group(4)]))
    if not _ENTRY.search(text):
        raise InstancingError("no @compute entry point")
    names = sorted({name for name, _, _ in offsets}, key=len, reverse=True)
    body = _rewrite_accesses(text, names) if names else text
    body = _entry_prologue(body, offsets)
    declarations = "".join(f"var<private> _io_{name}: u32;\n" for name in names)
    return (body.rstrip("\n") + "\n" + declarations +
            f"@group(0) @binding({STRIDE_BINDING}) var<uniform> _whir_strides: "
            f"array<vec4<u32>, {STRIDE_VEC4S}>;\n")
