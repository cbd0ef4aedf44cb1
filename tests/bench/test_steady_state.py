"""``whirgpu bench`` times the steady state: on a backend that replays recorded proofs, the warm-ups go on until a
proof of the shape has been replayed (``whirgpu.bench.steady``), so no timed run is a cache-filling or recording
proof; the first proof's time is its own column. Stub backends mark their proofs as filling, recording or
replayed the way ``GpuBackend`` does (the first proof of a shape unrecorded, the second recorded, the rest
replayed); a fake clock gives each kind its own duration, so the columns are checked without timing anything.
With wgpu here (lavapipe), a real backend's timed runs are checked to be replays. No timed assertions.
"""

from __future__ import annotations

import json
import types

import pytest

from tests.backend.conftest import open_runtime
from tests.test_cli import run
from whirgpu.backends.cpu import CpuBackend
from whirgpu.bench import runner
from whirgpu.bench.grid import parse_grid
from whirgpu.bench.report import main_table, notes
from whirgpu.bench.results import BenchResults, Row, from_json, to_json
from whirgpu.bench.steady import REPLAY_WARMUPS, replay_count, warm_up

# fake milliseconds of each kind of proof
MS = {"filling": 40.0, "recording": 12.0, "replayed": 5.0, "plain": 7.0}


class ReplayingStub(CpuBackend):
    """A cpu backend that counts its proofs per shape as ``GpuBackend`` does: the first fills the caches, the
    second is recorded, later ones count as replayed (``replays``). It proves for real (on the cpu), and adds the
    kind's fake milliseconds to ``clock``. ``drops`` True: every recording is dropped (nothing is replayed)."""

    def __init__(self, clock: list[float], replay_enabled: bool = True, drops: bool = False):
        super().__init__()
        self.clock, self.replay_enabled, self.drops = clock, replay_enabled, drops
        self.replays = 0
        self.profile = False
        self.seen: dict = {}
        self.kinds: list[str] = []  # the kind of every proof, in order

    def replay_proof(self, key, words, points, deferred, inputs=None, prover=None):
        seen = self.seen[key] = self.seen.get(key, 0) + 1
        if not self.replay_enabled or self.profile:
            kind = "plain"
        else:
            kind = "filling" if seen == 1 else "recording" if seen == 2 or self.drops else "replayed"
        self.replays += kind == "replayed"
        self.kinds.append(kind)
        self.clock[0] += MS[kind] / 1e3
        return None  # the proof is made as usual; only the count says "replayed"


@pytest.fixture
def clock(monkeypatch):
    """runner's perf_counter as a fake clock that only the stub advances."""
    now = [0.0]
    monkeypatch.setattr(runner, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    return now


def _grid(backends: dict, runs: int, warmup: int, grid: str = "8:2:1") -> tuple[BenchResults, list[str]]:
    """run_grid over ``grid``; -> (results, the progress description of every proof and verification)."""
    steps: list[str] = []
    plan = runner.Plan(parse_grid(grid), backends, runs, warmup, 1, False)
    results = BenchResults(settings={"runs": runs, "warmup": warmup, "seed": 1, "warmup_until_replayed": True})
    runner.run_grid(plan, results, {name: f"device of {name}" for name in backends},
                    lambda description, done: steps.append(description))
    return results, steps


# ---- steady.warm_up --------------------------------------------------------------------------------------------

def test_warm_up_waits_for_the_first_replay_then_the_minimum(clock):
    stub = ReplayingStub(clock)
    made = []

    def prove(i, total):
        made.append((i, total))
        stub.replay_proof("shape", None, None, False)
        return MS[stub.kinds[-1]]

    warmup = warm_up(stub, prove, 2)
    assert stub.kinds == ["filling", "recording", "replayed", "replayed", "replayed"]
    assert warmup.steady is True and warmup.seconds == [40.0, 12.0, 5.0, 5.0, 5.0]
    assert made == [(1, None), (2, None), (3, None), (4, 5), (5, 5)]
    # the shape is replayed already: one proof shows it
    assert len(warm_up(stub, prove, 0).seconds) == 1


def test_warm_up_is_bounded_when_nothing_is_replayed(clock):
    stub = ReplayingStub(clock, drops=True)
    warmup = warm_up(stub, lambda i, total: stub.replay_proof("shape", None, None, False) or 1.0, 1)
    assert warmup.steady is False and len(warmup.seconds) == REPLAY_WARMUPS + 1


@pytest.mark.parametrize("make", [lambda c: CpuBackend(), lambda c: ReplayingStub(c, replay_enabled=False)],
                         ids=["cpu", "replay off"])
def test_no_extra_warm_up_without_replay(make, clock):
    backend = make(clock)
    assert replay_count(backend) is None
    calls = []
    warmup = warm_up(backend, lambda i, total: calls.append((i, total)) or 1.0, 2)
    assert calls == [(1, 2), (2, 2)] and warmup.steady is None
    assert warm_up(backend, lambda i, total: pytest.fail("proved"), 0).seconds == []


def test_a_profiling_backend_does_not_replay(clock):
    stub = ReplayingStub(clock)
    stub.profile = True
    assert replay_count(stub) is None
    stub.profile = False
    assert replay_count(stub) == 0


# ---- the runner and the table ----------------------------------------------------------------------------------

def test_timed_runs_exclude_the_filling_and_recording_proofs(clock):
    stub = ReplayingStub(clock)
    results, steps = _grid({"stub": stub}, runs=3, warmup=1)
    proofs = [s for s in steps if not s.endswith(("instance", "verify"))]
    assert len(proofs) == len(stub.kinds) == 3 + 1 + 3
    by_step = list(zip(proofs, stub.kinds))
    assert [kind for step, kind in by_step if "run " in step] == ["replayed"] * 3
    assert [kind for step, kind in by_step if "warm-up" in step] == ["filling", "recording", "replayed", "replayed"]
    assert "warm-up 1, until a proof is replayed" in by_step[0][0] and "warm-up 4/4" in by_step[3][0]
    row = results.row(parse_grid("8:2:1")[0], "stub")
    assert row.error is None and row.verified is True
    assert row.runs_ms == [5.0] * 3 and row.median_ms == 5.0
    assert row.warmup_ms == [40.0, 12.0, 5.0, 5.0] and row.first_ms == 40.0
    assert row.steady is True and row.replayed == [True] * 3 and row.not_replayed == 0


def test_the_table_shows_the_steady_state_and_the_first_proof_in_its_own_column(clock):
    stub, off = ReplayingStub(clock), ReplayingStub(clock, replay_enabled=False)
    results, _ = _grid({"cpu": CpuBackend(), "stub": stub, "off": off}, runs=2, warmup=1)
    assert off.kinds == ["plain"] * 3  # replay off: the user's warm-up only
    table = main_table(results, "cpu", False)
    assert table.headers[4:10] == ["cpu\nms", "stub\nms", "off\nms", "cpu\nfirst ms", "stub\nfirst ms",
                                   "off\nfirst ms"]
    (cells,) = table.rows
    assert cells[5:7] == ["5.00", "7.00"] and cells[8:10] == ["40.0", "7.00"]
    assert cells[-1] == "ok"
    lines = notes(results, "cpu", False)
    assert any(line.startswith("first ms: the first proof") for line in lines)
    assert any("until a shape's first replayed proof" in line for line in lines)
    assert not any(line.startswith("~") for line in lines)
    doc = json.loads(json.dumps(to_json(results)))
    rows = {r["backend"]: r for r in doc["results"]}
    assert (rows["stub"]["first_ms"], rows["stub"]["steady"], rows["stub"]["replayed"]) == (40.0, True, [True] * 2)
    assert (rows["off"]["warmup_ms"], rows["off"]["steady"], rows["off"]["replayed"]) == ([7.0], None, None)
    assert rows["cpu"]["steady"] is None and rows["cpu"]["replayed"] is None
    assert to_json(from_json(doc)) == doc


def test_a_backend_that_never_replays_is_marked_not_steady(clock):
    stub = ReplayingStub(clock, drops=True)
    results, _ = _grid({"stub": stub}, runs=2, warmup=0)
    row = results.row(parse_grid("8:2:1")[0], "stub")
    assert len(row.warmup_ms) == REPLAY_WARMUPS and row.steady is False and row.replayed == [False, False]
    (cells,) = main_table(results, "cpu", False).rows
    assert cells[4] == "12.0 ~"
    assert f"~ 8:2:1 stub: no warm-up proof was replayed (of {REPLAY_WARMUPS}): the timed runs are not the " \
           "steady state" in notes(results, "cpu", False)


def test_a_file_without_warm_ups_has_no_first_column(tmp_path, capsys):
    results = BenchResults(settings={"runs": 1, "warmup": 1, "seed": 1})
    results.add(Row(parse_grid("8:2:1")[0], "wgpu", "gpu", [5.0], None, 100, "aa", True))
    path = tmp_path / "old.json"
    path.write_text(json.dumps(to_json(results)))
    code, out, _ = run(["bench", "--load", path, "--markdown"], capsys)
    assert code == 0 and "first ms" not in out and "after 1 warm-up run;" in out


def test_the_bench_command_with_a_replaying_backend(monkeypatch, clock, tmp_path, capsys):
    stub = ReplayingStub(clock)
    monkeypatch.setattr("whirgpu.bench.cli.open_specs", lambda specs, storage, explicit: ({"stub": stub}, {}))
    monkeypatch.setattr("whirgpu.bench.cli.describe", lambda backend: "a replaying stub")
    code, out, _ = run(["bench", "--grid", "8:2:1", "--backends", "cpu", "--runs", 2, "--warmup", 0, "--quiet",
                        "--markdown", "--json", tmp_path / "r.json"], capsys)
    assert code == 0
    assert "| n | fold | rate | provable bits | stub ms | stub first ms | speedup vs cpu | best | proofs |" in out
    assert "| 8 | 2 | 1 |" in out and "| 5.00 | 40.0 |" in out
    assert stub.kinds == ["filling", "recording", "replayed", "replayed", "replayed"]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["settings"]["warmup"] == 0 and doc["settings"]["warmup_until_replayed"] is True
    assert doc["results"][0]["warmup_ms"] == [40.0, 12.0, 5.0]


# ---- a real GPU backend ----------------------------------------------------------------------------------------

def test_every_timed_run_on_wgpu_is_a_replayed_proof(monkeypatch):
    from whirgpu.backends.gpu import GpuBackend

    backend = GpuBackend(open_runtime("wgpu", None))  # the multiply --backend wgpu picks: pipelines compiled anyway
    seen = []  # (description, phases) of every proof
    real = runner._prove_once

    def prove_once(steps, description, *args):
        proof, seconds, phases = real(steps, description, *args)
        seen.append((description, set(phases)))
        return proof, seconds, phases

    monkeypatch.setattr(runner, "_prove_once", prove_once)
    try:
        results, _ = _grid({"wgpu": backend}, runs=2, warmup=1)
    finally:
        backend.close()
    row = results.row(parse_grid("8:2:1")[0], "wgpu")
    assert row.error is None and row.verified is True
    assert row.steady is True and row.replayed == [True, True]
    timed = [phases for description, phases in seen if "run " in description]
    # a replayed proof is its recorded launches: the input's checks and the replay, no phase of its own
    assert len(timed) == 2 and all(phases == {"input", "replay"} for phases in timed)
    assert "ntt" in seen[0][1] and "ntt" in seen[1][1]  # the filling and the recording proofs ran every phase
    assert len(seen) == REPLAY_WARMUPS + 1 + 2
