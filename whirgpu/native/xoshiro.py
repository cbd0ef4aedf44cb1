"""The random instances' sampler, compiled: ``ref.rng.random_base`` over ``Xoshiro256PlusPlus`` (rand's
``SmallRng``) in C, sample for sample.

Contract:
- ``sample_monty(rng, n, field)``: ``n`` samples of Plonky3's ``StandardUniform`` for ``field`` (uint32
  Montgomery words in [0, P), shape (n,)), advancing ``rng`` (a ``Xoshiro256PlusPlus``) exactly as
  ``ref.rng.random_base(rng, n, field)`` does: the same words and the same state after. Compiled when the library
  is loaded, numpy otherwise; it never waits on a compiler (``native.build.NativeLibrary``: the first call starts
  the build in the background, a later process finds it in the cache folder). ``sample_ef(rng, n, field)``: (n, 4)
  extension elements, as ``ref.rng.random_ef``.
- ``compiled_samples()``: the compiled function ``(state (4,) uint64, p, n) -> (n,) uint32`` (the state updated in
  place), or None while it is not loaded. ``build_now(retry_failed)``: for ``whirgpu warmup``.

Why compiled: a random instance of 2^20 values takes about 0.14 s in numpy lanes (the GF(2) jump ahead and 2^10
lane steps), about 3 ms in C; the CLI's first proof draws one before it proves.
"""

from __future__ import annotations

import numpy as np

from ..field import BABYBEAR, Field
from ..ref.rng import Xoshiro256PlusPlus, random_base
from .build import CompiledFunction, NativeLibrary

_SOURCE = r"""
#include <stdint.h>

static inline uint64_t rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* n samples u = next_u32() >> 1 with u < p (each redrawn until accepted) from Xoshiro256++ state s, which is
   updated in place to the state after the last accepted draw. next_u32 is the upper half of next_u64. */
void xoshiro_monty_samples(uint64_t *s, uint32_t p, long n, uint32_t *out) {
    uint64_t s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
    for (long i = 0; i < n;) {
        uint64_t word = rotl64(s0 + s3, 23) + s0;
        uint64_t t = s1 << 17;
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl64(s3, 45);
        uint32_t u = (uint32_t)(word >> 33);
        if (u < p) out[i++] = u;
    }
    s[0] = s0; s[1] = s1; s[2] = s2; s[3] = s3;
}
"""
_CDEF = "void xoshiro_monty_samples(void *s, uint32_t p, long n, void *out);"
_M64 = (1 << 64) - 1

_NATIVE = NativeLibrary("host-xoshiro", _SOURCE, ("-O3", "-shared", "-fPIC"), _CDEF,
                        what="the C Xoshiro256++ sampler", fallback="the numpy sampler")


def _make(loaded):
    ffi, lib = loaded
    call, from_buffer = lib.xoshiro_monty_samples, ffi.from_buffer

    def samples(state: np.ndarray, p: int, n: int) -> np.ndarray:
        if state.dtype != np.uint64 or state.shape != (4,) or not state.flags.writeable or n < 0:
            raise ValueError(f"xoshiro_monty_samples: a writable (4,) uint64 state and n >= 0, got {state.dtype} "
                             f"{state.shape} and {n}")
        out = np.empty(n, np.uint32)
        call(from_buffer(state, require_writable=True), p, n, from_buffer(out, require_writable=True))
        return out

    return samples


_COMPILED = CompiledFunction(_NATIVE, _make)


def compiled_samples():
    """The compiled sampler, or None while it is not loaded (module contract)."""
    return _COMPILED.get()


def build_now(retry_failed: bool = True):
    """("cached" | "built", library path), building it now; installs it for ``compiled_samples``."""
    return _COMPILED.build_now(retry_failed)


def sample_monty(rng: Xoshiro256PlusPlus, n: int, field: Field = BABYBEAR) -> np.ndarray:
    """``random_base(rng, n, field)``, compiled when loaded (module contract)."""
    compiled = compiled_samples() if type(rng) is Xoshiro256PlusPlus else None
    if compiled is None or n < 0:
        return random_base(rng, n, field)
    state = np.array([w & _M64 for w in rng.s], dtype=np.uint64)
    out = compiled(state, field.P, n)
    rng.s = [int(w) for w in state]
    return out


def sample_ef(rng: Xoshiro256PlusPlus, n: int, field: Field = BABYBEAR) -> np.ndarray:
    """``random_ef(rng, n, field)``: (n, 4) extension elements, each four consecutive samples c0..c3."""
    return sample_monty(rng, 4 * n, field).reshape(n, 4)
