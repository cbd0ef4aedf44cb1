"""rand's ``StdRng`` (rand 0.10.1 = chacha20 0.10.0's ``ChaCha12Rng``), bit for bit, for the hiding PCS's masks.

The generator the oracle's ``HidingWhirPcs`` forks its hiding randomness from:

- **Key schedule.** ``from_seed(seed)``: the 32 seed bytes are the ChaCha key (words 4..11, little-endian); the
  state's words 12..13 are a 64-bit block counter (low word first) starting at 0, words 14..15 the stream id 0
  (chacha20's ``Legacy`` variant: 64-bit counter, 64-bit nonce). Words 0..3 are ``"expand 32-byte k"``.
- **Block function.** ChaCha with 12 rounds (6 double rounds: columns, then diagonals), the input state added back.
  Output block b holds 16 words; consecutive blocks have consecutive counters (the counter wraps at 2^64).
- **Buffering.** chacha20 generates 4 blocks (64 words) at a time into rand_core's ``BlockRng``; whatever the
  buffering, every request reads the keystream's *next words in order*: ``next_u32`` one word; ``next_u64`` two
  words, the first the low half; ``fill_bytes(n)`` ``ceil(n/4)`` words written little-endian, a final partial word
  consumed whole (its unused bytes are lost). So this module keeps only the key and a word position.
- **Seeding.** ``seed_from_u64(s)`` (rand_core 0.10): eight PCG32 steps (``state = state * 6364136223846793005 +
  11634580027462260723`` mod 2^64, then the output ``rotr32(((state >> 18) ^ state) >> 27, state >> 59)``), each
  output's 4 little-endian bytes filling the next 4 seed bytes. ``from_rng(rng)`` = a 32-byte ``fill_bytes`` of
  ``rng`` as the seed.

``next_u32_array(n)`` gives ``n`` consecutive ``next_u32`` values, so the field samplers of :mod:`whirgpu.ref.rng`
(``random_base`` / ``random_ef``: Plonky3's ``StandardUniform`` for ``MontyField31`` and its extensions) draw from
this generator exactly as Rust does.
"""

from __future__ import annotations

import numpy as np

_M64 = (1 << 64) - 1
_SIGMA = np.frombuffer(b"expand 32-byte k", dtype="<u4").astype(np.uint32)
_ROUNDS = 12
_BLOCK_WORDS = 16
_PCG_MUL = 6364136223846793005
_PCG_INC = 11634580027462260723
_LEFT = [np.array([(i + r) % 4 for i in range(4)]) for r in range(4)]  # row order rotated left by r


def _rotl_in_place(x: np.ndarray, n: int) -> None:
    high = x >> np.uint32(32 - n)
    x <<= np.uint32(n)
    x |= high


def _quarters(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> None:
    """Four quarter rounds at once, in place: quarter i on (a[i], b[i], c[i], d[i]) (each row a block batch)."""
    a += b
    d ^= a
    _rotl_in_place(d, 16)
    c += d
    b ^= c
    _rotl_in_place(b, 12)
    a += b
    d ^= a
    _rotl_in_place(d, 8)
    c += d
    b ^= c
    _rotl_in_place(b, 7)


def chacha_blocks(key_words: np.ndarray, first_block: int, n_blocks: int, rounds: int = _ROUNDS) -> np.ndarray:
    """``n_blocks`` ChaCha keystream blocks (legacy layout, stream 0) from block counter ``first_block``: uint32 words,
    shape (n_blocks * 16,), block after block, each block's words 0..15 in order."""
    counters = (np.arange(n_blocks, dtype=np.uint64) + np.uint64(first_block & _M64))  # wraps mod 2^64
    state = np.zeros((16, n_blocks), dtype=np.uint32)
    state[0:4] = _SIGMA[:, None]
    state[4:12] = np.asarray(key_words, dtype=np.uint32)[:, None]
    state[12] = (counters & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    state[13] = (counters >> np.uint64(32)).astype(np.uint32)
    # Rows of the 4x4 state: the column round is the four quarters (i, 4+i, 8+i, 12+i) at once; the diagonal
    # round (0,5,10,15), (1,6,11,12), ... is the same after rotating rows 1, 2, 3 left by 1, 2, 3.
    a, b, c, d = (state[4 * r:4 * r + 4].copy() for r in range(4))
    with np.errstate(over="ignore"):
        for _ in range(rounds // 2):
            _quarters(a, b, c, d)
            b, c, d = b[_LEFT[1]], c[_LEFT[2]], d[_LEFT[3]]
            _quarters(a, b, c, d)
            b, c, d = b[_LEFT[3]], c[_LEFT[2]], d[_LEFT[1]]
        work = np.concatenate([a, b, c, d]) + state
    return np.ascontiguousarray(work.T).reshape(-1)


def pcg32_seed_bytes(state: int, n_bytes: int = 32) -> bytes:
    """rand_core's ``seed_from_u64`` expansion: ``n_bytes`` seed bytes from PCG32 outputs (little-endian words)."""
    out = bytearray()
    state &= _M64
    while len(out) < n_bytes:
        state = (state * _PCG_MUL + _PCG_INC) & _M64
        xorshifted = (((state >> 18) ^ state) >> 27) & 0xFFFFFFFF
        rot = state >> 59
        word = ((xorshifted >> rot) | (xorshifted << ((32 - rot) & 31))) & 0xFFFFFFFF
        out += word.to_bytes(4, "little")
    return bytes(out[:n_bytes])


class StdRng:
    """rand 0.10.1's ``StdRng`` (ChaCha12, legacy counter layout, stream 0). See the module docstring for the exact
    consumption rules. ``word_pos`` is rand's ``get_word_pos()``: the number of keystream words consumed."""

    __slots__ = ("_cache", "_cache_start", "key", "word_pos")

    _CHUNK_BLOCKS = 64

    def __init__(self, seed: bytes):
        seed = bytes(seed)
        if len(seed) != 32:
            raise ValueError(f"StdRng: the seed is 32 bytes, got {len(seed)}")
        self.key = np.frombuffer(seed, dtype="<u4").astype(np.uint32)
        self.word_pos = 0
        self._cache = np.zeros(0, dtype=np.uint32)
        self._cache_start = 0

    @classmethod
    def from_seed(cls, seed: bytes) -> StdRng:
        return cls(seed)

    @classmethod
    def seed_from_u64(cls, state: int) -> StdRng:
        return cls(pcg32_seed_bytes(state))

    @classmethod
    def from_rng(cls, rng: StdRng) -> StdRng:
        """A fork: the new generator's seed is a 32-byte ``fill_bytes`` of ``rng``."""
        return cls(rng.fill_bytes(32))

    def fork(self) -> StdRng:
        """``from_rng(self)`` as a generator of this one's class (a subclass's forks compute as it does)."""
        return type(self).from_rng(self)

    def seed(self) -> bytes:
        return self.key.astype("<u4").tobytes()

    def clone(self) -> StdRng:
        other = type(self)(self.seed())
        other.word_pos = self.word_pos
        return other

    def _words(self, n: int) -> np.ndarray:
        """The next ``n`` keystream words (advancing the position)."""
        start, end = self.word_pos, self.word_pos + n
        c0, c1 = self._cache_start, self._cache_start + self._cache.size
        if not (c0 <= start and end <= c1):
            first_block = start // _BLOCK_WORDS
            n_blocks = max(-(-end // _BLOCK_WORDS) - first_block, self._CHUNK_BLOCKS)
            self._cache = self._blocks(first_block, n_blocks)
            self._cache_start = first_block * _BLOCK_WORDS
            c0 = self._cache_start
        self.word_pos = end
        return self._cache[start - c0:end - c0]

    def _blocks(self, first_block: int, n_blocks: int) -> np.ndarray:
        """``n_blocks`` keystream blocks from ``first_block`` (``chacha_blocks``; a subclass may compute them
        elsewhere, word for word the same)."""
        return chacha_blocks(self.key, first_block, n_blocks)

    def next_u32(self) -> int:
        return int(self._words(1)[0])

    def next_u64(self) -> int:
        lo, hi = self._words(2).tolist()
        return (hi << 32) | lo

    def next_u32_array(self, n: int) -> np.ndarray:
        return self._words(n).copy()

    def fill_bytes(self, n: int) -> bytes:
        """``n`` bytes, as ``fill_bytes`` of an ``n``-byte buffer (a partial last word is consumed whole)."""
        words = self._words(-(-n // 4))
        return words.astype("<u4").tobytes()[:n]
