"""A fake Objective-C runtime with a fake Metal device, so ``metal_rt`` runs on Linux.

What it checks about the calling pattern: every message goes through a real C function pointer of the
prototype ``_objc.SELECTORS`` gives (a cffi callback, so argument and return types are marshalled by libffi as
they would be for objc_msgSend); the selector handle passed matches the selector; +1 objects are released
exactly once and never messaged afterwards; autoreleased objects are made only inside an autorelease pool;
only one encoder of a command buffer is open at a time; Private buffers have no ``contents``; blits are
4-byte aligned and in range. What it cannot check: Apple's actual ABI, driver behaviour, or MSL compilation
(kernels run through the msl-cpu runtime, which compiles the same composed text as C++).
"""

from __future__ import annotations

import re

import numpy as np
from cffi import FFI

from whirgpu.kernels.compose import compose
from whirgpu.kernels.registry import KERNELS
from whirgpu.runtime import _objc
from whirgpu.runtime.base import RtBuffer, RtView
from whirgpu.runtime.msl_cpu_rt import MslCpuRuntime, _aligned_words


class FakeError(AssertionError):
    """A misuse of the Objective-C / Metal calling pattern."""


class Obj:
    def __init__(self, kind: str, **fields):
        self.kind, self.refs, self.dead = kind, 1, False
        self.__dict__.update(fields)


class FakeBridge:
    """Stands in for ``_objc._Bridge``: same attributes (ffi, objc, metal, sel, sender)."""

    def __init__(self, max_buffer: int = 1 << 30, max_pipeline_threads: int = 1024, mul: str = "mulhi"):
        self.ffi = FFI()
        self.ffi.cdef(_objc.TYPEDEFS)
        self.max_buffer, self.max_pipeline_threads = max_buffer, max_pipeline_threads
        self.objects: dict[int, tuple[Obj, object]] = {}  # address -> (object, its backing cdata)
        self.owned: list[Obj] = []  # every +1 object handed out
        self.pools: list[list[Obj]] = []
        self.errors: list[BaseException] = []
        self._sels: dict[str, object] = {}
        self._senders: dict[str, object] = {}
        self.classes = {name: self._new("class", name=name) for name in ("NSString", "MTLFunctionConstantValues")}
        self.cpu = MslCpuRuntime(mul=mul, workers=2)
        self.dispatches = 0
        bridge = self

        class ObjcLib:
            @staticmethod
            def objc_getClass(name: bytes):
                return bridge.classes[name.decode()].id

            @staticmethod
            def objc_autoreleasePoolPush():
                bridge.pools.append([])
                return bridge.ffi.cast("void *", len(bridge.pools))

            @staticmethod
            def objc_autoreleasePoolPop(token):
                if int(bridge.ffi.cast("uintptr_t", token)) != len(bridge.pools):
                    raise FakeError("autorelease pools popped out of order")
                for obj in bridge.pools.pop():
                    bridge._release(obj)

        class MetalLib:
            @staticmethod
            def MTLCreateSystemDefaultDevice():
                return bridge._owned("device").id

        self.objc, self.metal = ObjcLib(), MetalLib()

    # -- objects -------------------------------------------------------------------------------------------------
    def _new(self, kind: str, **fields) -> Obj:
        obj = Obj(kind, **fields)
        backing = self.ffi.new("char[1]")
        obj.id = self.ffi.cast("id", backing)
        self.objects[int(self.ffi.cast("uintptr_t", backing))] = (obj, backing)
        return obj

    def _owned(self, kind: str, **fields) -> Obj:
        obj = self._new(kind, **fields)
        self.owned.append(obj)
        return obj

    def _autoreleased(self, kind: str, **fields) -> Obj:
        if not self.pools:
            raise FakeError(f"an autoreleased {kind} was made outside any autorelease pool (it would leak)")
        obj = self._new(kind, **fields)
        self.pools[-1].append(obj)
        return obj

    def get(self, ptr, kind: str | None = None) -> Obj | None:
        if ptr == self.ffi.NULL:
            return None
        entry = self.objects.get(int(self.ffi.cast("uintptr_t", ptr)))
        if entry is None:
            raise FakeError("a message to something that is not an object")
        obj = entry[0]
        if obj.dead:
            raise FakeError(f"a message to a released {obj.kind}")
        if kind is not None and obj.kind != kind:
            raise FakeError(f"expected a {kind}, got a {obj.kind}")
        return obj

    def _release(self, obj: Obj) -> None:
        if obj.dead:
            raise FakeError(f"over-release of a {obj.kind}")
        obj.refs -= 1
        if obj.refs == 0:
            obj.dead = True

    def leaks(self) -> list[str]:
        return [o.kind for o in self.owned if not o.dead]

    def string(self, text: str) -> Obj:
        return self._autoreleased("NSString", text=text)

    def nserror(self, err_out, message: str) -> None:
        err_out[0] = self._autoreleased("NSError", message=message).id

    # -- the bridge interface ------------------------------------------------------------------------------------
    def sel(self, name: str):
        if name not in self._sels:
            self._sels[name] = self.ffi.new("char[]", name.encode())
        return self.ffi.cast("SEL", self._sels[name])

    def sender(self, selector: str):
        cached = self._senders.get(selector)
        if cached is not None:
            return cached
        method = getattr(self, "m_" + selector.replace(":", "_"))
        expected = self.sel(selector)

        def body(obj, sel, *args):
            if sel != expected:
                raise FakeError(f"{selector} sent with another selector")
            return method(obj, *args)

        def onerror(exc_type, exc, tb):
            self.errors.append(exc)

        callback = self.ffi.callback(_objc.SELECTORS[selector][0], body, onerror=onerror)

        def call(*args):
            result = callback(*args)
            if self.errors:
                raise self.errors.pop(0)
            return result

        self._senders[selector] = call
        return call

    # -- NSObject, NSString, NSError -----------------------------------------------------------------------------
    def m_alloc(self, cls):
        return self._owned(self.get(cls, "class").name, text="", values={}).id

    def m_init(self, obj):
        return obj

    def m_retain(self, obj):
        self.get(obj).refs += 1
        return obj

    def m_release(self, obj):
        self._release(self.get(obj))

    def m_initWithUTF8String_(self, obj, text):
        self.get(obj, "NSString").text = self.ffi.string(text).decode()
        return obj

    def m_UTF8String(self, obj):
        s = self.get(obj, "NSString")
        s.c = self.ffi.new("char[]", s.text.encode())  # lives as long as the string, as in Foundation
        return self.ffi.cast("const char *", s.c)

    def m_localizedDescription(self, err):
        return self.string(self.get(err, "NSError").message).id

    # -- MTLDevice -----------------------------------------------------------------------------------------------
    def m_name(self, device):
        return self.string("Fake Apple M9").id

    def m_newCommandQueue(self, device):
        return self._owned("queue").id

    def m_maxBufferLength(self, device):
        return self.max_buffer

    def m_maxThreadgroupMemoryLength(self, device):
        return 32768

    def m_maxThreadsPerThreadgroup(self, device):
        return (1024, 1024, 1024)

    def m_recommendedMaxWorkingSetSize(self, device):
        return 3 << 30

    def m_hasUnifiedMemory(self, device):
        return 1

    def m_supportsFamily_(self, device, family):
        return family <= 1008 or family in (2002, 5001)

    def m_newBufferWithLength_options_(self, device, length, options):
        if options not in (0, 32):
            raise FakeError(f"unexpected resource options {options}")
        if length > self.max_buffer:
            raise FakeError("newBufferWithLength over maxBufferLength")
        return self._owned("buffer", words=_aligned_words(length), length=length, shared=options == 0).id

    def m_newLibraryWithSource_options_error_(self, device, source, options, err):
        text = self.get(source, "NSString").text
        for number, line in enumerate(text.splitlines(), 1):
            if "#error" in line:
                self.nserror(err, f"program_source:{number}:{line.index('#error') + 2}: error: {line.strip()}")
                return self.ffi.NULL
        stem = next((s for s in KERNELS for mul in ("mulhi", "u64", "emulated")
                     if compose("msl", s, (("bb_mul", mul),)).text == text), None)
        if stem is None:
            raise FakeError("a library from a source that is no composed kernel")
        return self._owned("library", stem=stem).id

    def m_newComputePipelineStateWithFunction_error_(self, device, function, err):
        f = self.get(function, "function")
        return self._owned("pipeline", stem=f.stem, entry=f.entry, constants=dict(f.constants)).id

    # -- MTLLibrary, MTLFunctionConstantValues, MTLComputePipelineState -------------------------------------------
    def m_newFunctionWithName_constantValues_error_(self, library, name, values, err):
        lib, entry = self.get(library, "library"), self.get(name, "NSString").text
        spec = KERNELS[lib.stem]
        if entry not in spec.entries:
            self.nserror(err, f"Function {entry} was not found in the library")
            return self.ffi.NULL
        by_id = self.get(values, "MTLFunctionConstantValues").values
        if sorted(by_id) != sorted(i for i, _ in spec.constants.values()):
            raise FakeError(f"{lib.stem}: constants given for ids {sorted(by_id)}, the stem has "
                            f"{sorted(i for i, _ in spec.constants.values())}")
        names = {i: n for n, (i, _) in spec.constants.items()}
        return self._owned("function", stem=lib.stem, entry=entry,
                           constants={names[i]: v for i, v in by_id.items()}).id

    def m_setConstantValue_type_atIndex_(self, values, pointer, data_type, index):
        if data_type != 33:
            raise FakeError(f"constant type {data_type}, expected MTLDataTypeUInt (33)")
        self.get(values, "MTLFunctionConstantValues").values[index] = int(self.ffi.cast("uint32_t *", pointer)[0])

    def m_maxTotalThreadsPerThreadgroup(self, pipeline):
        self.get(pipeline, "pipeline")
        return self.max_pipeline_threads

    # -- MTLBuffer -----------------------------------------------------------------------------------------------
    def m_contents(self, buffer):
        b = self.get(buffer, "buffer")
        return self.ffi.cast("void *", b.words.ctypes.data) if b.shared else self.ffi.NULL

    def m_length(self, buffer):
        return self.get(buffer, "buffer").length

    # -- MTLCommandQueue, MTLCommandBuffer -----------------------------------------------------------------------
    def m_commandBuffer(self, queue):
        self.get(queue, "queue")
        return self._autoreleased("command buffer", ops=[], open=None, committed=False, status=0).id

    def _encoder(self, cb, kind):
        c = self.get(cb, "command buffer")
        if c.open is not None or c.committed:
            raise FakeError("a new encoder while another is open, or after commit")
        c.open = self._autoreleased(kind, cb=c, pipeline=None, slots={})
        return c.open.id

    def m_computeCommandEncoder(self, cb):
        return self._encoder(cb, "compute encoder")

    def m_blitCommandEncoder(self, cb):
        return self._encoder(cb, "blit encoder")

    def m_commit(self, cb):
        c = self.get(cb, "command buffer")
        if c.open is not None or c.committed:
            raise FakeError("commit with an open encoder, or twice")
        c.committed = True
        for op in c.ops:  # run at once, in order: what a serial queue with hazard tracking guarantees
            op()
        c.status = 4

    def m_waitUntilCompleted(self, cb):
        if not self.get(cb, "command buffer").committed:
            raise FakeError("wait on a command buffer never committed")

    def m_status(self, cb):
        return self.get(cb, "command buffer").status

    def m_error(self, cb):
        return self.ffi.NULL

    def m_GPUStartTime(self, cb):
        return 100.0

    def m_GPUEndTime(self, cb):
        return 100.25

    # -- encoders --------------------------------------------------------------------------------------------------
    def _live_encoder(self, encoder, kind):
        e = self.get(encoder, kind)
        if e.cb.open is not e:
            raise FakeError(f"{kind} used after endEncoding")
        return e

    def m_endEncoding(self, encoder):
        e = self.get(encoder)
        if e.cb.open is not e:
            raise FakeError("endEncoding twice")
        e.cb.open = None

    def m_setComputePipelineState_(self, encoder, pipeline):
        self._live_encoder(encoder, "compute encoder").pipeline = self.get(pipeline, "pipeline")

    def m_setBuffer_offset_atIndex_(self, encoder, buffer, offset, index):
        b = self.get(buffer, "buffer")
        if offset % 4 or offset > b.length:
            raise FakeError(f"buffer offset {offset} unaligned or past the end ({b.length})")
        self._live_encoder(encoder, "compute encoder").slots[index] = (b, offset)

    def m_setBytes_length_atIndex_(self, encoder, pointer, length, index):
        if length > 4096:
            raise FakeError("setBytes over 4 KiB")
        data = np.frombuffer(bytes(self.ffi.buffer(pointer, length)), np.uint32).copy()
        self._live_encoder(encoder, "compute encoder").slots[index] = data

    def m_dispatchThreadgroups_threadsPerThreadgroup_(self, encoder, groups, threads):
        e = self._live_encoder(encoder, "compute encoder")
        pipeline, slots = e.pipeline, dict(e.slots)
        grid, shape = (groups.width, groups.height, groups.depth), (threads.width, threads.height, threads.depth)

        def run():
            kernel = self.cpu.kernel(pipeline.stem, pipeline.entry, pipeline.constants)
            if grid[2] != 1 or shape != (kernel.threads, 1, 1):
                raise FakeError(f"{kernel.label}: grid {grid} x threads {shape}, registry says {kernel.threads}")
            n_buffers = len(KERNELS[pipeline.stem].entries[pipeline.entry].buffers)
            if not set(range(n_buffers + 1)) <= set(slots):  # an encoder keeps earlier dispatches' bindings
                raise FakeError(f"{kernel.label}: slots {sorted(slots)} bound, needs 0..{n_buffers}")
            views = []
            for slot in range(n_buffers):
                b, offset = slots[slot]
                if b.dead:
                    raise FakeError("a released buffer in a dispatch")
                views.append(RtView(RtBuffer(b.words, b.length, None), offset, b.length - offset))
            self.cpu.launch(kernel, views, slots[n_buffers], grid[:2])
            self.dispatches += 1

        e.cb.ops.append(run)

    def m_copyFromBuffer_sourceOffset_toBuffer_destinationOffset_size_(self, encoder, src, so, dst, do, size):
        e = self._live_encoder(encoder, "blit encoder")
        s, d = self.get(src, "buffer"), self.get(dst, "buffer")
        if so % 4 or do % 4 or size % 4 or so + size > s.length or do + size > d.length:
            raise FakeError(f"blit {so}+{size} -> {do} out of range or unaligned")

        def run():
            d.words.view(np.uint8)[do:do + size] = s.words.view(np.uint8)[so:so + size]

        e.cb.ops.append(run)


def check_selector_methods() -> list[str]:
    """Selectors in the table that the fake does not implement."""
    return [s for s in _objc.SELECTORS if not hasattr(FakeBridge, "m_" + re.sub(":", "_", s))]
