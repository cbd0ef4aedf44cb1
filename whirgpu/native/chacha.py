"""The mask generator's ChaCha12 keystream, compiled: ``ref.chacha_rng.chacha_blocks`` in C, word for word.

Contract:
- ``compiled_blocks()``: a function ``(key_words (8,) uint32, first_block, n_blocks) -> (16 n_blocks,) uint32``
  equal to ``chacha_blocks(key_words, first_block, n_blocks)`` (12 rounds, legacy counter layout, stream 0), or
  None while the library is not loaded. It never waits on a compiler: the first call starts the build in the
  background (``native.build.NativeLibrary``, the same cache folder as the compiled Poseidon2), and later calls
  return the compiled function once it is loaded. Without a C compiler it stays None.
- ``CompiledStdRng``: ``StdRng`` whose blocks come from ``compiled_blocks()`` when it is loaded, from numpy
  otherwise (the same words either way, so a generator may switch in the middle of a stream). Forks
  (``from_rng``) and clones keep the class. ``zk.randomness.mask_rng`` returns one.
- ``build_now(retry_failed=True)``: for ``whirgpu warmup`` and benchmarks: ("cached" | "built", path), building
  now (``BackendUnavailable`` without a compiler).

Why compiled: a hiding proof forks its generator about twenty times and each fork computes a cache of 64 blocks;
in numpy a call costs about 180 array operations (~0.2-0.5 ms) whatever the block count.
"""

from __future__ import annotations

import numpy as np

from ..ref.chacha_rng import StdRng
from .build import CompiledFunction, NativeLibrary

_SOURCE = r"""
#include <stdint.h>

static inline uint32_t rotl32(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

#define QUARTER(a, b, c, d) \
    a += b; d ^= a; d = rotl32(d, 16); c += d; b ^= c; b = rotl32(b, 12); \
    a += b; d ^= a; d = rotl32(d, 8); c += d; b ^= c; b = rotl32(b, 7);

/* n_blocks ChaCha blocks from 64-bit block counter `first` (wrapping), stream 0: out[16 b + i] = word i of block
   first + b, each block `rounds` rounds (columns, then diagonals) with the input state added back. */
void chacha_blocks(const uint32_t *key, uint64_t first, long n_blocks, int rounds, uint32_t *out) {
    for (long b = 0; b < n_blocks; b++) {
        uint64_t counter = first + (uint64_t)b;
        uint32_t s[16] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u,
                          key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7],
                          (uint32_t)counter, (uint32_t)(counter >> 32), 0u, 0u};
        uint32_t x[16];
        for (int i = 0; i < 16; i++) x[i] = s[i];
        for (int r = 0; r < rounds; r += 2) {
            QUARTER(x[0], x[4], x[8], x[12]) QUARTER(x[1], x[5], x[9], x[13])
            QUARTER(x[2], x[6], x[10], x[14]) QUARTER(x[3], x[7], x[11], x[15])
            QUARTER(x[0], x[5], x[10], x[15]) QUARTER(x[1], x[6], x[11], x[12])
            QUARTER(x[2], x[7], x[8], x[13]) QUARTER(x[3], x[4], x[9], x[14])
        }
        for (int i = 0; i < 16; i++) out[16 * b + i] = x[i] + s[i];
    }
}
"""
_CDEF = "void chacha_blocks(void *key, uint64_t first, long n_blocks, int rounds, void *out);"
_ROUNDS = 12
_M64 = (1 << 64) - 1

_NATIVE = NativeLibrary("host-chacha", _SOURCE, ("-O3", "-shared", "-fPIC"), _CDEF,
                        what="the C ChaCha block function", fallback="the numpy ChaCha")


def _make(loaded):
    ffi, lib = loaded
    call, from_buffer = lib.chacha_blocks, ffi.from_buffer

    def blocks(key_words, first_block: int, n_blocks: int) -> np.ndarray:
        key = np.ascontiguousarray(key_words, dtype=np.uint32)
        if key.shape != (8,) or n_blocks < 0:
            raise ValueError(f"chacha_blocks: a key of 8 words and n_blocks >= 0, got {key.shape} and {n_blocks}")
        out = np.empty(16 * n_blocks, np.uint32)
        call(from_buffer(key), int(first_block) & _M64, n_blocks, _ROUNDS, from_buffer(out, require_writable=True))
        return out

    return blocks


_COMPILED = CompiledFunction(_NATIVE, _make)


def compiled_blocks():
    """The compiled block function, or None while it is not loaded (module contract)."""
    return _COMPILED.get()


def build_now(retry_failed: bool = True):
    """("cached" | "built", library path), building it now; installs it for ``compiled_blocks``."""
    return _COMPILED.build_now(retry_failed)


class CompiledStdRng(StdRng):
    """``StdRng`` with compiled blocks when they are loaded (module contract)."""

    __slots__ = ()

    def _blocks(self, first_block: int, n_blocks: int) -> np.ndarray:
        compiled = compiled_blocks()
        return compiled(self.key, first_block, n_blocks) if compiled is not None \
            else super()._blocks(first_block, n_blocks)
