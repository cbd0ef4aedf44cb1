"""What wgpu-native (the ``wgpu`` package) is told before its first adapter call, to make a process's first proof
fast. Dawn (``wgpudawn``) needs neither step: its bindings are compiled (cffi API mode) and parse nothing.

- ``limit_instance_backends``: the global wgpu instance starts only Vulkan, Metal and D3D12. Left to itself it
  also starts the OpenGL backend, which no runtime here uses (1.4 s of adapter enumeration on the H100 machine).
  It can only be said before the instance exists; when something in the process made one first, it is left as
  it is.
- ``preresolve_ffi_types``: wgpu-py declares its C API with cffi in ABI mode, so every C type string it passes
  to ``ffi.new`` / ``ffi.cast`` is parsed with pycparser on first use, each time together with a declaration of
  every one of its ~430 typedefs: 10-70 ms per distinct string, 40-odd strings in a first proof (0.5 s on the
  2-core VM, 2.7-3.3 s on the H100 machine). The struct-pointer types (``"WGPUFoo *"``, most of those strings)
  are built here straight from the typedefs cffi already holds, with no parse; the few other strings a proof
  uses (``EXTRA_TYPE_STRINGS``) are parsed together in one pycparser run. The ctypes are the very objects cffi's
  own parse gives (tested), stored in the FFI's own cache of parsed strings, so wgpu-py's behaviour is
  unchanged and a string missing from the list is simply parsed on first use as before. This leans on cffi's
  private parser state; when that is not there (another cffi), the step does nothing.
- ``cached_header_parse``: importing wgpu-py's wgpu-native backend parses its whole C header with pycparser
  (``ffi.cdef``: 0.53 s on the H200 machine, every process). The parser's result (its declarations, a plain
  picklable model) is kept in the cache folder (``cache_dir``, ``wgpu-native/``) under a hash of the header,
  cffi's, pycparser's and Python's versions, and a later process loads it (a few ms) instead of parsing. A
  missing, stale or unreadable file is parsed as before (and written again). The same file holds the parsed
  ``EXTRA_TYPE_STRINGS`` (one pickle with the declarations, so the struct types they name are the declarations'
  own objects), and while the context is active ``ffi.cdef`` of that header fills the FFI's cache of parsed type
  strings at once (``_fill_parsed_types``): the callback types wgpu-py's own import uses are then not parsed
  either, and a process that loads the file runs pycparser on no C text at all.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from contextlib import contextmanager

NATIVE_INSTANCE_BACKENDS = ("Vulkan", "Metal", "DX12")

# Type strings other than "WGPUStruct *" that wgpu-py 0.32 parses during adapter enumeration, device creation
# and a proof (listed by recording cffi's parses during `whirgpu devices`, `prove`, `verify` and
# `bench --kernels`). Exact strings: cffi caches by the string as written, trailing space included.
EXTRA_TYPE_STRINGS = (
    "void(WGPULogLevel, WGPUStringView, void *)",  # wgpu-py's import (its log callback)
    "WGPUAdapter[]",
    "WGPUBindGroupEntry[]",
    "WGPUChainedStruct * ",
    "WGPUCommandBuffer[]",
    "WGPUConstantEntry[]",
    "WGPUFeatureName[]",
    "char []",
    "intptr_t",
    "uint32_t []",
    "uint8_t *",
    "uint8_t []",
    "uintptr_t",
    "void(WGPUDevice const *, WGPUDeviceLostReason, WGPUStringView, void *, void *)",
    "void(WGPUDevice const *, WGPUErrorType, WGPUStringView, void *, void *)",
    "void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)",
    "void(WGPURequestDeviceStatus, WGPUDevice, WGPUStringView, void *, void *)",
)

_prepared = False


def prepare_wgpu_native() -> None:
    """Both steps, once per process (before the first adapter call)."""
    global _prepared
    if _prepared:
        return
    _prepared = True
    with cached_header_parse():
        preresolve_ffi_types()  # first: creating the instance already casts and allocates structs
    limit_instance_backends()


def limit_instance_backends(backends=NATIVE_INSTANCE_BACKENDS) -> bool:
    """Create wgpu-native's global instance with only ``backends`` enabled; False when an instance already
    existed (it is kept) or this wgpu has no such extra."""
    try:
        from wgpu.backends.wgpu_native import _helpers, extras  # noqa: PLC0415
    except ImportError:
        return False
    if getattr(_helpers, "_the_instance", None) is not None or not hasattr(extras, "set_instance_extras"):
        return False
    extras.set_instance_extras(backends=list(backends))
    return True


def preresolve_ffi_types(extra: tuple[str, ...] = EXTRA_TYPE_STRINGS, ffi=None) -> int:
    """Fill wgpu-native's cffi cache of parsed type strings (or ``ffi``'s): every struct typedef's pointer type,
    then the ``extra`` strings, those the parser holds parsed (``_EXTRA_ATTR``) as they are and the rest in one
    parse. Returns how many strings were added (0 when cffi's internals differ)."""
    try:
        from cffi import model  # noqa: PLC0415

        if ffi is None:
            from wgpu.backends.wgpu_native import ffi  # noqa: PLC0415

        parser, cache, lock = ffi._parser, ffi._parsed_types, ffi._lock
        declarations = parser._declarations
    except (ImportError, AttributeError):
        return 0
    added = 0
    try:
        with lock:
            for key, (tp, _quals) in list(declarations.items()):
                text = f"{key[len('typedef '):]} *"
                if key.startswith("typedef ") and isinstance(tp, model.StructType) and text not in cache:
                    cache[text] = (ffi._get_cached_btype(model.PointerType(tp)), False)
                    added += 1
            known = getattr(parser, _EXTRA_ATTR, None) or {}
            missing = [text for text in extra if text not in cache and text not in known]
            for text, (tp, is_function) in {**known, **_parse_types(parser, missing)}.items():
                if text in extra and text not in cache:
                    cache[text] = (ffi._get_cached_btype(tp), is_function)
                    added += 1
    except Exception:  # noqa: BLE001 - an optimisation only: cffi parses on first use as before
        return added
    return added


_EXTRA_ATTR = "_whirgpu_extra_types"  # a parser's parsed EXTRA_TYPE_STRINGS: {text: (model type, is_function)}


def _parse_types(parser, texts: list[str]) -> dict:
    """{text: (model type, is_function)} as ``FFI._typeof_locked`` makes them, from one pycparser run: a function
    taking every type as a parameter, each parameter exactly what ``parse_type`` would have parsed alone."""
    if not texts:
        return {}
    ast = parser._parse("void __dummy(\n%s\n);" % ",\n".join(texts))[0]
    types = {}
    for text, param in zip(texts, ast.ext[-1].type.args.params):
        tp, _quals = parser._get_type_and_quals(param.type)
        is_function = tp.is_raw_function
        types[text] = (tp.as_function_pointer() if is_function else tp, is_function)
    return types


_PARSER_STATE = ("_declarations", "_included_declarations", "_anonymous_counter", "_options", "_int_constants",
                 "_recomplete", "_uses_new_feature")
_CACHED = (*_PARSER_STATE, _EXTRA_ATTR)  # what a cache file holds
CACHE_FORMAT = "2"  # part of the file's key: files of another layout are never read
HEADER_MIN_CHARS = 10_000  # a whole C header, not a type string


def _header_cache_file(csource: str):
    """The cache file of a parse of ``csource``; None when there is no writable cache folder."""
    try:
        import cffi  # noqa: PLC0415
        import pycparser  # noqa: PLC0415

        from ..cache_dir import folder  # noqa: PLC0415

        key = hashlib.sha256("\0".join((csource, cffi.__version__, pycparser.__version__, sys.version, CACHE_FORMAT,
                                        *EXTRA_TYPE_STRINGS)).encode())
        return folder("wgpu-native") / f"cdef-{key.hexdigest()[:32]}.pickle"
    except Exception:  # noqa: BLE001 - no cache folder: parse as before
        return None


def _fill_parsed_types(ffi) -> None:
    """After ``ffi.cdef`` of a whole header: its struct pointer types and the parser's parsed extra strings into
    the FFI's cache of parsed type strings, parsing nothing (``preresolve_ffi_types`` with nothing missing)."""
    if getattr(ffi._parser, _EXTRA_ATTR, None):
        preresolve_ffi_types(ffi=ffi, extra=tuple(getattr(ffi._parser, _EXTRA_ATTR)))


@contextmanager
def cached_header_parse():
    """While active, a fresh cffi parser given a whole header restores a cached parse of it (module docstring)
    or parses it and caches the result, and ``FFI.cdef`` of such a header fills the FFI's parsed types. Leaves
    cffi as it was afterwards; does nothing if cffi differs."""
    try:
        from cffi import api, cparser  # noqa: PLC0415
    except ImportError:
        yield
        return
    original, original_cdef = cparser.Parser.parse, api.FFI.cdef
    if not all(hasattr(cparser.Parser(), name) for name in _PARSER_STATE):
        yield
        return

    def parse(self, csource, *args, **kwargs):
        plain = not args and not any(kwargs.values())  # ffi.cdef passes override=False and no options
        if not plain or self._declarations or not isinstance(csource, str) or len(csource) < HEADER_MIN_CHARS:
            return original(self, csource, *args, **kwargs)
        path = _header_cache_file(csource)
        if path is not None and path.is_file():
            try:
                state = pickle.loads(path.read_bytes())
                if isinstance(state, dict) and set(state) == set(_CACHED) and state["_declarations"]:
                    for name, value in state.items():
                        setattr(self, name, value)
                    return None
            except Exception:  # noqa: BLE001 - unreadable or stale: parse it again below
                pass
        result = original(self, csource)
        try:  # the extra strings, parsed once now against these declarations, go into the same file
            setattr(self, _EXTRA_ATTR, _parse_types(self, list(EXTRA_TYPE_STRINGS)))
        except Exception:  # noqa: BLE001 - an optimisation only: parsed on first use
            return result
        if path is not None:
            try:
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_bytes(pickle.dumps({name: getattr(self, name) for name in _CACHED},
                                             protocol=pickle.HIGHEST_PROTOCOL))
                os.replace(tmp, path)
            except Exception:  # noqa: BLE001 - an optimisation only
                pass
        return result

    def cdef(self, csource, *args, **kwargs):
        result = original_cdef(self, csource, *args, **kwargs)
        if isinstance(csource, str) and len(csource) >= HEADER_MIN_CHARS:
            try:
                _fill_parsed_types(self)
            except Exception:  # noqa: BLE001 - an optimisation only
                pass
        return result

    cparser.Parser.parse, api.FFI.cdef = parse, cdef
    try:
        yield
    finally:
        cparser.Parser.parse, api.FFI.cdef = original, original_cdef
