"""A small Objective-C bridge for the Metal runtime: cffi in ABI mode, no PyObjC, no compiler.

Every message is sent through ``objc_msgSend`` cast to the exact, non-variadic C prototype of its selector
(on arm64 a variadic call passes arguments on the stack while the method reads them from registers).
``SELECTORS`` is the one place where those prototypes are written down; ``send`` refuses a selector that is not
in it. Importing this module works on every platform; the libraries are loaded on first use, and anywhere but
macOS that first use raises ``BackendUnavailable``.

Ownership (Cocoa rules): ``new*``, ``alloc``/``init*`` and ``MTLCreate*`` return +1 objects the caller must
``release``; everything else (``commandBuffer``, encoders, ``error``, ``localizedDescription``, NSError
out-values) is autoreleased and only valid inside the ``autorelease_pool`` it was made in unless retained.
"""

from __future__ import annotations

import platform
import sys
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from ..errors import BackendUnavailable

TYPEDEFS = """
typedef void *id;
typedef void *SEL;
typedef struct { unsigned long width, height, depth; } MTLSize;
"""

_CDEF = TYPEDEFS + """
id objc_getClass(const char *name);
SEL sel_registerName(const char *name);
void objc_msgSend(void);          /* never called as declared: cast to a selector's prototype */
void objc_msgSend_stret(void);    /* x86_64 only: struct returns larger than 16 bytes */
void *objc_autoreleasePoolPush(void);
void objc_autoreleasePoolPop(void *pool);
id MTLCreateSystemDefaultDevice(void);
"""

_LIBRARIES = {
    "objc": "/usr/lib/libobjc.A.dylib",
    "foundation": "/System/Library/Frameworks/Foundation.framework/Foundation",
    # MTLCreateSystemDefaultDevice may return nil in a command-line process unless CoreGraphics is loaded
    "coregraphics": "/System/Library/Frameworks/CoreGraphics.framework/CoreGraphics",
    "metal": "/System/Library/Frameworks/Metal.framework/Metal",
}

# selector -> (C prototype of objc_msgSend for it, the Objective-C declaration). NSUInteger is unsigned long,
# NSInteger long (LP64); BOOL is read as unsigned char (bool on arm64, signed char on x86_64).
SELECTORS: dict[str, tuple[str, str]] = {
    # NSObject / Foundation
    "alloc": ("id(*)(id, SEL)", "+ (instancetype)alloc"),
    "init": ("id(*)(id, SEL)", "- (instancetype)init"),
    "retain": ("id(*)(id, SEL)", "- (instancetype)retain"),
    "release": ("void(*)(id, SEL)", "- (oneway void)release"),
    "initWithUTF8String:": ("id(*)(id, SEL, const char *)", "- (instancetype)initWithUTF8String:(const char *)s"),
    "UTF8String": ("const char *(*)(id, SEL)", "- (const char *)UTF8String"),
    "localizedDescription": ("id(*)(id, SEL)", "- (NSString *)localizedDescription  // of NSError"),
    # MTLDevice
    "name": ("id(*)(id, SEL)", "@property (readonly) NSString *name"),
    "newCommandQueue": ("id(*)(id, SEL)", "- (id<MTLCommandQueue>)newCommandQueue"),
    "maxBufferLength": ("unsigned long(*)(id, SEL)", "@property (readonly) NSUInteger maxBufferLength"),
    "maxThreadgroupMemoryLength": ("unsigned long(*)(id, SEL)",
                                   "@property (readonly) NSUInteger maxThreadgroupMemoryLength"),
    "maxThreadsPerThreadgroup": ("MTLSize(*)(id, SEL)", "@property (readonly) MTLSize maxThreadsPerThreadgroup"),
    "recommendedMaxWorkingSetSize": ("uint64_t(*)(id, SEL)",
                                     "@property (readonly) uint64_t recommendedMaxWorkingSetSize"),
    "hasUnifiedMemory": ("unsigned char(*)(id, SEL)", "@property (readonly) BOOL hasUnifiedMemory"),
    "supportsFamily:": ("unsigned char(*)(id, SEL, long)", "- (BOOL)supportsFamily:(MTLGPUFamily)gpuFamily"),
    "newBufferWithLength:options:": ("id(*)(id, SEL, unsigned long, unsigned long)",
                                     "- (id<MTLBuffer>)newBufferWithLength:(NSUInteger)length "
                                     "options:(MTLResourceOptions)options"),
    "newLibraryWithSource:options:error:": ("id(*)(id, SEL, id, id, id *)",
                                            "- (id<MTLLibrary>)newLibraryWithSource:(NSString *)source "
                                            "options:(MTLCompileOptions *)options error:(NSError **)error"),
    "newComputePipelineStateWithFunction:error:": ("id(*)(id, SEL, id, id *)",
                                                   "- (id<MTLComputePipelineState>)newComputePipelineStateWith"
                                                   "Function:(id<MTLFunction>)f error:(NSError **)error"),
    # MTLLibrary, MTLFunctionConstantValues, MTLComputePipelineState
    "newFunctionWithName:constantValues:error:": ("id(*)(id, SEL, id, id, id *)",
                                                  "- (id<MTLFunction>)newFunctionWithName:(NSString *)name "
                                                  "constantValues:(MTLFunctionConstantValues *)v "
                                                  "error:(NSError **)error"),
    "setConstantValue:type:atIndex:": ("void(*)(id, SEL, const void *, unsigned long, unsigned long)",
                                       "- (void)setConstantValue:(const void *)value type:(MTLDataType)type "
                                       "atIndex:(NSUInteger)index"),
    "maxTotalThreadsPerThreadgroup": ("unsigned long(*)(id, SEL)",
                                      "@property (readonly) NSUInteger maxTotalThreadsPerThreadgroup"),
    # MTLBuffer
    "contents": ("void *(*)(id, SEL)", "- (void *)contents  // NULL for Private storage"),
    "length": ("unsigned long(*)(id, SEL)", "@property (readonly) NSUInteger length"),
    # MTLCommandQueue, MTLCommandBuffer
    "commandBuffer": ("id(*)(id, SEL)", "- (id<MTLCommandBuffer>)commandBuffer  // autoreleased"),
    "computeCommandEncoder": ("id(*)(id, SEL)",
                              "- (id<MTLComputeCommandEncoder>)computeCommandEncoder  // serial dispatch"),
    "blitCommandEncoder": ("id(*)(id, SEL)", "- (id<MTLBlitCommandEncoder>)blitCommandEncoder"),
    "commit": ("void(*)(id, SEL)", "- (void)commit"),
    "waitUntilCompleted": ("void(*)(id, SEL)", "- (void)waitUntilCompleted"),
    "status": ("unsigned long(*)(id, SEL)", "@property (readonly) MTLCommandBufferStatus status"),
    "error": ("id(*)(id, SEL)", "@property (readonly) NSError *error"),
    "GPUStartTime": ("double(*)(id, SEL)", "@property (readonly) CFTimeInterval GPUStartTime"),
    "GPUEndTime": ("double(*)(id, SEL)", "@property (readonly) CFTimeInterval GPUEndTime"),
    # MTLComputeCommandEncoder, MTLBlitCommandEncoder
    "setComputePipelineState:": ("void(*)(id, SEL, id)",
                                 "- (void)setComputePipelineState:(id<MTLComputePipelineState>)state"),
    "setBuffer:offset:atIndex:": ("void(*)(id, SEL, id, unsigned long, unsigned long)",
                                  "- (void)setBuffer:(id<MTLBuffer>)buffer offset:(NSUInteger)offset "
                                  "atIndex:(NSUInteger)index"),
    "setBytes:length:atIndex:": ("void(*)(id, SEL, const void *, unsigned long, unsigned long)",
                                 "- (void)setBytes:(const void *)bytes length:(NSUInteger)length "
                                 "atIndex:(NSUInteger)index  // copied at once, at most 4 KiB"),
    "dispatchThreadgroups:threadsPerThreadgroup:": ("void(*)(id, SEL, MTLSize, MTLSize)",
                                                    "- (void)dispatchThreadgroups:(MTLSize)groups "
                                                    "threadsPerThreadgroup:(MTLSize)threads"),
    "copyFromBuffer:sourceOffset:toBuffer:destinationOffset:size:": (
        "void(*)(id, SEL, id, unsigned long, id, unsigned long, unsigned long)",
        "- (void)copyFromBuffer:(id<MTLBuffer>)src sourceOffset:(NSUInteger)so toBuffer:(id<MTLBuffer>)dst "
        "destinationOffset:(NSUInteger)do size:(NSUInteger)size"),
    "endEncoding": ("void(*)(id, SEL)", "- (void)endEncoding"),
}


class _Bridge:
    """The loaded libraries, selectors and cast senders (one per process)."""

    def __init__(self):
        if sys.platform != "darwin":
            raise BackendUnavailable(f"Metal needs macOS (this is {sys.platform}); use --backend wgpu or msl-cpu")
        from cffi import FFI  # noqa: PLC0415 - a core dependency, imported where it is used

        self.ffi = FFI()
        self.ffi.cdef(_CDEF)
        try:
            libs = {key: self.ffi.dlopen(path) for key, path in _LIBRARIES.items()}
        except OSError as exc:
            raise BackendUnavailable(f"could not load the Objective-C runtime or Metal: {exc}") from None
        self.objc, self.metal = libs["objc"], libs["metal"]
        self._libs = libs  # kept open for the process's lifetime
        self._send = self.ffi.addressof(self.objc, "objc_msgSend")
        # struct returns > 16 bytes go through objc_msgSend_stret on x86_64; arm64 has no _stret variant
        self._send_stret = (self.ffi.addressof(self.objc, "objc_msgSend_stret")
                            if platform.machine() == "x86_64" else self._send)
        self._selectors: dict[str, Any] = {}
        self._casts: dict[str, Any] = {}

    def sel(self, name: str):
        found = self._selectors.get(name)
        if found is None:
            found = self._selectors[name] = self.objc.sel_registerName(name.encode())
        return found

    def sender(self, selector: str):
        cast = self._casts.get(selector)
        if cast is None:
            proto = SELECTORS[selector][0]
            ctype = self.ffi.typeof(proto)
            target = self._send_stret if ctype.result.kind == "struct" else self._send
            cast = self._casts[selector] = self.ffi.cast(ctype, target)
        return cast


@lru_cache(maxsize=1)
def bridge() -> _Bridge:
    """The process's bridge, loaded on first use (BackendUnavailable off macOS or without Metal)."""
    return _Bridge()


def ffi():
    return bridge().ffi


def sel(name: str):
    """The registered selector ``name`` (cached)."""
    return bridge().sel(name)


def cls(name: str):
    """The class object ``name`` (nil if no such class)."""
    return bridge().objc.objc_getClass(name.encode())


def send(obj, selector: str, *args):
    """``[obj selector args...]`` through objc_msgSend cast to the prototype ``SELECTORS`` gives the selector."""
    if selector not in SELECTORS:
        raise KeyError(f"selector {selector!r} has no prototype in whirgpu.runtime._objc.SELECTORS")
    b = bridge()
    return b.sender(selector)(obj, b.sel(selector), *args)


def is_nil(obj) -> bool:
    return obj == ffi().NULL


def nsstring(text: str):
    """A new NSString (+1: the caller releases it)."""
    return send(send(cls("NSString"), "alloc"), "initWithUTF8String:", text.encode())


def to_str(nsstr) -> str:
    """The text of an NSString ('' for nil)."""
    if is_nil(nsstr):
        return ""
    raw = send(nsstr, "UTF8String")
    return "" if raw == ffi().NULL else ffi().string(raw).decode(errors="replace")


def retain(obj):
    return send(obj, "retain")


def release(obj) -> None:
    """Release a +1 object; nil is ignored."""
    if not is_nil(obj):
        send(obj, "release")


def releaser():
    """A release function for ``ffi.gc`` destructors: bound to the bridge, so it still works while module
    globals are torn down at interpreter exit."""
    b = bridge()
    release_send, release_sel, null = b.sender("release"), b.sel("release"), b.ffi.NULL

    def _release(obj) -> None:
        if obj != null:
            release_send(obj, release_sel)

    return _release


def error_message(err) -> str:
    """``[[err localizedDescription] UTF8String]`` (read it inside the pool the error was made in)."""
    return "unknown error (no NSError)" if is_nil(err) else to_str(send(err, "localizedDescription"))


@contextmanager
def autorelease_pool():
    """Everything autoreleased inside is released on exit (retain what must outlive it)."""
    objc = bridge().objc
    pool = objc.objc_autoreleasePoolPush()
    try:
        yield
    finally:
        objc.objc_autoreleasePoolPop(pool)
