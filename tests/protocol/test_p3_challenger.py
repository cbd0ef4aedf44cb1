"""The length-tagged duplex challenger of the p3-whir profile against upstream Plonky3's transcript known answers
(golden-p3 ``kat_challenger_*.json``): every step's results and the challenger's whole state after it."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.conftest import load_golden_p3
from whirgpu.field import BABYBEAR, P, R, R_INV, field_by_name
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.ref.poseidon2_constants import Poseidon2Constants

FIELDS = ["babybear", "koalabear"]


def _canonical(words, field=BABYBEAR) -> list[int]:
    return [field.from_monty_int(int(w)) for w in words]


def _monty(values, field=BABYBEAR) -> list[int]:
    return [field.to_monty_int(int(v)) for v in values]


def _state(ch: DuplexChallenger) -> dict:
    f = ch.field
    return {"input_buffer": _canonical(ch.input_buffer, f), "output_buffer": _canonical(ch.output_buffer, f),
            "sponge_state": _canonical(ch.sponge_state, f)}


def _run(ch: DuplexChallenger, step: dict) -> list[int] | None:
    op, f = step["op"], ch.field
    count = int(m.group(1)) if (m := re.search(r" x(\d+)$", op)) else 1
    if op.startswith("observe"):
        ch.observe_many(_monty(step["values"], f))
        return None
    if op.startswith("sample base") or op.startswith("after the grind: sample base"):
        return _canonical([ch.sample() for _ in range(count)], f)
    if op.startswith("sample_bits("):
        bits = int(re.match(r"sample_bits\((\d+)\)", op).group(1))
        return [ch.sample_bits(bits) for _ in range(count)]
    if op.startswith("sample_uniform_bits::<true>("):
        bits = int(re.match(r"sample_uniform_bits::<true>\((\d+)\)", op).group(1))
        return [ch.sample_uniform_bits(bits) for _ in range(count)]
    if op.startswith("sample_algebra_element"):
        return _canonical(ch.sample_ef(), f)
    raise AssertionError(f"unknown step {op!r}")


@pytest.mark.parametrize("field", FIELDS)
def test_the_transcript_is_upstreams(field):
    kat = load_golden_p3(f"kat_challenger_{field}.json")
    assert kat["field"] == field
    f = field_by_name(field)
    ch = DuplexChallenger(Poseidon2Constants.smallrng_16_24(f)[0], length_tagged=True)
    for step in kat["steps"]:
        if step["op"].startswith("grind("):
            bits = int(re.match(r"grind\((\d+)\)", step["op"]).group(1))
            checker = ch.clone()
            witness = ch.grind(bits)
            assert _canonical([witness], f) == step["result"]
            assert _state(ch) == step["state_after_grind"]
            assert checker.check_witness(bits, witness) is step["check_witness"]
            assert checker.same_state(ch)
            continue
        result = _run(ch, step)
        if "result" in step:
            assert result == step["result"], step["op"]
        assert _state(ch) == step["state_after"], step["op"]


def test_babybears_p3_permutation_is_whir_p3s():
    """The p3-whir BabyBear transcript runs on the same width-16 constants as the whir-p3-metal profile."""
    assert Poseidon2Constants.smallrng_16_24(BABYBEAR)[0].canonical == Poseidon2Constants.smallrng(1).canonical


def test_a_tag_changes_every_challenge():
    """The same observations give other challenges with and without the length tag, and a squeeze (no input)
    adds no tag: the two sponges then differ only through what the absorbs did."""
    tagged, plain = DuplexChallenger(length_tagged=True), DuplexChallenger()
    for ch in (tagged, plain):
        ch.observe_many(_monty(range(3)))
    assert tagged.sample() != plain.sample()


@pytest.mark.parametrize("bits", [1, 5, 27, 28, 30])
def test_uniform_bits_stay_in_range_and_take_two_draws_past_27(bits):
    ch = DuplexChallenger(length_tagged=True)
    ch.observe_many(_monty([bits]))
    probe = ch.clone()
    values = [ch.sample_uniform_bits(bits) for _ in range(50)]
    assert all(0 <= v < (1 << bits) for v in values)
    draws = [probe.sample() for _ in range(2 * 50 + 20)]
    assert len(set(values)) > 1
    if bits <= 27:  # one draw each unless a value was rejected (P's top 2^27-block: probability ~ 2^-4 for 27)
        low = [int(w) * R_INV % P & ((1 << bits) - 1) for w in draws[:50]]
        bound = P & ~((1 << bits) - 1)
        if all(int(w) * R_INV % P < bound for w in draws[:50]):
            assert values == low


def test_grinding_with_a_tag_finds_the_smallest_witness():
    before = DuplexChallenger(length_tagged=True)
    before.observe_many(_monty([1, 2, 3]))
    ch = before.clone()
    witness = ch.grind(10)
    checker = before.clone()
    assert checker.check_witness(10, witness)
    assert checker.same_state(ch)
    nonce = int(witness) * R_INV % P
    assert not any(before.clone().check_witness(10, np.uint32(w * R % P)) for w in range(nonce))
