"""Tampering (DESIGN.md §7): every field of a proof changed in turn is rejected, and with the right error.

A field element changed to another valid element (+1 mod p) leaves the proof well formed, so the verifier must
answer ``VerificationError``; a changed shape, kind or count is ``ProofFormatError`` (or ``query-count``).

Which check fails is predicted here from a model of the transcript, not from running the verifier: a value the
verifier checks directly (an opened row or Merkle sibling, a PoW witness, the statement) fails that check; a
value the transcript absorbs changes every challenge after it, so the first check downstream fails: the next
proof-of-work check (a non-zero b-bit witness survives a fresh challenge with probability 2^-b, so checks below
``HARD_BITS`` may be passed and the walk goes on), else the next query check (new query indices: the openings no
longer match, 'merkle', or their number changes, 'query-count'), else the closing sumcheck equation.

A PoW witness of a fresh proof is changed to its canonical predecessor: whirgpu grinds the smallest valid
witness, so that one certainly fails. Where the witness is 0 it becomes 1, which a b-bit check passes with odds
2^-b; for the last round of the final sumcheck that leaves a valid proof (the closing equation holds for every
last challenge), the one place where acceptance is a legitimate outcome (``ACCEPTED``).

Proofs: two PoW-free golden proofs from the Rust reference and two fresh proofs with PoW, one of which grinds
at every PoW site (initial, round and final sumchecks, round and final queries).
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass

import numpy as np
import pytest

from whirgpu.backends import CpuBackend
from whirgpu.errors import ProofFormatError, VerificationError
from whirgpu.field import P
from whirgpu.protocol.params import ProtocolParameters, WhirConfig
from whirgpu.protocol.proof import QueryOpening
from whirgpu.profiles.whir_p3_metal.prover import MetalWhirProver
from whirgpu.profiles.whir_p3_metal.serialize import ProofFile, from_whir_p3_json, params_and_statement_from_json, to_binary
from whirgpu.profiles.whir_p3_metal.verifier import MetalWhirVerifier
from whirgpu.ref import field_np as F
from whirgpu.api import random_instance

from ..conftest import golden_bytes, load_golden

HARD_BITS = 12  # a PoW check of at least this many bits is taken to fail on a changed transcript (2^-12 odds)

GOLDEN = ("n10_f2_r1_s32_p0_cb.json", "n12_f4_r1_s32_p0_cb.json")
FRESH = {
    # UniqueDecoding at λ = 124 is the cheap way to make every PoW site grind (folding PoW needs λ close to the
    # extension field's 124 bits); the large rate keeps the query counts (and so the proof time) down.
    "fresh-pow-all": ProtocolParameters.default(
        num_variables=8, folding_factor=1, starting_log_inv_rate=6, security_level=124, pow_bits=15,
        soundness_type="UniqueDecoding",
    ),
    # Two rounds (for swapping them), OOD samples, PoW on the round and final queries (4 and 3 bits: soft).
    "fresh-pow-2rounds": ProtocolParameters.default(
        num_variables=11, folding_factor=2, starting_log_inv_rate=2, security_level=24, pow_bits=5,
    ),
}
CASES = tuple(GOLDEN) + tuple(FRESH)


@functools.lru_cache(maxsize=None)
def _config_of(case: str) -> WhirConfig:
    if case in FRESH:
        return WhirConfig.from_params(FRESH[case])
    params, _ = params_and_statement_from_json(load_golden(case))
    return WhirConfig.from_params(params)


@functools.lru_cache(maxsize=None)
def _proof_file(case: str) -> ProofFile:
    if case in FRESH:
        params = FRESH[case]
        poly, statement = random_instance(params.num_variables, seed=7)
        proof = MetalWhirProver(WhirConfig.from_params(params), CpuBackend()).prove(poly, statement)
        return ProofFile(params, statement, proof)
    return from_whir_p3_json(golden_bytes(case))


def _fresh_copy(case: str) -> ProofFile:
    return copy.deepcopy(_proof_file(case))


def _verify(pf: ProofFile) -> None:
    MetalWhirVerifier(WhirConfig.from_params(pf.params)).verify(pf.proof, pf.statement)


# ---- the transcript model ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Event:
    kind: str  # 'absorb' | 'pow' | 'queries' | 'claim'
    key: str  # the proof field it concerns
    round: str = ""  # the verifier's name for where a check happens
    bits: int = 0


def _sumcheck_events(prefix: str, round_name: str, n_rounds: int, bits: int) -> list[_Event]:
    events = []
    for j in range(n_rounds):
        events.append(_Event("absorb", f"{prefix}.evaluations[{j}]"))
        events.append(_Event("pow", f"{prefix}.pow_witnesses[{j}]", round_name, bits))
    return events


def _transcript_events(config: WhirConfig) -> list[_Event]:
    """The verifier's steps in order (whir-spec §4), each absorbing proof data or checking something."""
    events = [_Event("absorb", "initial_commitment"), _Event("absorb", "initial_ood_answers")]
    events += _sumcheck_events("initial_sumcheck", "initial sumcheck", config.fold(0), config.starting_folding_pow_bits)
    for i, rc in enumerate(config.rounds):
        name = f"round {i}"
        events += [
            _Event("absorb", f"rounds[{i}].commitment"),
            _Event("absorb", f"rounds[{i}].ood_answers"),
            _Event("pow", f"rounds[{i}].pow_witness", name, rc.pow_bits),
            _Event("queries", f"rounds[{i}].queries", name),
        ]
        events += _sumcheck_events(f"rounds[{i}].sumcheck", f"{name} sumcheck", config.fold(i + 1), rc.folding_pow_bits)
    events += [
        _Event("absorb", "final_poly"),
        _Event("pow", "final_pow_witness", "final round", config.final_pow_bits),
        _Event("queries", "final_queries", "final round"),
    ]
    events += _sumcheck_events("final_sumcheck", "final sumcheck", config.final_sumcheck_rounds,
                               config.final_folding_pow_bits)
    events.append(_Event("claim", "statement", "final"))
    return events


ACCEPTED = ("", "accepted")  # an outcome: the changed proof is (legitimately) still valid


def _event(config: WhirConfig, key: str) -> tuple[int, list[_Event]]:
    events = _transcript_events(config)
    (index,) = [i for i, e in enumerate(events) if e.key == key]
    return index, events


def _expected_failures(config: WhirConfig, key: str) -> frozenset[tuple[str, str]]:
    """The (round, check) pairs that changing the proof field ``key`` can fail first (and ACCEPTED where the
    change may leave the proof valid)."""
    start, events = _event(config, key)
    out: set[tuple[str, str]] = set()
    first = events[start]
    if first.kind == "pow" and first.bits == 0:  # a witness where none is asked must stay 0: checked directly
        return frozenset({(first.round, "pow")})
    for event in events[start if first.kind == "pow" else start + 1:]:
        if event.kind == "pow" and event.bits > 0:
            out.add((event.round, "pow"))
            if event.bits >= HARD_BITS:
                break
        elif event.kind == "queries":
            out |= {(event.round, "merkle"), (event.round, "query-count")}
            break
        elif event.kind == "claim":
            if first.kind == "pow" and events[start + 1] is event:
                # Another valid witness of the last sumcheck round only moves its challenge r, and the closing
                # equation h(r) = W(r*) f(r*) holds for every r: a second valid witness is a second valid proof.
                out.add(ACCEPTED)
            else:
                out.add((event.round, "sumcheck-claim"))
            break
    return frozenset(out)


# ---- value mutations (+1 mod p at the first and the last element of every field) ------------------------------

@dataclass(frozen=True)
class _Site:
    path: tuple  # attribute names and list indices (-1: the last) from the ProofFile to an array or a scalar word
    element: int  # flattened index into the array, -1 for the last (ignored for scalars)
    key: str  # the transcript model's key
    direct: tuple[str, str] | None = None  # (round, check) when the value is checked directly

    @property
    def id(self) -> str:
        parts = []
        for step in self.path[1:] if self.path[0] == "proof" else self.path:
            if isinstance(step, int):
                parts[-1] += f"[{'last' if step == -1 else step}]"
            else:
                parts.append(step)
        return ".".join(parts) + ("" if self.element is None else f"@{'last' if self.element == -1 else 'first'}")


def _array_sites(path: tuple, shape: tuple[int, ...], key_of, direct=None) -> list[_Site]:
    """First and last element of an array field (one site when they coincide). ``key_of(flat_index)`` names the
    transcript event that element belongs to."""
    size = int(np.prod(shape))
    return [_Site(path, e, key_of(e if e >= 0 else size - 1), direct) for e in ([0] if size == 1 else [0, -1])
            if size]


def _value_sites(config: WhirConfig) -> list[_Site]:
    sites: list[_Site] = []

    def sumcheck(path: tuple, key: str, n_rounds: int, bits: int):
        sites.extend(_array_sites(path + ("evaluations",), (n_rounds, 2, 4), lambda e: f"{key}.evaluations[{e // 8}]"))
        if bits > 0:
            sites.extend(_array_sites(path + ("pow_witnesses",), (n_rounds,), lambda e: f"{key}.pow_witnesses[{e}]"))

    def queries(path: tuple, key: str, round_name: str):
        # the first element of the first opening and the last element of the last one, in its row and its path
        for j in (0, -1):
            for field_name in ("values", "siblings"):
                sites.append(_Site(path + (j, field_name), j, key, (round_name, "merkle")))

    sites.extend(_array_sites(("proof", "initial_commitment"), (8,), lambda e: "initial_commitment"))
    sites.extend(_array_sites(("proof", "initial_ood_answers"), (config.commitment_ood_samples, 4),
                              lambda e: "initial_ood_answers"))
    sumcheck(("proof", "initial_sumcheck"), "initial_sumcheck", config.fold(0), config.starting_folding_pow_bits)
    for i, rc in enumerate(config.rounds):
        rp = ("proof", "rounds", i)
        sites.extend(_array_sites(rp + ("commitment",), (8,), lambda e, i=i: f"rounds[{i}].commitment"))
        sites.extend(_array_sites(rp + ("ood_answers",), (rc.ood_samples, 4),
                                  lambda e, i=i: f"rounds[{i}].ood_answers"))
        sites.append(_Site(rp + ("pow_witness",), None, f"rounds[{i}].pow_witness"))
        queries(rp + ("queries",), f"rounds[{i}].queries", f"round {i}")
        sumcheck(rp + ("sumcheck",), f"rounds[{i}].sumcheck", config.fold(i + 1), rc.folding_pow_bits)
    sites.extend(_array_sites(("proof", "final_poly"), (1 << config.final_sumcheck_rounds, 4), lambda e: "final_poly"))
    sites.append(_Site(("proof", "final_pow_witness"), None, "final_pow_witness"))
    queries(("proof", "final_queries"), "final_queries", "final round")
    if config.final_sumcheck_rounds:
        sumcheck(("proof", "final_sumcheck"), "final_sumcheck", config.final_sumcheck_rounds,
                 config.final_folding_pow_bits)
    n = config.num_variables
    sites.extend(_array_sites(("statement", "points"), (1, n, 4), lambda e: "statement", ("final", "sumcheck-claim")))
    sites.extend(_array_sites(("statement", "values"), (1, 4), lambda e: "statement", ("final", "sumcheck-claim")))
    return sites


def _resolve(pf: ProofFile, path: tuple):
    node = pf
    for step in path[:-1]:
        node = node[step] if isinstance(step, int) else getattr(node, step)
    return node, path[-1]


def _get(pf: ProofFile, site: _Site) -> int:
    parent, attr = _resolve(pf, site.path)
    value = getattr(parent, attr)
    return int(value) if site.element is None else int(np.asarray(value).reshape(-1)[site.element])


def _set(pf: ProofFile, site: _Site, word: int) -> None:
    """Set one Montgomery word, in place of the array (the proof's arrays may be shared views)."""
    parent, attr = _resolve(pf, site.path)
    if site.element is None:
        setattr(parent, attr, np.uint32(word))
    else:
        new = np.array(getattr(parent, attr), dtype=np.uint32, copy=True)
        new.reshape(-1)[site.element] = word
        setattr(parent, attr, new)


def _same_proof_file(a: ProofFile, b: ProofFile) -> bool:
    return to_binary(a) == to_binary(b)


VALUE_CASES = [
    pytest.param(case, site, id=f"{case.removesuffix('.json')}-{site.id}")
    for case in CASES
    for site in _value_sites(_config_of(case))
]


@pytest.mark.parametrize("case", CASES)
def test_untampered_proof_verifies(case):
    _verify(_fresh_copy(case))


def test_fresh_pow_all_config_grinds_at_every_pow_site():
    derived = _config_of("fresh-pow-all").to_derived_dict()
    sites = {
        "starting_folding_pow_bits": derived["starting_folding_pow_bits"],
        "final_pow_bits": derived["final_pow_bits"],
        "final_folding_pow_bits": derived["final_folding_pow_bits"],
    }
    for i, r in enumerate(derived["rounds"]):
        sites[f"rounds[{i}].pow_bits"] = r["pow_bits"]
        sites[f"rounds[{i}].folding_pow_bits"] = r["folding_pow_bits"]
    assert derived["n_rounds"] >= 1 and derived["final_sumcheck_rounds"] >= 1
    assert all(bits > 0 for bits in sites.values()), sites
    proof = _proof_file("fresh-pow-all").proof  # and the proof carries a witness for every sumcheck round
    assert len(proof.initial_sumcheck.pow_witnesses) == proof.initial_sumcheck.num_rounds > 0
    assert all(len(r.sumcheck.pow_witnesses) == r.sumcheck.num_rounds > 0 for r in proof.rounds)
    assert len(proof.final_sumcheck.pow_witnesses) == proof.final_sumcheck.num_rounds > 0


@pytest.mark.parametrize("case, site", VALUE_CASES)
def test_changed_field_element_is_rejected(case, site):
    config = _config_of(case)
    pf = _fresh_copy(case)
    before = copy.deepcopy(pf)
    word = _get(pf, site)
    start, events = (None, None) if site.direct else _event(config, site.key)
    expected = {site.direct} if site.direct else _expected_failures(config, site.key)
    if events and events[start].kind == "pow" and events[start].bits > 0 and case in FRESH:
        canonical = int(F.from_monty(np.uint32(word)))
        if canonical > 0:
            # whirgpu grinds the smallest canonical witness, so its predecessor certainly fails the check
            _set(pf, site, int(F.to_monty(np.uint64(canonical - 1))))
            expected = {(events[start].round, "pow")}
        else:
            _set(pf, site, int(F.to_monty(np.uint64(1))))
    else:
        _set(pf, site, (word + 1) % P)  # another valid field element
    assert not _same_proof_file(before, pf), "the mutation changed nothing"
    assert expected, f"the model predicts no outcome for {site.key}"
    try:
        _verify(pf)
    except VerificationError as err:
        assert err.check and err.round, f"VerificationError without check/round: {err}"
        assert (err.round, err.check) in expected, f"{err.round}/{err.check} ({err}) not in {sorted(expected)}"
    else:
        assert ACCEPTED in expected, f"the changed proof was accepted; expected one of {sorted(expected)}"


# ---- structural mutations ---------------------------------------------------------------------------------------

def _ef_rows(values: np.ndarray) -> np.ndarray:
    return F.ef_from_base(np.asarray(values, np.uint32))


def _mutations(config: WhirConfig) -> dict:
    """name -> (mutate(pf) in place, accepted error types, expected (round, check) pairs or None for any)."""
    m: dict = {}
    format_only = ((ProofFormatError,), None)
    either = ((ProofFormatError, VerificationError), None)

    def query_list(pf, where):
        return pf.proof.final_queries if where == "final" else pf.proof.rounds[int(where)].queries

    targets = [(str(i), f"round {i}") for i in range(config.n_rounds)] + [("final", "final round")]
    for where, round_name in targets:
        label = "final" if where == "final" else f"round{where}"
        count = ((VerificationError,), {(round_name, "query-count")})
        m[f"{label}-drop-first-query"] = (lambda pf, w=where: query_list(pf, w).pop(0), *count)
        m[f"{label}-duplicate-query"] = (
            lambda pf, w=where: query_list(pf, w).append(copy.deepcopy(query_list(pf, w)[-1])), *count)
        m[f"{label}-no-queries"] = (lambda pf, w=where: query_list(pf, w).clear(), *count)
        m[f"{label}-swap-first-two-queries"] = (
            lambda pf, w=where: query_list(pf, w).__setitem__(slice(0, 2), query_list(pf, w)[1::-1]),
            (VerificationError,), {(round_name, "merkle")})

        def wrong_kind(pf, w=where):
            q = query_list(pf, w)[0]
            if q.kind == "base":
                query_list(pf, w)[0] = QueryOpening("extension", _ef_rows(q.values), q.siblings)
            else:
                query_list(pf, w)[0] = QueryOpening("base", q.values[:, 0].copy(), q.siblings)

        m[f"{label}-query-of-wrong-kind"] = (wrong_kind, *format_only)

        def wrong_kind_label(pf, w=where):
            q = query_list(pf, w)[0]
            query_list(pf, w)[0] = QueryOpening("extension" if q.kind == "base" else "base", q.values, q.siblings)

        m[f"{label}-query-kind-label-flipped"] = (wrong_kind_label, *format_only)
        m[f"{label}-query-short-merkle-path"] = (
            lambda pf, w=where: setattr(query_list(pf, w)[0], "siblings", query_list(pf, w)[0].siblings[:-1]),
            *format_only)
        m[f"{label}-query-long-row"] = (
            lambda pf, w=where: setattr(query_list(pf, w)[0], "values",
                                        np.concatenate([query_list(pf, w)[0].values] * 2)), *format_only)
        m[f"{label}-query-value-not-a-field-element"] = (
            lambda pf, w=where: _set_first(query_list(pf, w)[0], "values", P), *format_only)
        m[f"{label}-queries-not-a-list"] = (
            lambda pf, w=where: setattr(pf.proof, "final_queries", tuple(pf.proof.final_queries)) if w == "final"
            else setattr(pf.proof.rounds[int(w)], "queries", tuple(pf.proof.rounds[int(w)].queries)), *format_only)

    m["swap-initial-and-round0-commitments"] = (
        lambda pf: _swap_attr(pf.proof, "initial_commitment", pf.proof.rounds[0], "commitment"),
        (VerificationError,), _expected_failures(config, "initial_commitment"))
    m["swap-round0-and-final-queries"] = (
        lambda pf: _swap_attr(pf.proof.rounds[0], "queries", pf.proof, "final_queries"), *either)
    if config.n_rounds >= 2:
        m["swap-rounds-0-and-1"] = (lambda pf: pf.proof.rounds.reverse(), *either)
        m["swap-round-0-and-1-commitments"] = (
            lambda pf: _swap_attr(pf.proof.rounds[0], "commitment", pf.proof.rounds[1], "commitment"),
            (VerificationError,), _expected_failures(config, "rounds[0].commitment"))
        m["swap-round-0-and-1-sumchecks"] = (
            lambda pf: _swap_attr(pf.proof.rounds[0], "sumcheck", pf.proof.rounds[1], "sumcheck"), *either)
    m["drop-last-round"] = (lambda pf: pf.proof.rounds.pop(), *format_only)
    m["repeat-last-round"] = (lambda pf: pf.proof.rounds.append(copy.deepcopy(pf.proof.rounds[-1])), *format_only)
    m["rounds-not-a-list"] = (lambda pf: setattr(pf.proof, "rounds", tuple(pf.proof.rounds)), *format_only)
    m["round-is-none"] = (lambda pf: pf.proof.rounds.__setitem__(0, None), *format_only)
    m["final-poly-missing"] = (lambda pf: setattr(pf.proof, "final_poly", None), *format_only)
    m["final-poly-short"] = (lambda pf: setattr(pf.proof, "final_poly", pf.proof.final_poly[:-1]), *format_only)
    m["final-poly-long"] = (
        lambda pf: setattr(pf.proof, "final_poly", np.concatenate([pf.proof.final_poly] * 2)), *format_only)
    m["final-poly-float"] = (
        lambda pf: setattr(pf.proof, "final_poly", pf.proof.final_poly.astype(np.float64)), *format_only)
    if config.final_sumcheck_rounds:
        m["final-sumcheck-missing"] = (lambda pf: setattr(pf.proof, "final_sumcheck", None), *format_only)
    m["initial-sumcheck-extra-round"] = (
        lambda pf: _append_row(pf.proof.initial_sumcheck, "evaluations"), *format_only)
    m["initial-sumcheck-missing-round"] = (
        lambda pf: setattr(pf.proof.initial_sumcheck, "evaluations", pf.proof.initial_sumcheck.evaluations[:-1]),
        *format_only)
    m["initial-sumcheck-extra-witness"] = (
        lambda pf: _append_row(pf.proof.initial_sumcheck, "pow_witnesses"), *format_only)
    m["initial-sumcheck-not-sumcheck-data"] = (lambda pf: setattr(pf.proof, "initial_sumcheck", None), *format_only)
    m["round0-sumcheck-extra-witness"] = (
        lambda pf: _append_row(pf.proof.rounds[0].sumcheck, "pow_witnesses"), *format_only)
    if config.starting_folding_pow_bits:
        m["initial-sumcheck-missing-witness"] = (
            lambda pf: setattr(pf.proof.initial_sumcheck, "pow_witnesses",
                               pf.proof.initial_sumcheck.pow_witnesses[:-1]), *format_only)
    m["initial-ood-extra-answer"] = (
        lambda pf: setattr(pf.proof, "initial_ood_answers", np.concatenate(
            [pf.proof.initial_ood_answers, np.zeros((1, 4), np.uint32)])), *format_only)
    m["round0-ood-extra-answer"] = (
        lambda pf: setattr(pf.proof.rounds[0], "ood_answers", np.concatenate(
            [pf.proof.rounds[0].ood_answers, np.zeros((1, 4), np.uint32)])), *format_only)
    m["initial-commitment-short"] = (
        lambda pf: setattr(pf.proof, "initial_commitment", pf.proof.initial_commitment[:7]), *format_only)
    m["round0-pow-witness-not-a-field-element"] = (
        lambda pf: setattr(pf.proof.rounds[0], "pow_witness", np.uint32(P)), *format_only)
    m["final-pow-witness-negative"] = (lambda pf: setattr(pf.proof, "final_pow_witness", -1), *format_only)
    claim = ((VerificationError,), {("final", "sumcheck-claim")})
    m["statement-drop-claim"] = (lambda pf: _set_statement(pf, pf.statement.points[:0], pf.statement.values[:0]),
                                 *claim)
    m["statement-repeat-claim"] = (
        lambda pf: _set_statement(pf, np.concatenate([pf.statement.points] * 2),
                                  np.concatenate([pf.statement.values] * 2)), *claim)
    m["statement-claimed-value-zero"] = (
        lambda pf: _set_statement(pf, pf.statement.points, np.zeros_like(pf.statement.values)), *claim)
    m["statement-values-missing-one"] = (
        lambda pf: _set_statement(pf, pf.statement.points, pf.statement.values[:0]), *format_only)
    m["statement-point-wrong-arity"] = (
        lambda pf: _set_statement(pf, pf.statement.points[:, :-1], pf.statement.values), *format_only)
    m["statement-point-not-a-field-element"] = (
        lambda pf: _set_first(pf.statement, "points", P), *format_only)
    m["statement-points-scalar"] = (lambda pf: _set_statement(pf, np.uint32(1), pf.statement.values), *format_only)
    return m


def _set_first(obj, attr: str, value: int) -> None:
    array = np.array(getattr(obj, attr), dtype=np.int64, copy=True)
    array.reshape(-1)[0] = value
    setattr(obj, attr, array)


def _swap_attr(a, name_a: str, b, name_b: str) -> None:
    va, vb = getattr(a, name_a), getattr(b, name_b)
    setattr(a, name_a, vb)
    setattr(b, name_b, va)


def _append_row(sumcheck, attr: str) -> None:
    array = getattr(sumcheck, attr)
    setattr(sumcheck, attr, np.concatenate([array, np.ones((1,) + array.shape[1:], np.uint32)]))


def _set_statement(pf: ProofFile, points, values) -> None:
    pf.statement.points = points
    pf.statement.values = values


STRUCTURAL_CASES = [
    pytest.param(case, name, id=f"{case.removesuffix('.json')}-{name}")
    for case in CASES
    for name in _mutations(_config_of(case))
]


@pytest.mark.parametrize("case, name", STRUCTURAL_CASES)
def test_structural_change_is_rejected(case, name):
    config = _config_of(case)
    mutate, error_types, expected = _mutations(config)[name]
    pf = _fresh_copy(case)
    mutate(pf)
    with pytest.raises((ProofFormatError, VerificationError)) as info:
        _verify(pf)
    err = info.value
    assert isinstance(err, error_types), f"{type(err).__name__}: {err}"
    assert str(err), "an error without a message"
    if isinstance(err, VerificationError):
        assert err.check and err.round, f"VerificationError without check/round: {err}"
        if expected is not None:
            assert (err.round, err.check) in expected, f"{err.round}/{err.check} ({err}) not in {sorted(expected)}"
