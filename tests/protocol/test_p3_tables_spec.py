"""The oracle's table flags (``--tables``, ``--open``, ``--layout``, ``--points``), parsed and printed as the oracle
does: the canonical ``--open`` it writes to ``params.open`` is compared with ours for a set of specs, by running the
prebuilt ``oracle-p3`` where it is (skipped, with the reason, where it is not: CI has no ../shared)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from whirgpu.errors import ConfigError
from whirgpu.profiles.p3_whir.tables.shapes import OpeningBatch, TableShape
from whirgpu.profiles.p3_whir.tables.spec import TablesSpec, default_open, format_open, format_tables, parse_open, \
    parse_tables

from ..conftest import REPO, golden_p3_names, load_golden_p3

ORACLE = REPO.parent / "shared" / "oracle-p3" / "bin" / "oracle-p3"

# (tables, open as typed, canonical open)
SPECS = [
    ("10x2", "0:0,1", "0:0,1:"),
    ("10x3,8x2,8x1", "0:0,1:1/0:2/1:0/2:0:0", "0:0,1:1/0:2:/1:0:/2:0:0"),
    ("10x3,8x2,8x1", "2:0:0/0:2/1:0/0:0,1:1", "0:2:/0:0,1:1/1:0:/2:0:0"),
    ("10x3,8x2", "0:0,1|1;1:0|", "0:0,1:1/1:0:"),
    ("4x3,3X2", " 1 : 1 , 0 : 0 / 0 :: 2 ", "0::2/1:1,0:0"),
    ("4x3,3x2", "1:+1:/0:0,,2:", "0:0,2:/1:1:"),
    ("4x3,,3x2,", "//0:0//", "0:0:"),
    ("4x1", "0::0", "0::0"),
]
REFUSED = [
    ("10x3", "1:0", "table 1 does not exist"),
    ("10x3", "0:3", "current column 3 >= the table's width 3"),
    ("10x3", "0:0:3", "next column 3 >= the table's width 3"),
    ("10x3", "0:0,0", "current column 0 repeated within one side"),
    ("10x3", "0:1:2,2", "next column 2 repeated within one side"),
    ("10x3", "0:", "an empty batch"),
    ("10x3", "0::", "an empty batch"),
    ("10x3", "0", "a batch is TABLE:CURRENT[:NEXT]"),
    ("10x3", "0:1:2:3", "is not a number"),
    ("10x3", "x:1", "table 'x' is not a number"),
    ("10x3", "0:-1", "is not a number"),
    ("10x3", "0:1_0", "is not a number"),
]
REFUSED_TABLES = [
    ("", "at least one table"),
    (" , ", "at least one table"),
    ("27x1", "log rows 27 above the limit 26"),
    ("10x0", "at least 1 column"),
    ("10", "not LOGROWSxCOLUMNS"),
    ("10x3x2", "columns '3x2' is not a number"),
    ("10x", "columns '' is not a number"),
    ("\u0661x1", "is not a number"),
    ("1x" + "9" * 30, "more than 20 digits"),
    ("26x200", "above the limit 2^33"),
]


@pytest.mark.parametrize("tables,typed,canonical", SPECS)
def test_open_is_printed_canonically(tables, typed, canonical):
    shapes = parse_tables(tables)
    batches = parse_open(typed, shapes)
    assert format_open(batches) == canonical
    assert format_open(parse_open(canonical, shapes)) == canonical  # canonical text is a fixed point
    assert [b.table for b in batches] == sorted(b.table for b in batches)


def test_tables_and_defaults():
    shapes = parse_tables(" 10x3, 8X2 ,0x1")
    assert shapes == (TableShape(10, 3), TableShape(8, 2), TableShape(0, 1))
    assert format_tables(shapes) == "10x3,8x2,0x1"
    assert default_open(shapes) == (OpeningBatch(0, (0, 1, 2)), OpeningBatch(1, (0, 1)), OpeningBatch(2, (0,)))
    assert parse_open("", shapes) == () and parse_open("/;", shapes) == ()
    spec = TablesSpec.parse("10x3,8x2", None, "prefix", "prescribed")
    assert spec.canonical() == {"tables": "10x3,8x2", "open": "0:0,1,2:/1:0,1:", "layout": "prefix",
                                "points": "prescribed"}
    assert spec.prescribed and str(spec).startswith("--tables 10x3,8x2 --layout prefix")


@pytest.mark.parametrize("tables,typed,needle", REFUSED)
def test_refused_open(tables, typed, needle):
    with pytest.raises(ConfigError, match="--open") as info:
        parse_open(typed, parse_tables(tables))
    assert needle in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("typed,needle", REFUSED_TABLES)
def test_refused_tables(typed, needle):
    with pytest.raises(ConfigError, match="--tables") as info:
        parse_tables(typed)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_layout_and_points_are_closed_lists():
    for bad in ("Suffix", "interleaved", ""):
        with pytest.raises(ConfigError, match="--layout"):
            TablesSpec.parse("4x1", layout=bad)
    with pytest.raises(ConfigError, match="--points"):
        TablesSpec.parse("4x1", points="random")


@pytest.mark.parametrize("name", golden_p3_names("t0*.json"))
def test_golden_params_are_canonical(name):
    params = load_golden_p3(name)["params"]
    spec = TablesSpec.parse(params["tables"], params["open"], params["layout"], params["points"])
    assert spec.canonical() == {k: params[k] for k in ("tables", "open", "layout", "points")}
    assert [{"log_rows": s.log_rows, "columns": s.columns} for s in spec.protocol.shapes] == params["table_shapes"]


def _oracle(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess:
    out = tmp_path / "doc.json"
    return subprocess.run([str(ORACLE), "prove-tables", *flags, "--fold", "2", "--security", "16", "--pow-bits",
                           "0", "--out", str(out)], capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.skipif(not ORACLE.is_file(), reason=f"the prebuilt oracle {ORACLE} is not here (CI has no ../shared)")
def test_the_oracle_canonicalises_as_we_do(tmp_path):
    small = [("4x3,3x2,3x1", "0:0,1:1/0:2/1:0/2:0:0"), ("4x3,3x2,3x1", "2:0:0/0:2/1:0/0:0,1:1"),
             ("4x3,3x2", "0:0,1|1;1:0|"), ("4x3,3X2", " 1 : 1 , 0 : 0 / 0 :: 2 "), ("4x3,3x2", "1:+1:/0:0,,2:"),
             ("4x1", "0::0"), ("3x2,,2x1,", None)]
    for tables, typed in small:
        flags = ["--tables", tables] + ([] if typed is None else ["--open", typed])
        run = _oracle(tmp_path, *flags)
        assert run.returncode == 0, (tables, typed, run.stderr)
        params = json.loads((tmp_path / "doc.json").read_text())["params"]
        spec = TablesSpec.parse(tables, typed)
        assert params["open"] == spec.canonical()["open"], (tables, typed)
        assert params["tables"] == spec.canonical()["tables"], (tables, typed)
    for tables, typed, _ in REFUSED[:8]:
        assert _oracle(tmp_path, "--tables", tables.replace("10x", "4x"), "--open", typed).returncode != 0, typed


def test_random_schedules_round_trip_through_their_text():
    import random

    rng = random.Random(38)
    for _ in range(300):
        shapes = tuple(TableShape(rng.randrange(0, 27), rng.randrange(1, 6)) for _ in range(rng.randrange(1, 5)))
        batches = []
        for _ in range(rng.randrange(0, 6)):
            t = rng.randrange(len(shapes))
            width = shapes[t].columns
            current = tuple(rng.sample(range(width), rng.randrange(0, width + 1)))
            following = tuple(rng.sample(range(width), rng.randrange(0 if current else 1, width + 1)))
            batches.append(OpeningBatch(t, current, following))
        text = format_open(batches)
        aliased = text.replace("/", ";")
        parsed = parse_open(aliased, parse_tables(format_tables(shapes)))
        assert parsed == tuple(sorted(batches, key=lambda b: b.table))
        assert format_open(parsed) == format_open(sorted(batches, key=lambda b: b.table))
