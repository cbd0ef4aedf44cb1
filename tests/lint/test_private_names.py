"""No module reads another module's underscored names (issue 39): an underscored attribute, function, class or
module-level name is read only in the module that defines it, and no ``from X import _name`` crosses modules (a
private *module* of the same package, ``from . import _objc``, is allowed). "Defines" is read from the sources:
a module defines the underscored names it assigns (``x._name = ...``, ``_name = ...``), declares (``def _name``,
``class _Name``) or takes as parameters.

``ALLOWED`` lists what still breaks the rule, file by file, and why; it may only shrink (a test fails on an entry
that no longer occurs). Third-party internals a runtime must reach are listed for good; the GPU backend's mixins
that share private state go with the ownership work of issue 39."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "whirgpu"

_GPU_MIXINS = "the GPU backend's mixins share their private state (issue 39: state owned explicitly)"
ALLOWED: dict[str, tuple[str, set[str]]] = {
    # third-party internals, for good
    "runtime/wgpu_native_setup.py": ("cffi's and wgpu-native's internals: the setup patches their declarations",
                                     {"_declarations", "_get_cached_btype", "_get_type_and_quals", "_lock",
                                      "_parse", "_parsed_types", "_parser", "import _helpers"}),
    "runtime/wgpu_rt/buffers.py": ("wgpu-py's mapped-range call", {"_experimental_get_mapped_range"}),
    "runtime/wgpu_rt/device.py": ("wgpu-py's native handles (device poll, timestamp period)", {"_internal"}),
    # the GPU backend (issue 39)
    "backends/device_transcript.py": (_GPU_MIXINS, {"_drivers", "_round_constants", "_tail_io"}),
    "backends/path_roots.py": (_GPU_MIXINS, {"_drivers", "_free", "_session"}),
    "backends/gpu/backend.py": (_GPU_MIXINS, {"_drop_programs", "_free_claim_descriptors", "_init_replays",
                                              "_upload_words", "import _BackendRuntime", "import _Session"}),
    "backends/gpu/commit.py": (_GPU_MIXINS, {"_batch", "_drivers", "_get", "_host_call", "_put", "_resolve",
                                             "_session", "_submit", "_tail_io"}),
    "backends/gpu/device_memory.py": (_GPU_MIXINS, {"_batch", "_drivers", "_get", "_host_call", "_pool", "_put",
                                                    "_retired", "_serial", "_session", "import _Session"}),
    "backends/gpu/drivers.py": (_GPU_MIXINS, {"_alloc", "_recorder"}),
    "backends/gpu/replay.py": (_GPU_MIXINS, {"_alloc", "_building", "_drivers", "_get", "_pool", "_resolve"}),
    "backends/gpu/session.py": (_GPU_MIXINS, {"_alloc", "_drivers", "_free", "_pool", "_serial"}),
    "backends/gpu/sumcheck.py": (_GPU_MIXINS, {"_alignment", "_alloc", "_batch", "_drivers", "_dummy", "_free",
                                               "_get", "_host_call", "_new_table", "_pair_window", "_pairs", "_put",
                                               "_session", "_tail_io", "_view", "_window_len", "_window_limit",
                                               "_workspace"}),
    "backends/gpu/tables.py": (_GPU_MIXINS, {"_accumulate", "_alloc", "_batch", "_check_canonical", "_drivers",
                                             "_free", "_get", "_host_call", "_new_table", "_put", "_session",
                                             "_upload_words", "_window_limit"}),
    "backends/gpu/transcript.py": (_GPU_MIXINS, {"_batch", "_building", "_check_canonical", "_close_session",
                                                 "_drivers", "_finish_recording", "_finish_session",
                                                 "_forget_program", "_free_submitted", "_get", "_host_call",
                                                 "_open_session", "_start_recording"}),
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
