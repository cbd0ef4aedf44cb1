"""The hiding PCS's mask randomness on a GPU runtime: rand's ``StdRng`` (ChaCha12) keystream as field samples
(``chacha_sample``), recorded into a caller's batch, the device twin of ``ref.rng.random_base`` over
``ref.chacha_rng.StdRng`` (docs/ZK-PROTOCOL.md §4, §15).

Contracts:
- A fork of upstream's mask RNG is a key (8 u32 words, the 32-byte seed read little-endian; ``StdRng.key``;
  ``key_words``) at word position 0. The kernels read the key from the ``status`` binding, words
  ``key_at .. key_at + 7`` (relative to the binding), which the caller writes before the launches run: the
  launches are recorded once and replayed with other proofs' keys (params are fixed at recording, a buffer word
  is a per-proof input). No launch writes those words.
- Drawing n base samples from a fork (Plonky3's ``StandardUniform``: ``u = next_u32() >> 1`` until ``u < P``,
  u the Montgomery word; a rejected word is consumed) is taking the first n keystream words whose ``u < P``, in
  order. ``record_samples`` writes those n words (uint32 Montgomery words in [0, P), draw order) to ``out`` words
  ``out_offset .. out_offset + n - 1``; an EF element is 4 consecutive words (c0..c3), so k EF elements are
  ``n = 4 k`` samples. Nothing else of ``out`` is written (on NOT_FOUND, only the accepted words there were, at
  their ranks). P is the field's, a compile-time constant of the kernels composed for ``field``.
- The status word ``status[status_at]`` (not one of the key words) receives the keystream words the n samples
  consumed (the position of the n-th accepted word + 1, counted from word 0 of block ``first_block``; 0 when
  n = 0), which is the fork's ``word_pos`` after the draws when ``first_block`` = 0; or ``NOT_FOUND``
  (0xFFFFFFFF) when the ``n_words`` words drawn held fewer than n accepted ones. Nothing is read back: the caller
  checks the status after the proof's readback, as proof-of-work's NOT_FOUND is checked.
- ``n_words`` (W): by default ``words_for(n, field)`` = n + ``margin(n, field)`` rounded up to whole blocks of
  16 words, for which a shortfall has probability below 2^-FAIL_LOG2 (``margin``'s bound, below). Tests pass a
  smaller W to reach NOT_FOUND. W <= MAX_WORDS (2^31: word positions and ranks stay 32-bit).
- Launches (``wgsl/kernels/chacha_sample.wgsl``): ``chacha_sample_count`` (one thread per 16-word block, WG
  threads per workgroup, ``groups_for(W)`` workgroups, on the runtime's 2-D grid past the per-dimension limit),
  ``chacha_sample_scan`` (one workgroup: the groups' exclusive prefix sums, in place; any number of groups), then
  ``chacha_sample_compact`` (the keystream recomputed, each accepted word written at its rank) once per window of
  ``out``: one launch when ``out``'s buffer fits a storage binding, else windows of at most the binding limit
  (each launch recomputes the whole keystream and writes only its ranks). Bindings per launch: at most 3 storage
  buffers; every launch binds ``status`` (count: counts, status; scan: counts, status; compact: counts, status,
  out). The workgroup counts (``groups_for(W)`` words) live in ``scratch`` (allocated when None); ``status`` is
  bound whole (a buffer or an ``RtView`` within the binding limit).

The margin bound: with the keystream modelled as uniform words, acceptance is independent with probability
1 - q, q = (2^31 - P) / 2^31 (KoalaBear q = (2^24 - 1) / 2^31 ~ 2^-7, BabyBear (2^27 - 1) / 2^31 ~ 1/16).
W = n + m words fall short iff at least m + 1 of them are rejected; by the Chernoff-Hoeffding bound,
P[Bin(W, q) >= k] <= exp(-W D(k / W || q)) for k / W > q (D the binary relative entropy; exact when k = W).
``margin`` is the least m whose bound is at most 2^-FAIL_LOG2 (BabyBear: m = 9 for n = 1, 270,648 for n = 4,000,000;
KoalaBear: 5 and 32,832).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..devices.limits import StorageMode
from ..errors import DeviceLimitError
from ..field import field_by_name
from ..runtime.base import Batch, RtBuffer, RtView, Runtime, binding_range
from . import split

STEM = "chacha_sample"
NOT_FOUND = 0xFFFFFFFF  # the status of a window with too few accepted words
WG = 256  # threads per workgroup (the kernels' `override WG`); each thread draws one block
MAX_WG = 256  # the kernels' workgroup arrays
BLOCK_WORDS = 16  # ChaCha words per block, per thread
FAIL_LOG2 = 40  # a shortfall (NOT_FOUND) has probability below 2^-FAIL_LOG2 with the default W
MAX_WORDS = 1 << 31  # keystream words per call at most


def reject_probability(field: str = "babybear") -> float:
    """q = P[u >= P] for u = word >> 1 uniform on [0, 2^31)."""
    return ((1 << 31) - field_by_name(field).P) / (1 << 31)


def _log_tail_bound(words: int, k: int, q: float) -> float:
    """ln of the Chernoff-Hoeffding bound on P[Bin(words, q) >= k] (0.0: no bound below 1)."""
    if k > words:
        return -math.inf
    a = k / words
    if a <= q:
        return 0.0
    d = a * math.log(a / q) + ((1 - a) * math.log((1 - a) / (1 - q)) if a < 1 else 0.0)
    return -words * d


def margin(n: int, field: str = "babybear", fail_log2: int = FAIL_LOG2) -> int:
    """The least m >= 0 such that n + m keystream words hold n accepted ones except with probability at most
    2^-fail_log2 (the bound in the module doc): P[Bin(n + m, q) >= m + 1] <= 2^-fail_log2."""
    if n < 0:
        raise ValueError(f"mask samples: n = {n} must be >= 0")
    q, target = reject_probability(field), -fail_log2 * math.log(2)

    def enough(m: int) -> bool:
        return _log_tail_bound(n + m, m + 1, q) <= target

    hi = 1
    while not enough(hi):
        hi *= 2
    lo = -1  # enough(lo) false or lo < 0; enough(hi) true; the bound falls as m grows
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid >= 0 and enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


def words_for(n: int, field: str = "babybear") -> int:
    """W for n samples: n + ``margin(n, field)`` rounded up to whole 16-word blocks."""
    return -(-(n + margin(n, field)) // BLOCK_WORDS) * BLOCK_WORDS


def groups_for(n_words: int, wg: int = WG) -> int:
    """Workgroups of the count and compact launches for W keystream words."""
    blocks = -(-n_words // BLOCK_WORDS)
    return -(-blocks // wg)


@dataclass(frozen=True)
class SampleLaunches:
    """What ``record_samples`` recorded: keystream words drawn, workgroups per pass, compaction windows."""

    n: int
    n_words: int
    groups: int
    windows: int


def key_words(key) -> np.ndarray:
    """The 8 key words of a 32-byte seed (little-endian) or of 8 ints / a uint32 array (``StdRng.key``)."""
    if isinstance(key, (bytes, bytearray)):
        if len(key) != 32:
            raise ValueError(f"a ChaCha key is 32 bytes, got {len(key)}")
        return np.frombuffer(bytes(key), dtype="<u4").astype(np.uint32)
    words = np.asarray(key, dtype=np.uint64).reshape(-1)
    if words.size != 8 or (words >> np.uint64(32)).any():
        raise ValueError("a ChaCha key is 8 u32 words")
    return words.astype(np.uint32)


def _params(key_at: int, first_block: int, n_words: int, n: int, groups: int, status_at: int,
            rank_first: int = 0, rank_end: int = 0, out_off: int = 0) -> np.ndarray:
    """The registry's ``chacha_sample`` params: key_at block_lo block_hi n_words n_samples rank_first rank_end
    out_off status_at groups _pad0 _pad1."""
    return np.array([key_at, first_block & 0xFFFFFFFF, first_block >> 32, n_words, n, rank_first, rank_end, out_off,
                     status_at, groups, 0, 0], np.uint32)


def _check_status(status: RtBuffer | RtView, key_at: int, status_at: int) -> None:
    """ValueError unless the key words and the status word lie inside the status binding, apart."""
    words = binding_range(status)[2] // 4
    if not 0 <= key_at <= words - 8:
        raise ValueError(f"mask samples: key words {key_at} .. {key_at + 7} outside the {words}-word status binding")
    if not 0 <= status_at < words:
        raise ValueError(f"mask samples: status word {status_at} outside the {words}-word status binding")
    if key_at <= status_at < key_at + 8:
        raise ValueError(f"mask samples: status word {status_at} overlaps the key words {key_at} .. {key_at + 7}")


def _out_windows(rt: Runtime, out: RtBuffer | RtView, out_offset: int, n: int):
    """(binding, word offset in it, first rank, end rank) per compaction launch (see the module doc)."""
    buffer, base, size = binding_range(out)
    start, end = base + 4 * out_offset, base + 4 * (out_offset + n)
    if out_offset < 0 or end > base + size:
        raise ValueError(f"{n} samples at word {out_offset} overrun a {size}-byte output binding")
    binding_limit, _, alignment = split.runtime_limits(rt)
    if buffer.nbytes <= binding_limit:
        return [(buffer, start // 4, 0, n)]
    per = (binding_limit - alignment) // 4  # an aligned-down view of `per` words fits a binding
    if per < 1:
        raise DeviceLimitError(f"max_storage_binding_size {binding_limit} is below offset_alignment {alignment} "
                               f"+ 4: no window of the {buffer.nbytes}-byte sample output fits a binding")
    windows = []
    for first in range(0, n, per):
        last = min(n, first + per)
        lo = (start + 4 * first) // alignment * alignment
        view = RtView(buffer, lo, start + 4 * last - lo)
        windows.append((view, (start + 4 * first - lo) // 4, first, last))
    return windows


def record_samples(rt: Runtime, batch: Batch, key_at: int, n: int, out: RtBuffer | RtView, out_offset: int,
                   status: RtBuffer | RtView, status_at: int = 0, *, field: str = "babybear", first_block: int = 0,
                   n_words: int | None = None, scratch: RtBuffer | None = None, wg: int = WG) -> SampleLaunches:
    """Record the launches that write the first ``n`` accepted samples of the ChaCha12 keystream whose key is
    ``status`` words ``key_at .. key_at + 7`` (written by the caller before the launches run, e.g. the words of
    ``key_words(key)``; from block counter ``first_block``, 0 <= first_block < 2^64) to ``out[out_offset ..]`` and
    the words they consumed (or NOT_FOUND) to ``status[status_at]`` (contracts in the module doc). ValueError when
    the key words or the status word leave the status binding, or the status word is a key word. ``field`` is
    composed into the kernels (its P decides acceptance). ``n_words`` overrides W (tests); ``scratch`` holds
    ``groups_for(W)`` words; ``wg`` (a power of two <= MAX_WG) the workgroup size (tests lower it to cross the
    scan's chunking)."""
    key_at, status_at = int(key_at), int(status_at)
    _check_status(status, key_at, status_at)
    if n < 0:
        raise ValueError(f"mask samples: n = {n} must be >= 0")
    if not 0 <= first_block < 1 << 64:
        raise ValueError(f"block counter {first_block} outside [0, 2^64)")
    if wg < 1 or wg & (wg - 1) or wg > MAX_WG:
        raise ValueError(f"workgroup size {wg}: a power of two <= {MAX_WG}")
    words = words_for(n, field) if n_words is None else int(n_words)
    if not 0 <= words <= MAX_WORDS:
        raise DeviceLimitError(f"{words} keystream words for {n} samples exceed the sampler's {MAX_WORDS} "
                               f"(32-bit word positions)")
    groups = groups_for(words, wg)
    if scratch is None:
        scratch = rt.alloc(4 * max(groups, 1), StorageMode.PRIVATE)
    elif scratch.nbytes < 4 * groups:
        raise ValueError(f"scratch of {scratch.nbytes} bytes holds fewer than {groups} workgroup counts")
    windows = _out_windows(rt, out, out_offset, n) if n and groups else []
    constants = {"WG": wg}
    base = _params(key_at, first_block, words, n, groups, status_at)
    if groups:
        batch.dispatch(rt.kernel(STEM, "chacha_sample_count", constants=constants, field=field), [scratch, status],
                       base, groups)
    batch.dispatch(rt.kernel(STEM, "chacha_sample_scan", constants=constants, field=field), [scratch, status], base,
                   1)
    compact = rt.kernel(STEM, "chacha_sample_compact", constants=constants, field=field) if windows else None
    for binding, out_off, first, last in windows:
        params = _params(key_at, first_block, words, n, groups, status_at, first, last, out_off)
        batch.dispatch(compact, [scratch, status, binding], params, groups)
    return SampleLaunches(n, words, groups, len(windows))
