"""The host transcript's Poseidon2, compiled: one state permuted in C, for the challenger's sequential duplexes.

Contract: ``native_permute(constants)`` returns a function (list of ``width`` canonical ints -> list of canonical
ints) equal to ``ref.poseidon2.permute_ints(state, constants)`` for every state, or None when no C compiler is
available (``CC``, else ``cc``; the challenger then uses ``permute_ints``). The C source below is compiled once
per machine into the msl-cpu runtime's cache folder (``WHIRGPU_CACHE_DIR``) and loaded through cffi's ABI mode
(no Python headers needed). Why: a verification absorbs and squeezes through ~50-100 single permutations one
after another, which numpy cannot batch; in Python each costs ~0.24 ms, in C about a microsecond.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from functools import lru_cache

import numpy as np

from ..ref.poseidon2 import _layers
from ..ref.poseidon2_constants import Poseidon2Constants

_SOURCE = r"""
#include <stdint.h>
/* One Poseidon2 state of w canonical words (w <= 32), as ref/poseidon2.permute_ints computes it: the external
   matrix applied to the input, half external rounds (add, reduce, S-box, matrix), a reduction, the internal rounds
   (S-box of word 0, then sum + diag[i] * s[i]), half external rounds, a reduction. p < 2^31, matrix entries and
   the diagonal small enough that every intermediate fits 64 bits (as in the reference's uint64 arithmetic).
   The body is instantiated per prime (BabyBear, KoalaBear, any other) so that the compiler turns the remainders
   by a constant into multiplications. */
#define P2_BODY(NAME, PRIME)                                                                                   \
static uint64_t NAME##_sbox(uint64_t x, int degree) {                                                          \
    const uint64_t p = (PRIME);                                                                                \
    uint64_t x2 = x * x % p, x3 = x2 * x % p;                                                                  \
    if (degree == 3) return x3;                                                                                \
    uint64_t x4 = x2 * x2 % p;                                                                                 \
    return x3 * x4 % p;                                                                                        \
}                                                                                                              \
static void NAME##_permute(uint64_t *s, int w, int degree, const uint64_t *m, int half, const uint64_t *rc_init, \
                           const uint64_t *rc_term, int rounds, const uint64_t *rc_int, const uint64_t *diag) {  \
    const uint64_t p = (PRIME);                                                                                \
    uint64_t t[32];                                                                                            \
    for (int i = 0; i < w; i++) { uint64_t a = 0; for (int j = 0; j < w; j++) a += m[i * w + j] * s[j]; t[i] = a; } \
    for (int r = 0; r < half; r++) {                                                                           \
        for (int i = 0; i < w; i++) s[i] = NAME##_sbox((t[i] + rc_init[r * w + i]) % p, degree);              \
        for (int i = 0; i < w; i++) { uint64_t a = 0; for (int j = 0; j < w; j++) a += m[i * w + j] * s[j]; t[i] = a; } \
    }                                                                                                          \
    for (int i = 0; i < w; i++) s[i] = t[i] % p;                                                               \
    for (int r = 0; r < rounds; r++) {                                                                         \
        s[0] = NAME##_sbox((s[0] + rc_int[r]) % p, degree);                                                    \
        uint64_t sum = 0;                                                                                      \
        for (int i = 0; i < w; i++) sum += s[i];                                                               \
        for (int i = 0; i < w; i++) s[i] = (sum + diag[i] * s[i]) % p;                                         \
    }                                                                                                          \
    for (int i = 0; i < w; i++) t[i] = s[i];                                                                   \
    for (int r = 0; r < half; r++) {                                                                           \
        for (int i = 0; i < w; i++) s[i] = NAME##_sbox((t[i] + rc_term[r * w + i]) % p, degree);              \
        for (int i = 0; i < w; i++) { uint64_t a = 0; for (int j = 0; j < w; j++) a += m[i * w + j] * s[j]; t[i] = a; } \
    }                                                                                                          \
    for (int i = 0; i < w; i++) s[i] = t[i] % p;                                                               \
}
P2_BODY(bb, 2013265921u)
P2_BODY(kb, 2130706433u)
static uint64_t any_p;
P2_BODY(any, any_p)
void p2_permute(uint64_t *s, int w, uint64_t p, int degree, const uint64_t *m, int half, const uint64_t *rc_init,
                const uint64_t *rc_term, int rounds, const uint64_t *rc_int, const uint64_t *diag) {
    if (p == 2013265921u) bb_permute(s, w, degree, m, half, rc_init, rc_term, rounds, rc_int, diag);
    else if (p == 2130706433u) kb_permute(s, w, degree, m, half, rc_init, rc_term, rounds, rc_int, diag);
    else { any_p = p; any_permute(s, w, degree, m, half, rc_init, rc_term, rounds, rc_int, diag); }
}
/* n states of w words, state-major (s[k * w + i]), each permuted in place. */
void p2_permute_many(uint64_t *s, long n, int w, uint64_t p, int degree, const uint64_t *m, int half,
                     const uint64_t *rc_init, const uint64_t *rc_term, int rounds, const uint64_t *rc_int,
                     const uint64_t *diag) {
    for (long k = 0; k < n; k++) p2_permute(s + k * w, w, p, degree, m, half, rc_init, rc_term, rounds, rc_int, diag);
}
"""
# Pointers are declared void * (ABI-identical to the C definitions' uint64_t *): calls then pass numpy buffers as
# ``ffi.from_buffer(array)`` and parse no C type string (a first proof parses none: tests/backend/test_cold_start).
_CDEF = ("void p2_permute(void *s, int w, uint64_t p, int degree, void *m, int half, void *rc_init, "
         "void *rc_term, int rounds, void *rc_int, void *diag);"
         "void p2_permute_many(void *s, long n, int w, uint64_t p, int degree, void *m, int half, "
         "void *rc_init, void *rc_term, int rounds, void *rc_int, void *diag);")


@lru_cache(maxsize=1)
def _library():
    """(ffi, lib), or None without a working C compiler or cache folder."""
    compiler = shutil.which(os.environ.get("CC", "cc"))
    if compiler is None:
        return None
    try:
        import cffi  # noqa: PLC0415

        from ..runtime.msl_cpu_rt import _cache_dir  # noqa: PLC0415 - the same cache folder
        target = _cache_dir() / f"host-p2-{hashlib.sha256(_SOURCE.encode()).hexdigest()[:16]}.so"
        if not target.is_file():
            fd, partial = tempfile.mkstemp(suffix=".so", dir=target.parent)
            os.close(fd)
            try:
                done = subprocess.run([compiler, "-O3", "-shared", "-fPIC", "-x", "c", "-", "-o", partial],
                                      input=_SOURCE, text=True, capture_output=True, timeout=120, check=False)
                if done.returncode != 0:
                    return None
                os.replace(partial, target)
            finally:
                if os.path.exists(partial):
                    os.unlink(partial)
        ffi = cffi.FFI()
        ffi.cdef(_CDEF)
        return ffi, ffi.dlopen(str(target))
    except Exception:  # noqa: BLE001 - any failure leaves the Python permutation in charge
        return None


def _tables(constants: Poseidon2Constants, ffi):
    """(keep-alive arrays, their buffers in call order m, rc_init, rc_term, rc_int, diag, and the scalars)."""
    layers = _layers(constants)
    rc_init, rc_term, rc_int = (np.ascontiguousarray(np.asarray(a, dtype=np.uint64))
                                for a in constants.canonical)
    mds = np.ascontiguousarray(layers.mds_u64)
    diag = np.ascontiguousarray(np.asarray(layers.diagonal, dtype=np.uint64))
    keep = (mds, rc_init, rc_term, rc_int, diag)
    buffers = [ffi.from_buffer(a) for a in keep]
    return keep, buffers, (constants.params.width, layers.p, layers.degree, rc_init.shape[0], rc_int.shape[0])


def native_permute(constants: Poseidon2Constants):
    """The compiled permutation of ``constants``' instance, or None (module contract)."""
    loaded = _library()
    if loaded is None:
        return None
    ffi, lib = loaded
    keep, (m, rc_init, rc_term, rc_int, diag), (width, p, degree, half, rounds) = _tables(constants, ffi)

    def permute(state: list) -> list:
        s = np.array(state, dtype=np.uint64)
        lib.p2_permute(ffi.from_buffer(s), width, p, degree, m, half, rc_init, rc_term, rounds, rc_int, diag)
        return s.tolist()

    permute.keep = keep
    return permute


def native_permute_lanes(constants: Poseidon2Constants):
    """A compiled ``ref.poseidon2.permute_lanes`` for ``constants`` (a lane-major (width, B) uint64 array of
    canonical values -> the permuted one, same layout; equal word for word), or None without a compiler."""
    loaded = _library()
    if loaded is None:
        return None
    ffi, lib = loaded
    keep, (m, rc_init, rc_term, rc_int, diag), (width, p, degree, half, rounds) = _tables(constants, ffi)

    def permute_lanes(lanes: np.ndarray, constants=None) -> np.ndarray:
        states = np.ascontiguousarray(np.asarray(lanes, dtype=np.uint64).T)
        lib.p2_permute_many(ffi.from_buffer(states), states.shape[0], width, p, degree, m, half, rc_init, rc_term,
                            rounds, rc_int, diag)
        return states.T

    permute_lanes.keep = keep
    return permute_lanes
