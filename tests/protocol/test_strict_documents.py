"""Strict documents: declared sizes are bounded before anything is derived from them (a tiny document cannot make
the decoder allocate), every whir-p3-json header key is one the format defines and agrees with what the
parameters derive, and proof sources are told apart by the documented rule (bytes, paths, JSON text)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import whirgpu
from whirgpu import ProofFormatError
from whirgpu.profiles.whir_p3_metal.serialize import BINARY_MAGIC, from_whir_p3_json, load, to_binary

from ..conftest import REPO, golden_text

SMALL_GOLDEN = "n10_f2_r1_s32_p0_cb.json"
HUGE = 1 << 40


@pytest.fixture(scope="module")
def doc() -> dict:
    return json.loads(golden_text(SMALL_GOLDEN))


def _rejected(document, *needles: str) -> str:
    text = json.dumps(document) if isinstance(document, dict) else document
    with pytest.raises(ProofFormatError) as info:
        load(text.encode() if isinstance(text, str) else text)
    message = str(info.value)
    assert "\n" not in message and len(message) < 400, message
    for needle in needles:
        assert needle in message, message
    return message


def _binary_header(header: dict) -> bytes:
    raw = json.dumps(header).encode()
    return BINARY_MAGIC + len(raw).to_bytes(4, "little") + raw


# ---- sizes declared far beyond what the document holds ------------------------------------------------------------

HUGE_PARAMS = {
    "constant-fold": {"num_variables": HUGE, "folding_factor": {"Constant": HUGE}},
    "second-round-fold": {"num_variables": HUGE, "folding_factor": {"ConstantFromSecondRound": [HUGE, HUGE]}},
    "unique-decoding": {"num_variables": HUGE, "folding_factor": {"Constant": HUGE}, "soundness_type": "UniqueDecoding",
                        "soundness_type_discriminant": 0},
    "rate": {"starting_log_inv_rate": HUGE},
    "security": {"security_level": HUGE},
    "reduction": {"rs_domain_initial_reduction_factor": HUGE},
    "n-63": {"num_variables": 63, "folding_factor": {"Constant": 63}, "soundness_type": "UniqueDecoding",
             "soundness_type_discriminant": 0},
}


def test_huge_declarations_are_refused_under_a_memory_limit(doc, tmp_path):
    """Each document of a few hundred bytes, loaded in a child process limited to 1 GiB of address space (a
    2^40-bit domain size alone would take 128 GiB), raises ProofFormatError at once."""
    small = {"format": doc["format"], "points_canonical": [], "claimed_values_canonical": [],
             "proof": doc["proof"]}
    cases = {}
    for name, change in HUGE_PARAMS.items():
        params = {**doc["params"], **change}
        params.pop("num_points", None)
        cases[f"json-{name}"] = json.dumps({**small, "params": params}).encode()
        cases[f"binary-{name}"] = _binary_header({"params": params, "num_claims": 0})
    cases["binary-num-claims"] = _binary_header({"params": doc["params"], "num_claims": HUGE})
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    script = textwrap.dedent("""
        import resource, sys, time
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        import whirgpu
        for path in sys.argv[1:]:
            start = time.perf_counter()
            try:
                whirgpu.load(open(path, "rb").read())
                print(path, "loaded")
            except whirgpu.ProofFormatError as exc:
                print(path, "ProofFormatError", round(time.perf_counter() - start, 3), str(exc)[:120])
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", script, *sorted(str(tmp_path / n) for n in cases)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == len(cases), done.stdout + done.stderr[-2000:]
    for line in lines:
        name, outcome, seconds, _ = line.split(" ", 3)
        assert outcome == "ProofFormatError" and float(seconds) < 1.0, line


def test_the_binary_decoder_counts_sizes_in_python_ints():
    """A row of 2^62 words (a shape int64 cannot hold) is a truncation, not a wrapped negative count."""
    from whirgpu.profiles.whir_p3_metal.serialize import _Reader

    with pytest.raises(ProofFormatError, match="truncated"):
        _Reader(b"\0" * 64, 0).words((1 << 62, 4), "row")


# ---- whir-p3-json header fields against what the parameters derive ------------------------------------------------

def _changed(doc, path, value):
    out = copy.deepcopy(doc)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


HEADER_CHANGES = {
    "derived-final-queries": (("derived", "final_queries"), 50, "derived disagrees", "derived.final_queries"),
    "derived-round": (("derived", "rounds", 0, "num_queries"), 1, "derived disagrees", "num_queries"),
    "derived-type": (("derived", "all_pow_zero"), 1, "derived disagrees", "all_pow_zero"),
    "derived-extra": (("derived", "extra"), 1, "derived disagrees", "keys"),
    "separator": (("domain_separator_canonical", 3), 33, "domain_separator_canonical disagrees", "[3]"),
    "separator-length": (("domain_separator_canonical",), [7], "domain_separator_canonical", "length"),
    "separator-garbage": (("domain_separator_canonical",), "x", "domain_separator_canonical", ""),
    "strategy": (("params", "sumcheck_strategy"), "Bogus", "sumcheck_strategy", "Svo"),
    "seed-text": (("params", "seed"), "x", "params.seed", "u64"),
    "seed-negative": (("params", "seed"), -1, "params.seed", "u64"),
    "seed-huge": (("params", "seed"), 1 << 64, "params.seed", "u64"),
    "params-unknown": (("params", "bogus"), 1, "unknown key 'bogus'", "params"),
    "document-unknown": (("bogus",), 1, "unknown key 'bogus'", "document"),
    "field-p": (("field", "p"), 7, "field.p", ""),
    "field-unknown": (("field", "q"), 7, "unknown key 'q'", ""),
    "crypto-hash": (("crypto", "hash"), "SHA-256", "crypto.hash", ""),
    "crypto-unknown": (("crypto", "cipher"), "x", "unknown key 'cipher'", ""),
    "crypto-text": (("crypto", "mmcs"), 5, "crypto.mmcs", "text"),
    "source-text": (("source", "path"), [], "source.path", "text"),
    "note-text": (("proof_field_encoding_note",), 1, "proof_field_encoding_note", "text"),
    "polynomial-length": (("polynomial_evals_canonical",), [1, 2], "polynomial_evals_canonical", "1024"),
    "polynomial-value": (("polynomial_evals_canonical", 5), whirgpu.P, "polynomial_evals_canonical[5]", ""),
    "proof-unknown": (("proof", "bogus"), 1, "unknown key 'bogus'", "proof"),
    "round-unknown": (("proof", "rounds", 0, "x"), 1, "unknown key 'x'", "proof.rounds[0]"),
    "query-unknown": (("proof", "final_queries", 0, "x"), 1, "unknown key 'x'", "final_queries[0]"),
    "sumcheck-unknown": (("proof", "initial_sumcheck", "x"), 1, "unknown key 'x'", "initial_sumcheck"),
    "phantom": (("proof", "initial_ood_answers", 0, "_phantom"), 0, "_phantom", "null"),
    "marker": (("proof", "initial_commitment", "_marker"), [], "_marker", "null"),
    "commitment-unknown": (("proof", "initial_commitment", "x"), None, "unknown key 'x'", ""),
}


@pytest.mark.parametrize("case", HEADER_CHANGES)
def test_header_fields_are_checked(doc, case):
    path, value, *needles = HEADER_CHANGES[case]
    _rejected(_changed(doc, path, value), *needles)


def test_binary_header_rejects_unknown_keys(doc):
    pf = from_whir_p3_json(json.dumps(doc))
    data = to_binary(pf)
    header_len = int.from_bytes(data[8:12], "little")
    header = json.loads(data[12:12 + header_len])
    for changed in ({**header, "extra": 1}, {**header, "params": {**header["params"], "extra": 1}}):
        raw = json.dumps(changed).encode()
        with pytest.raises(ProofFormatError, match="unknown key 'extra'"):
            load(BINARY_MAGIC + len(raw).to_bytes(4, "little") + raw + data[12 + header_len:])


def test_every_optional_block_may_be_left_out_or_kept(doc):
    whirgpu.verify(json.dumps(doc))
    assert whirgpu.is_valid(json.dumps(_changed(doc, ("params", "sumcheck_strategy"), "Classic")))
    assert whirgpu.is_valid(json.dumps(_changed(doc, ("params", "seed"), (1 << 64) - 1)))


# ---- what names a proof -------------------------------------------------------------------------------------------

def test_paths_bytes_and_json_text(doc, tmp_path, monkeypatch):
    text = json.dumps(doc)
    path = tmp_path / "proof.json"
    path.write_text(text)
    binary = tmp_path / "proof.whir"
    binary.write_bytes(whirgpu.dump(load(text), "binary"))
    for source in (path, str(path), binary, str(binary), text, "\n  " + text, text.encode(), bytearray(text.encode()),
                   memoryview(text.encode())):
        assert whirgpu.is_valid(source), repr(source)[:80]
        whirgpu.verify(source)
        load(source)
    monkeypatch.chdir(tmp_path)
    assert whirgpu.is_valid("proof.whir")  # a relative path, as the README's example writes it


@pytest.mark.parametrize("source, needle", [
    ("missing.whir", "names no file"),
    ("", "names no file"),
    ("[1, 2]", "names no file"),
    ("a\0b", "names no file"),
    (Path("/nonexistent/proof.whir"), "cannot read proof file"),
    (3, "got int"),
])
def test_sources_that_name_no_proof(source, needle, tmp_path):
    for call in (whirgpu.load, whirgpu.verify):
        with pytest.raises(ProofFormatError, match=needle.replace("[", r"\[")):
            call(source)
    assert whirgpu.is_valid(source) is False


def test_a_directory_is_not_a_proof(tmp_path):
    with pytest.raises(ProofFormatError, match="cannot read proof file"):
        whirgpu.load(tmp_path)
    with pytest.raises(ProofFormatError, match="cannot read proof file"):
        whirgpu.load(str(tmp_path))
