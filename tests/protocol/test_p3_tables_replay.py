"""Replayed openings of stacked tables (issue 38 item 6): on a GPU backend the opening of a held commitment is
recorded once its shape was proved before, then replayed, and every replayed opening is byte for byte the cpu
reference's. Covered: the same commitment opened again; commit / release / commit (a new commitment in the same
pooled buffers, a new prover: the replay must read the asking prover's state, not the recording one's); other
tables of the same shapes (another root: an input of the replay); prescribed points that change every opening;
two commitments held at once, opened in turn (different device storage: different recordings); another schedule
on the same commitment (another key)."""

from __future__ import annotations

import numpy as np
import pytest

import whirgpu
from whirgpu.profiles.p3_whir.defaults import example_parameters

from .test_p3_tables import make_backend

P = 2**31 - 2**24 + 1  # KoalaBear
PARAMS = example_parameters(None, None)
SCHEDULE = "0:0,1:1/1:0/2:1:0"
SHAPES = ((10, 3), (8, 2), (2, 2))


@pytest.fixture(params=["wgpu-emulated", "msl-cpu-mulhi"])
def gpu(request):
    backend = make_backend(request.param)
    yield backend
    backend.close()


def _traces(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, P, (1 << rows, width), dtype=np.uint32) for rows, width in SHAPES]


def _reference(traces):
    return whirgpu.P3Tables(traces, orient="rows", params=PARAMS, backend="cpu").commit()


def test_openings_replay_byte_for_byte(gpu):
    traces = _traces(0)
    want = _reference(traces).open(SCHEDULE).dumps()
    tables = whirgpu.P3Tables(traces, orient="rows", params=PARAMS, backend=gpu)
    got = []
    for _ in range(3):  # commit, open twice, release: the next commitment lands in the same pooled buffers
        commitment = tables.commit()
        got += [commitment.open(SCHEDULE).dumps() for _ in range(2)]
        commitment.release()
    assert got == [want] * 6
    assert gpu.replays >= 3  # the first opening fills the caches, the second is recorded, the rest replay


def test_other_tables_and_another_prover_replay_their_own_proof(gpu):
    first, second = _traces(1), _traces(2)
    for traces in (first, first, second, first, second):  # a new P3Tables (and prover) every time
        tables = whirgpu.P3Tables(traces, orient="rows", params=PARAMS, backend=gpu)
        commitment = tables.commit()
        assert commitment.open(SCHEDULE).dumps() == _reference(traces).open(SCHEDULE).dumps()
        commitment.release()
    assert gpu.replays >= 2


def test_prescribed_points_change_every_replayed_opening(gpu):
    traces = _traces(3)
    rng = np.random.default_rng(4)
    commitment = whirgpu.P3Tables(traces, orient="rows", params=PARAMS, backend=gpu).commit()
    reference = _reference(traces)
    before = gpu.replays
    for _ in range(4):
        points = [rng.integers(0, P, (m, 4), dtype=np.uint32) for m in (10, 8, 5)]
        assert commitment.open(SCHEDULE, points).dumps() == reference.open(SCHEDULE, points).dumps()
    assert gpu.replays - before >= 2


def test_two_held_commitments_and_two_schedules(gpu):
    a, b = _traces(5), _traces(6)
    held = [whirgpu.P3Tables(t, orient="rows", params=PARAMS, backend=gpu).commit() for t in (a, b)]
    references = [_reference(a), _reference(b)]
    before = gpu.replays
    for _ in range(4):
        for schedule in ("0:0", SCHEDULE):
            for commitment, reference in zip(held, references):
                assert commitment.open(schedule).dumps() == reference.open(schedule).dumps()
    assert gpu.replays - before >= 8  # four recordings, each replayed at least twice


def test_one_proof_commits_and_opens_and_replays(gpu):
    """``P3Tables.prove`` is byte for byte ``commit().open()``; from the third proof of a shape it is replayed whole
    (the stacking's uploads are the replay's inputs), for the same tables, other tables and other points."""
    rng = np.random.default_rng(7)
    before = gpu.replays
    for seed in (8, 8, 9, 8, 10):
        traces = _traces(seed)
        tables = whirgpu.P3Tables(traces, orient="rows", params=PARAMS, backend=gpu)
        assert tables.prove(SCHEDULE).dumps() == _reference(traces).open(SCHEDULE).dumps()
        points = [rng.integers(0, P, (m, 4), dtype=np.uint32) for m in (10, 8, 5)]
        assert tables.prove(SCHEDULE, points).dumps() == _reference(traces).open(SCHEDULE, points).dumps()
        by_columns = whirgpu.P3Tables([t.T.copy() for t in traces], orient="columns", params=PARAMS, backend=gpu)
        assert by_columns.prove(SCHEDULE).dumps() == _reference(traces).open(SCHEDULE).dumps()
    assert gpu.replays - before >= 6  # three shapes (drawn, prescribed, by columns), each replayed from its 3rd


def test_a_replayed_proof_refuses_a_word_above_p(gpu):
    """The range check of the stacking is read with a replayed proof too, naming the table and the index."""
    traces = _traces(11)
    tables = whirgpu.P3Tables(traces, orient="rows", params=PARAMS, backend=gpu)
    for _ in range(3):
        tables.prove(SCHEDULE)
    before = gpu.replays
    bad = [t.copy() for t in traces]
    bad[1][7, 1] = P + 3
    with pytest.raises(whirgpu.ConfigError, match=rf"table 1\[15\] = {P + 3} is not a canonical"):
        whirgpu.P3Tables(bad, orient="rows", params=PARAMS, backend=gpu).prove(SCHEDULE)
    assert gpu.replays == before + 1  # it was a replayed proof that refused
    assert tables.prove(SCHEDULE).dumps() == _reference(traces).open(SCHEDULE).dumps()


def test_a_commitment_made_again_is_replayed_and_opens_as_its_own(gpu):
    """commit() is recorded too: once a shape was committed twice, a commitment made in the released storage is its
    recorded launches replayed (new objects over the same buffers, claimed from the pool), and it opens as its own
    tables' commitment; while the last one is held, a commitment is made afresh in other storage."""
    first, second = _traces(12), _traces(13)
    kept = []
    for traces in (first, first, second, first, second):
        before = gpu.replays
        commitment = whirgpu.P3Tables(traces, orient="rows", params=PARAMS, backend=gpu).commit()
        reference = _reference(traces)
        assert commitment.root.tolist() == reference.root.tolist()
        assert commitment.open(SCHEDULE).dumps() == reference.open(SCHEDULE).dumps()
        kept.append(gpu.replays - before)
        commitment.release()
    assert kept[-1] == 2 and kept[-2] == 2  # the commitment and its opening, both replayed
    held = whirgpu.P3Tables(first, orient="rows", params=PARAMS, backend=gpu).commit()
    before = gpu.replays
    other = whirgpu.P3Tables(second, orient="rows", params=PARAMS, backend=gpu).commit()  # storage still held
    assert gpu.replays == before
    assert other.open(SCHEDULE).dumps() == _reference(second).open(SCHEDULE).dumps()
    assert held.open(SCHEDULE).dumps() == _reference(first).open(SCHEDULE).dumps()


def test_a_replayed_commitment_refuses_a_word_above_p_and_leaks_nothing(gpu):
    traces = _traces(14)
    tables = whirgpu.P3Tables(traces, orient="rows", params=PARAMS, backend=gpu)
    for _ in range(3):
        tables.commit().release()
    bad = [t.copy() for t in traces]
    bad[0][3, 2] = P
    before = gpu.replays
    with pytest.raises(whirgpu.ConfigError, match=rf"table 0\[11\] = {P} is not a canonical"):
        whirgpu.P3Tables(bad, orient="rows", params=PARAMS, backend=gpu).commit()
    assert gpu.replays == before + 1
    commitment = tables.commit()  # the refused replay's storage went back to the pool: this one replays again
    assert gpu.replays == before + 2
    assert commitment.open(SCHEDULE).dumps() == _reference(traces).open(SCHEDULE).dumps()
