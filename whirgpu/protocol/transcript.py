"""The Fiat-Shamir transcript: Plonky3's ``DuplexChallenger<BabyBear, Poseidon2BabyBear<16>, 16, 8>``
(spec §6.1, §6.2).

State: a 16-word sponge (starts 0^16), an input buffer and an output buffer. All field values are uint32
Montgomery words in [0, P); only ``sample_bits`` and proof of work look at canonical values.

- ``observe(x)``: clears the output buffer, appends x to the input buffer, duplexes when it holds 8.
- duplex: state[0..len] = input buffer (the rest keeps its value), permute, output buffer = state[0..8],
  input buffer emptied. ``length_tagged`` (upstream Plonky3 since whir moved into it: the p3-whir profile): a
  duplex absorbing k > 0 words also zeroes state[k..8] and adds k to state[8] before permuting; with k = 0 it
  only permutes.
- ``sample()``: duplexes if the input buffer is non-empty or the output buffer is empty, then pops the **last**
  output (state[7], then state[6], ...).
- EF values are observed / sampled as c0..c3 (four base observes / samples).
- ``sample_bits(b)`` = canonical(sample()) & (2^b - 1), for 0 <= b <= 30 (Plonky3 asserts 2^b < P).
- ``sample_uniform_bits(b)`` (Plonky3's ``sample_uniform_bits::<true>``): samples until canonical < m_b = P with
  its low b bits cleared, then takes the low b bits; past ``MAX_SINGLE_SAMPLE_BITS`` two such draws of b // 2 and
  b - b // 2 bits, the first in the low bits.
- ``check_witness(b, w)``: for b = 0 accepts without touching the state; otherwise observes w and accepts iff
  ``sample_bits(b) == 0``.
- ``grind(b)``: the witness (a Montgomery word) whose canonical value is the smallest valid nonce in [0, P);
  leaves the challenger exactly as ``check_witness(b, w)`` does. b = 0 returns 0 and touches nothing.
- ``distinct_uniform_bits(b, n)`` / ``distinct_uniform_sets``: ``sample_uniform_bits(b)`` until n distinct values
  (the p3-whir query sampler's loop); ``grind_then_draw`` and ``observe_grind_draw``: those calls in a row.

Where the compiled Poseidon2 is loaded (``native.permute``), the search, the draws and the absorb run in C, with the
same results as the loops here (tests/unit/test_transcript_compiled.py); until then, and without a C compiler, the
loops and numpy batches run.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from ..field import Field
from ..ref.field_np import field_ops
from ..ref.poseidon2 import Poseidon2Constants, permute, permute_ints
from ..native.permute import (native_absorb, native_absorb_grind_draw, native_absorb_grind_draw_monty, native_distinct,
                              native_grind, native_grind_draw, native_permute)

WIDTH = 16
RATE = 8
MAX_SAMPLE_BITS = 30  # largest b with 2^b < P
# Plonky3's MAX_SINGLE_SAMPLE_BITS: up to this many uniform bits come from one draw
MAX_SINGLE_SAMPLE_BITS = {"babybear": 27, "koalabear": 24}
_GRIND_FIRST_BATCH = 1 << 12
_GRIND_MAX_BATCH = 1 << 16


def _check_bits(bits: int, what: str) -> int:
    bits = int(bits)
    if not 0 <= bits <= MAX_SAMPLE_BITS:
        raise ValueError(f"{what}: bits = {bits} outside [0, MAX_SAMPLE_BITS = {MAX_SAMPLE_BITS}] (2^bits must be < P)")
    return bits


def _word(x, p: int) -> int:
    v = int(x)
    if not 0 <= v < p:
        raise ValueError(f"observe: word {v} outside [0, P = {p})")
    return v


@functools.lru_cache(maxsize=16)
def single_permutation(constants: Poseidon2Constants):
    """The fastest exact single-state permutation of ``constants``: the compiled one (``native_permute``, equal
    to ``permute_ints`` word for word) where a C compiler is available, else ``permute_ints``."""
    native = native_permute(constants)
    return native if native is not None else functools.partial(permute_ints, constants=constants)


@functools.lru_cache(maxsize=16)
def absorber(constants: Poseidon2Constants):
    """The compiled absorption of whole runs for ``constants`` (``native.permute.native_absorb``), or None where
    there is no compiler (``observe_many`` then duplexes run by run)."""
    return native_absorb(constants)


def grind_threads(bits: int) -> int:
    """Threads for a compiled search of ``bits`` bits: one below 2^12 expected candidates (starting threads costs
    more than they save there: measured on a 16-core host), else up to 4 of this machine's CPUs, one left to the
    caller's other work."""
    return 1 if bits < 12 else max(1, min(4, (os.cpu_count() or 1) - 1))


def _checked_sets(sets) -> tuple[list, list]:
    """(sets, the sets with a target > 0) of (bits, target) pairs, checked: 0 <= bits <= 30, 0 <= target <= 2^bits."""
    sets = [(_check_bits(bits, "distinct_uniform_bits"), int(target)) for bits, target in sets]
    for bits, target in sets:
        if not 0 <= target <= 1 << bits:
            raise ValueError(f"distinct_uniform_bits: target {target} outside [0, 2^{bits}]")
    return sets, [(bits, target) for bits, target in sets if target > 0]


def _compiled_sets(live) -> bool:
    """Whether the compiled draws take these sets (each of 1 to 16 bits; a 0-bit draw takes no sample)."""
    return bool(live) and all(1 <= bits <= 16 for bits, _ in live)


def _with_empty_sets(sets, draws) -> list[list[int]]:
    drawn = iter(draws)
    return [next(drawn) if target > 0 else [] for _, target in sets]


class DuplexChallenger:
    """Width 16, rate 8 duplex sponge over Poseidon2 (``constants=None``: whir-p3's SmallRng(1) constants). The
    field is the permutation's (``constants.params.field``): its words, P and Montgomery form throughout."""

    def __init__(self, constants: Poseidon2Constants | None = None, length_tagged: bool = False):
        self.constants = constants if constants is not None else Poseidon2Constants.smallrng(1)
        self.length_tagged = bool(length_tagged)
        self._bind_field(self.constants.params.field)
        # The sponge as 16 canonical Python ints: a duplex is one single-state permutation, which Python ints do
        # several times faster than numpy (see ``permute_ints``). The buffers hold Montgomery words.
        self._state: list[int] = [0] * WIDTH
        self.input_buffer: list[int] = []
        self.output_buffer: list[int] = []

    def _bind_field(self, field: Field) -> None:
        self.field = field
        self._p, self._r, self._r_inv = field.P, field.R, field.R_INV

    @property
    def sponge_state(self) -> np.ndarray:
        """The sponge as (16,) uint32 Montgomery words (a copy; assign to replace the sponge)."""
        return np.array([x * self._r % self._p for x in self._state], dtype=np.uint32)

    @sponge_state.setter
    def sponge_state(self, words) -> None:
        words = np.asarray(words).reshape(-1)
        if words.shape != (WIDTH,):
            raise ValueError(f"sponge_state: shape {words.shape}, expected ({WIDTH},)")
        self._state = [_word(w, self._p) * self._r_inv % self._p for w in words.tolist()]

    # ---- copying -----------------------------------------------------------------------------------------------

    def clone(self) -> "DuplexChallenger":
        other = DuplexChallenger.__new__(DuplexChallenger)
        other.constants = self.constants
        other.length_tagged = self.length_tagged
        other._bind_field(self.field)
        other._state = list(self._state)
        other.input_buffer = list(self.input_buffer)
        other.output_buffer = list(self.output_buffer)
        return other

    __copy__ = clone

    def __deepcopy__(self, memo) -> "DuplexChallenger":
        return self.clone()

    def same_state(self, other: "DuplexChallenger") -> bool:
        """Whether both challengers would produce identical transcripts from here on."""
        return (self._state == other._state and self.input_buffer == other.input_buffer
                and self.output_buffer == other.output_buffer and self.constants is other.constants
                and self.length_tagged == other.length_tagged)

    # ---- sponge ------------------------------------------------------------------------------------------------

    def _duplex(self) -> None:
        state, k = self._state, len(self.input_buffer)
        p = self._p
        state[:k] = [w * self._r_inv % p for w in self.input_buffer]
        if self.length_tagged and k:
            state[k:RATE] = [0] * (RATE - k)
            state[RATE] = (state[RATE] + k) % p
        self.input_buffer = []
        self._state = single_permutation(self.constants)(state)
        self.output_buffer = [x * self._r % p for x in self._state[:RATE]]

    def observe(self, x) -> None:
        """Absorb one base-field Montgomery word."""
        self.output_buffer = []
        self.input_buffer.append(_word(x, self._p))
        if len(self.input_buffer) == RATE:
            self._duplex()

    def observe_many(self, xs, before_compiled=None) -> None:
        """Absorb words in order (e.g. a Merkle root's 8 words, or a flattened array of EF elements).
        ``before_compiled()``, when given, is called just before the compiled absorb of the whole runs starts (which
        lets other Python threads run), or not at all: a caller overlaps its own work with that call."""
        words = self._checked_words(xs)
        if words.size == 0:
            return
        # as observe word by word: output cleared, a duplex each time the rate fills; whole runs at a time
        self.output_buffer = []
        at = 0
        if self.input_buffer:  # complete the pending run first
            at = min(RATE - len(self.input_buffer), words.size)
            self._fill(words[:at].tolist())
        runs = (words.size - at) // RATE
        absorb = absorber(self.constants) if runs > 1 else None
        if absorb is not None:  # whole runs in one compiled call: the same states as a duplex per run
            run = words[at:at + runs * RATE].astype(np.uint64) * np.uint64(self._r_inv) % np.uint64(self._p)
            if before_compiled is not None:
                before_compiled()
            self._state = absorb(self._state, run, RATE if self.length_tagged else 0)
            self.output_buffer = [x * self._r % self._p for x in self._state[:RATE]]
            at += runs * RATE
        pending = words[at:].tolist()
        while pending:
            pending = self._fill(pending)
        if self.input_buffer:
            self.output_buffer = []

    def _monty_words(self, xs) -> np.ndarray | None:
        """``xs`` itself where it is a flat contiguous uint32 array of words below P (as a device's readback holds
        them: the compiled call converts them), else None (the caller takes the general path, which names a bad
        word)."""
        if not isinstance(xs, np.ndarray) or xs.dtype != np.uint32 or xs.ndim != 1 or not xs.flags.c_contiguous:
            return None
        return xs if xs.size == 0 or int(xs.max()) < self._p else None

    def _checked_words(self, xs) -> np.ndarray:
        """``xs`` as a flat int64 array, every word in [0, P) (the first bad one named, as observe names it)."""
        words = np.asarray(xs, dtype=np.int64).reshape(-1)
        if words.size and (words.min() < 0 or words.max() >= self._p):
            _word(next(int(w) for w in words.tolist() if not 0 <= w < self._p), self._p)
        return words

    def _fill(self, pending: list) -> list:
        """Move words of ``pending`` into the input buffer up to a whole run (duplexed when full); the rest."""
        take = RATE - len(self.input_buffer)
        self.input_buffer.extend(pending[:take])
        if len(self.input_buffer) == RATE:
            self._duplex()
        return pending[take:]

    def observe_ef(self, e) -> None:
        """Absorb one extension element (4,) as c0, c1, c2, c3."""
        e = np.asarray(e)
        if e.shape != (4,):
            raise ValueError(f"observe_ef: shape {e.shape}, expected (4,)")
        self.observe_many(e)

    def sample(self) -> np.uint32:
        """One base-field challenge (Montgomery word)."""
        if self.input_buffer or not self.output_buffer:
            self._duplex()
        return np.uint32(self.output_buffer.pop())

    def sample_ef(self) -> np.ndarray:
        """One extension-field challenge (4,): four samples, c0..c3."""
        return np.array([self.sample() for _ in range(4)], dtype=np.uint32)

    def sample_bits(self, bits: int) -> int:
        """The low ``bits`` bits of one sample's canonical value (0 <= bits <= 30)."""
        bits = _check_bits(bits, "sample_bits")
        return int(self.sample()) * self._r_inv % self._p & ((1 << bits) - 1)

    def sample_uniform_bits(self, bits: int) -> int:
        """``bits`` uniform bits by rejection (see the module docstring), 0 <= bits <= 30."""
        bits = _check_bits(bits, "sample_uniform_bits")
        if bits == 0:
            return 0
        if bits <= MAX_SINGLE_SAMPLE_BITS[self.field.name]:
            return self._uniform_draw(bits)
        low = bits // 2
        return self._uniform_draw(low) | (self._uniform_draw(bits - low) << low)

    def distinct_uniform_bits(self, bits: int, target: int) -> list[int]:
        """Draws of ``sample_uniform_bits(bits)`` until ``target`` distinct values are drawn (a repeat is dropped),
        in the order first drawn; the challenger left as that loop leaves it. 0 <= target <= 2^bits."""
        return self.distinct_uniform_sets([(bits, target)])[0]

    def distinct_uniform_sets(self, sets) -> list[list[int]]:
        """``distinct_uniform_bits(bits, target)`` for each (bits, target) of ``sets`` in order, as those calls
        one after another give them and leave the challenger. Where the compiled library is loaded and every set
        has 1 <= bits <= 16 (``native_distinct``), one C call draws them all."""
        sets, live = _checked_sets(sets)
        distinct = native_distinct(self.constants) if _compiled_sets(live) else None
        if distinct is None:
            return self._distinct_one_by_one(sets)
        if self.input_buffer or not self.output_buffer:
            self._duplex()  # what the first sample does
        p, r, r_inv = self._p, self._r, self._r_inv
        buffered = [w * r_inv % p for w in reversed(self.output_buffer)]  # popped last first
        draws, used, state = distinct(self._state, buffered, live)
        if used <= len(buffered):
            del self.output_buffer[len(self.output_buffer) - used:]
        else:
            self._state = state
            left = -(used - len(buffered)) % RATE
            self.output_buffer = [x * r % p for x in state[:left]]
        return _with_empty_sets(sets, draws)

    def _distinct_one_by_one(self, sets) -> list[list[int]]:
        out = []
        for bits, target in sets:
            seen: dict[int, None] = {}
            while len(seen) < target:
                seen[self.sample_uniform_bits(bits)] = None
            out.append(list(seen))
        return out

    def observe_grind_draw(self, xs, bits: int, sets, meanwhile=None, worker=None,
                           layout=None) -> tuple[np.uint32, list[list[int]]]:
        """``observe_many(xs)``, then ``grind_then_draw(bits, sets)``: the same witness, draws and challenger; where
        compiled (``native_absorb_grind_draw``) and ``xs`` holds whole runs, their absorb, the search and the draws
        are one C call (``native_absorb_grind_draw_monty`` where ``xs`` is a flat uint32 array of words below P, as
        a device's readback holds them: converted in C). ``meanwhile()``, when given, runs once on this thread:
        while ``worker`` (a started ``native.permute.HostWorker``, used up here) makes that uint32 call, else before
        the call (or before the steps one by one). ``layout`` (a ``native.permute.DrawLayout``): filled by that
        uint32 call, in C, with the draws laid out and pruned; left empty on every other path."""
        bits = _check_bits(bits, "grind")
        sets, live = _checked_sets(sets)
        monty = self._monty_words(xs)
        if monty is not None and bits > 0 and _compiled_sets(live):
            fast = native_absorb_grind_draw_monty(self.constants)
            at = min(RATE - len(self.input_buffer), monty.size) if self.input_buffer else 0
            if fast is not None and (monty.size - at) // RATE >= 2:
                self.output_buffer = []
                if at:  # complete the pending run first
                    self._fill(monty[:at].astype(np.int64).tolist())
                found, draws, used, state = fast(self._state, monty[at:], RATE if self.length_tagged else 0, bits,
                                                 live, grind_threads(bits), worker, meanwhile, layout)
                return self._witnessed(found, bits, state, used), _with_empty_sets(sets, draws)
        words = self._checked_words(xs)
        fast = native_absorb_grind_draw(self.constants) if bits > 0 and _compiled_sets(live) else None
        at = min(RATE - len(self.input_buffer), words.size) if self.input_buffer else 0
        runs = (words.size - at) // RATE
        if fast is None or runs < 2:
            if worker is not None:
                worker.finish()
            if meanwhile is not None:
                meanwhile()
            self.observe_many(words)
            return self.grind_then_draw(bits, sets)
        self.output_buffer = []
        if at:  # complete the pending run first
            self._fill(words[:at].tolist())
        canonical = words[at:].astype(np.uint64) * np.uint64(self._r_inv) % np.uint64(self._p)
        tail = canonical[runs * RATE:].tolist()
        if worker is not None:
            worker.finish()  # only words as a device keeps them go to a worker (``_monty_words``)
        if meanwhile is not None:
            meanwhile()
        found, draws, used, state = fast(self._state, canonical[:runs * RATE], RATE if self.length_tagged else 0,
                                         tail, bits, live, grind_threads(bits))
        return self._witnessed(found, bits, state, used), _with_empty_sets(sets, draws)

    def prepare_grind_draw(self, nwords: int, bits: int, sets, layout=None) -> "PreparedGrindDraw | None":
        """``observe_grind_draw(xs, bits, sets, meanwhile, worker, layout)``'s compiled call for ``xs`` a uint32 array
        of ``nwords`` Montgomery words, made ready before those words and the sponge exist: it reads only this
        challenger's constants and length tag. None where that call is not compiled for these arguments (not
        loaded now, bits 0, a set the compiled draws do not take, fewer than two whole runs)."""
        bits = _check_bits(bits, "grind")
        sets, live = _checked_sets(sets)
        fast = native_absorb_grind_draw_monty(self.constants) if bits > 0 and _compiled_sets(live) else None
        if fast is None or int(nwords) // RATE < 2:
            return None
        call = fast.prepare(int(nwords), RATE if self.length_tagged else 0, bits, live, grind_threads(bits), layout)
        return PreparedGrindDraw(call, self.field, bits, sets)

    def _witnessed(self, found: int, bits: int, state: list, used: int) -> np.uint32:
        """The challenger after a compiled search found ``found`` (canonical; -1: none) and its draws used ``used``
        samples, ``state`` the sponge at their last permutation (check_witness's when used <= 7): check_witness
        popped word 7, words 6 .. 0 were left to pop. Returns the witness as a Montgomery word."""
        if found < 0:
            raise RuntimeError(f"grind: no witness in [0, P) for bits = {bits}")
        self.input_buffer, self._state = [], state
        left = 7 - used if used <= 7 else -(used - 7) % RATE
        self.output_buffer = [x * self._r % self._p for x in state[:left]]
        return np.uint32(found * self._r % self._p)

    def grind_then_draw(self, bits: int, sets) -> tuple[np.uint32, list[list[int]]]:
        """(``grind(bits)``, then ``distinct_uniform_sets(sets)``): the same witness and draws, the challenger left
        as the two calls leave it; where the compiled library is loaded (``native_grind_draw``), the search and
        the draws are one C call, so no Python (and no wait for the interpreter lock) runs between them."""
        bits = _check_bits(bits, "grind")
        sets, live = _checked_sets(sets)
        fast = native_grind_draw(self.constants) if bits > 0 and _compiled_sets(live) else None
        if fast is None:
            return self.grind(bits), self.distinct_uniform_sets(sets)
        base, index = self.pow_base_state()
        found, draws, used, state = fast([int(w) * self._r_inv % self._p for w in base.tolist()], index, bits, live,
                                         grind_threads(bits))
        return self._witnessed(found, bits, state, used), _with_empty_sets(sets, draws)

    def _uniform_draw(self, bits: int) -> int:
        p, r_inv = self._p, self._r_inv
        bound = p & ~((1 << bits) - 1)
        value = int(self.sample()) * r_inv % p
        while value >= bound:
            value = int(self.sample()) * r_inv % p
        return value & ((1 << bits) - 1)

    # ---- proof of work -----------------------------------------------------------------------------------------

    def check_witness(self, bits: int, witness) -> bool:
        """Plonky3's ``check_witness``: bits = 0 accepts and leaves the state alone; otherwise observe the witness
        (a Montgomery word) and accept iff the next ``sample_bits(bits)`` is 0."""
        bits = _check_bits(bits, "check_witness")
        if bits == 0:
            return True
        self.observe(witness)
        return self.sample_bits(bits) == 0

    def pow_base_state(self) -> tuple[np.ndarray, int]:
        """What a PoW candidate w meets: the (16,) state the next duplex would permute, with w still to be written
        at the returned index (= the input buffer's length). Observing w then sampling gives canonical state[7]
        of ``permute(state with w at index)``, whether or not w fills the buffer (a full buffer duplexes on
        observe, the sample then pops state[7] of that same duplex). Length-tagged: the rate past w is zero and
        state[8] carries the tag index + 1 already."""
        base = self.sponge_state.copy()
        index = len(self.input_buffer)
        base[:index] = self.input_buffer
        if self.length_tagged:
            base[index + 1:RATE] = 0
            base[RATE] = (int(base[RATE]) + (index + 1) * self._r) % self._p  # Montgomery words add like values
        return base, index

    def grind(self, bits: int) -> np.uint32:
        """Find the smallest-canonical valid PoW witness, absorb it as ``check_witness`` does, and return it
        (Montgomery word). bits = 0: returns 0 without touching the state."""
        bits = _check_bits(bits, "grind")
        if bits == 0:
            return np.uint32(0)
        base, index = self.pow_base_state()
        ops = field_ops(self.field)
        search = native_grind(self.constants)
        if search is not None:  # the compiled search: candidates in order, stopping at the first hit
            found = search([int(w) * self._r_inv % self._p for w in base.tolist()], index, bits, 0, self._p,
                           grind_threads(bits))
            if found < 0:
                raise RuntimeError(f"grind: no witness in [0, P) for bits = {bits}")
            witness = np.uint32(ops.to_monty(np.array([found], np.uint64))[0])
            if not self.check_witness(bits, witness):
                raise AssertionError(f"grind: witness {found} found but rejected")
            return witness
        mask = np.uint32((1 << bits) - 1)
        start, batch = 0, _GRIND_FIRST_BATCH
        while start < self._p:
            candidates = np.arange(start, min(start + batch, self._p), dtype=np.uint64)
            words = ops.to_monty(candidates)
            states = np.broadcast_to(base, (words.size, WIDTH)).copy()
            states[:, index] = words
            outputs = ops.from_monty(permute(states, self.constants)[:, RATE - 1])
            hits = np.flatnonzero((outputs & mask) == 0)
            if hits.size:
                witness = np.uint32(words[hits[0]])
                if not self.check_witness(bits, witness):
                    raise AssertionError(f"grind: witness {int(candidates[hits[0]])} found but rejected")
                return witness
            start += words.size
            batch = min(2 * batch, _GRIND_MAX_BATCH)
        raise RuntimeError(f"grind: no witness in [0, P) for bits = {bits}")


class HostTranscript:
    """The prover's transcript on the host: a ``DuplexChallenger`` behind the interface every backend's transcript
    has (the GPU's is ``backends.device_transcript.DeviceTranscript``): values are numpy arrays."""

    def __init__(self, challenger: DuplexChallenger, query_sampler=None):
        self.challenger = challenger
        self.query_sampler = query_sampler  # (challenger, domain_size, folding_factor, num_queries) -> indices

    def observe(self, value) -> None:
        """Absorb every word of ``value`` (a root, an EF answer, a (2, 4) sumcheck pair, the final polynomial)."""
        self.challenger.observe_many(value)

    def sample_ef(self) -> np.ndarray:
        return self.challenger.sample_ef()

    def sample(self) -> None:
        """One base sample, dropped (the checkpoint before query sampling)."""
        self.challenger.sample()

    def grind(self, bits: int) -> np.uint32:
        return self.challenger.grind(bits)

    def sample_queries(self, domain_size: int, folding_factor: int, num_queries: int) -> np.ndarray:
        """Sorted distinct query indices as an int64 array: ``query_sampler``'s (the p3-whir profile's
        ``distinct_query_indices``), by default ``protocol.query_indices.sample_query_indices``."""
        from .query_indices import sample_query_indices  # noqa: PLC0415 - query_indices imports nothing of ours

        sampler = self.query_sampler or sample_query_indices
        return np.asarray(sampler(self.challenger, domain_size, folding_factor, num_queries), np.int64)


class PreparedGrindDraw:
    """``DuplexChallenger.prepare_grind_draw``'s call. Write the Montgomery words into ``words`` (uint32, below P),
    then ``run(sponge, meanwhile, worker)`` once, ``sponge`` the challenger's 16 sponge words (Montgomery, below P)
    with an empty input buffer (as after a sample; any output buffer is dropped, as observing drops it): (the
    witness as a Montgomery word, the draws of each set as ``observe_grind_draw`` gives them, or None where its
    ``layout`` was laid out in C, which then holds them). ``meanwhile`` and ``worker`` as for ``observe_grind_draw``;
    the same results as that call on such a challenger. ValueError naming a word not below P."""

    def __init__(self, call, field: Field, bits: int, sets: list):
        self._call, self.words, self._bits, self._sets = call, call.words, bits, sets
        self._p, self._r = field.P, field.R
        self._r_inv = np.uint64(field.R_INV)

    def run(self, sponge, meanwhile=None, worker=None) -> tuple[np.uint32, list[list[int]] | None]:
        p, call = self._p, self._call
        sponge = np.asarray(sponge, np.uint32).reshape(-1)
        if sponge.shape != (WIDTH,) or int(sponge.max()) >= p:
            if worker is not None:
                worker.finish()
            raise ValueError(f"prepare_grind_draw: a sponge of {WIDTH} words below P = {p} expected, got "
                             f"{sponge.tolist()}")
        np.remainder(sponge.astype(np.uint64) * self._r_inv, np.uint64(p), out=call.state)
        try:
            found = call.run(worker, meanwhile)
        except ValueError:
            _word(next(int(w) for w in self.words.tolist() if w >= p), p)  # names the first word not below P
            raise
        if found < 0:
            raise RuntimeError(f"grind: no witness in [0, P) for bits = {self._bits}")
        witness = np.uint32(found * self._r % p)
        layout = call.layout
        if layout is not None and layout.words is not None:
            return witness, None
        return witness, _with_empty_sets(self._sets, call.draw_lists())
