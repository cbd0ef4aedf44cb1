"""No module reads another module's underscored names (issue 39): an underscored attribute, function, class or
module-level name is read only in the module that defines it, and no ``from X import _name`` crosses modules (a
private *module* of the same package, ``from . import _objc``, is allowed). "Defines" is read from the sources:
a module defines the underscored names it assigns (``x._name = ...``, ``_name = ...``), declares (``def _name``,
``class _Name``) or takes as parameters.

``ALLOWED`` lists what still breaks the rule, file by file, and why; it may only shrink (a test fails on an entry
that no longer occurs). Third-party internals a runtime must reach are listed for good. The GPU backend's parts
share one ``DeviceState`` through its public interface (``test_the_gpu_backend_is_composed``)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "whirgpu"

ALLOWED: dict[str, tuple[str, set[str]]] = {
    # third-party internals, for good
    "runtime/wgpu_native_setup.py": ("cffi's and wgpu-native's internals: the setup patches their declarations",
                                     {"_declarations", "_get_cached_btype", "_get_type_and_quals", "_lock",
                                      "_parse", "_parsed_types", "_parser", "import _helpers"}),
    "runtime/wgpu_rt/buffers.py": ("wgpu-py's non-blocking device poll and a promise's state (WebGPU has no "
                                   "public poll; a promise's state is public only once waited for)",
                                   {"_poll", "_state"}),
    "runtime/wgpu_rt/stage.py": ("wgpu-py's mapped-range call (``mapped_bytes``; wgpudawn has it too)",
                                 {"_experimental_get_mapped_range"}),
    "runtime/wgpu_rt/device.py": ("wgpu-py's native handles (device poll, timestamp period, a pass's direct calls)",
                                  {"_internal"}),
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {n for n in names if _private(n)}


def private_reads(path: Path) -> set[str]:
    """The underscored names ``path`` reads that another module defines ("import _x" for an import)."""
    tree = ast.parse(path.read_text())
    own = _defined(tree)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not (node.level and node.module is None):
            found.update(f"import {a.name}" for a in node.names if _private(a.name))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and _private(node.attr) \
                and node.attr not in own:
            found.add(node.attr)
    return found


def _violations() -> dict[str, set[str]]:
    out = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        found = private_reads(path)
        if found:
            out[str(path.relative_to(PACKAGE))] = found
    return out


def test_no_module_reads_another_modules_private_names():
    unexpected = {f: sorted(names - ALLOWED.get(f, ("", set()))[1]) for f, names in _violations().items()}
    unexpected = {f: names for f, names in unexpected.items() if names}
    assert not unexpected, f"underscored names read across modules: {unexpected}"


def test_the_allowed_list_only_shrinks():
    found = _violations()
    stale = {f: sorted(names - found.get(f, set())) for f, (_, names) in ALLOWED.items()}
    stale = {f: names for f, names in stale.items() if names}
    assert not stale, f"no longer read across modules, remove from ALLOWED: {stale}"


def test_the_check_sees_a_private_read(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from .other import _hidden, shown\n\ndef f(o):\n    return o._state + o.public\n")
    assert private_reads(module) == {"import _hidden", "_state"}
    module.write_text("class A:\n    def __init__(self):\n        self._state = 1\n\n    def same(self, other):\n"
                      "        return other._state\n")
    assert private_reads(module) == set()


def test_the_gpu_backend_is_composed():
    """The GPU backend is the ``Backend`` interface over parts that each own one job, not a stack of mixins: its
    only base is ``Backend``, and every part holds the one ``DeviceState``."""
    from whirgpu.backends.base import Backend
    from whirgpu.backends.gpu import GpuBackend

    assert GpuBackend.__bases__ == (Backend,)
    source = (PACKAGE / "backends/gpu/backend.py").read_text()
    for part in ("memory", "commitments", "reductions", "tables", "replay", "proofs"):
        assert f"self.{part} = " in source
