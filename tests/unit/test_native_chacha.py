"""The compiled ChaCha12 keystream (``native.chacha``) against the numpy reference (``ref.chacha_rng``)."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.errors import BackendUnavailable
from whirgpu.native import chacha
from whirgpu.ref.chacha_rng import StdRng, chacha_blocks


@pytest.fixture(scope="module")
def compiled():
    try:
        chacha.build_now()
    except BackendUnavailable:
        pytest.skip("no C compiler here (the mask generator uses the numpy ChaCha)")
    blocks = chacha.compiled_blocks()
    assert blocks is not None
    return blocks


@pytest.mark.parametrize("first", [0, 1, 2**32 - 3, 2**32 - 1, 2**64 - 2, 2**64 - 1])
@pytest.mark.parametrize("n_blocks", [0, 1, 3, 64])
def test_compiled_blocks_equal_numpy(compiled, first, n_blocks):
    """Random keys, counters across the 32-bit word boundary and the 64-bit wrap, 0 to 64 blocks."""
    key = np.random.default_rng(first % 1000 + n_blocks).integers(0, 2**32, 8, dtype=np.uint32)
    got = compiled(key, first, n_blocks)
    assert got.dtype == np.uint32 and np.array_equal(got, chacha_blocks(key, first, n_blocks))


def test_compiled_blocks_pass_the_chacha12_vector(compiled):
    """rand's ``test_chacha_true_values_1`` (zero key), first two u128 words, through the compiled function."""
    words = compiled(np.zeros(8, np.uint32), 0, 1)
    data = words.astype("<u4").tobytes()
    assert int.from_bytes(data[:16], "little") == 0xd583265f12ce1f8153f955076a9af49b
    assert int.from_bytes(data[16:32], "little") == 0x5f15ae2ea589007e1474e049bbc32904


def test_compiled_generator_streams_equal_stdrng(compiled):
    """``CompiledStdRng``: every request, forks and clones the same words as ``StdRng``; forks keep the class."""
    a, b = chacha.CompiledStdRng.seed_from_u64(5), StdRng.seed_from_u64(5)
    assert a.next_u32() == b.next_u32() and a.fill_bytes(7) == b.fill_bytes(7)
    assert np.array_equal(a.next_u32_array(3000), b.next_u32_array(3000))
    fa, fb = chacha.CompiledStdRng.from_rng(a), StdRng.from_rng(b)
    assert type(fa) is chacha.CompiledStdRng and type(fa.clone()) is chacha.CompiledStdRng
    assert np.array_equal(fa.next_u32_array(100), fb.next_u32_array(100)) and fa.word_pos == fb.word_pos
    ga, gb = fa.fork(), fb.fork()  # fork(): from_rng of the generator's own class
    assert type(ga) is chacha.CompiledStdRng and type(gb) is StdRng
    assert np.array_equal(ga.next_u32_array(50), gb.next_u32_array(50))


def test_a_bad_key_is_refused(compiled):
    with pytest.raises(ValueError, match="a key of 8 words"):
        compiled(np.zeros(7, np.uint32), 0, 1)
