"""Proof files: binary and whir-p3-json round trips, format detection, and every kind of malformed input.

Malformed input must raise ``ProofFormatError`` with a one-line message that says what is wrong, never anything
else. The binary layout used to find section boundaries is re-derived here from the format's description
(serialize.py's module docstring), and checked against the encoder's output length.
"""

from __future__ import annotations

import copy
import functools
import json
import random
import struct

import numpy as np
import pytest

from whirgpu import api
from whirgpu.backends import CpuBackend
from whirgpu.errors import ProofFormatError, VerificationError
from whirgpu.field import P
from whirgpu.protocol.params import ProtocolParameters, WhirConfig
from whirgpu.profiles.whir_p3_metal.prover import MetalWhirProver
from whirgpu.protocol.proof import Statement
from whirgpu.profiles.whir_p3_metal.serialize import (
    BINARY_MAGIC,
    JSON_FORMAT,
    ProofFile,
    dump,
    from_binary,
    from_whir_p3_json,
    load,
    proof_to_json_tree,
    to_binary,
    to_whir_p3_json,
)
from whirgpu.profiles.whir_p3_metal.verifier import MetalWhirVerifier
from whirgpu.protocol.bounded_json import MAX_INT_DIGITS
from whirgpu.ref import field_np as F
from whirgpu.ref.multilinear import evaluate

from ..conftest import GOLDEN_PROOFS, golden_bytes, golden_text

SMALL_GOLDEN = "n10_f2_r1_s32_p0_cb.json"
FRESH = {
    # PoW in the rounds and the final queries (the brief's example)
    "fresh-pow": (ProtocolParameters.default(num_variables=10, folding_factor=2, starting_log_inv_rate=1,
                                             security_level=32, pow_bits=5), 1),
    # PoW at every site, so every binary section (sumcheck witnesses included) is non-empty
    "fresh-pow-all": (ProtocolParameters.default(num_variables=8, folding_factor=1, starting_log_inv_rate=6,
                                                 security_level=124, pow_bits=15, soundness_type="UniqueDecoding"), 1),
    # no intermediate rounds, no final sumcheck (final_sumcheck is null), base-field final queries; two claims
    "fresh-no-rounds": (ProtocolParameters.default(num_variables=6, folding_factor=6, starting_log_inv_rate=1,
                                                   security_level=32, pow_bits=0), 2),
    # ConstantFromSecondRound folding, JohnsonBound, no claims at all
    "fresh-cfsr-jb-noclaims": (ProtocolParameters.default(num_variables=11, folding_factor=(3, 2),
                                                          starting_log_inv_rate=2, security_level=40, pow_bits=3,
                                                          soundness_type="JohnsonBound"), 0),
}


@functools.lru_cache(maxsize=None)
def _proof_file(name: str) -> ProofFile:
    if name in FRESH:
        params, m = FRESH[name]
        n = params.num_variables
        rng = np.random.default_rng(len(name))
        poly = F.to_monty(rng.integers(0, P, 1 << n, dtype=np.uint64))
        points = F.to_monty(rng.integers(0, P, (m, n, 4), dtype=np.uint64))
        values = np.array([evaluate(poly, z) for z in points], np.uint32).reshape(-1, 4)
        statement = Statement(points, values)
        proof = MetalWhirProver(WhirConfig.from_params(params), CpuBackend()).prove(poly, statement)
        return ProofFile(params, statement, proof, seed=None)
    return from_whir_p3_json(golden_bytes(name))


@functools.lru_cache(maxsize=None)
def _binary(name: str) -> bytes:
    return to_binary(_proof_file(name))


@functools.lru_cache(maxsize=None)
def _json(name: str) -> str:
    return to_whir_p3_json(_proof_file(name))


def _verify(pf: ProofFile) -> None:
    MetalWhirVerifier(WhirConfig.from_params(pf.params)).verify(pf.proof, pf.statement)


def _same(a: ProofFile, b: ProofFile) -> bool:
    """Same parameters, statement and proof (compared through the proof's serde tree)."""
    return (
        a.params == b.params
        and np.array_equal(a.statement.points, b.statement.points)
        and np.array_equal(a.statement.values, b.statement.values)
        and proof_to_json_tree(a.proof) == proof_to_json_tree(b.proof)
    )


def _format_error(fn, *args, match: str | tuple[str, ...] = ()) -> ProofFormatError:
    """Call fn, demand a ProofFormatError with a clear one-line message containing every ``match``."""
    with pytest.raises(ProofFormatError) as info:
        fn(*args)
    message = str(info.value)
    assert message and "\n" not in message and len(message) < 400, repr(message)
    for needle in (match,) if isinstance(match, str) else match:
        assert needle.lower() in message.lower(), f"{needle!r} not in {message!r}"
    return info.value


ALL_CASES = list(GOLDEN_PROOFS) + list(FRESH)
VERIFY_CASES = [SMALL_GOLDEN, "n16_f4_r1_s100_p16_cb_pow.json"] + list(FRESH)


# ---- round trips -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL_CASES)
def test_binary_round_trip_is_identical(name):
    pf = _proof_file(name)
    data = to_binary(pf)
    back = from_binary(data)
    assert _same(back, pf)
    assert back.seed == pf.seed
    assert to_binary(back) == data
    assert load(data) is not None and to_binary(load(data, "auto")) == data


@pytest.mark.parametrize("name", ALL_CASES)
def test_json_round_trip_is_identical(name):
    pf = _proof_file(name)
    text = to_whir_p3_json(pf)
    back = from_whir_p3_json(text)
    assert _same(back, pf)
    assert back.seed == pf.seed
    assert to_whir_p3_json(back) == text
    # and through the other format
    assert to_whir_p3_json(from_binary(to_binary(back)), include_debug=False) == to_whir_p3_json(
        pf, include_debug=False)


@pytest.mark.parametrize("name, fmt", [(name, "binary") for name in VERIFY_CASES]
                         + [(name, "whir-p3-json") for name in (SMALL_GOLDEN, "fresh-pow", "fresh-no-rounds")])
def test_round_tripped_proof_verifies(name, fmt):
    data = dump(_proof_file(name), fmt)
    assert isinstance(data, bytes)
    assert _same(load(data, fmt), _proof_file(name))
    api.verify(data)


def test_fresh_cases_cover_the_layout_variants():
    """The fresh proofs exist to cover these; a change of the parameter derivation must not silently drop one."""
    pow_all = _proof_file("fresh-pow-all")
    config = pow_all.config
    assert config.n_rounds >= 1 and config.starting_folding_pow_bits > 0 and config.final_pow_bits > 0
    assert config.final_folding_pow_bits > 0
    assert all(rc.pow_bits > 0 and rc.folding_pow_bits > 0 for rc in config.rounds)
    assert len(pow_all.proof.initial_sumcheck.pow_witnesses) > 0
    assert all(len(r.sumcheck.pow_witnesses) > 0 for r in pow_all.proof.rounds)
    assert len(pow_all.proof.final_sumcheck.pow_witnesses) > 0
    no_rounds = _proof_file("fresh-no-rounds")
    assert no_rounds.proof.rounds == [] and no_rounds.proof.final_sumcheck is None
    assert all(q.kind == "base" for q in no_rounds.proof.final_queries) and no_rounds.statement.num_claims == 2
    assert json.loads(_json("fresh-no-rounds"))["proof"]["final_sumcheck"] is None
    cfsr = _proof_file("fresh-cfsr-jb-noclaims")
    assert cfsr.statement.num_claims == 0 and cfsr.config.fold(0) != cfsr.config.fold(1)


def test_golden_json_files_parse_to_their_own_proof_tree():
    """The reference's file and ours agree on the proof, byte for byte in the serde tree."""
    raw = golden_text(SMALL_GOLDEN)
    assert json.loads(_json(SMALL_GOLDEN))["proof"] == json.loads(raw)["proof"]


# ---- format detection --------------------------------------------------------------------------------------------

def test_load_auto_detects_each_format():
    pf = _proof_file(SMALL_GOLDEN)
    binary, text = _binary(SMALL_GOLDEN), _json(SMALL_GOLDEN)
    assert binary.startswith(BINARY_MAGIC) and not text.encode().startswith(BINARY_MAGIC)
    for data in (binary, bytearray(binary), memoryview(binary)):
        assert _same(load(data), pf)
    for data in (text, text.encode(), bytearray(text.encode())):
        assert _same(load(data), pf)
    assert _same(load(text.encode(), "whir-p3-json"), pf) and _same(load(binary, "binary"), pf)


def test_load_with_the_wrong_explicit_format():
    _format_error(load, _json(SMALL_GOLDEN).encode(), "binary", match="magic")
    _format_error(load, _binary(SMALL_GOLDEN), "whir-p3-json", match="not JSON")
    _format_error(load, _binary(SMALL_GOLDEN), "bogus", match="unknown proof format")
    _format_error(dump, _proof_file(SMALL_GOLDEN), "bogus", match="unknown proof format")


@pytest.mark.parametrize("value", [None, 5, 1.5, ["x"], {"format": JSON_FORMAT}])
def test_non_bytes_input(value):
    _format_error(load, value, match="expected")
    _format_error(from_binary, value, match="expected bytes")
    _format_error(from_whir_p3_json, value, match="expected")


@pytest.mark.parametrize("name", [SMALL_GOLDEN, "fresh-pow-all", "fresh-no-rounds"])
def test_binary_is_smaller_than_json(name):
    binary = _binary(name)
    compact_json = to_whir_p3_json(_proof_file(name), include_debug=False)
    assert len(binary) < len(compact_json), (len(binary), len(compact_json))


# ---- the binary layout, re-derived -------------------------------------------------------------------------------

def _binary_sections(pf: ProofFile, data: bytes) -> list[tuple[str, int, int, str]]:
    """(name, start, end, kind) of every section, kind 'words' (field elements), 'count' (a u32 count) or
    'raw' (magic, header length, header). Built from the module docstring's description of the format."""
    config = WhirConfig.from_params(pf.params)
    n, m = config.num_variables, pf.statement.num_claims
    (header_len,) = struct.unpack_from("<I", data, len(BINARY_MAGIC))
    sections: list[tuple[str, int, str]] = [
        ("magic", len(BINARY_MAGIC), "raw"), ("header length", 4, "raw"), ("header", header_len, "raw"),
        ("statement points", 4 * m * n * 4, "words"), ("statement values", 4 * m * 4, "words"),
        ("initial commitment", 32, "words"), ("initial OOD answers", 16 * config.commitment_ood_samples, "words"),
    ]

    def sumcheck(name: str, k: int, grinds: bool):
        sections.append((f"{name} evaluations", 32 * k, "words"))
        sections.append((f"{name} PoW witnesses", 4 * k if grinds else 0, "words"))

    def queries(name: str, openings, width: int, ext: bool, depth: int):
        sections.append((f"{name} query count", 4, "count"))
        for j, _ in enumerate(openings):
            sections.append((f"{name} query {j} values", 4 * width * (4 if ext else 1), "words"))
            sections.append((f"{name} query {j} Merkle path", 32 * depth, "words"))

    sumcheck("initial sumcheck", config.fold(0), config.starting_folding_pow_bits > 0)
    for i, rc in enumerate(config.rounds):
        rp = pf.proof.rounds[i]
        sections += [(f"round {i} commitment", 32, "words"), (f"round {i} OOD answers", 16 * rc.ood_samples, "words"),
                     (f"round {i} PoW witness", 4, "words")]
        depth = (rc.domain_size >> rc.folding_factor).bit_length() - 1
        queries(f"round {i}", rp.queries, 1 << rc.folding_factor, i > 0, depth)
        sumcheck(f"round {i} sumcheck", config.fold(i + 1), rc.folding_pow_bits > 0)
    fsr = config.final_sumcheck_rounds
    sections += [("final polynomial", 16 << fsr, "words"), ("final PoW witness", 4, "words")]
    k = config.fold(config.n_rounds)
    queries("final", pf.proof.final_queries, 1 << k, config.n_rounds > 0,
            (config.final_domain_size >> k).bit_length() - 1)
    if fsr:
        sumcheck("final sumcheck", fsr, config.final_folding_pow_bits > 0)
    out, offset = [], 0
    for name, size, kind in sections:
        out.append((name, offset, offset + size, kind))
        offset += size
    return out


LAYOUT_CASES = [SMALL_GOLDEN, "fresh-pow-all", "fresh-no-rounds", "fresh-cfsr-jb-noclaims"]


@pytest.mark.parametrize("name", LAYOUT_CASES)
def test_binary_layout_matches_the_description(name):
    data = _binary(name)
    sections = _binary_sections(_proof_file(name), data)
    assert sections[-1][2] == len(data)
    header_start, header_end = sections[2][1], sections[2][2]
    header = json.loads(data[header_start:header_end])
    assert header["num_claims"] == _proof_file(name).statement.num_claims
    for section_name, start, end, kind in sections:
        if kind == "count":
            (count,) = struct.unpack_from("<I", data, start)
            assert count == sum(1 for s in sections if s[0].startswith(section_name.replace(" count", " ")) and
                                s[0].endswith(" values")), section_name


def _interesting_sections(name: str):
    """Every section kind once: the first and last query of each list stand for the others."""
    sections = _binary_sections(_proof_file(name), _binary(name))
    keep = []
    for section in sections:
        label = section[0]
        if " query " in label and " count" not in label:
            index = int(label.split(" query ")[1].split()[0])
            siblings = [s for s in sections if s[0].split(" query ")[0] == label.split(" query ")[0]
                        and " query " in s[0] and " count" not in s[0]]
            last = max(int(s[0].split(" query ")[1].split()[0]) for s in siblings)
            if index not in (0, last):
                continue
        keep.append(section)
    return keep


# ---- binary: malformed ---------------------------------------------------------------------------------------------

def test_empty_input():
    _format_error(load, b"", match="not JSON")
    _format_error(load, "", match="not JSON")
    _format_error(from_binary, b"", match="magic")
    _format_error(from_whir_p3_json, b"", match="not JSON")


@pytest.mark.parametrize("seed", range(4))
def test_random_bytes(seed):
    rng = random.Random(seed)
    lengths = [1, 2, 3, 4, 7, 8, 9, 12, 13, 16, 31, 64, 100, 257, 1000, 4096]
    for length in lengths:
        blob = bytes(rng.getrandbits(8) for _ in range(length))
        for fn in (load, from_binary, from_whir_p3_json):
            _format_error(fn, blob)
        # behind the magic the binary parser reads the header length and the header
        _format_error(from_binary, BINARY_MAGIC + blob)
        _format_error(load, BINARY_MAGIC + blob)


@pytest.mark.parametrize("seed", range(4))
def test_random_words_behind_a_valid_header(seed):
    """A real header, then random field elements: decodes only if every count and length happens to fit,
    which random words do not."""
    rng = np.random.default_rng(seed)
    data = _binary(SMALL_GOLDEN)
    body_start = _binary_sections(_proof_file(SMALL_GOLDEN), data)[3][1]
    for n_words in (0, 1, 10, 100, (len(data) - body_start) // 4, (len(data) - body_start) // 4 + 3):
        body = rng.integers(0, P, n_words, dtype=np.uint32).astype("<u4").tobytes()
        _format_error(from_binary, data[:body_start] + body)


@pytest.mark.parametrize("name", [SMALL_GOLDEN, "fresh-no-rounds"])
def test_truncation_every_97th_byte(name):
    data = _binary(name)
    header_end = _binary_sections(_proof_file(name), data)[2][2]
    for cut in range(0, len(data), 97):
        err = _format_error(from_binary, data[:cut])
        if cut >= header_end:
            assert "truncated" in str(err), (cut, str(err))
        _format_error(load, data[:cut])


@pytest.mark.parametrize("name", LAYOUT_CASES)
def test_truncation_at_each_section_boundary(name):
    data = _binary(name)
    sections = _interesting_sections(name)
    header_end = sections[2][2]
    cuts = sorted({s[1] for s in sections} | {s[1] + 1 for s in sections} | {s[2] - 1 for s in sections if s[2] > s[1]}
                  | {len(data) - 1})
    for cut in cuts:
        if cut >= len(data):
            continue
        err = _format_error(from_binary, data[:cut])
        if cut >= header_end:
            assert "truncated" in str(err), (cut, str(err))


@pytest.mark.parametrize("extra", [b"\x00", b"\x00" * 4, b"\x01\x00\x00\x00" * 3, BINARY_MAGIC])
def test_trailing_bytes(extra):
    _format_error(from_binary, _binary(SMALL_GOLDEN) + extra, match="trailing")
    _format_error(load, _binary(SMALL_GOLDEN) + extra, match="trailing")


def _patch_word(data: bytes, offset: int, value: int) -> bytes:
    return data[:offset] + struct.pack("<I", value) + data[offset + 4:]


def _word_sections(name: str):
    return [s for s in _interesting_sections(name) if s[3] == "words" and s[2] > s[1]]


def _word_section_cases():
    return [pytest.param(name, section[0], id=f"{name.removesuffix('.json')}-{section[0]}")
            for name in [SMALL_GOLDEN, "fresh-pow-all", "fresh-no-rounds"] for section in _word_sections(name)]


@pytest.mark.parametrize("name, section_name", _word_section_cases())
def test_binary_value_not_a_field_element(name, section_name):
    data = _binary(name)
    (section,) = [s for s in _word_sections(name) if s[0] == section_name]
    _, start, end, _ = section
    for offset in (start, end - 4):
        for bad in (P, P + 1, 0xFFFFFFFF):
            err = _format_error(from_binary, _patch_word(data, offset, bad), match=("not a field element", str(bad)))
            assert section_name.split(" query ")[0].lower() in str(err).lower(), str(err)
    # the same position with a valid word decodes (so the patch offset is right)
    from_binary(_patch_word(data, start, (struct.unpack_from("<I", data, start)[0] + 1) % P))


@pytest.mark.parametrize("name", [SMALL_GOLDEN, "fresh-no-rounds"])
def test_binary_query_count_out_of_range(name):
    data = _binary(name)
    for section in [s for s in _binary_sections(_proof_file(name), data) if s[3] == "count"]:
        (count,) = struct.unpack_from("<I", data, section[1])
        for bad in (count + 1000, 0xFFFFFFFF):
            _format_error(from_binary, _patch_word(data, section[1], bad), match=("count", "exceeds"))
        for bad in (count - 1, count + 1, 0):
            # a wrong count that fits the configuration shifts every later section: never a clean decode
            _format_error(from_binary, _patch_word(data, section[1], bad))


def _binary_with_header(header: dict, body: bytes = b"") -> bytes:
    raw = json.dumps(header).encode()
    return BINARY_MAGIC + struct.pack("<I", len(raw)) + raw + body


def _header(**params_changes) -> dict:
    params = _proof_file(SMALL_GOLDEN).params.params_dict(num_points=1)
    params.update(params_changes)
    return {"params": params, "num_claims": 1}


def test_binary_header_malformed():
    good = _header()
    _format_error(from_binary, BINARY_MAGIC, match="truncated")
    _format_error(from_binary, BINARY_MAGIC + struct.pack("<I", 1 << 20), match="header length")
    _format_error(from_binary, BINARY_MAGIC + struct.pack("<I", 50) + b"{}", match="header length")
    raw = b"{not json"
    _format_error(from_binary, BINARY_MAGIC + struct.pack("<I", len(raw)) + raw, match="header")
    raw = b"\xff\xfe\xfd"
    _format_error(from_binary, BINARY_MAGIC + struct.pack("<I", len(raw)) + raw, match="header")
    raw = b"[" * 30000 + b"]" * 30000
    _format_error(from_binary, BINARY_MAGIC + struct.pack("<I", len(raw)) + raw, match="header")
    _format_error(from_binary, _binary_with_header([]), match="header")
    _format_error(from_binary, _binary_with_header({"params": good["params"]}), match="num_claims")
    _format_error(from_binary, _binary_with_header({"num_claims": 1}), match="params")
    _format_error(from_binary, _binary_with_header({"params": "x", "num_claims": 1}), match="params")
    _format_error(from_binary, _binary_with_header({"params": list(good["params"]), "num_claims": 1}),
                  match="params")
    for bad in (-1, "1", True, 1.0, None, 1 << 17):
        _format_error(from_binary, _binary_with_header(dict(good, num_claims=bad)), match="num_claims")


@pytest.mark.parametrize("n, fold, rate", [(28, 1, 1), (27, 1, 2), (40, 2, 1), (30, 3, 1), (10**30, 2, 1)])
def test_header_params_beyond_two_adicity(n, fold, rate):
    header = _header(num_variables=n, folding_factor={"Constant": fold}, starting_log_inv_rate=rate,
                     rs_domain_initial_reduction_factor=min(fold, 3))
    _format_error(from_binary, _binary_with_header(header), match=("27", "TWO_ADICITY"))
    doc = _golden_doc()
    doc["params"] = header["params"]
    _format_error(from_whir_p3_json, json.dumps(doc), match=("27", "TWO_ADICITY"))


def test_header_params_at_two_adicity_pass_the_limit():
    """n + r - fold = 27 is allowed: the decoder goes on to the statement (and fails there, it is too short)."""
    header = _header(num_variables=28, folding_factor={"Constant": 2}, starting_log_inv_rate=1,
                     rs_domain_initial_reduction_factor=2)
    err = _format_error(from_binary, _binary_with_header(header), match="truncated")
    assert "TWO_ADICITY" not in str(err)


BAD_PARAMS = [
    ("soundness_type", "Bogus", "unknown soundness type"),
    ("soundness_type", 7, "soundness"),
    ("soundness_type", None, "soundness"),
    ("soundness_type_discriminant", 0, "discriminant"),
    ("num_variables", "10", "num_variables"),
    ("num_variables", True, "num_variables"),
    ("num_variables", 10.0, "num_variables"),
    ("num_variables", 0, "num_variables"),
    ("num_variables", -3, "num_variables"),
    ("folding_factor", {"Constant": 0}, "folding factor"),
    ("folding_factor", {"Constant": 11}, "folding factor"),
    ("folding_factor", 2, "folding_factor"),
    ("folding_factor", {"Bogus": 2}, "folding_factor"),
    ("folding_factor", {"Constant": "2"}, "folding factor"),
    ("starting_log_inv_rate", 0, "starting_log_inv_rate"),
    ("security_level", 0, "security_level"),
    ("security_level", 10**400, "an integer of 401 digits (at most MAX_INT_DIGITS 40)"),
    ("security_level", 5000, "bits of proof of work"),
    ("pow_bits", 32, "pow_bits"),
    ("pow_bits", -1, "pow_bits"),
    ("pow_bits", None, "pow_bits"),
    ("rs_domain_initial_reduction_factor", 3, "reduction"),
    ("rs_domain_initial_reduction_factor", -1, "reduction"),
    ("poseidon2_seed", 2, "poseidon2_seed"),
    ("merkle_cap_height", 1, "merkle_cap_height"),
]


@pytest.mark.parametrize("key, value, needle", BAD_PARAMS, ids=[f"{k}={v!r:.20}" for k, v, _ in BAD_PARAMS])
def test_bad_params(key, value, needle):
    _format_error(from_binary, _binary_with_header(_header(**{key: value})), match=needle)
    doc = _golden_doc()
    doc["params"][key] = value
    _format_error(from_whir_p3_json, json.dumps(doc), match=needle)
    _format_error(api.verify, json.dumps(doc).encode(), match=needle)


@pytest.mark.parametrize("key", ["num_variables", "folding_factor", "starting_log_inv_rate", "security_level",
                                 "pow_bits", "soundness_type", "rs_domain_initial_reduction_factor"])
def test_missing_param(key):
    header = _header()
    del header["params"][key]
    _format_error(from_binary, _binary_with_header(header), match=key)
    doc = _golden_doc()
    del doc["params"][key]
    _format_error(from_whir_p3_json, json.dumps(doc), match=key)


# ---- whir-p3-json: malformed -------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _golden_text() -> str:
    """The small golden file without its debugging keys (the decoder ignores them; they only cost time here)."""
    doc = json.loads(golden_text(SMALL_GOLDEN))
    for key in ("proof_canonical", "polynomial_evals_canonical", "derived", "domain_separator_canonical"):
        del doc[key]
    return json.dumps(doc)


def _golden_doc() -> dict:
    return json.loads(_golden_text())


def _set(doc, path: tuple, value) -> None:
    node = doc
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value


def _get(doc, path: tuple):
    node = doc
    for step in path:
        node = node[step]
    return node


# One integer of every kind of section (path to it), and the text its error message must name.
INT_SITES = {
    "points": (("points_canonical", 0, 0, 0), "points_canonical"),
    "points-last": (("points_canonical", 0, -1, 3), "points_canonical"),
    "claimed-values": (("claimed_values_canonical", 0, 0), "claimed_values_canonical"),
    "initial-commitment": (("proof", "initial_commitment", "cap", 0, 0), "proof.initial_commitment.cap[0][0]"),
    "initial-ood": (("proof", "initial_ood_answers", 0, "value", 3), "proof.initial_ood_answers[0].value[3]"),
    "initial-sumcheck": (("proof", "initial_sumcheck", "polynomial_evaluations", 1, 1, "value", 2),
                         "proof.initial_sumcheck.polynomial_evaluations[1][1].value[2]"),
    "round-commitment": (("proof", "rounds", 0, "commitment", "cap", 0, 7), "proof.rounds[0].commitment.cap[0][7]"),
    "round-ood": (("proof", "rounds", 0, "ood_answers", 0, "value", 0), "proof.rounds[0].ood_answers[0].value[0]"),
    "round-pow-witness": (("proof", "rounds", 0, "pow_witness"), "proof.rounds[0].pow_witness"),
    "round-query-base-value": (("proof", "rounds", 0, "queries", 0, "values", 0),
                               "proof.rounds[0].queries[0].values[0]"),
    "round-query-sibling": (("proof", "rounds", 0, "queries", 1, "proof", 2, 5),
                            "proof.rounds[0].queries[1].proof[2][5]"),
    "round-sumcheck": (("proof", "rounds", 0, "sumcheck", "polynomial_evaluations", 0, 0, "value", 0),
                       "proof.rounds[0].sumcheck.polynomial_evaluations[0][0].value[0]"),
    "final-poly": (("proof", "final_poly", 63, "value", 1), "proof.final_poly[63].value[1]"),
    "final-pow-witness": (("proof", "final_pow_witness"), "proof.final_pow_witness"),
    "final-query-ext-value": (("proof", "final_queries", 0, "values", 3, "value", 3),
                              "proof.final_queries[0].values[3].value[3]"),
    "final-query-sibling": (("proof", "final_queries", -1, "proof", 0, 0), "proof.final_queries[-1].proof[0][0]"),
    "final-sumcheck": (("proof", "final_sumcheck", "polynomial_evaluations", 5, 1, "value", 3),
                       "proof.final_sumcheck.polynomial_evaluations[5][1].value[3]"),
}


def _path_text(expected: str, doc: dict) -> str:
    if "[-1]" in expected:  # the decoder names the real index
        return expected.replace("[-1]", f"[{len(doc['proof']['final_queries']) - 1}]")
    return expected


def test_int_sites_exist_and_are_in_range():
    doc = _golden_doc()
    for name, (path, _) in INT_SITES.items():
        value = _get(doc, path)
        assert isinstance(value, int) and 0 <= value < P, name


@pytest.mark.parametrize("site", list(INT_SITES))
@pytest.mark.parametrize("bad", [P, P + 1, 2**32, 2**64, 10**40, -1], ids=["p", "p+1", "2^32", "2^64", "10^40", "-1"])
def test_json_value_not_a_field_element(site, bad):
    path, where = INT_SITES[site]
    doc = _golden_doc()
    _set(doc, path, bad)
    if len(str(bad)) > MAX_INT_DIGITS:  # refused by the reader, before any path is known
        match = (f"an integer of {len(str(bad))} digits", f"MAX_INT_DIGITS {MAX_INT_DIGITS}")
        _format_error(from_whir_p3_json, json.dumps(doc), match=match)
        _format_error(api.verify, json.dumps(doc), match=match)
        return
    _format_error(from_whir_p3_json, json.dumps(doc), match=(_path_text(where, doc).split("[")[0], str(bad)[:20]))
    _format_error(api.verify, json.dumps(doc), match=str(bad)[:20])


@pytest.mark.parametrize("site", list(INT_SITES))
@pytest.mark.parametrize("bad", ["5", True, False, 1.0, 0.5, None, [1], {"value": 1}],
                         ids=["str", "true", "false", "float", "float-half", "null", "list", "dict"])
def test_json_wrong_type_for_an_int(site, bad):
    path, where = INT_SITES[site]
    doc = _golden_doc()
    _set(doc, path, bad)
    _format_error(from_whir_p3_json, json.dumps(doc), match=_path_text(where, doc).split("[")[0].split(".")[0])


def test_json_valid_change_of_an_int_decodes():
    """The same sites with another valid element decode (so the error tests above hit the value, not the path)."""
    for name, (path, _) in INT_SITES.items():
        doc = _golden_doc()
        _set(doc, path, (_get(doc, path) + 1) % P)
        from_whir_p3_json(json.dumps(doc))


WRONG_LENGTHS = {
    "ef-3-coefficients": (("proof", "initial_ood_answers", 0, "value"), lambda v: v[:3], "expected 4 entries"),
    "ef-5-coefficients": (("proof", "final_poly", 0, "value"), lambda v: v + [0], "expected 4 entries"),
    "digest-7": (("proof", "initial_commitment", "cap", 0), lambda v: v[:7], "expected 8 entries"),
    "digest-9": (("proof", "rounds", 0, "commitment", "cap", 0), lambda v: v + [0], "expected 8 entries"),
    "cap-empty": (("proof", "initial_commitment", "cap"), lambda v: [], "expected 1 entries"),
    "cap-two": (("proof", "initial_commitment", "cap"), lambda v: v * 2, "expected 1 entries"),
    "sumcheck-round-one-value": (("proof", "initial_sumcheck", "polynomial_evaluations", 0), lambda v: v[:1],
                                 "expected 2 entries"),
    "sumcheck-round-three-values": (("proof", "final_sumcheck", "polynomial_evaluations", 0), lambda v: v + v[:1],
                                    "expected 2 entries"),
    "sibling-7": (("proof", "rounds", 0, "queries", 0, "proof", 0), lambda v: v[:7], "expected 8 entries"),
    "points-missing-coordinate": (("points_canonical", 0), lambda v: v[:-1], "points_canonical"),
    "points-coordinate-3": (("points_canonical", 0, 0), lambda v: v[:3], "points_canonical"),
    "points-ragged": (("points_canonical", 0), lambda v: [v[0][:2]] + v[1:], "points_canonical"),
    "points-extra-level": (("points_canonical",), lambda v: [v], "points_canonical"),
    "claimed-value-3": (("claimed_values_canonical", 0), lambda v: v[:3], "claimed_values_canonical"),
    "claimed-values-two": (("claimed_values_canonical",), lambda v: v * 2, "claimed_values_canonical"),
    "claimed-values-none": (("claimed_values_canonical",), lambda v: [], "claimed_values_canonical"),
    "points-none": (("points_canonical",), lambda v: [], "claimed_values_canonical"),
    "points-not-a-list": (("points_canonical",), lambda v: 5, "points_canonical"),
    "claimed-values-not-a-list": (("claimed_values_canonical",), lambda v: "x", "claimed_values_canonical"),
}


@pytest.mark.parametrize("case", list(WRONG_LENGTHS))
def test_json_wrong_list_length_in_decoder(case):
    path, change, needle = WRONG_LENGTHS[case]
    doc = _golden_doc()
    _set(doc, path, change(_get(doc, path)))
    _format_error(from_whir_p3_json, json.dumps(doc), match=needle)
    _format_error(api.verify, json.dumps(doc), match=needle)


# Lengths the JSON decoder cannot know without the configuration: the verifier rejects them as malformed.
WRONG_COUNTS = {
    "initial-ood-extra": (("proof", "initial_ood_answers"), lambda v: v * 2, "initial OOD answers"),
    "initial-ood-missing": (("proof", "initial_ood_answers"), lambda v: [], "initial OOD answers"),
    "round-ood-extra": (("proof", "rounds", 0, "ood_answers"), lambda v: v * 2, "round 0 OOD answers"),
    "initial-sumcheck-short": (("proof", "initial_sumcheck", "polynomial_evaluations"), lambda v: v[:-1],
                               "initial sumcheck evaluations"),
    "final-sumcheck-long": (("proof", "final_sumcheck", "polynomial_evaluations"), lambda v: v + v[:1],
                            "final sumcheck evaluations"),
    "pow-witness-extra": (("proof", "initial_sumcheck", "pow_witnesses"), lambda v: v + [0],
                          "initial sumcheck PoW witnesses"),
    "round-sumcheck-witness-extra": (("proof", "rounds", 0, "sumcheck", "pow_witnesses"), lambda v: v + [0],
                                     "round 0 sumcheck PoW witnesses"),
    "final-poly-short": (("proof", "final_poly"), lambda v: v[:-1], "final polynomial"),
    "final-poly-null": (("proof", "final_poly"), lambda v: None, "final polynomial"),
    "final-sumcheck-null": (("proof", "final_sumcheck"), lambda v: None, "final sumcheck"),
    "round-query-row-short": (("proof", "rounds", 0, "queries", 0, "values"), lambda v: v[:-1], "values"),
    "final-query-row-long": (("proof", "final_queries", 0, "values"), lambda v: v + v[:1], "values"),
    "round-query-path-short": (("proof", "rounds", 0, "queries", 0, "proof"), lambda v: v[:-1], "Merkle path"),
    "extra-round": (("proof", "rounds"), lambda v: v * 2, "rounds"),
    "no-rounds": (("proof", "rounds"), lambda v: [], "rounds"),
    "round-query-is-extension": (("proof", "rounds", 0, "queries", 0, "type"), lambda v: "extension",
                                 "base opening"),
}


@pytest.mark.parametrize("case", list(WRONG_COUNTS))
def test_json_wrong_count_for_the_configuration(case):
    path, change, needle = WRONG_COUNTS[case]
    doc = _golden_doc()
    _set(doc, path, change(_get(doc, path)))
    text = json.dumps(doc)
    try:
        pf = from_whir_p3_json(text)
    except ProofFormatError as err:  # the decoder may catch it already (a kind change reshapes the values)
        assert str(err)
        return
    _format_error(_verify, pf, match=needle)
    _format_error(api.verify, text, match=needle)


@pytest.mark.parametrize("count_change", [-1, +1])
@pytest.mark.parametrize("where", ["round", "final"])
def test_json_query_count_is_a_verification_error(where, count_change):
    doc = _golden_doc()
    queries = doc["proof"]["rounds"][0]["queries"] if where == "round" else doc["proof"]["final_queries"]
    if count_change < 0:
        queries.pop()
    else:
        queries.append(copy.deepcopy(queries[0]))
    with pytest.raises(VerificationError) as info:
        api.verify(json.dumps(doc))
    assert info.value.check == "query-count"


@pytest.mark.parametrize("tag", ["Base", "ext", "", 1, None, True, ["base"], {"base": 1}])
def test_json_bad_query_type_tag(tag):
    doc = _golden_doc()
    doc["proof"]["final_queries"][2]["type"] = tag
    _format_error(from_whir_p3_json, json.dumps(doc), match=("proof.final_queries[2].type", "'base' or 'extension'"))


def _key_paths(doc) -> list[tuple]:
    """One path per distinct required key: top level, proof, first round, first query of each kind, an extension
    element, a commitment, a sumcheck."""
    proof = ("proof",)
    return (
        [(k,) for k in ("format", "params", "points_canonical", "claimed_values_canonical", "proof")]
        + [proof + (k,) for k in ("initial_commitment", "initial_ood_answers", "initial_sumcheck", "rounds",
                                  "final_poly", "final_pow_witness", "final_queries", "final_sumcheck")]
        + [proof + ("rounds", 0, k) for k in ("commitment", "ood_answers", "pow_witness", "queries", "sumcheck")]
        + [proof + ("rounds", 0, "queries", 0, k) for k in ("type", "values", "proof")]
        + [proof + ("final_queries", 0, k) for k in ("type", "values", "proof")]
        + [proof + ("final_queries", 0, "values", 0, "value"), proof + ("initial_ood_answers", 0, "value"),
           proof + ("initial_commitment", "cap"), proof + ("rounds", 0, "commitment", "cap")]
        + [proof + ("initial_sumcheck", k) for k in ("polynomial_evaluations", "pow_witnesses")]
        + [proof + ("final_sumcheck", k) for k in ("polynomial_evaluations", "pow_witnesses")]
    )


KEY_PATHS = _key_paths(None)


@pytest.mark.parametrize("path", KEY_PATHS, ids=[".".join(map(str, p)) for p in KEY_PATHS])
def test_json_missing_key(path):
    doc = _golden_doc()
    parent = _get(doc, path[:-1])
    del parent[path[-1]]
    _format_error(from_whir_p3_json, json.dumps(doc), match=("missing", path[-1]))


@pytest.mark.parametrize("path", [p for p in KEY_PATHS if len(p) > 1], ids=lambda p: ".".join(map(str, p)))
def test_json_object_replaced_by_a_list(path):
    doc = _golden_doc()
    parent = _get(doc, path[:-2]) if isinstance(path[-2], int) else _get(doc, path[:-1])
    if isinstance(path[-2], int):
        parent[path[-2]] = [parent[path[-2]]]
    else:
        parent[path[-1]] = [] if not isinstance(parent[path[-1]], list) else {}
    _format_error(from_whir_p3_json, json.dumps(doc), match="expected")


@pytest.mark.parametrize("fmt", ["whir-p3-json/v2", "WHIR-P3-JSON/V1", "", None, 1, ["whir-p3-json/v1"]])
def test_json_bad_format_string(fmt):
    doc = _golden_doc()
    doc["format"] = fmt
    _format_error(from_whir_p3_json, json.dumps(doc), match="format")


@pytest.mark.parametrize("encoding", ["canonical", "", None, 0])
def test_json_bad_field_encoding(encoding):
    doc = _golden_doc()
    doc["proof_field_encoding"] = encoding
    _format_error(from_whir_p3_json, json.dumps(doc), match="proof_field_encoding")


def test_json_without_the_optional_keys_decodes():
    doc = _golden_doc()
    for key in ("derived", "proof_canonical", "domain_separator_canonical", "polynomial_evals_canonical",
                "proof_field_encoding", "field", "crypto", "source", "proof_field_encoding_note"):
        doc.pop(key, None)
    api.verify(json.dumps(doc))


@pytest.mark.parametrize("text", [
    "{", "nul", "[1,2", '{"a":}', "{'format': 1}", "NaN", "[]", "5", '"text"', "null", "\x00", "{} {}",
    "[" * 100000 + "]" * 100000,
    "{\"a\":" * 50000 + "1" + "}" * 50000,
])
def test_invalid_json_text(text):
    err = _format_error(from_whir_p3_json, text)
    assert "not JSON" in str(err) or "expected an object" in str(err), str(err)
    _format_error(load, text.encode())
    _format_error(api.verify, text)


@pytest.mark.parametrize("blob", [b"\xff\xfe\xfa", b"\x80abc", "é".encode("latin-1")])
def test_json_bad_encoding(blob):
    _format_error(from_whir_p3_json, blob, match="not UTF-8 text")


# ---- the statement side ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [P, P + 7, 2**32, -1, -P, 2**100])
@pytest.mark.parametrize("where", ["points_canonical", "claimed_values_canonical"])
def test_statement_value_not_canonical(where, bad):
    doc = _golden_doc()
    if where == "points_canonical":
        doc[where][0][3][2] = bad
    else:
        doc[where][0][1] = bad
    err = _format_error(from_whir_p3_json, json.dumps(doc), match=(where, "canonical field element"))
    assert str(bad)[:20] in str(err)


def test_statement_with_two_claims_and_none_round_trips():
    for name, m in (("fresh-no-rounds", 2), ("fresh-cfsr-jb-noclaims", 0)):
        doc = json.loads(_json(name))
        assert len(doc["points_canonical"]) == m and len(doc["claimed_values_canonical"]) == m
        pf = from_whir_p3_json(json.dumps(doc))
        assert pf.statement.points.shape == (m, pf.params.num_variables, 4) and pf.statement.values.shape == (m, 4)
        _verify(pf)


def test_statement_changed_claim_in_a_file_is_a_verification_error():
    doc = _golden_doc()
    doc["claimed_values_canonical"][0][0] = (doc["claimed_values_canonical"][0][0] + 1) % P
    with pytest.raises(VerificationError) as info:
        api.verify(json.dumps(doc))
    assert info.value.check == "sumcheck-claim"
    doc = _golden_doc()
    doc["points_canonical"][0][0][0] = (doc["points_canonical"][0][0][0] + 1) % P
    with pytest.raises(VerificationError) as info:
        api.verify(json.dumps(doc))
    assert info.value.check == "sumcheck-claim"


def test_binary_header_claim_count_must_match_the_statement():
    """num_claims says how many points follow: one more or one fewer shifts the body."""
    data = _binary(SMALL_GOLDEN)
    sections = _binary_sections(_proof_file(SMALL_GOLDEN), data)
    header = json.loads(data[sections[2][1]:sections[2][2]])
    body = data[sections[2][2]:]
    for m in (0, 2, 3):
        _format_error(from_binary, _binary_with_header(dict(header, num_claims=m), body))
