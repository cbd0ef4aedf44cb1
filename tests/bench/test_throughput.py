"""``whirgpu bench --throughput``: proofs per second counted as a whole and in windows (one untimed window first,
every proof's bytes checked), and where worker processes' proofs were made."""

from __future__ import annotations

import json
import time

from tests.test_cli import run
from whirgpu.bench.throughput import Windows, windowed


def test_windows_count_the_proofs_of_each_window_after_an_untimed_one(monkeypatch):
    closed = []

    def proofs():
        try:
            i = 0
            while True:
                time.sleep(0.01)
                yield f"proof {i % 3}"
                i += 1
        finally:
            closed.append(True)

    import whirgpu.bench.throughput as throughput

    monkeypatch.setattr(throughput, "dump", lambda proof, fmt: proof.encode())
    rates, same = windowed(proofs(), [b"proof 0", b"proof 1", b"proof 2"], Windows(0.2, 3))
    bad, differ = windowed(proofs(), [b"proof 0", b"other", b"proof 2"], Windows(0.05, 1))
    assert len(rates) == 3 and same and all(40 < r < 110 for r in rates)  # ~one proof a 10 ms sleep
    assert len(bad) == 1 and not differ
    assert closed == [True, True]  # the endless iterator is closed (proofs in flight dropped)


def test_windowed_throughput_end_to_end(tmp_path, capsys):
    out_json = tmp_path / "throughput.json"
    code, out, err = run(["bench", "--throughput", 2, "--grid", "8:2:1", "--backends", "cpu", "--window", 0.3,
                          "--windows", 2, "--processes", 1, "--json", out_json], capsys)
    assert code == 0, err
    (row,) = json.loads(out_json.read_text())
    assert row["window_s"] == 0.3 and row["identical"]
    assert set(row["windows"]) == {"one by one", "prove_many batch=1", "prove_many", "processes"}
    assert all(len(rates) == 2 and min(rates) > 0 for rates in row["windows"].values())
    (device, (proofs, workers)), = row["landed"].items()
    assert device.startswith("cpu") and workers == 1 and proofs > 0
    assert "8:2:1 cpu processes landed on cpu" in out


def test_window_needs_throughput(capsys):
    code, out, err = run(["bench", "--grid", "8:2:1", "--backends", "cpu", "--window", 1], capsys)
    assert code == 1 and "--window times the runs of --throughput" in err
    code, out, err = run(["bench", "--throughput", 2, "--backends", "cpu", "--window", 0], capsys)
    assert code == 1 and "--window needs a positive number of seconds" in err
