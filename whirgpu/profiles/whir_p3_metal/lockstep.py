"""K whir-p3-metal proofs of one configuration and one claim count walked in lockstep: every step of
``WhirVerifier.walk`` taken once for all of them, each proof with its own transcript (``BatchChallenger``), its
own values and its own (ragged) query set.

Contract: ``read_parts(config, proof, statement)`` -> ``ProofParts``: the proof's parts as arrays of the shapes the
one-proof walk checks, or the ``ProofFormatError`` it raises for a malformed part (a proof that raises here is
left to the one-proof verifier). ``walk_lockstep(config, parts)`` -> (passed, openings): ``passed`` (K,) bool,
True only where the one-proof walk of that proof finds no failure other than its Merkle openings' (every
transcript check, query count, final query and the closing equation, as ``MetalWhirVerifier.walk`` makes them);
``openings[k]`` proof k's openings in ``Openings.pending``'s form, round order, for the caller to hash (a proof
accepts exactly when it passed and its openings reach their roots). A proof that did not pass has no exact
verdict here: the caller verifies it alone, which names its first failure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ProofFormatError
from ...field import TWO_ADIC_GENERATORS
from ...protocol.batch_transcript import BatchChallenger
from ...protocol.proof import DIGEST_ELEMS, RoundProof, Statement, SumcheckData, WhirProof
from ...protocol.query_indices import MAX_BITS_PER_CALL, folded_domain_size
from ...protocol.verifier import field_array
from ...ref import field_np as F
from ...ref.multilinear import eq_at, select_at
from ...ref.rows import (ef_powers_rows, evaluate_each, expand_rows, horner_each, round_value_rows, segment_sums)
from .config import WhirConfig
from .verifier import opened_rows, new_challenger


@dataclass
class RoundParts:
    root: np.ndarray          # (8,)
    ood: np.ndarray           # (t, 4)
    pow_witness: np.ndarray   # ()
    rows: np.ndarray          # (q, 2^k) base or (q, 2^k, 4) EF: the openings' rows
    siblings: np.ndarray      # (q, depth, 8)
    evaluations: np.ndarray   # (k', 2, 4): the sumcheck that follows
    witnesses: np.ndarray     # (k',) or (0,)


@dataclass
class ProofParts:
    points: np.ndarray        # (m, n, 4)
    values: np.ndarray        # (m, 4)
    root: np.ndarray          # (8,)
    ood: np.ndarray           # (t0, 4)
    evaluations: np.ndarray   # initial sumcheck (k0, 2, 4)
    witnesses: np.ndarray
    rounds: list[RoundParts]
    final_poly: np.ndarray    # (2^fsr, 4)
    final: RoundParts         # the final round: no root or OOD answers ((0,) and (0, 4)); its sumcheck's
                              # evaluations (fsr, 2, 4), (0, 2, 4) where there are no final rounds


def _sumcheck_parts(name: str, data, n_rounds: int, pow_bits: int) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(data, SumcheckData):
        raise ProofFormatError(f"{name}: missing sumcheck data")
    return (field_array(data.evaluations, (n_rounds, 2, 4), f"{name} evaluations"),
            field_array(data.pow_witnesses, (n_rounds if pow_bits > 0 else 0,), f"{name} PoW witnesses"))


def _openings(name: str, queries, kind: str, domain_size: int, folding_factor: int):
    if not isinstance(queries, list):
        raise ProofFormatError(f"{name}: queries must be a list")
    depth = (domain_size >> folding_factor).bit_length() - 1
    return opened_rows(name, queries, kind, 1 << folding_factor, depth)


def read_parts(config: WhirConfig, proof, statement) -> ProofParts:
    """The parts of ``proof`` and ``statement`` in the shapes the one-proof walk reads (module contract)."""
    n = config.num_variables
    if not isinstance(proof, WhirProof) or not isinstance(statement, Statement):
        raise ProofFormatError("expected a WhirProof and a Statement")
    try:
        m = len(statement.points)
    except TypeError:
        raise ProofFormatError("statement points: not an array") from None
    points = field_array(statement.points, (m, n, 4), "statement points")
    values = field_array(statement.values, (m, 4), "statement values")
    root = field_array(proof.initial_commitment, (DIGEST_ELEMS,), "initial commitment")
    ood = field_array(proof.initial_ood_answers, (config.commitment_ood_samples, 4), "initial OOD answers")
    evaluations, witnesses = _sumcheck_parts("initial sumcheck", proof.initial_sumcheck, config.fold(0),
                                             config.starting_folding_pow_bits)
    if not isinstance(proof.rounds, list) or len(proof.rounds) != config.n_rounds:
        raise ProofFormatError(f"expected a list of {config.n_rounds} rounds")
    rounds = []
    for i, (rp, rc) in enumerate(zip(proof.rounds, config.rounds)):
        name = f"round {i}"
        if not isinstance(rp, RoundProof):
            raise ProofFormatError(f"{name}: expected a RoundProof")
        rows, siblings = _openings(name, rp.queries, "base" if i == 0 else "extension", rc.domain_size,
                                   rc.folding_factor)
        rounds.append(RoundParts(
            field_array(rp.commitment, (DIGEST_ELEMS,), f"{name} commitment"),
            field_array(rp.ood_answers, (rc.ood_samples, 4), f"{name} OOD answers"),
            field_array(rp.pow_witness, (), f"{name} PoW witness"), rows, siblings,
            *_sumcheck_parts(f"{name} sumcheck", rp.sumcheck, config.fold(i + 1), rc.folding_pow_bits)))
    fsr = config.final_sumcheck_rounds
    if proof.final_poly is None:
        raise ProofFormatError("final polynomial missing")
    final_poly = field_array(proof.final_poly, (1 << fsr, 4), "final polynomial")
    k_final = config.fold(config.n_rounds)
    rows, siblings = _openings("final round", proof.final_queries, "base" if config.n_rounds == 0 else "extension",
                               config.final_domain_size, k_final)
    if fsr > 0 or proof.final_sumcheck is not None:  # an empty one is tolerated where there are no final rounds
        final_evaluations, final_witnesses = _sumcheck_parts("final sumcheck", proof.final_sumcheck, fsr,
                                                             config.final_folding_pow_bits)
    else:
        final_evaluations, final_witnesses = np.zeros((0, 2, 4), np.uint32), np.zeros(0, np.uint32)
    final = RoundParts(np.zeros(0, np.uint32), np.zeros((0, 4), np.uint32),
                       field_array(proof.final_pow_witness, (), "final PoW witness"), rows, siblings,
                       final_evaluations, final_witnesses)
    return ProofParts(points, values, root, ood, evaluations, witnesses, rounds, final_poly, final)


@dataclass
class _Queries:
    """One step's query sets, concatenated: ``indices`` (Q,) ascending within each proof, ``owner`` (Q,) the
    proof of each, ``counts`` (K,), ``rank`` (Q,) each index's position within its proof's set."""

    indices: np.ndarray
    owner: np.ndarray
    counts: np.ndarray
    rank: np.ndarray


class _Walk:
    """One lockstep walk (``walk_lockstep``): the shared challengers, who has failed, the openings met."""

    def __init__(self, config: WhirConfig, parts: list[ProofParts]):
        self.config = config
        self.parts = parts
        self.k = len(parts)
        self.ch = BatchChallenger.of(new_challenger(config), self.k)
        self.passed = np.ones(self.k, bool)
        self.openings: list[list[tuple]] = [[] for _ in parts]

    def stack(self, get) -> np.ndarray:
        return np.stack([get(p) for p in self.parts])

    def ood_points(self, answers: np.ndarray, num_variables: int) -> np.ndarray:
        points = np.zeros((self.k, answers.shape[1], num_variables, 4), np.uint32)
        for j in range(answers.shape[1]):
            points[:, j] = expand_rows(self.ch.sample_ef(), num_variables)
            self.ch.observe(answers[:, j])
        return points

    def pow(self, bits: int, witnesses: np.ndarray) -> None:
        if bits > 0:
            self.passed &= self.ch.check_witness(bits, witnesses)
        else:
            self.passed &= witnesses == 0

    def sumcheck(self, evaluations: np.ndarray, witnesses: np.ndarray, pow_bits: int, claimed: np.ndarray):
        challenges = []
        for j in range(evaluations.shape[1]):
            self.ch.observe(evaluations[:, j].reshape(self.k, 8))
            if pow_bits > 0:
                self.passed &= self.ch.check_witness(pow_bits, witnesses[:, j])
            r = self.ch.sample_ef()
            claimed = round_value_rows(claimed, evaluations[:, j, 0], evaluations[:, j, 1], r)
            challenges.append(r)
        return claimed, challenges

    def query_indices(self, domain_size: int, folding_factor: int, num_queries: int) -> _Queries:
        """``sample_query_indices`` for every proof (its three cases), sorted and de-duplicated per proof."""
        log_size = folded_domain_size(domain_size, folding_factor, num_queries).bit_length() - 1
        mask = (1 << log_size) - 1
        draws = []
        if num_queries * log_size <= MAX_BITS_PER_CALL:
            calls = [num_queries]
        elif MAX_BITS_PER_CALL // log_size >= 2:
            per = MAX_BITS_PER_CALL // log_size
            calls = [min(per, num_queries - at) for at in range(0, num_queries, per)]
        else:
            calls = [1] * num_queries
        for count in calls:
            value = self.ch.sample_bits(count * log_size)
            draws.extend((value >> (c * log_size)) & mask for c in range(count))
        raw = np.sort(np.stack(draws, axis=1) if draws else np.zeros((self.k, 0), np.int64), axis=1)
        keep = np.ones(raw.shape, bool)
        keep[:, 1:] = raw[:, 1:] != raw[:, :-1]
        counts = keep.sum(axis=1)
        owner = np.repeat(np.arange(self.k), counts)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        return _Queries(raw[keep], owner, counts, np.arange(len(owner)) - starts[owner])

    def domain_points(self, domain_size: int, folding_factor: int, indices: np.ndarray) -> np.ndarray:
        generator = F.constant(TWO_ADIC_GENERATORS[domain_size.bit_length() - 1 - folding_factor])
        return F.power_each(generator, indices)

    def queries(self, name: str, step: list[RoundParts], queries: _Queries, roots: np.ndarray,
                last: np.ndarray) -> np.ndarray:
        """Check each proof's opening count, keep its openings for the caller, and fold the rows at the proof's
        last challenges ``last`` (K, k, 4): (Q, 4), in ``queries``' order."""
        rows, starts = [], np.concatenate([[0], np.cumsum(queries.counts)])
        for k, (got, want) in enumerate(zip(step, queries.counts)):
            if len(got.rows) != want:
                self.passed[k] = False
                rows.append(np.zeros((want,) + got.rows.shape[1:], np.uint32))
                continue
            rows.append(got.rows)
            if want:
                self.openings[k].append((name, got.rows.reshape(want, -1), queries.indices[starts[k]:starts[k + 1]],
                                         got.siblings, roots[k]))
        if not len(queries.owner):
            return np.zeros((0, 4), np.uint32)
        return evaluate_each(np.concatenate(rows), last[queries.owner])


def walk_lockstep(config: WhirConfig, parts: list[ProofParts]) -> tuple[np.ndarray, list[list[tuple]]]:
    """Walk every proof of ``parts`` (one configuration, one claim count) at once (module contract)."""
    w = _Walk(config, parts)
    ch, k = w.ch, w.k
    n = config.num_variables
    roots = w.stack(lambda p: p.root)
    ch.observe(roots)
    ood = w.stack(lambda p: p.ood)
    all_points = np.concatenate([w.stack(lambda p: p.points), w.ood_points(ood, n)], axis=1)
    all_values = np.concatenate([w.stack(lambda p: p.values), ood], axis=1)
    coefficients = ef_powers_rows(ch.sample_ef(), all_points.shape[1])
    claimed = F.ef_sum(F.ef_mul(coefficients, all_values), axis=1) if all_points.shape[1] \
        else np.zeros((k, 4), np.uint32)
    eq_terms = [(n, all_points, coefficients)]  # (variables, points (K, c, nv, 4), coefficients (K, c, 4))
    select_terms = []  # (variables, domain points (Q,), owner (Q,), coefficients (Q, 4))
    claimed, folding = w.sumcheck(w.stack(lambda p: p.evaluations), w.stack(lambda p: p.witnesses),
                                  config.starting_folding_pow_bits, claimed)
    previous_roots = roots
    for i, rc in enumerate(config.rounds):
        step = [p.rounds[i] for p in parts]
        nv = rc.num_variables
        round_roots = np.stack([s.root for s in step])
        ch.observe(round_roots)
        answers = np.stack([s.ood for s in step])
        ood_points = w.ood_points(answers, nv)
        w.pow(rc.pow_bits, np.stack([s.pow_witness for s in step]))
        ch.sample()  # checkpoint
        queries = w.query_indices(rc.domain_size, rc.folding_factor, rc.num_queries)
        last = np.stack(folding[len(folding) - rc.folding_factor:], axis=1)
        folded = w.queries(f"round {i}", step, queries, previous_roots, last)
        select_vars = w.domain_points(rc.domain_size, rc.folding_factor, queries.indices)
        t = answers.shape[1]
        coefficients = ef_powers_rows(ch.sample_ef(), t + int(queries.counts.max(initial=0)))
        select_coefficients = coefficients[queries.owner, t + queries.rank]
        claimed = F.ef_add(claimed, F.ef_add(F.ef_sum(F.ef_mul(coefficients[:, :t], answers), axis=1),
                                             segment_sums(F.ef_mul(select_coefficients, folded), queries.owner, k)))
        eq_terms.append((nv, ood_points, coefficients[:, :t]))
        select_terms.append((nv, select_vars, queries.owner, select_coefficients))
        claimed, challenges = w.sumcheck(np.stack([s.evaluations for s in step]),
                                         np.stack([s.witnesses for s in step]), rc.folding_pow_bits, claimed)
        folding.extend(challenges)
        previous_roots = round_roots

    final = [p.final for p in parts]
    final_poly = w.stack(lambda p: p.final_poly)
    ch.observe(final_poly.reshape(k, -1))
    w.pow(config.final_pow_bits, np.stack([s.pow_witness for s in final]))
    k_final = config.fold(config.n_rounds)
    queries = w.query_indices(config.final_domain_size, k_final, config.final_queries)
    last = np.stack(folding[len(folding) - k_final:], axis=1) if k_final else np.zeros((k, 0, 4), np.uint32)
    folded = w.queries("final round", final, queries, previous_roots, last)
    expected = horner_each(final_poly[queries.owner],
                           w.domain_points(config.final_domain_size, k_final, queries.indices))
    w.passed[queries.owner[np.any(folded != expected, axis=1)]] = False
    claimed, final_challenges = w.sumcheck(np.stack([s.evaluations for s in final]),
                                           np.stack([s.witnesses for s in final]), config.final_folding_pow_bits,
                                           claimed)
    folding.extend(final_challenges)

    r_star = np.stack(folding, axis=1) if folding else np.zeros((k, 0, 4), np.uint32)
    weight = np.zeros((k, 4), np.uint32)
    for nv, points, coefficients in eq_terms:
        if points.shape[1]:
            local = r_star[:, r_star.shape[1] - nv:]
            weight = F.ef_add(weight, F.ef_sum(F.ef_mul(coefficients, eq_at(points, local[:, None])), axis=1))
    for nv, variables, owner, coefficients in select_terms:
        if len(owner):
            local = r_star[:, r_star.shape[1] - nv:]
            weight = F.ef_add(weight, segment_sums(F.ef_mul(coefficients, select_at(variables, local[owner])),
                                                   owner, k))
    r_final = np.stack(final_challenges, axis=1) if final_challenges else np.zeros((k, 0, 4), np.uint32)
    final_value = evaluate_each(final_poly, r_final)
    w.passed &= np.all(claimed == F.ef_mul(weight, final_value), axis=1)
    return w.passed, w.openings
