"""The host's Poseidon2, compiled: one state (the challenger's duplexes) or many (the verifier's Merkle batch) in C.

Contract: ``native_permute(constants)`` returns a function (list of ``width`` canonical ints -> list of canonical
ints) equal to ``ref.poseidon2.permute_ints(state, constants)`` for every state; ``native_permute_lanes(constants)``
returns a drop-in for ``ref.poseidon2.permute_lanes`` (lane-major (width, B) uint64 canonical values -> a fresh
(width, B) array of the permuted ones; the input is left as it was), equal word for word. Both return None when no
C compiler is available (``CC``, else ``cc``; callers then use the reference; ``activity.notice`` says so once,
with how to get the compiled one), when an earlier build failed, or when the instance is wider than 32.

Neither waits on a compiler. The C source below is compiled once per machine into the msl-cpu runtime's cache
folder (``WHIRGPU_CACHE_DIR``; ``native_build``) and loaded through cffi's ABI mode (no Python headers needed).
When it is not there yet, the first call starts its build in a detached background process and returns a
function that runs the numpy reference until the library is loaded, then the compiled code (``_Swap``: the same
results either way, so a proof made while it swaps is the same bytes); a process that ends first leaves the
compiler running, and the next process loads the library. ``whirgpu warmup`` builds it ahead (``build_now``).
Why compiled: a verification absorbs and squeezes through ~50-100 single permutations one after another, which
numpy cannot batch, and permutes ~7,500 Merkle states in batches; in Python a single permutation costs ~0.24 ms.

The C source and its two paths: ``native/permute_c.py``; the sponge's steps in C: ``native/sponge_c.py``.
"""

from __future__ import annotations

import os
import weakref
from array import array
from functools import lru_cache, partial

import numpy as np

from ..ref.poseidon2 import permutation_layers, permute_ints, permute_lanes
from ..ref.poseidon2_constants import Poseidon2Constants
from .build import NativeLibrary
from . import boundary_c, job_c, sponge_c
from .draw_call import MontyCallParts, PreparedMontyCall, set_arrays, split_draws
from .layout import DrawLayout
from .permute_c import HEADER, MAX_WIDTH, SPECIALISED, SOURCE

_CDEF = ("void p2_permute(void *s, void *t);"
         "int p2_isa_mask(void);"
         "void p2_permute_lanes(void *in, void *out, long n, void *t, int isa);"
         "void p2_absorb(void *s, void *words, long runs, void *t, uint64_t tag, int isa);"
         "int p2_single_isa(void);"
         "long p2_distinct(void *s, void *buffered, long nbuf, long sets, void *bits, void *targets, void *bounds, "
         "void *draws, void *t, int isa);"
         "long p2_grind(void *base, int index, uint64_t mask, uint64_t start, long count, void *t, int isa, "
         "int threads);"
         "long p2_grind_draw(void *s, int index, uint64_t mask, long count, void *t, int lane_isa, int threads, "
         "long sets, void *bits, void *targets, void *bounds, void *draws, int single_isa, void *used);"
         "long p2_absorb_grind_draw(void *s, void *words, long runs, uint64_t tag, void *tail, int ntail, "
         "uint64_t mask, long count, void *t, int lane_isa, int threads, long sets, void *bits, void *targets, "
         "void *bounds, void *draws, int single_isa, void *used);" + job_c.CDEF)


_NATIVE = NativeLibrary("host-p2", SOURCE + sponge_c.SOURCE + boundary_c.SOURCE + job_c.SOURCE,
                        ("-O3", "-shared", "-fPIC", "-pthread"), _CDEF, what="the C Poseidon2 permutation",
                        fallback="the numpy Poseidon2 permutation")


@lru_cache(maxsize=1)
def _library():
    """(ffi, lib), building the library now if needed (waits); None without a working C compiler or cache
    folder. The prover's and verifier's paths never call this before the library is loaded (``_NATIVE.poll``)."""
    return _NATIVE.load()


def build_now(retry_failed: bool = True):
    """For ``whirgpu warmup``: ("cached" | "built", library path), building it now; ``BackendUnavailable``
    without a C compiler, ``ShaderCompileError`` (naming the compiler's log) when the build fails."""
    how, path, _ = _NATIVE.ensure(retry_failed=retry_failed)
    return how, path


class _Swap:
    """The reference until the compiled library is loaded, the compiled function after: each call runs the one
    installed when it starts (one attribute read, atomic), and both give the same words, so a swap in the middle
    of a proof changes nothing in it."""

    __slots__ = ("_impl", "_make", "_reference")

    def __init__(self, reference, make):
        self._impl = self._reference = reference
        self._make = make

    def __call__(self, *args, **kwargs):
        return self._impl(*args, **kwargs)

    def _install(self, loaded) -> None:
        self._impl = self._make(loaded)

    @property
    def compiled(self) -> bool:
        """Whether calls now run the compiled function."""
        return self._impl is not self._reference


def _soon(constants: Poseidon2Constants, reference, make):
    """``make(loaded)`` when the library is loaded now; a ``_Swap`` from ``reference`` to it when its build is
    under way; None when there is no compiled library to wait for (module contract)."""
    if constants.params.width > MAX_WIDTH:
        return None
    loaded, pending = _NATIVE.poll()
    if loaded is not None:
        return make(loaded)
    if not pending:
        return None
    swap = _Swap(reference, make)
    _NATIVE.when_loaded(swap._install)
    return swap


@lru_cache(maxsize=1)
def _best_isa() -> int:
    """The widest lane kernel this CPU runs (one bit of ``p2_isa_mask``), 0 for the per-state loop."""
    loaded = _library()
    mask = loaded[1].p2_isa_mask() if loaded is not None else 0
    return max((bit for bit in (4, 2, 1) if mask & bit), default=0)


def _is_structured(matrix: np.ndarray) -> bool:
    """Whether ``matrix`` is circ(2 M4, M4, ..., M4) = (I + J) kron M4, the form the fast path computes."""
    width = matrix.shape[0]
    if width % 4:
        return False
    m4 = np.array([[2, 3, 1, 1], [1, 2, 3, 1], [1, 1, 2, 3], [3, 1, 1, 2]], dtype=np.int64)
    blocks = width // 4
    return bool(np.array_equal(matrix, np.kron(np.eye(blocks, dtype=np.int64) + 1, m4)))


def _table(constants: Poseidon2Constants, generic: bool = False) -> np.ndarray:
    """The C table of ``constants`` (layout: ``_COMMON``'s enum); ``generic`` forces the generic path (tests)."""
    layers = permutation_layers(constants)
    params = constants.params
    p, width, degree = layers.p, params.width, layers.degree
    rc_init, rc_term, rc_int = constants.canonical
    matrix = np.asarray(params.external_matrix, dtype=np.int64)
    fast = (not generic and (width, degree) in SPECIALISED and p % 2 == 1 and (1 << 16) < p < (1 << 31)
            and _is_structured(matrix))
    canonical = [v for row in rc_init for v in row] + [v for row in rc_term for v in row] + list(rc_int) \
        + list(layers.diagonal)
    header = {"fast": int(fast), "p": p, "width": width, "degree": degree, "half": len(rc_init),
              "rounds": len(rc_int), "neg_p_inv": (-pow(p, -1, 1 << 32)) % (1 << 32) if p % 2 else 0,
              "r2": (1 << 64) % p, "mu": (1 << 38) // p}
    montgomery = [v * (1 << 32) % p for v in canonical]
    table = np.array([header[k] for k in HEADER] + canonical + matrix.reshape(-1).tolist() + montgomery,
                     dtype=np.uint64)
    table.setflags(write=False)
    return table


def native_permute(constants: Poseidon2Constants, *, _generic: bool = False):
    """The compiled single-state permutation of ``constants``' instance, or None (module contract): while the
    library's first build runs in the background, a function that calls ``permute_ints`` until it is loaded.
    ``_generic`` (tests only) runs the generic C path even where the fast one applies."""
    return _soon(constants, partial(permute_ints, constants=constants),
                 lambda loaded: _compiled_single(loaded, constants, _generic))


def _compiled_single(loaded, constants: Poseidon2Constants, generic: bool):
    ffi, lib = loaded
    table = _table(constants, generic)
    tab, call, from_buffer = ffi.from_buffer(table), lib.p2_permute, ffi.from_buffer

    def permute(state: list) -> list:
        # array.array: about half numpy's cost to build from a short list and to turn back into one.
        s = array("Q", state)
        call(from_buffer(s), tab)
        return s.tolist()

    permute.keep = table
    return permute


def native_absorb(constants: Poseidon2Constants, *, _generic: bool = False, _isa: int | None = None):
    """A compiled duplex absorption for ``constants``' width-16 instance, or None (module contract: while the
    library's first build runs, the Python loop until it is loaded): ``absorb(state, words, tag)`` with ``state``
    16 canonical ints and ``words`` 8 * runs canonical words (uint64) returns the state after, per run, the run
    overwriting state[0..8), state[8] += tag mod p (the length tag; 0 for none) and one permutation (on the
    4-lane kernel ``p2_single_isa`` names where this CPU has one). Tests only: ``_generic`` forces the generic C
    path, ``_isa`` the single-state kernel (0: the scalar one, or ``single_isa()``); either waits for the
    library."""
    if constants.params.width != 16:
        return None
    p = constants.params.field.P

    def reference(state, words, tag: int) -> list:
        state = list(state)
        words = [int(w) for w in np.asarray(words, np.uint64).reshape(-1).tolist()]
        for start in range(0, len(words) - len(words) % 8, 8):
            state[:8] = words[start:start + 8]
            if tag:
                state[8] = (state[8] + tag) % p
            state = permute_ints(state, constants)
        return state

    if _generic or _isa is not None:
        loaded = _library()
        return None if loaded is None else _compiled_absorb(loaded, constants, _generic, _isa)
    return _soon(constants, reference, lambda loaded: _compiled_absorb(loaded, constants, False))


def single_isa() -> int:
    """The instruction set (a bit of ``p2_isa_mask``) whose 4-lane kernel permutes one width-16 state on this CPU,
    0 for none (the scalar kernel then does); waits for the library (0 without one)."""
    loaded = _library()
    return 0 if loaded is None else int(loaded[1].p2_single_isa())


def _compiled_absorb(loaded, constants: Poseidon2Constants, generic: bool, isa: int | None = None):
    ffi, lib = loaded
    if isa is not None and isa not in (0, lib.p2_single_isa()):
        raise ValueError(f"native_absorb: no single-state kernel {isa} here (this CPU's: {lib.p2_single_isa()})")
    # resolved once here: p2_single_isa's cpuid costs microseconds a call where a hypervisor traps it
    isa = int(lib.p2_single_isa()) if isa is None else isa
    table = _table(constants, generic)
    tab, call, from_buffer = ffi.from_buffer(table), lib.p2_absorb, ffi.from_buffer

    def absorb(state, words, tag: int) -> list:
        s = array("Q", state)
        words = np.ascontiguousarray(words, dtype=np.uint64).reshape(-1)
        call(from_buffer(s), from_buffer(words), words.size // 8, tab, tag, isa)
        return s.tolist()

    absorb.keep = table
    return absorb


def native_permute_lanes(constants: Poseidon2Constants, *, _generic: bool = False, _isa: int | None = None):
    """A compiled ``ref.poseidon2.permute_lanes`` for ``constants`` (module contract), or None: while the
    library's first build runs in the background, one that runs ``permute_lanes`` on a copy until it is loaded.
    Tests only: ``_generic`` forces the generic C path, ``_isa`` one lane kernel (a bit of ``p2_isa_mask`` this
    CPU runs, or 0 for the per-state loop); either waits for the library."""
    if _isa is not None or _generic:
        loaded = _library()
        return None if loaded is None or constants.params.width > MAX_WIDTH else \
            _compiled_lanes(loaded, constants, _generic, _isa)
    width = constants.params.width

    def reference(lanes: np.ndarray, _constants=None) -> np.ndarray:
        lanes = np.array(lanes, dtype=np.uint64)  # a copy: permute_lanes consumes its input, this one must not
        if lanes.ndim != 2 or lanes.shape[0] != width:
            raise ValueError(f"permute_lanes: shape {lanes.shape}, expected ({width}, B)")
        return permute_lanes(lanes, constants)

    return _soon(constants, reference, lambda loaded: _compiled_lanes(loaded, constants, False, None))


def _compiled_lanes(loaded, constants: Poseidon2Constants, generic: bool, isa: int | None):
    ffi, lib = loaded
    if isa is None:
        isa = _best_isa()
    elif not (isa == 0 or isa & lib.p2_isa_mask() == isa and bin(isa).count("1") == 1):
        raise ValueError(f"native_permute_lanes: lane kernel {isa} not available (mask {lib.p2_isa_mask()})")
    table = _table(constants, generic)
    tab, call, from_buffer, width = ffi.from_buffer(table), lib.p2_permute_lanes, ffi.from_buffer, \
        constants.params.width

    def permute_lanes(lanes: np.ndarray, constants=None) -> np.ndarray:
        lanes = np.ascontiguousarray(lanes, dtype=np.uint64)
        if lanes.ndim != 2 or lanes.shape[0] != width:
            raise ValueError(f"permute_lanes: shape {lanes.shape}, expected ({width}, B)")
        out = np.empty_like(lanes)
        call(from_buffer(lanes), from_buffer(out), lanes.shape[1], tab, isa)
        return out

    permute_lanes.keep = table
    return permute_lanes


@lru_cache(maxsize=1)
def fast_permute_lanes():
    """The compiled lane permutation of whir-p3's constants where it is built, else None (``compute_roots_batched``
    then runs ``permute_lanes``); equal word for word. What the verifier's Merkle batch and the GPU path hashing's
    host side both take."""
    return native_permute_lanes(Poseidon2Constants.smallrng(1))


def _width16_now(constants: Poseidon2Constants, compiled):
    """``compiled(loaded, constants)`` for a width-16 instance where the library is loaded now, else None."""
    loaded = _NATIVE.loaded_now() if constants.params.width == 16 else None
    return None if loaded is None else compiled(loaded, constants)


def native_distinct(constants: Poseidon2Constants):
    """Compiled distinct uniform draws for ``constants``' width-16 instance where the library is loaded now, else
    None (never waits; the caller then draws one by one): ``distinct(state, buffered, sets)`` with ``state`` 16
    canonical ints (the sponge after its last duplex), ``buffered`` the canonical samples still to pop, in pop
    order, and ``sets`` a list of (bits, target), 1 <= bits <= 16, target <= 2^bits, returns (draws, used, state):
    per set, the first ``target`` distinct values of ``sample_uniform_bits(bits)`` in the order drawn (the sets
    drawn one after another from the one stream), the samples used in all, and the sponge after the last
    permutation a used sample came from (16 ints; ``state`` when none)."""
    return _width16_now(constants, _compiled_distinct)


def native_grind(constants: Poseidon2Constants):
    """A compiled width-16 proof-of-work search for ``constants`` where the library is loaded now, else None (never
    waits): ``grind(base, index, bits, start, count, threads=1)`` with ``base`` 16 canonical ints returns the least
    k in [0, count) such that ``base`` with word ``index`` set to start + k, permuted, has a word 7 whose low
    ``bits`` bits are zero, or -1 when none is (start + count <= P); on ``threads`` threads (POSIX), the same k."""
    return _width16_now(constants, _compiled_grind)


def _draw_sets(sets, p: int) -> tuple:
    """``p2_distinct``'s set arrays (bits, targets, bounds) for ``sets`` of (bits, target), and room for the draws."""
    bits, targets, bounds = set_arrays(tuple((int(b), int(n)) for b, n in sets), p)
    return bits, targets, bounds, array("Q", bytes(8 * max(1, sum(targets))))


@lru_cache(maxsize=16)
def _compiled_distinct(loaded, constants: Poseidon2Constants):
    ffi, lib = loaded
    table = _table(constants)
    tab, call, from_buffer, p = ffi.from_buffer(table), lib.p2_distinct, ffi.from_buffer, constants.params.field.P
    isa = int(lib.p2_single_isa())  # once: see _compiled_absorb

    def distinct(state, buffered, sets) -> tuple[list, int, list]:
        bits, targets, bounds, draws = _draw_sets(sets, p)
        s, ahead = array("Q", state), array("Q", buffered or [0])
        used = call(from_buffer(s), from_buffer(ahead), len(buffered), len(sets), from_buffer(bits),
                    from_buffer(targets), from_buffer(bounds), from_buffer(draws), tab, isa)
        return split_draws(draws, targets, len(sets)), int(used), s.tolist()

    distinct.keep = table
    return distinct


@lru_cache(maxsize=16)
def _compiled_grind(loaded, constants: Poseidon2Constants):
    ffi, lib = loaded
    table = _table(constants)
    tab, call, from_buffer, isa = ffi.from_buffer(table), lib.p2_grind, ffi.from_buffer, _best_isa()

    def grind(base, index: int, bits: int, start: int, count: int, threads: int = 1) -> int:
        if not 0 <= index < 16:
            raise ValueError(f"grind: index {index} outside [0, 16)")
        return int(call(from_buffer(array("Q", base)), index, (1 << bits) - 1, start, count, tab, isa,
                        max(1, int(threads))))

    grind.keep = table
    return grind


def native_grind_draw(constants: Poseidon2Constants):
    """The compiled proof-of-work search and the distinct draws after it in one call, for ``constants``' width-16
    instance where the library is loaded now, else None (never waits): ``grind_draw(base, index, bits, sets,
    threads=1)`` with ``base``, ``index`` as ``native_grind`` takes them (bits >= 1) and ``sets`` as
    ``native_distinct`` does returns (witness, draws, used, state): the least witness (canonical; -1 when none in
    [0, P), draws None), then what ``native_distinct`` gives from the sponge ``check_witness`` leaves (its output
    words 6 .. 0 still to pop)."""
    return _width16_now(constants, _compiled_grind_draw)


@lru_cache(maxsize=16)
def _compiled_grind_draw(loaded, constants: Poseidon2Constants):
    ffi, lib = loaded
    table = _table(constants)
    tab, call, from_buffer, p = ffi.from_buffer(table), lib.p2_grind_draw, ffi.from_buffer, constants.params.field.P
    lane_isa, single = _best_isa(), int(lib.p2_single_isa())

    def grind_draw(base, index: int, bits: int, sets, threads: int = 1) -> tuple:
        if not 0 <= index < 16 or not 1 <= bits <= 30:
            raise ValueError(f"grind_draw: index {index} outside [0, 16) or bits {bits} outside [1, 30]")
        set_bits, targets, bounds, draws = _draw_sets(sets, p)
        s, used = array("Q", base), array("q", [0])
        witness = call(from_buffer(s), index, (1 << bits) - 1, p, tab, lane_isa, max(1, int(threads)), len(sets),
                       from_buffer(set_bits), from_buffer(targets), from_buffer(bounds), from_buffer(draws), single,
                       from_buffer(used))
        if witness < 0:
            return -1, None, 0, list(base)
        return int(witness), split_draws(draws, targets, len(sets)), int(used[0]), s.tolist()

    grind_draw.keep = table
    return grind_draw


def native_absorb_grind_draw(constants: Poseidon2Constants):
    """``native_absorb``, then ``native_grind_draw``, in one call (so the caller's thread holds no interpreter lock
    from the absorb to the last draw), for ``constants``' width-16 instance where the library is loaded now, else
    None (never waits): ``absorb_grind_draw(state, words, tag, tail, bits, sets, threads=1)`` absorbs ``words``
    (8 * runs canonical words, ``tag`` the length tag or 0) into ``state`` (16 canonical ints), puts ``tail`` (< 8
    canonical words: the input buffer left) where a proof-of-work candidate meets them (as ``pow_base_state``:
    with a tag, the rest of the rate zeroed and word 8 plus len(tail) + 1) and returns what ``native_grind_draw``
    returns from there, the witness at word len(tail)."""
    return _width16_now(constants, _compiled_absorb_grind_draw)


class HostWorker:
    """One compiled call made on a thread of the library's own (``job_c``): ``start`` starts the thread, which
    spins (up to ``spin_seconds``) until a call is handed to it, so the hand-off costs no thread wake-up and no
    interpreter lock; ``take(entry, args)`` hands it the arguments (True), or returns False when it gave up
    waiting; ``finish()`` waits for the call (spinning) and joins the thread: its result, or -2 when nothing was
    taken. ``finish`` is idempotent and also runs when the object is collected. Only
    ``p2_job_absorb_grind_draw_monty`` is a job's call (``native_absorb_grind_draw_monty``'s ``worker``)."""

    STATES = ("waiting", "called", "done", "gave up")  # job_c's job states, in its order

    def __init__(self, handle, lib):
        self._handle, self._state, self._lib, self._helpers = handle, lib.p2_job_state, lib, 0
        self._finish = weakref.finalize(self, lib.p2_job_finish, handle)

    @classmethod
    def start(cls, spin_seconds: float, helpers: int = 0) -> "HostWorker | None":
        """A worker whose thread runs now, or None where the library is not loaded, has no threads (not POSIX)
        or this process may run on one CPU only (a spinning thread would take the caller's). ``helpers``: threads
        started once ``take`` hands it a call (at most 8; ``search_helpers()`` says how many a machine has room
        for), which spin while it absorbs until its proof-of-work search begins and search its blocks too (the
        least witness still the answer), so a search needs no thread started while it waits."""
        loaded = _NATIVE.loaded_now()
        if loaded is None or _cpus() < 2:
            return None
        ffi, lib = loaded
        if not lib.p2_job_threads():
            return None
        handle = lib.p2_job_start(max(0, int(spin_seconds * 1e9)))
        if handle == ffi.NULL:
            return None
        worker = cls(handle, lib)
        worker._helpers = max(0, min(int(helpers), 8))
        return worker

    def take(self, entry, args: tuple) -> bool:
        taken = self._finish.alive and bool(entry(self._handle, *args))
        if taken and self._helpers:
            self._lib.p2_job_help(self._handle, self._helpers)
        return taken

    def also(self, setter, args: tuple) -> None:
        """``setter(job, *args)`` before ``take``: what the job's thread does after its call (``p2_job_layout``)."""
        if self._finish.alive:
            setter(self._handle, *args)

    def finish(self) -> int:
        result = self._finish()
        return -2 if result is None else int(result)

    @property
    def state(self) -> str:
        """The job's state (``STATES``), "finished" once ``finish`` ran."""
        return self.STATES[self._state(self._handle)] if self._finish.alive else "finished"


def search_helpers() -> int:
    """The search helpers a ``HostWorker`` may start: up to 2 of this process's CPUs beyond three (the caller's
    thread, the worker's, and one left to the rest of the machine), 0 on a machine of three or fewer."""
    return max(0, min(2, _cpus() - 3))


@lru_cache(maxsize=1)
def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@lru_cache(maxsize=16)
def _compiled_absorb_grind_draw(loaded, constants: Poseidon2Constants):
    ffi, lib = loaded
    table = _table(constants)
    tab, call, from_buffer = ffi.from_buffer(table), lib.p2_absorb_grind_draw, ffi.from_buffer
    p, lane_isa, single = constants.params.field.P, _best_isa(), int(lib.p2_single_isa())

    def absorb_grind_draw(state, words, tag: int, tail, bits: int, sets, threads: int = 1) -> tuple:
        if not 0 <= len(tail) < 8 or not 1 <= bits <= 30:
            raise ValueError(f"absorb_grind_draw: {len(tail)} tail words (at most 7) or bits {bits} outside [1, 30]")
        words = np.ascontiguousarray(words, dtype=np.uint64).reshape(-1)
        set_bits, targets, bounds, draws = _draw_sets(sets, p)
        s, rest, used = array("Q", state), array("Q", list(tail) or [0]), array("q", [0])
        witness = call(from_buffer(s), from_buffer(words), words.size // 8, tag, from_buffer(rest), len(tail),
                       (1 << bits) - 1, p, tab, lane_isa, max(1, int(threads)), len(sets), from_buffer(set_bits),
                       from_buffer(targets), from_buffer(bounds), from_buffer(draws), single, from_buffer(used))
        if witness < 0:
            return -1, None, 0, s.tolist()
        return int(witness), split_draws(draws, targets, len(sets)), int(used[0]), s.tolist()

    absorb_grind_draw.keep = table
    return absorb_grind_draw


def native_absorb_grind_draw_monty(constants: Poseidon2Constants):
    """``native_absorb_grind_draw`` for words as the device keeps them, where the library is loaded now, else None
    (never waits): ``absorb_grind_draw_monty(state, words, tag, bits, sets, threads=1, worker=None,
    meanwhile=None)`` with ``words`` a contiguous uint32 array of Montgomery-form words (R = 2^32), each below P
    (checked in C: ValueError naming none, so the caller checks first to name one), converted in C, their whole
    runs absorbed and the rest (< 8) the tail; returns what ``native_absorb_grind_draw`` returns. ``worker`` (a
    started ``HostWorker``, used up here): the call, conversion included, is made on its thread while this one runs
    ``meanwhile()``, then waits for it; without one, or where its thread gave up waiting, ``meanwhile()`` runs
    first and the call here. Either way the same results. Its ``prepare(nwords, tag, bits, sets, threads=1,
    layout=None)`` makes the same call ready before its words exist (``draw_call.PreparedMontyCall``)."""
    return _width16_now(constants, _compiled_absorb_grind_draw_monty)


@lru_cache(maxsize=16)
def _compiled_absorb_grind_draw_monty(loaded, constants: Poseidon2Constants):
    ffi, lib = loaded
    table = _table(constants)
    parts = MontyCallParts(loaded, table, ffi.from_buffer(table), constants.params.field.P, _best_isa(),
                           int(lib.p2_single_isa()))

    def absorb_grind_draw_monty(state, words, tag: int, bits: int, sets, threads: int = 1, worker=None,
                                meanwhile=None, layout: "DrawLayout | None" = None) -> tuple:
        words = np.ascontiguousarray(words, dtype=np.uint32).reshape(-1)
        call = PreparedMontyCall(parts, words.size, tag, bits, sets, threads, layout, words)
        call.state[:] = state
        witness = call.run(worker, meanwhile)
        if witness < 0:
            return -1, None, 0, call.state.tolist()
        return witness, call.draw_lists(), call.used, call.state.tolist()

    absorb_grind_draw_monty.prepare = partial(PreparedMontyCall, parts)
    return absorb_grind_draw_monty
