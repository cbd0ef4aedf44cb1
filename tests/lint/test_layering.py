"""Layering the imports must keep (DESIGN.md §2): runtimes sit below the backends, the planner below backend
selection, the bench package beside the CLI, not under it. Read from the sources, so it holds for lazy
imports inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "whirgpu"


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, as an absolute dotted name (``from .x import y`` counts x and x.y)."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("path", sorted((PACKAGE / "runtime").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(PACKAGE / "runtime")))
def test_runtimes_import_no_backend(path):
    assert not {m for m in _imports(path) if m.startswith("whirgpu.backends")}


@pytest.mark.parametrize("path", sorted((PACKAGE / "bench").glob("*.py")), ids=lambda p: p.name)
def test_the_bench_package_imports_no_cli_command(path):
    """Beside the CLI, not under it: the bench shares only the front ends' options (``cli.options``)."""
    shared = {"whirgpu.cli", "whirgpu.cli.options"}  # ``from ..cli.options import x`` names the package too
    assert not {m for m in _imports(path) if m.startswith("whirgpu.cli.") and not m.startswith("whirgpu.cli.options")
                and m not in shared}


def test_the_planner_imports_no_backend_selection():
    """The planner reads the backend interface and the memory model; selection (``whirgpu.backends`` itself)
    asks the planner, and ``whirgpu devices --plan`` (``plan_command``) asks both."""
    imported = _imports(PACKAGE / "devices" / "planner.py")
    from_backends = {m for m in imported if m.startswith("whirgpu.backends")}
    assert from_backends and all(m.split(".")[2] in ("base", "memory") for m in from_backends), from_backends


# The parameter modules of whirgpu/protocol, each with what it may import from the protocol package: the
# arithmetic below the formulas, the formulas and the folding schedule below the parameters, the derived
# configuration above them all, its text above it. ``params`` only re-exports them, for callers outside.
PARAMETER_MODULES = {
    "f64": set(),
    "integers": set(),
    "soundness": {"f64"},
    "folding": {"integers"},
    "parameters": {"folding", "integers", "soundness"},
    "schedule": set(),
    "schedule_text": set(),
}

# Public re-exports at the protocol's old paths, for callers outside the package: they name the whir-p3-metal
# profile's configuration, so they sit with the public API (``LAYERS``), not in the profile-free core.
PROTOCOL_REEXPORTS = ("whirgpu.protocol.config", "whirgpu.protocol.params")


@pytest.mark.parametrize("name", sorted(PARAMETER_MODULES))
def test_the_parameter_modules_layer(name):
    imported = _imports(PACKAGE / "protocol" / f"{name}.py")
    protocol = {m.split(".")[2] for m in imported if m.startswith("whirgpu.protocol.")}
    assert protocol <= PARAMETER_MODULES[name], protocol - PARAMETER_MODULES[name]


@pytest.mark.parametrize("reexport", PROTOCOL_REEXPORTS)
def test_the_package_imports_parameters_from_their_homes(reexport):
    """``whirgpu.protocol.params`` and ``whirgpu.protocol.config`` re-export for callers outside the package;
    inside, each name comes from the module that defines it."""
    users = [
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        if ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts) not in PROTOCOL_REEXPORTS
        and {m for m in _imports(path) if m == reexport or m.startswith(reexport + ".")}
    ]
    assert not users


def test_the_reexports_only_reexport():
    """A re-export module defines nothing: imports, ``__all__`` and its docstring."""
    for name in PROTOCOL_REEXPORTS:
        tree = ast.parse((PACKAGE.parent / (name.replace(".", "/") + ".py")).read_text())
        for node in tree.body:
            assert isinstance(node, (ast.Import, ast.ImportFrom, ast.Expr)) or (
                isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["__all__"]), (name, ast.dump(node))


@pytest.mark.parametrize("profile", ["p3_whir", "whir_p3_metal"])
def test_each_configuration_takes_only_the_shared_formulas(profile):
    """Each profile's configuration derives from the formulas the profiles share and the field's bounds, nothing
    above them (no step order, no other profile)."""
    imported = _imports(PACKAGE / "profiles" / profile / "config.py")
    protocol = {m.split(".")[2] for m in imported if m.startswith("whirgpu.protocol.")}
    assert protocol <= {"f64", "folding", "integers", "parameters", "schedule", "soundness"}, protocol
    assert not {m for m in imported if m.startswith("whirgpu.profiles")}, imported


def _core_modules() -> list[Path]:
    return [path for path in sorted((PACKAGE / "protocol").glob("*.py"))
            if f"whirgpu.protocol.{path.stem}" not in PROTOCOL_REEXPORTS]


@pytest.mark.parametrize("path", _core_modules(), ids=lambda p: p.name)
def test_the_protocol_core_imports_no_profile(path):
    """``protocol`` is the profile-free core (the step order, the shared parameter arithmetic, the ``Schedule``
    interface); the profiles sit above it and it names none of them, lazily neither."""
    assert not {m for m in _imports(path) if m.startswith("whirgpu.profiles")}


def test_the_core_leaves_every_hook_to_a_profile():
    """The core's prover and verifier define no profile's hooks: each hook is an abstract method a profile
    defines."""
    from whirgpu.protocol.prover import WhirProver
    from whirgpu.protocol.verifier import WhirVerifier

    for cls, hooks in ((WhirProver, ("new_transcript", "_shape", "_statement", "_materialize", "_initial_weights")),
                       (WhirVerifier, ("_start", "_round_proofs", "_round_root", "_round_openings",
                                       "_final_openings", "_query_indices", "_round_value", "_queries"))):
        assert set(hooks) <= cls.__abstractmethods__, (cls.__name__, set(hooks) - cls.__abstractmethods__)
        assert not hasattr(cls, "claims_after_commitment" if cls is WhirProver else "round_type")



def test_one_profile_imports_no_other():
    for mine, other in (("p3_whir", "whir_p3_metal"), ("whir_p3_metal", "p3_whir")):
        for path in sorted((PACKAGE / "profiles" / mine).glob("*.py")):
            assert not {m for m in _imports(path) if m.startswith(f"whirgpu.profiles.{other}")}, path


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, for its ``__init__``)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _module_edges(path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules ``path`` imports, lazy imports included. ``from P import m`` of a submodule ``m`` is an
    edge to ``P.m`` alone (Python runs ``P``'s ``__init__`` first whatever imports it, so that is no edge)."""
    name = next(m for m, p in modules.items() if p == path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    edges = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            edges.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            submodules = {f"{base}.{alias.name}" for alias in node.names} & set(modules)
            edges.update(submodules)
            if len(submodules) < len(node.names):
                edges.add(base)
    return {m for m in edges if m in modules and m != name}


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle():
    """No module of the package lies on an import cycle, lazy imports (inside functions) included."""
    modules = _modules()
    graph = {name: _module_edges(path, modules) for name, path in modules.items()}
    assert not _cycles(graph)


# The layers of docs/ARCHITECTURE.md, lowest first: a module may import its own layer and those below it, never one
# above. A module's layer is that of the longest prefix listed; the package's own ``__init__`` (the public API's
# re-exports) and ``__main__`` sit on top.
LAYERS = [
    ("foundation", ["whirgpu.errors", "whirgpu.files", "whirgpu.field", "whirgpu.activity", "whirgpu.cache_dir",
                    "whirgpu.canonical",
                    "whirgpu.devices.limits", "whirgpu.devices.overrides", "whirgpu.environment", "whirgpu.devices",
                    "whirgpu.ref"]),
    ("native", ["whirgpu.native"]),
    ("runtimes and kernels", ["whirgpu.runtime", "whirgpu.kernels"]),
    ("backend interface", ["whirgpu.backends.base"]),
    ("parameters, transcript, shapes", ["whirgpu.protocol"]),
    ("backends and the planner", ["whirgpu.backends", "whirgpu.devices.planner"]),
    ("step order", ["whirgpu.protocol.prover", "whirgpu.protocol.verifier", "whirgpu.expectations"]),
    ("provers' surface", ["whirgpu.many.surface", "whirgpu.many.devices", "whirgpu.many.processes"]),
    ("profiles", ["whirgpu.profiles"]),
    ("many proofs", ["whirgpu.many"]),
    ("public API", ["whirgpu.api", "whirgpu.proving", "whirgpu.verifying", "whirgpu.devices.report",
                    "whirgpu.many.ray", *PROTOCOL_REEXPORTS]),
    ("front ends", ["whirgpu.cli", "whirgpu.bench", "whirgpu", "whirgpu.__main__"]),
]


def _layer(module: str) -> int:
    best, found = -1, None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), rank
    assert found is not None, f"{module} is in no layer of LAYERS"
    return found


def test_no_import_from_a_lower_layer_to_a_higher_one():
    modules = _modules()
    upward = []
    for name, path in modules.items():
        for target in _module_edges(path, modules):
            if _layer(target) > _layer(name):
                upward.append(f"{name} ({LAYERS[_layer(name)][0]}) imports {target} ({LAYERS[_layer(target)][0]})")
    assert not upward, "\n".join(upward)


def test_few_modules_loose_in_the_package():
    """Subjects are packages; at most 12 modules sit loose at the top (the public API and the foundation)."""
    loose = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(loose) <= 12, sorted(loose)


@pytest.mark.parametrize("init", sorted(PACKAGE.rglob("__init__.py")), ids=lambda p: str(p.parent.relative_to(PACKAGE.parent)))
def test_every_package_says_what_it_owns(init):
    """A reader's map: each package's ``__init__`` opens with a docstring saying what it owns."""
    doc = ast.get_docstring(ast.parse(init.read_text()))
    assert doc and len(doc.split()) >= 8, init
