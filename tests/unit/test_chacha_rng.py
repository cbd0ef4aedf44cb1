"""rand's StdRng (ChaCha12) in numpy: the oracle's recorded draws and rand's own test vectors."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import golden_p3_names, load_golden_p3
from whirgpu.ref.chacha_rng import StdRng, chacha_blocks
from whirgpu.ref.rng import random_base

ZK_GOLDEN = golden_p3_names("z0*.json")


@pytest.mark.parametrize("name", ZK_GOLDEN)
def test_mask_rng_draws_match_the_oracle(name):
    """StdRng::seed_from_u64(mask_seed), then one 32-byte fill_bytes per commit / open call (the forks' seeds)."""
    doc = load_golden_p3(name)
    rng = StdRng.seed_from_u64(doc["mask_seed"])
    draws = doc["mask_rng"]["draws"]
    assert [d["op"] for d in draws] == ["fill_bytes"] * len(draws)
    for draw in draws:
        assert rng.fill_bytes(draw["len"]).hex() == draw["hex"]


def test_stdrng_construction_vector():
    """rand 0.10.1's ``test_stdrng_construction`` (seed from rand's test; expected values from the golden file)."""
    expected = load_golden_p3(ZK_GOLDEN[0])["stdrng_kat"]["construction_next_u64_from_rng"]
    seed = bytes([1, 0, 0, 0, 23, 0, 0, 0, 200, 1, 0, 0, 210, 30, 0, 0] + [0] * 16)
    rng0 = StdRng.from_seed(seed)
    x0 = rng0.next_u64()
    rng1 = StdRng.from_rng(rng0)
    assert [x0, rng1.next_u64()] == expected


def test_chacha12_true_values_tc1():
    """rand 0.10.1's ``test_chacha_true_values_1`` (Strombergson's ChaCha12 TC1, zero key): 8 u128 little-endian."""
    expected = [0xd583265f12ce1f8153f955076a9af49b, 0x5f15ae2ea589007e1474e049bbc32904,
                0x798cfaac3428e82cc0e37ad279f86405, 0xbe2613412fe80b611969dea02c9f623a,
                0x3d17e08c3371fc86fe743e204188d50b, 0xb489c04c21851515cccbbd19b7eb28c6,
                0x43c88c1b97b802c611f14ca1cd8d2542, 0x1693e617b0a64427c0515190ca461ee9]
    rng = StdRng.from_seed(bytes(32))
    data = rng.fill_bytes(128)
    assert [int.from_bytes(data[16 * i:16 * i + 16], "little") for i in range(8)] == expected
    assert rng.word_pos == 32


def test_consumption_rules():
    """Every request reads the next keystream words: u64 = (lo, hi), a partial fill_bytes word is consumed whole,
    and the stream runs on across chacha20's 4-block buffers and this module's cache."""
    key = StdRng.seed_from_u64(3).key
    stream = chacha_blocks(key, 0, 40)
    rng = StdRng.seed_from_u64(3)
    assert rng.next_u32() == stream[0]
    assert rng.next_u64() == int(stream[1]) | int(stream[2]) << 32
    assert rng.fill_bytes(5) == stream[3:5].astype("<u4").tobytes()[:5]
    assert rng.word_pos == 5
    rng.next_u32_array(58)
    assert rng.next_u64() == int(stream[63]) | int(stream[64]) << 32
    big = rng.next_u32_array(500)
    assert np.array_equal(big, stream[65:565])
    fork = rng.clone()
    assert fork.next_u32() == rng.next_u32() == stream[565]


def test_field_samples_follow_the_stream():
    """Plonky3's StandardUniform rejection sampler on StdRng: next_u32 >> 1 until below P."""
    from whirgpu.field import KOALABEAR
    rng, words = StdRng.seed_from_u64(11), StdRng.seed_from_u64(11).next_u32_array(200) >> np.uint32(1)
    expected = words[words < KOALABEAR.P][:100]
    assert np.array_equal(random_base(rng, 100, KOALABEAR), expected)
