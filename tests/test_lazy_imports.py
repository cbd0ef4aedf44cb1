"""What a process imports: ``import whirgpu`` loads the error tree alone and every public name on first use
(``whirgpu/__init__``'s ``_EXPORTS``, which its ``TYPE_CHECKING`` imports mirror), and the installed command
imports only what the command typed needs (read from Python's own import log, ``PYTHONPROFILEIMPORTTIME``, of the
installed ``whirgpu`` script)."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

import whirgpu

from .conftest import REPO

EAGER = {"BackendUnavailable", "ConfigError", "DeviceLimitError", "DeviceOutOfMemory", "FileError",
         "ProofFormatError", "ShaderCompileError", "VerificationError", "WhirGpuError"}


def _type_checking_imports() -> dict[str, str]:
    """{name: relative module} of the ``if TYPE_CHECKING:`` block of ``whirgpu/__init__.py``."""
    tree = ast.parse((REPO / "whirgpu" / "__init__.py").read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    return {alias.asname or alias.name: "." * node.level + node.module
            for node in block.body for alias in node.names}


def test_the_lazy_names_are_the_type_checked_imports():
    assert whirgpu._EXPORTS == _type_checking_imports()


def test_every_public_name_is_eager_or_lazy_and_resolves():
    assert set(whirgpu.__all__) == EAGER | set(whirgpu._EXPORTS)
    assert set(whirgpu.__all__) <= set(dir(whirgpu))
    for name in whirgpu.__all__:
        assert getattr(whirgpu, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        whirgpu.NoSuchName  # noqa: B018


def test_a_submodule_still_imports_by_name():
    from whirgpu import activity  # not a public name: the import system's own submodule lookup

    assert activity.__name__ == "whirgpu.activity"


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_import_whirgpu_loads_the_error_tree_alone():
    loaded = _fresh("import sys, whirgpu; print(' '.join(sorted(m for m in sys.modules if 'whirgpu' in m or "
                    "m.split('.')[0] in ('numpy', 'wgpu', 'wgpudawn', 'cffi'))))").split()
    assert loaded == ["whirgpu", "whirgpu.errors"]


@pytest.mark.parametrize("code", ["from whirgpu.profiles.p3_whir.api import P3Prover as Prover",
                                  "from whirgpu.proving import Prover", "from whirgpu import P3Prover as Prover",
                                  "from whirgpu import Prover"])
def test_a_prover_brings_its_planned_proof(code):
    """A configuration's planned proof (what the device planner builds, ``backends.memory.PLANNED_PROOFS``) is
    registered by its profile's prover module, which every prover of it imports, however it is imported."""
    out = _fresh(f"from whirgpu.backends.memory import PLANNED_PROOFS; print(len(PLANNED_PROOFS)); {code}; "
                 "print(' '.join(sorted(t.__name__ for t in PLANNED_PROOFS)))")
    count, *names = out.split()
    assert count == "0" and ("P3WhirConfig" if "P3" in code else "WhirConfig") in names


def _imported(installed, argv, cwd) -> set[str]:
    """The modules the installed ``whirgpu argv`` imports, from Python's import log on its stderr."""
    env = {**installed.env(), "PYTHONPROFILEIMPORTTIME": "1"}
    done = subprocess.run([str(installed.bin / "whirgpu"), *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    log = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert log, "no import log: PYTHONPROFILEIMPORTTIME was not honoured"
    return {line.rsplit("|", 1)[1].strip() for line in log[1:]}  # the first line is the log's header


def _under(modules: set[str], prefix: str) -> set[str]:
    return {m for m in modules if m == prefix or m.startswith(prefix + ".")}


NOT_FOR_A_CPU_PROOF = ("whirgpu.profiles.documents", "whirgpu.profiles.p3_whir.zk", "whirgpu.profiles.p3_whir.tables",
                       "whirgpu.profiles.p3_whir.prover", "whirgpu.verifying", "whirgpu.api", "whirgpu.many.batch_verify", "whirgpu.many.ray",
                       "wgpu", "wgpudawn", "whirgpu.runtime.wgpu_rt", "whirgpu.backends.gpu")


def test_a_cpu_proof_imports_neither_the_other_profile_nor_a_gpu_runtime(installed, tmp_path):
    modules = _imported(installed, ["prove", "-n", "10", "-k", "2", "-r", "1", "--seed", "0", "--backend", "cpu",
                                    "--out", "p.whir"], tmp_path)
    assert "whirgpu.proving" in modules and "whirgpu.protocol.prover" in modules  # the log is the proof's
    for prefix in (*NOT_FOR_A_CPU_PROOF, "whirgpu.bench", "whirgpu.cli.verify", "whirgpu.cli.warmup"):
        assert not _under(modules, prefix), prefix  # nor another command's parser


def test_params_imports_no_prover(installed, tmp_path):
    modules = _imported(installed, ["params", "-n", "20", "-k", "4", "-r", "1"], tmp_path)
    assert "whirgpu.profiles.whir_p3_metal.config" in modules
    for prefix in ("whirgpu.proving", "whirgpu.protocol.prover", "whirgpu.profiles.documents", "wgpu"):
        assert not _under(modules, prefix), prefix


def test_version_imports_nothing_else(installed, tmp_path):
    modules = _imported(installed, ["--version"], tmp_path)
    assert _under(modules, "whirgpu") == {"whirgpu", "whirgpu.cli", "whirgpu.errors"}
    assert not _under(modules, "numpy")


def test_verify_imports_no_prover_of_a_document_kind(installed, tmp_path):
    """Reading every kind of document takes their types and verifiers, not the hiding prover's GPU half."""
    done = installed.run([installed.bin / "whirgpu", "prove", "-n", "10", "-k", "2", "-r", "1", "--seed", "0",
                          "--backend", "cpu", "--out", "p.whir"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    modules = _imported(installed, ["verify", "p.whir"], tmp_path)
    assert "whirgpu.profiles.documents" in modules and "whirgpu.profiles.p3_whir.zk.api" in modules
    for prefix in ("whirgpu.profiles.p3_whir.zk.backend_prover", "whirgpu.profiles.p3_whir.zk.device_opening",
                   "wgpu", "whirgpu.runtime.wgpu_rt"):
        assert not _under(modules, prefix), prefix


@pytest.mark.parametrize("code", [
    "from whirgpu.profiles.p3_whir.zk.api import P3ZkTables",
    "from whirgpu.cli.warmup import _open; _open('auto')",  # plans 20:4:1 where there is an adapter
    "from whirgpu.profiles.p3_whir.tables.api import P3Tables",
    "import whirgpu; whirgpu.select_backend",
])
def test_every_caller_that_plans_a_configuration_brings_its_planned_proof(code):
    """What imports ``select_backend`` with a configuration also imports the prover module that registers it."""
    out = _fresh(f"{code}; from whirgpu.backends.memory import PLANNED_PROOFS; "
                 "print(' '.join(sorted(t.__name__ for t in PLANNED_PROOFS)))")
    names = out.split()
    assert ("WhirConfig" if "warmup" in code else "P3WhirConfig") in names
    if "whirgpu.select_backend" in code:  # the public name plans either profile's configurations
        assert {"WhirConfig", "P3WhirConfig"} <= set(names)
