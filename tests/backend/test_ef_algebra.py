"""``DeviceAlgebra`` (``backends/gpu/algebra.py``: ``EfAlgebra`` as ``ef_program`` launches on a GPU session's
values) against ``HostAlgebra`` (numpy), word for word, both fields, on every runtime fixture: every op of the
contract over random and edge values (0, 1, vectors of 0, 1 and many entries, base words), results feeding later
ops; and, interleaved with a device transcript's samples and observations, the same challenges and final
challenger state as the host challenger running the same steps over ``HostAlgebra`` (the ordering of algebra and
transcript launches)."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.algebra import HostAlgebra
from whirgpu.backends.base import P3_WHIR_LAYOUT
from whirgpu.backends.device_transcript import TranscriptVariant
from whirgpu.backends.device_values import STATE_WORDS
from whirgpu.backends.gpu import GpuBackend
from whirgpu.backends.gpu.algebra import DeviceAlgebra
from whirgpu.backends.gpu.transcript import copy_challenger, from_host_challenger
from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.ref.field_np import field_ops

from .field_inputs import random_monty

FIELDS = (BABYBEAR, KOALABEAR)


@pytest.fixture(scope="module")
def gpu(gpu_runtime):
    return GpuBackend(gpu_runtime)


def _inputs(field, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    ops = field_ops(field)
    x = random_monty(rng, field, (4,))
    vector = random_monty(rng, field, (9, 4))
    vector[0] = 0
    vector[1] = ops.ef_from_base(ops.ONE)
    return {"x": x, "y": random_monty(rng, field, (4,)), "zero": np.zeros(4, np.uint32),
            "one": ops.ef_from_base(ops.ONE), "vector": vector, "other": random_monty(rng, field, (9, 4)),
            "matrix": random_monty(rng, field, (9 * 5, 4)), "base": random_monty(rng, field, (7,)),
            "point": random_monty(rng, field, (5, 4)), "single": random_monty(rng, field, (1, 4)),
            "empty": np.zeros((0, 4), np.uint32)}


def _steps(alg, v: dict) -> dict:
    """Every op of the contract, later ones reading earlier results."""
    out = {}
    out["lift"] = alg.lift(v["base"])
    out["linear"] = alg.linear(v["x"], v["vector"], v["other"])
    out["linear_no_b"] = alg.linear(v["y"], v["vector"])
    out["linear_scalar"] = alg.linear(v["x"], v["y"], v["one"])
    out["add"] = alg.add(v["vector"], out["linear"])
    out["sub"] = alg.sub(v["vector"], v["other"])
    out["sub_scalar"] = alg.sub(v["zero"], v["x"])
    out["scale"] = alg.scale(v["other"], v["zero"])
    out["mul"] = alg.mul(v["vector"], v["other"])
    out["mul_scalar"] = alg.mul(v["x"], v["y"])
    out["dot"] = alg.dot(v["vector"], out["sub"])
    out["dot_one"] = alg.dot(v["single"], v["single"])
    out["dot_empty"] = alg.dot(v["empty"], v["empty"])
    out["total"] = alg.total(out["mul"])
    out["matvec"] = alg.matvec(v["matrix"], 9, alg.concat([v["single"], v["x"], v["y"], v["one"], v["zero"]]))
    out["vecmat"] = alg.vecmat(v["vector"], v["matrix"])
    out["inv"] = alg.inv(v["x"])
    out["inv_zero"] = alg.inv(v["zero"])
    out["inv_one"] = alg.inv(v["one"])
    out["powers"] = alg.powers(v["x"], 11)
    out["powers_start"] = alg.powers(out["inv"], 6, start=v["y"])
    out["powers_one"] = alg.powers(v["x"], 1)
    out["squares"] = alg.squares(v["y"], 6)
    out["squares_reversed"] = alg.squares(v["y"], 6, reverse=True)
    out["eq"] = alg.eq(v["point"])
    out["eq_one"] = alg.eq(v["single"])
    out["eq_empty"] = alg.eq(v["empty"])
    out["concat"] = alg.concat([v["x"], v["empty"], out["lift"], out["dot"]])
    out["inv_vector"] = alg.inv(v["vector"])
    out["powers_each"] = alg.powers_each(v["vector"][:4], 5)
    out["squares_each"] = alg.squares_each(v["other"][:3], 4)
    out["squares_each_reversed"] = alg.squares_each(v["other"][2:5], 3, reverse=True)
    out["column"] = alg.column(v["matrix"], 5, 3)
    out["column_first"] = alg.column(out["powers_each"], 5, 0)
    out["chain"] = alg.dot(out["eq"][:11], out["powers"])
    return out


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_device_algebra_is_the_host_algebra(gpu, field):
    values = _inputs(field, 3)
    expected = _steps(HostAlgebra(field), values)
    state = gpu.state
    with state.host_call(proof_words=4096, scratch_words=4096) as session:
        alg = DeviceAlgebra(state, session, field, 3072)
        device = {name: (alg.const(a) if name == "base" else alg.const(a.reshape(-1, 4) if a.ndim == 2 else a))
                  for name, a in values.items()}
        published = {name: alg.publish(value) for name, value in _steps(alg, device).items()}
    for name, want in expected.items():
        got = session.read(published[name])
        np.testing.assert_array_equal(got.reshape(-1, 4), np.asarray(want, np.uint32).reshape(-1, 4), err_msg=name)
    assert alg.launches == 1  # one flush: the whole program one launch


def _transcript_steps(alg, challenger, v: dict, observe) -> list:
    """Samples, algebra on them, observations of the results: the order the session must keep."""
    samples = []
    x = challenger.sample_ef()
    samples.append(x)
    powers = alg.powers(x, 5)
    claim = alg.dot(powers, v["vector"][:5])
    observe(alg.publish(claim))
    y = challenger.sample_ef()
    samples.append(y)
    observe(alg.publish(alg.linear(y, alg.eq(alg.concat([x, y])), v["vector"][:4])))
    observe(alg.publish(alg.inv(alg.add(x, y))))
    samples.append(challenger.sample_ef())
    return samples


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_ops_keep_their_order_with_the_transcript(gpu, field):
    values = _inputs(field, 5)
    host = TranscriptVariant.p3(field).challenger()
    host.observe_many(values["base"])
    device_start = TranscriptVariant.p3(field).challenger()
    device_start.observe_many(values["base"])
    alg_host = HostAlgebra(field)
    expected = _transcript_steps(alg_host, host, values, lambda value: host.observe_many(np.asarray(value)))
    saved, gpu.layout = gpu.layout, P3_WHIR_LAYOUT(field, "prefix")  # the p3 challenger on the device
    state = gpu.state
    try:
        with state.host_call(proof_words=2048, scratch_words=2048) as session:
            from_host_challenger(state, session, device_start)
            alg = DeviceAlgebra(state, session, field, 1024)
            device_values = {"vector": alg.const(values["vector"])}
            samples = _transcript_steps(alg, session.transcript, device_values, session.transcript.observe)
            kept = [alg.publish(s) for s in samples]
            final = copy_challenger(state, session)
    finally:
        gpu.layout = saved
    for got, want in zip(kept, expected):
        np.testing.assert_array_equal(session.read(got).reshape(4), np.asarray(want).reshape(4))
    words = session.read(final).reshape(STATE_WORDS)
    np.testing.assert_array_equal(words[:16], np.asarray(host.sponge_state, np.uint32))
