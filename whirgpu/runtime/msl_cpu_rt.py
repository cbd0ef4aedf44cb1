"""The MSL kernels compiled as C++ and run on the CPU: how the Metal path is verified without a Mac.

A verification runtime, not a product path. Each kernel stem's composed MSL (the same text the Metal runtime
compiles) is built by the system C++ compiler (``$CXX``, else ``c++``) against ``msl_cpu/metal_stdlib``, a shim
of the Metal standard library, and loaded through cffi. Two line-preserving rewrites adapt what a header cannot:
``threadgroup T name[N];`` declarations become ``static thread_local`` (one threadgroup runs per OS thread at a
time, and all its threads share the array), and ``constant T NAME [[function_constant(id)]];`` becomes a
constexpr holding the specialised value. A generated launcher calls the kernel once per thread with the
builtins its signature asks for; threads are fibers, so ``threadgroup_barrier`` and the ``simd_*`` exchanges
(32-lane simd-groups, as on Apple GPUs) have their real semantics, and a barrier that not every thread reaches
raises ``KernelFault``. Threadgroups are spread over ``workers`` OS threads.

Environment: ``WHIRGPU_MSL_MUL=mulhi|u64|emulated`` (default mulhi, Metal's native path),
``WHIRGPU_MSL_CPU_WORKERS`` (default: the CPU count), ``WHIRGPU_CACHE_DIR`` (compiled kernels; default
``~/.cache/whirgpu``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .. import activity, cache_dir
from ..devices.limits import DeviceLimits, StorageMode
from ..errors import BackendUnavailable, ConfigError, KernelFault, ShaderCompileError
from ..kernels.compose import ComposedSource, compose
from ..kernels.registry import KernelSpec, spec
from ..devices.overrides import resolve_binding
from .program import Copy, Dispatch
from .base import (Batch, RtBuffer, Runtime, RtView, allocation_size, binding_range, check_binding_sizes,
                   check_range, grid_for, params_words)

MUL_VARIANTS = ("mulhi", "u64", "emulated")
DEVICE_BINDING_BYTES = (1 << 32) - 4  # the binding limit msl-cpu plays: 32-bit byte offsets, word-aligned
SHIM_DIR = Path(__file__).resolve().parent / "msl_cpu"
CXX_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-pthread", "-w", "-fno-strict-aliasing",
             "-U_FORTIFY_SOURCE", "-D_FORTIFY_SOURCE=0")  # fibers longjmp between stacks: no fortified longjmp

_THREADGROUP_ARRAY = re.compile(r"^(\s*)threadgroup(\s+[\w:<>]+\s+\w+\s*\[[^\]]+\]\s*;)", re.M)
_FUNCTION_CONSTANT = re.compile(r"constant\s+(\w+)\s+(\w+)\s*\[\[\s*function_constant\((\d+)\)\s*\]\]\s*;")
_KERNEL = re.compile(r"kernel\s+void\s+(\w+)\s*\((.*?)\)\s*\{", re.S)
_PARAM = re.compile(r"^(?P<type>.+?)\s*\b(?P<name>\w+)\s*\[\[\s*(?P<attr>\w+)(?:\((?P<arg>\d+)\))?\s*\]\]$", re.S)
_VECTOR_BUILTINS = ("thread_position_in_grid", "thread_position_in_threadgroup", "threadgroup_position_in_grid",
                    "threadgroups_per_grid", "threads_per_threadgroup", "threads_per_grid")
_SCALAR_BUILTINS = ("thread_index_in_threadgroup", "thread_index_in_simdgroup", "simdgroup_index_in_threadgroup",
                    "threads_per_simdgroup", "simdgroups_per_threadgroup")

_CDEF = """
int whirgpu_launch(int entry, void **bindings, unsigned gx, unsigned gy, unsigned threads, unsigned workers);
const char *whirgpu_error(void);
"""


def _compiler() -> str:
    cxx = os.environ.get("CXX", "c++")
    path = shutil.which(cxx)
    if path is None:
        raise BackendUnavailable(f"msl-cpu needs a C++17 compiler: {cxx!r} is not on PATH "
                                 "(install g++ or clang++, or set CXX)")
    return path


@lru_cache(maxsize=4)
def _compiler_version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60, check=False).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise BackendUnavailable(f"msl-cpu: could not run the C++ compiler {path}: {exc}") from None
    return (out.splitlines() or ["unknown compiler"])[0].strip()


def _cache_dir() -> Path:
    """The folder of compiled libraries (created); a one-line ConfigError naming ``WHIRGPU_CACHE_DIR`` (or the
    default folder) when it cannot be created or written (``whirgpu.cache_dir.folder``)."""
    return cache_dir.folder("msl-cpu")


def workers_from_env() -> int | None:
    """``WHIRGPU_MSL_CPU_WORKERS`` as a positive thread count, None when unset or empty; a ConfigError naming
    the variable otherwise."""
    value = os.environ.get("WHIRGPU_MSL_CPU_WORKERS", "").strip()
    if not value:
        return None
    try:
        workers = int(value)
    except ValueError:
        workers = 0
    if workers < 1:
        raise ConfigError(f"WHIRGPU_MSL_CPU_WORKERS={value!r} is not a thread count: give a positive integer")
    return workers


def _argument(entry: str, param: str) -> str:
    """The C++ expression passing one kernel parameter from the launcher's bindings or the thread's builtins."""
    match = _PARAM.match(" ".join(param.split()))
    if match is None:
        raise ShaderCompileError(f"kernel {entry}: parameter {param.strip()!r} has no [[attribute]] msl-cpu knows")
    ctype, attr, arg = match["type"], match["attr"], match["arg"]
    if attr == "buffer":
        if ctype.endswith("&"):
            return f"*reinterpret_cast<{ctype[:-1].strip()}*>(bindings[{arg}])"
        return f"reinterpret_cast<{ctype}>(bindings[{arg}])"
    if attr in _VECTOR_BUILTINS:
        return f"msl_cpu::builtin<{ctype}>(ctx.{attr})"
    if attr in _SCALAR_BUILTINS:
        return f"{ctype}(ctx.{attr})"
    raise ShaderCompileError(f"kernel {entry}: msl-cpu does not provide [[{attr}]]")


_FUNCTION = re.compile(r"^(?:kernel\s+)?[A-Za-z_][\w:<>]*[\s*&]+(\w+)\s*\(", re.M)
_SYNC = re.compile(r"\b(threadgroup_barrier|simdgroup_barrier|simd_\w+)\s*\(")


def synchronising_entries(text: str) -> set[str]:
    """The functions (kernels included) from which a barrier or a simd-group function is reachable. Functions
    are the top-level definitions of the composed source (a definition starts at column 0 and ends at a ``}``
    in column 0, the style of every shader file here)."""
    bodies: dict[str, str] = {}
    starts = list(_FUNCTION.finditer(text))
    for match in starts:
        end = text.find("\n}", match.end())
        bodies[match.group(1)] = text[match.end():end if end >= 0 else len(text)]
    calls = {name: set(re.findall(r"\b(\w+)\s*\(", body)) & set(bodies) for name, body in bodies.items()}
    syncing = {name for name, body in bodies.items() if _SYNC.search(body)}
    changed = True
    while changed:
        grown = {name for name, callees in calls.items() if callees & syncing} - syncing
        syncing |= grown
        changed = bool(grown)
    return syncing


def translate(source: ComposedSource, kernel_spec: KernelSpec, constants: dict[str, int]) -> str:
    """C++ for one stem: the composed MSL rewritten line for line (so compiler lines map back through
    ``source.origin``), then one launcher per registry entry (entry index = registry order)."""
    values = kernel_spec.constant_values(constants)
    by_id = {kernel_spec.constants[name][0]: value for name, value in values.items()}

    def function_constant(match: re.Match) -> str:
        ctype, name, const_id = match.group(1), match.group(2), int(match.group(3))
        if const_id not in by_id:
            raise ShaderCompileError(f"kernel {kernel_spec.stem}: function constant {name} (id {const_id}) is not "
                                     f"in the registry")
        return f"constexpr {ctype} {name} = {by_id[const_id]}; constexpr bool {name}_defined = true;"

    text = _THREADGROUP_ARRAY.sub(r"\1static thread_local\2", source.text)
    text = _FUNCTION_CONSTANT.sub(function_constant, text)
    signatures = {m.group(1): m.group(2) for m in _KERNEL.finditer(source.text)}
    syncing = synchronising_entries(source.text)
    launchers, cases = [], []
    for index, entry in enumerate(kernel_spec.entries):
        if entry not in signatures:
            raise ShaderCompileError(f"kernel {kernel_spec.stem}: no MSL entry point {entry}")
        params = [p for p in signatures[entry].split(",") if p.strip()]
        args = ", ".join(_argument(entry, p) for p in params)
        launchers.append(f"static void whirgpu_body_{index}(void *closure, const msl_cpu::Ctx &ctx) {{\n"
                         f"    void **bindings = static_cast<void **>(closure);\n"
                         f"    (void)bindings; (void)ctx;\n    {entry}({args});\n}}")
        fibers = "true" if entry in syncing else "false"
        cases.append(f"    case {index}: return msl_cpu::run_grid(gx, gy, threads, workers, {fibers}, "
                     f"whirgpu_body_{index}, bindings);")
    return (text + "\n// ---- launchers (generated by msl_cpu_rt) ----\n" + "\n".join(launchers)
            + "\nextern \"C\" int whirgpu_launch(int entry, void **bindings, unsigned gx, unsigned gy, "
              "unsigned threads, unsigned workers) {\n    switch (entry) {\n" + "\n".join(cases)
            + "\n    }\n    return 2;\n}\n"
              "extern \"C\" const char *whirgpu_error(void) { return msl_cpu::last_error().c_str(); }\n")


def _map_compiler_message(message: str, source: ComposedSource) -> str:
    def repl(match: re.Match) -> str:
        line = int(match.group(1))
        where = source.origin(line) if line <= len(source.line_map) else f"<launcher>:{line - len(source.line_map)}"
        return where + (f":{match.group(2)}" if match.group(2) else "")

    return re.sub(r"<stdin>:(\d+)(?::(\d+))?", repl, message)


def build(cpp: str, label: str, source: ComposedSource) -> Path:
    """The shared library of ``cpp`` (compiled once per text, compiler and flags; cached on disk)."""
    compiler = _compiler()
    digest = hashlib.sha256("\n".join([_compiler_version(compiler), " ".join(CXX_FLAGS),
                                       (SHIM_DIR / "metal_stdlib").read_text(), cpp]).encode()).hexdigest()[:24]
    target = _cache_dir() / f"{label}-{digest}.so"
    if target.is_file():
        return target
    try:
        fd, partial = tempfile.mkstemp(suffix=".so", dir=target.parent)
    except OSError as exc:
        raise ConfigError(f"msl-cpu cache folder {target.parent}: {exc.strerror or exc} (set WHIRGPU_CACHE_DIR)") \
            from None
    os.close(fd)
    try:
        with activity.doing(f"compiling kernel {label} (msl-cpu)", key="msl-cpu-compile",
                            after=activity.SLOW_COMPILE_S, announce=f"compiling the MSL kernels as C++ for msl-cpu with {compiler} (first use on "
                                     f"this machine; each is cached in {target.parent}; `whirgpu warmup --backend "
                                     f"msl-cpu` compiles them ahead)"):
            returncode, stderr = run_compiler([compiler, *CXX_FLAGS, "-I", str(SHIM_DIR), "-x", "c++", "-", "-o",
                                               partial], cpp)
        if returncode != 0:
            raise ShaderCompileError(f"kernel {label} (msl-cpu): "
                                     f"{_map_compiler_message(stderr.strip(), source)[:4000]}")
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


COMPILE_TIMEOUT_S = 600


def run_compiler(argv: list[str], source: str) -> tuple[int, str]:
    """(exit status, stderr) of the compiler fed ``source`` on stdin. The compiler runs in a process group of its
    own, and that whole group is killed if this call does not return normally (Ctrl-C, a timeout, any error):
    the compiler driver's children (cc1plus, as, ld) go with it instead of running on as orphans."""
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
    try:
        _, stderr = child.communicate(source, timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _kill_group(child)
        raise ShaderCompileError(f"the C++ compiler ran past {COMPILE_TIMEOUT_S} s: {argv[0]}") from None
    except BaseException:
        _kill_group(child)
        raise
    return child.returncode, stderr


def _kill_group(child: subprocess.Popen) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)  # the group id is the child's pid (start_new_session)
    except ProcessLookupError:
        pass
    child.kill()
    child.wait()


@lru_cache(maxsize=1)
def _ffi():
    from cffi import FFI  # noqa: PLC0415 - a core dependency, imported where it is used

    ffi = FFI()
    ffi.cdef(_CDEF)
    return ffi


_LOADED: dict[Path, Any] = {}


def _load(path: Path) -> Any:
    """The library at ``path``, loaded once per process through one FFI and never unloaded. Its scheduler keeps
    threads parked in its code between launches (pool threads, fibers of finished threadgroups); with an FFI and
    handles per runtime, a later launch once crashed (test_a_second_runtime_after_wgpu_work_survives)."""
    library = _LOADED.get(path)
    if library is None:
        library = _LOADED[path] = _ffi().dlopen(str(path))
    return library


@dataclass(frozen=True)
class _Kernel:
    library: Any
    library_path: Path
    index: int
    threads: int
    label: str


def _aligned_words(nbytes: int) -> np.ndarray:
    """Zeroed uint32 words, 64-byte aligned, with a 64-byte tail so a vector load at the end stays inside."""
    raw = np.zeros(nbytes + 128, np.uint8)
    start = (-raw.ctypes.data) % 64
    return raw[start:start + nbytes + 64].view(np.uint32)


class _MslCpuBatch(Batch):
    def __init__(self, rt: "MslCpuRuntime"):
        self.rt = rt
        self.ops: list = []  # runtime.program Dispatch (params padded) and Copy steps

    def dispatch(self, kernel, buffers, params, n_groups):
        self.ops.append(Dispatch(kernel, tuple(buffers), params_words(params), int(n_groups)))

    def copy(self, src, src_offset, dst, dst_offset, nbytes):
        self.ops.append(Copy(src, src_offset, dst, dst_offset, nbytes))

    def submit(self):
        ops, self.ops = self.ops, []
        for op in ops:
            if isinstance(op, Copy):
                op.dst.handle.view(np.uint8)[op.dst_offset:op.dst_offset + op.nbytes] = \
                    op.src.handle.view(np.uint8)[op.src_offset:op.src_offset + op.nbytes]
            else:
                self.rt.launch(op.kernel, list(op.bindings), op.params,
                               grid_for(op.groups, self.rt.max_groups_per_dim))


class MslCpuRuntime(Runtime):
    """The MSL kernels on the CPU. ``mul`` overrides WHIRGPU_MSL_MUL; ``max_groups_per_dim`` and
    ``max_binding_bytes`` play the device limits (tests lower them to force the 2-D grid and split bindings;
    ``max_binding_bytes`` None: ``--max-binding`` or ``WHIRGPU_MAX_BINDING_BYTES``, below DEVICE_BINDING_BYTES)."""

    name = "msl-cpu"
    lang = "msl"
    offset_alignment = 16  # host memory: any EF-aligned window binds
    host_memory = True  # every buffer is host memory: a storage mode is recorded and changes nothing
    queue_ordered_writes = True  # a submission runs to its end before submit returns

    def __init__(self, mul: str | None = None, max_groups_per_dim: int | None = None,
                 max_binding_bytes: int | None = None, workers: int | None = None):
        self.compiler = _compiler()
        self.compiler_version = _compiler_version(self.compiler)
        self.ffi = _ffi()
        self.mul = (mul or os.environ.get("WHIRGPU_MSL_MUL") or "mulhi").lower()
        if self.mul not in MUL_VARIANTS:
            raise BackendUnavailable(f"WHIRGPU_MSL_MUL={self.mul!r}: choose one of {', '.join(MUL_VARIANTS)}")
        self.max_groups_per_dim = int(max_groups_per_dim or 65535)
        self._binding = resolve_binding(DEVICE_BINDING_BYTES, max_binding_bytes)
        self.max_binding_bytes = self._binding.size
        self.workers = max(1, int(workers or workers_from_env() or os.cpu_count() or 1))
        self.device_name = f"MSL on the CPU ({self.compiler_version}, {self.workers} threads)"
        self._kernels: dict[tuple, _Kernel] = {}
        self._times: list[tuple[str, float]] | None = None

    def set_profiling(self, on: bool) -> None:
        """Time every launch (host wall clock around the launch: the CPU's 'GPU time')."""
        self._times = [] if on else None

    def kernel_times(self) -> list[tuple[str, float]]:
        """(kernel label, nanoseconds) for every launch since the last call."""
        if self._times is None:
            return []
        out, self._times = self._times, []
        return out

    def limits(self) -> DeviceLimits:
        return self._binding.apply(DeviceLimits(
            name=self.device_name, api="MSL-CPU",
            device_type="CPU", max_buffer_size=1 << 40, max_storage_binding_size=self.max_binding_bytes,
            max_workgroup_storage=32768, max_invocations_per_workgroup=1024,
            max_workgroups_per_dimension=self.max_groups_per_dim, subgroup_size=32, has_u64=True,
            has_native_mulhi=True, unified_memory=True, zero_copy_shared=True, offset_alignment=self.offset_alignment,
            features=(f"mul-{self.mul}",)))

    def alloc(self, nbytes: int, mode: StorageMode = StorageMode.PRIVATE) -> RtBuffer:
        nbytes = allocation_size(nbytes)
        return RtBuffer(_aligned_words(nbytes), nbytes, mode)

    def write(self, buffer: RtBuffer, data: np.ndarray, offset: int = 0) -> None:
        data = np.ascontiguousarray(data, dtype=np.uint32)
        check_range("write", buffer, data.nbytes, offset)
        buffer.handle.view(np.uint8)[offset:offset + data.nbytes] = data.view(np.uint8).reshape(-1)

    def read(self, buffer: RtBuffer, nbytes: int | None = None, offset: int = 0) -> np.ndarray:
        nbytes = buffer.nbytes - offset if nbytes is None else nbytes
        return buffer.handle.view(np.uint8)[offset:offset + nbytes].copy().view(np.uint32)

    def kernel(self, stem: str, entry: str | None = None, constants: dict[str, int] | None = None,
               field: str = "babybear") -> _Kernel:
        entry = entry or stem
        key = (stem, entry, tuple(sorted((constants or {}).items())), field)
        cached = self._kernels.get(key)
        if cached is not None:
            return cached
        source = compose("msl", stem, (("bb_mul", self.mul),), field)
        compiled = self.kernel_from_source(source, spec(stem), entry, constants)
        self._kernels[key] = compiled
        return compiled

    def kernel_from_source(self, source: ComposedSource, kernel_spec: KernelSpec, entry: str,
                           constants: dict[str, int] | None = None) -> _Kernel:
        """Compile composed MSL described by ``kernel_spec`` (not cached in memory; the library is cached on
        disk). ``kernel`` uses it for the registry's stems; tests use it for kernels of their own."""
        if entry not in kernel_spec.entries:
            raise ShaderCompileError(f"kernel {kernel_spec.stem} has no entry point {entry} "
                                     f"(it has: {', '.join(kernel_spec.entries)})")
        stem = kernel_spec.stem
        path = build(translate(source, kernel_spec, dict(constants or {})), f"{stem}-{self.mul}", source)
        library = _load(path)
        label = stem if entry == stem else f"{stem}.{entry}"
        return _Kernel(library, path, list(kernel_spec.entries).index(entry), kernel_spec.workgroup_size(entry, constants),
                       label)

    def launch(self, kernel: _Kernel, buffers: list[RtBuffer | RtView], params: np.ndarray,
               grid: tuple[int, int]) -> None:
        """Run ``kernel`` over the (x, y) ``grid`` now, ``params`` (PARAMS_WORDS words) after the bindings."""
        bindings = [binding_range(b) for b in buffers]
        check_binding_sizes(bindings, self.max_binding_bytes, self.device_name)
        pointers = self.ffi.new("void *[]", len(buffers) + 1)
        for slot, (whole, offset, _) in enumerate(bindings):
            pointers[slot] = self.ffi.cast("void *", whole.handle.ctypes.data + offset)
        pointers[len(buffers)] = self.ffi.cast("void *", params.ctypes.data)
        started = time.perf_counter_ns()
        status = kernel.library.whirgpu_launch(kernel.index, pointers, grid[0], grid[1], kernel.threads,
                                               self.workers)
        if self._times is not None:
            self._times.append((kernel.label, float(time.perf_counter_ns() - started)))
        if status != 0:
            raise KernelFault(f"kernel {kernel.label} (msl-cpu): "
                              f"{self.ffi.string(kernel.library.whirgpu_error()).decode(errors='replace')}")

    def batch(self) -> Batch:
        return _MslCpuBatch(self)

    def wait(self) -> None:
        """Nothing to wait for: ``submit`` runs the batch before it returns."""
