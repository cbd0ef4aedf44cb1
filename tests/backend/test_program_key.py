"""The one decision of record-and-replay (``backends.program_key.ProgramKey``): every input it holds, changed
alone, makes the GPU backend build a new launch program, and the new program's key differs from the old one in
that field; a change of values only (another table, other points, another held root) builds none: it replays.

Each case proves twice on wgpu (the first proof of a shape fills the caches, the second is recorded as a
program) and reads the backend's programs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import whirgpu
from tests.backend.conftest import open_runtime
from whirgpu.api import Prover, random_canonical_instance
from whirgpu.backends.gpu import GpuBackend, replay
from whirgpu.backends.program_key import ProgramKey
from whirgpu.profiles.p3_whir.api import P3Prover
from whirgpu.profiles.p3_whir.defaults import EXAMPLE_PARAMETERS, example_parameters
from whirgpu.protocol.params import ProtocolParameters

KOALABEAR_P = 2**31 - 2**24 + 1
P3_PARAMS = dataclasses.replace(EXAMPLE_PARAMETERS, security_level=40, pow_bits=8)
SHAPES = ((9, 3), (7, 2))


@pytest.fixture
def backend(monkeypatch):
    monkeypatch.setattr(replay, "MAX_PROGRAMS", 64)  # every case's program stays
    backend = GpuBackend(open_runtime("wgpu", None))
    yield backend
    backend.close()


def _keys(backend) -> list[ProgramKey]:
    return list(backend.replay.programs)


def _new_program(backend, prove) -> ProgramKey:
    """Prove twice; the one program this built (its key)."""
    before = set(_keys(backend))
    prove()
    prove()
    built = [key for key in _keys(backend) if key not in before]
    assert len(built) == 1, f"expected one new program, got {len(built)}"
    return built[0]


def _no_new_program(backend, prove) -> None:
    before, replays = set(_keys(backend)), backend.replays
    prove()
    assert set(_keys(backend)) == before and backend.replays == replays + 1


def _differing(a: ProgramKey, b: ProgramKey) -> set[str]:
    return {f.name for f in dataclasses.fields(ProgramKey) if getattr(a, f.name) != getattr(b, f.name)}


def _params(n: int, fold: int) -> ProtocolParameters:
    return ProtocolParameters.default(n, fold, 1, security_level=60, pow_bits=8)


def test_every_input_of_a_single_column_proof(backend):
    table, point = random_canonical_instance(10, 1)
    prover = Prover(_params(10, 2), backend=backend)
    base = _new_program(backend, lambda: prover.prove(table, point))
    other_table, other_point = random_canonical_instance(10, 2)
    _no_new_program(backend, lambda: prover.prove(other_table, other_point))  # values only: replayed

    wider, wider_point = random_canonical_instance(11, 1)
    arity = Prover(_params(11, 2), backend=backend)
    assert _differing(base, _new_program(backend, lambda: arity.prove(wider, wider_point))) == {"config"}
    folding = Prover(_params(10, 3), backend=backend)
    assert _differing(base, _new_program(backend, lambda: folding.prove(table, point))) == {"config"}
    two = np.concatenate([point, other_point])
    assert _differing(base, _new_program(backend, lambda: prover.prove(table, two))) == {"n_points"}

    for attribute, value in (("binding_limit", 1 << 14), ("buffer_limit", 1 << 16)):
        saved = getattr(backend, attribute)
        setattr(backend, attribute, value)
        try:
            assert _differing(base, _new_program(backend, lambda: prover.prove(table, point))) == {"device"}
        finally:
            setattr(backend, attribute, saved)
    _no_new_program(backend, lambda: prover.prove(table, point))  # the limits back: the first program again


def test_every_input_of_a_p3_whir_proof(backend):
    n = 11
    words = np.random.default_rng(3).integers(0, KOALABEAR_P, 1 << n, dtype=np.uint32)
    koalabear = P3Prover(n, params=P3_PARAMS, field="koalabear", backend=backend)
    base = _new_program(backend, lambda: koalabear.prove(words))
    assert base.field == "koalabear" and base.drawn_openings == 1
    assert _differing(base, _new_program(backend, lambda: koalabear.prove(words, num_openings=2))) == \
        {"drawn_openings"}
    babybear = P3Prover(n, params=P3_PARAMS, field="babybear", backend=backend)
    assert "field" in _differing(base, _new_program(backend, lambda: babybear.prove(words % (15 * 2**27 + 1))))
    points = np.random.default_rng(4).integers(0, 1000, (1, n, 4), dtype=np.uint32)
    assert _differing(base, _new_program(backend, lambda: koalabear.prove(words, points=points))) == \
        {"n_points", "drawn_openings"}


def _traces(seed: int, orient: str = "rows") -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    traces = [rng.integers(0, KOALABEAR_P, (1 << rows, width), dtype=np.uint32) for rows, width in SHAPES]
    return traces if orient == "rows" else [np.ascontiguousarray(t.T) for t in traces]


def test_every_input_of_a_tables_proof(backend):
    params = example_parameters(None, None)
    schedule = "0:0,2:1/1:1"

    def prove(traces, orient="rows", layout="suffix", batches=schedule, points=None):
        tables = whirgpu.P3Tables(traces, orient=orient, params=params, layout=layout, backend=backend)
        return lambda: tables.prove(batches, points)

    base = _new_program(backend, prove(_traces(0)))
    assert base.phase == "proof" and base.held_inputs is not None
    _no_new_program(backend, prove(_traces(1)))  # other words of the same shapes: replayed
    assert _differing(base, _new_program(backend, prove(_traces(0), layout="prefix"))) >= {"stacked"}
    assert _differing(base, _new_program(backend, prove(_traces(0), batches="0:0/1:0,1"))) == {"protocol"}
    assert _differing(base, _new_program(backend, prove(_traces(0, "columns"), orient="columns"))) == \
        {"held_inputs"}
    points = [np.ones((9, 4), np.uint32), np.ones((7, 4), np.uint32)]
    assert "prescribed" in _differing(base, _new_program(backend, prove(_traces(0), points=points)))

    tables = whirgpu.P3Tables(_traces(0), orient="rows", params=params, backend=backend)
    commit_key = _new_program(backend, lambda: tables.commit().release())
    assert commit_key.phase == "commit" and "phase" in _differing(base, commit_key)
    first, second = tables.commit(), tables.commit()  # held at once: different device storage
    opened = {_new_program(backend, lambda: c.open(schedule)) for c in (first, second)}
    assert len(opened) == 2 and _differing(*opened) == {"residency"}
    first.release()
    second.release()
