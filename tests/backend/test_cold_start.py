"""What makes a process's first proof fast: wgpu-native's C types resolved without pycparser (the very ctypes
cffi's own parse gives), an instance without OpenGL, and pipelines compiled side by side (errors still name the
source line, at submission). Each check that depends on a fresh process runs in one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from whirgpu.errors import ShaderCompileError
from whirgpu.kernels.compose import ComposedSource
from whirgpu.runtime import wgpu_rt

from ..conftest import webgpu_adapter
from .conftest import open_runtime

ROOT = Path(__file__).resolve().parents[2]


def _fresh_python(code: str, env: dict | None = None) -> dict:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _needs_wgpu_native():
    pytest.importorskip("wgpu")


def _needs_wgpu_adapter():
    """A proof on wgpu-native needs an adapter, not only the package (skip, or fail under WHIRGPU_REQUIRE)."""
    webgpu_adapter("wgpu")


def test_preresolved_types_are_the_ctypes_cffis_parse_gives():
    _needs_wgpu_native()
    out = _fresh_python("""
        import json
        from wgpu.backends.wgpu_native import ffi
        from whirgpu.runtime import wgpu_native_setup as setup
        added = setup.preresolve_ffi_types()
        keys = [k for k in ffi._parsed_types if k.endswith(" *") and k.startswith("WGPU")][:40]
        keys += list(setup.EXTRA_TYPE_STRINGS)
        differ = []
        for key in keys:
            warmed = ffi._parsed_types.pop(key)
            ffi._typeof(key, consider_function_as_funcptr=True)  # cffi's own parse of the string
            if ffi._parsed_types[key] != warmed:  # the same ctype object, and the same function-type flag
                differ.append(key)
        print(json.dumps({"added": added, "checked": len(keys), "differ": differ}))
    """)
    assert out["added"] >= 100 + 16  # every struct pointer type and the extra strings
    assert out["checked"] >= 56 and out["differ"] == []


def test_a_first_proof_parses_no_c_type(tmp_path):
    """Fails when a wgpu-py update uses a type string EXTRA_TYPE_STRINGS lacks (then add it there)."""
    _needs_wgpu_adapter()
    out = _fresh_python("""
        import json
        import cffi.cparser
        import wgpu.backends.wgpu_native  # the two strings it parses while importing itself come before us
        parsed = []
        original = cffi.cparser.Parser.parse_type
        cffi.cparser.Parser.parse_type = lambda self, text: parsed.append(text) or original(self, text)
        from whirgpu.api import Prover, random_instance
        from whirgpu.protocol.params import ProtocolParameters
        params = ProtocolParameters(num_variables=10, folding_factor=4, starting_log_inv_rate=1,
                                    security_level=32, rs_domain_initial_reduction_factor=1, pow_bits=4)
        poly, statement = random_instance(10, 1)
        Prover(params, backend="wgpu").prove_monty(poly, statement)
        print(json.dumps({"parsed": parsed}))
    """)
    assert out["parsed"] == []


def test_a_later_process_loads_the_header_parse_instead_of_parsing(tmp_path):
    """The first process parses wgpu-py's C header and caches the result; the next loads it (no pycparser run,
    not even of a type string), holds the very declarations and ctypes a parse gives, and proves the bytes the numpy reference proves. Only the process
    that loads proves: one that parses holds cffi's own parse, the one every other test's process proves with."""
    _needs_wgpu_adapter()
    code = """
        import json, os
        import cffi.cparser
        runs, type_parses = [], []
        original = cffi.cparser.Parser._internal_parse
        cffi.cparser.Parser._internal_parse = lambda self, text: runs.append(len(text)) or original(self, text)
        original_parse = cffi.cparser.Parser._parse
        cffi.cparser.Parser._parse = lambda self, text: (type_parses.append(text) if "WGPU" in text and
                                                         len(text) < 10000 else None) or original_parse(self, text)
        from whirgpu.runtime.wgpu_native_setup import prepare_wgpu_native
        prepare_wgpu_native()
        from wgpu.backends.wgpu_native import ffi
        decls = {k: tp.get_c_name() if hasattr(tp, "get_c_name") else repr(tp)
                 for k, (tp, _) in ffi._parser._declarations.items()}
        fresh = cffi.cparser.Parser()
        original(fresh, ffi._cdefsources[0]) if ffi._cdefsources else None
        same = {k: tp.get_c_name() if hasattr(tp, "get_c_name") else repr(tp)
                for k, (tp, _) in fresh._declarations.items()} == decls
        from whirgpu.api import Prover, random_canonical_instance, dump
        from whirgpu.protocol.params import ProtocolParameters
        params = ProtocolParameters.default(10, 2, 1)
        instance = random_canonical_instance(10, 4)
        equal = PROVE and dump(Prover(params, backend="wgpu").prove(*instance), "binary") == \
            dump(Prover(params, backend="cpu").prove(*instance), "binary")
        files = os.listdir(os.path.join(os.environ["WHIRGPU_CACHE_DIR"], "wgpu-native"))
        parsed_types = len(type_parses)
        cffi.cparser.Parser._parse = original_parse
        differ = []  # every type string resolved so far, against cffi's own parse of it now
        from whirgpu.runtime.wgpu_native_setup import EXTRA_TYPE_STRINGS
        for key in [k for k in ffi._parsed_types if k.startswith("WGPU") or k in EXTRA_TYPE_STRINGS]:
            held = ffi._parsed_types.pop(key)
            ffi._typeof(key, consider_function_as_funcptr=True)
            if ffi._parsed_types[key] != held:
                differ.append(key)
        print(json.dumps({"header_parses": sum(n > 10000 for n in runs), "same": same, "equal": equal,
                          "files": len(files), "type_parses": parsed_types, "differ": differ,
                          "types": len(ffi._parsed_types)}))
    """
    env = {**os.environ, "WHIRGPU_CACHE_DIR": str(tmp_path)}
    parse, load = code.replace("PROVE and", "False and"), code.replace("PROVE and", "True and")
    first, second = _fresh_python(parse, env), _fresh_python(load, env)
    assert first["header_parses"] == 1 and first["files"] == 1
    assert second["header_parses"] == 0 and second["same"] and second["equal"]
    # nor any C type string, wgpu-py's own import included, and each ctype is the one cffi's parse gives
    assert second["type_parses"] == 0 and second["differ"] == [] and second["types"] >= 116
    (cached,) = (tmp_path / "wgpu-native").iterdir()
    cached.write_bytes(b"not a pickle")  # a damaged file is parsed again and rewritten
    third = _fresh_python(parse, env)
    assert third["header_parses"] == 1 and third["files"] == 1 and cached.read_bytes() != b"not a pickle"


def test_the_instance_starts_no_opengl_backend():
    _needs_wgpu_native()
    out = _fresh_python("""
        import json
        from whirgpu.runtime import wgpu_rt, wgpu_native_setup
        from wgpu.backends.wgpu_native import _helpers
        apis = sorted({a.info.get("backend_type") for a in wgpu_rt.enumerate_adapters("wgpu")})
        print(json.dumps({"instance": _helpers._the_instance is not None, "apis": apis,
                          "again": wgpu_native_setup.limit_instance_backends()}))
    """)
    assert out["instance"] and out["again"] is False  # made by us, once; a made instance is never replaced
    assert "OpenGL" not in out["apis"]


@pytest.mark.parametrize("impl", ["wgpu", "dawn"])
def test_a_pipeline_compiles_while_the_host_goes_on(impl):
    rt = open_runtime(impl, "emulated")
    first = rt.kernel_async("calibrate", "copy_vec4")
    assert rt.kernel_async("calibrate", "copy_vec4") is first  # one compilation per pipeline
    data = np.arange(64, dtype=np.uint32)
    src, dst = rt.alloc(data.nbytes), rt.alloc(data.nbytes)
    rt.write(src, data)
    batch = rt.batch()
    batch.dispatch(first, [src, dst], np.array([data.size // 4, 0], np.uint32), 1)
    batch.submit()
    assert rt.read(dst).tolist() == data.tolist()
    assert rt.kernel("calibrate", "copy_vec4") is first


@pytest.mark.parametrize("impl", ["wgpu", "dawn"])
def test_a_compile_error_raises_at_submission_and_a_later_call_compiles_again(impl, monkeypatch):
    rt = open_runtime(impl, "emulated")
    lines = ["@compute @workgroup_size(1)", "fn mul_chain() {", "    let x: u32 = 1.5;", "}"]
    broken = ComposedSource("\n".join(lines) + "\n", tuple(("kernels/broken.wgsl", i + 20) for i in range(4)))
    real_compose = wgpu_rt.pipelines.compose
    monkeypatch.setattr(wgpu_rt.pipelines, "compose", lambda *args, **kwargs: broken)
    pending = rt.kernel_async("calibrate", "mul_chain")
    batch = rt.batch()
    batch.dispatch(pending, [rt.alloc(16)], np.array([1, 1], np.uint32), 1)
    with pytest.raises(ShaderCompileError) as info:
        batch.submit()
    assert "kernels/broken.wgsl:22:" in str(info.value)
    monkeypatch.setattr(wgpu_rt.pipelines, "compose", real_compose)
    assert rt.kernel("calibrate", "mul_chain") is not None  # the failed one was forgotten
