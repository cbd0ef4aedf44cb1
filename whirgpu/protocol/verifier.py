"""The WHIR verifier: replays the transcript and checks a proof, using only ``whirgpu.ref`` and ints.

``verify`` returns normally on acceptance and raises ``VerificationError`` (with ``round`` and ``check`` set)
on rejection, or ``ProofFormatError`` when the proof is not even of the right form for the configuration.
It never raises anything else on hostile input. It is at least as strict as the reference verifier: it also
rejects a query count other than the number of distinct sampled indices and non-zero unused PoW witnesses,
neither of which an honest prover (ours or the reference's) produces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ProofFormatError, VerificationError
from ..field import P, TWO_ADIC_GENERATORS
from ..ref import field_np as F
from ..ref import merkle, poseidon2
from ..ref.multilinear import eq_at, evaluate, expand_from_univariate, select_at
from ..ref.sumcheck import evaluate_round_polynomial
from .params import WhirConfig
from .proof import DIGEST_ELEMS, QueryOpening, RoundProof, Statement, SumcheckData, WhirProof
from .prover import new_challenger
from .query_indices import sample_query_indices


@dataclass
class _Constraint:
    """Σ_j eq_coefficients[j] eq(eq_points[j], .) + Σ_m select_coefficients[m] select(select_vars[m], .)
    over the last ``num_variables`` challenges."""

    num_variables: int
    eq_points: np.ndarray
    eq_coefficients: np.ndarray
    select_vars: np.ndarray
    select_coefficients: np.ndarray


def _reject(round_name: str, check: str, message: str) -> VerificationError:
    return VerificationError(f"{round_name}: {message}", round=round_name, check=check)


def _check_array(value, shape: tuple[int, ...], what: str) -> np.ndarray:
    """A uint32 array of exactly ``shape`` holding field elements, or ProofFormatError."""
    try:
        array = np.asarray(value)
    except Exception as exc:  # noqa: BLE001 - any non-array input is a format error
        raise ProofFormatError(f"{what}: not an array ({exc})") from None
    if array.shape != shape:
        raise ProofFormatError(f"{what}: expected shape {shape}, got {array.shape}")
    if array.size and (array.dtype.kind not in "ui" or np.any(array < 0) or np.any(array >= P)):
        raise ProofFormatError(f"{what}: values must be field elements in [0, p)")
    return array.astype(np.uint32)


class WhirVerifier:
    """Checks proofs made under one ``WhirConfig``."""

    def __init__(self, config: WhirConfig):
        self.config = config

    def verify(self, proof: WhirProof, statement: Statement) -> None:
        config = self.config
        n = config.num_variables
        if not isinstance(proof, WhirProof):
            raise ProofFormatError(f"expected a WhirProof, got {type(proof).__name__}")
        if not isinstance(statement, Statement):
            raise ProofFormatError(f"expected a Statement, got {type(statement).__name__}")
        try:
            m = len(statement.points)
        except TypeError:
            raise ProofFormatError(f"statement points: expected an (m, {n}, 4) array, "
                                   f"got {type(statement.points).__name__}") from None
        points = _check_array(statement.points, (m, n, 4), "statement points")
        values = _check_array(statement.values, (points.shape[0], 4), "statement values")

        challenger = new_challenger(config)
        constraints: list[_Constraint] = []
        challenges: list[np.ndarray] = []

        # -- commitment and its OOD answers
        root = _check_array(proof.initial_commitment, (DIGEST_ELEMS,), "initial commitment")
        challenger.observe_many(root)
        ood = _check_array(proof.initial_ood_answers, (config.commitment_ood_samples, 4), "initial OOD answers")
        ood_points = []
        for answer in ood:
            ood_points.append(expand_from_univariate(challenger.sample_ef(), n))
            challenger.observe_ef(answer)
        all_points = np.concatenate([points, np.asarray(ood_points, np.uint32).reshape(-1, n, 4)])
        all_values = np.concatenate([values, ood])
        alpha = challenger.sample_ef()
        coefficients = F.ef_powers(alpha, len(all_points))
        claimed_sum = F.ef_sum(F.ef_mul(coefficients, all_values)) if len(all_points) else np.zeros(4, np.uint32)
        constraints.append(_Constraint(n, all_points, coefficients, np.zeros(0, np.uint32), np.zeros((0, 4), np.uint32)))

        claimed_sum, folding = self._sumcheck(
            "initial sumcheck", proof.initial_sumcheck, challenger, config.fold(0),
            config.starting_folding_pow_bits, claimed_sum,
        )
        challenges.extend(folding)

        if not isinstance(proof.rounds, list) or len(proof.rounds) != config.n_rounds:
            got = len(proof.rounds) if isinstance(proof.rounds, list) else type(proof.rounds).__name__
            raise ProofFormatError(f"expected a list of {config.n_rounds} rounds, got {got}")

        previous_root = root
        for i, round_proof in enumerate(proof.rounds):
            name = f"round {i}"
            if not isinstance(round_proof, RoundProof):
                raise ProofFormatError(f"{name}: expected a RoundProof, got {type(round_proof).__name__}")
            rc = config.rounds[i]
            nv = rc.num_variables
            round_root = _check_array(round_proof.commitment, (DIGEST_ELEMS,), f"{name} commitment")
            challenger.observe_many(round_root)
            answers = _check_array(round_proof.ood_answers, (rc.ood_samples, 4), f"{name} OOD answers")
            ood_points = []
            for answer in answers:
                ood_points.append(expand_from_univariate(challenger.sample_ef(), nv))
                challenger.observe_ef(answer)
            self._check_pow(name, challenger, rc.pow_bits, round_proof.pow_witness)
            challenger.sample()  # checkpoint
            indices = sample_query_indices(challenger, rc.domain_size, rc.folding_factor, rc.num_queries)
            kind = "base" if i == 0 else "extension"
            folded = self._check_queries(
                name, round_proof.queries, indices, previous_root, kind, rc.domain_size, rc.folding_factor, folding
            )
            log_folded = rc.domain_size.bit_length() - 1 - rc.folding_factor
            generator = F.constant(TWO_ADIC_GENERATORS[log_folded])
            select_vars = np.array([F.power(generator, a) for a in indices], np.uint32).reshape(-1)
            gamma = challenger.sample_ef()
            coefficients = F.ef_powers(gamma, len(ood_points) + len(indices))
            all_values = np.concatenate([answers, folded.reshape(-1, 4)])
            if len(coefficients):
                claimed_sum = F.ef_add(claimed_sum, F.ef_sum(F.ef_mul(coefficients, all_values)))
            constraints.append(_Constraint(
                nv, np.asarray(ood_points, np.uint32).reshape(-1, nv, 4), coefficients[: len(ood_points)],
                select_vars, coefficients[len(ood_points):],
            ))
            claimed_sum, folding = self._sumcheck(
                f"{name} sumcheck", round_proof.sumcheck, challenger, config.fold(i + 1), rc.folding_pow_bits,
                claimed_sum,
            )
            challenges.extend(folding)
            previous_root = round_root

        # -- final round
        name = "final round"
        fsr = config.final_sumcheck_rounds
        if proof.final_poly is None:
            raise ProofFormatError("final polynomial missing")
        final_poly = _check_array(proof.final_poly, (1 << fsr, 4), "final polynomial")
        challenger.observe_many(final_poly.reshape(-1))
        self._check_pow(name, challenger, config.final_pow_bits, proof.final_pow_witness)
        k_final = config.fold(config.n_rounds)
        indices = sample_query_indices(challenger, config.final_domain_size, k_final, config.final_queries)
        kind = "base" if config.n_rounds == 0 else "extension"
        folded = self._check_queries(
            name, proof.final_queries, indices, previous_root, kind, config.final_domain_size, k_final, folding
        )
        log_folded = config.final_domain_size.bit_length() - 1 - k_final
        generator = F.constant(TWO_ADIC_GENERATORS[log_folded])
        for j, a in enumerate(indices):
            expected = _univariate(final_poly, F.power(generator, a))
            if not np.array_equal(folded[j], expected):
                raise _reject(name, "final-query", f"query at index {a} does not match the final polynomial")

        final_challenges: list[np.ndarray] = []
        if fsr > 0:
            if proof.final_sumcheck is None:
                raise ProofFormatError(f"final sumcheck missing ({fsr} rounds expected)")
            claimed_sum, final_challenges = self._sumcheck(
                "final sumcheck", proof.final_sumcheck, challenger, fsr, config.final_folding_pow_bits, claimed_sum
            )
            challenges.extend(final_challenges)
        elif proof.final_sumcheck is not None:  # tolerated only if empty: the configuration has no final rounds
            self._sumcheck("final sumcheck", proof.final_sumcheck, challenger, 0, config.final_folding_pow_bits,
                           claimed_sum)

        # -- the closing equation: S == W(r*) * f_final(r_final)
        r_star = np.asarray(challenges, np.uint32).reshape(-1, 4)
        weight = np.zeros(4, np.uint32)
        for c in constraints:
            p = r_star[len(r_star) - c.num_variables:]
            for z, coefficient in zip(c.eq_points, c.eq_coefficients):
                weight = F.ef_add(weight, F.ef_mul(coefficient, eq_at(z, p)))
            for var, coefficient in zip(c.select_vars, c.select_coefficients):
                weight = F.ef_add(weight, F.ef_mul(coefficient, select_at(var, p)))
        final_value = evaluate(final_poly, np.asarray(final_challenges, np.uint32).reshape(-1, 4))
        if not np.array_equal(claimed_sum, F.ef_mul(weight, final_value)):
            raise _reject("final", "sumcheck-claim", "the sumcheck claim does not match the constraint weights "
                                                     "at the folding point times the final polynomial")

    # -- pieces ----------------------------------------------------------------------------------------------
    def _check_pow(self, name: str, challenger, bits: int, witness) -> None:
        witness = _check_array(witness, (), f"{name} PoW witness")
        if bits > 0:
            if not challenger.check_witness(bits, witness):
                raise _reject(name, "pow", f"proof-of-work witness fails the {bits}-bit check")
        elif witness != 0:
            raise _reject(name, "pow", "PoW witness present where the configuration asks for none")

    def _sumcheck(self, name, data, challenger, n_rounds: int, pow_bits: int, claimed_sum):
        if not isinstance(data, SumcheckData):
            raise ProofFormatError(f"{name}: missing sumcheck data")
        evaluations = _check_array(data.evaluations, (n_rounds, 2, 4), f"{name} evaluations")
        n_witnesses = n_rounds if pow_bits > 0 else 0
        witnesses = _check_array(data.pow_witnesses, (n_witnesses,), f"{name} PoW witnesses")
        challenges = []
        for j in range(n_rounds):
            h0, h2 = evaluations[j]
            challenger.observe_ef(h0)
            challenger.observe_ef(h2)
            if pow_bits > 0 and not challenger.check_witness(pow_bits, witnesses[j]):
                raise _reject(name, "pow", f"round {j}: proof-of-work witness fails the {pow_bits}-bit check")
            r = challenger.sample_ef()
            claimed_sum = evaluate_round_polynomial(claimed_sum, h0, h2, r)
            challenges.append(r)
        return claimed_sum, challenges

    def _check_queries(self, name, queries, indices, root, kind, domain_size, folding_factor, folding):
        """Check openings of ``indices`` against ``root``; return each row folded at the last challenges."""
        if not isinstance(queries, list):
            raise ProofFormatError(f"{name}: queries must be a list")
        if len(queries) != len(indices):
            raise _reject(name, "query-count", f"expected {len(indices)} distinct query openings, got {len(queries)}")
        width = 1 << folding_factor
        depth = (domain_size >> folding_factor).bit_length() - 1
        value_shape = (width,) if kind == "base" else (width, 4)
        leaves, siblings = [], []
        for j, query in enumerate(queries):
            if not isinstance(query, QueryOpening) or not isinstance(query.kind, str) or query.kind != kind:
                raise ProofFormatError(f"{name}: query {j} must be a {kind} opening")
            leaves.append(_check_array(query.values, value_shape, f"{name} query {j} values"))
            siblings.append(_check_array(query.siblings, (depth, DIGEST_ELEMS), f"{name} query {j} Merkle path"))
        if not indices:
            return np.zeros((0, 4), np.uint32)
        rows = np.asarray(leaves, np.uint32)
        digests = poseidon2.hash_rows(rows.reshape(len(indices), -1))
        computed = merkle.compute_root(np.asarray(indices, np.int64), digests, np.asarray(siblings, np.uint32))
        bad = np.nonzero(np.any(computed != root[None, :], axis=1))[0]
        if bad.size:
            raise _reject(name, "merkle", f"Merkle path of the opening at index {indices[bad[0]]} does not reach the root")
        last = np.asarray(folding[len(folding) - folding_factor:], np.uint32).reshape(-1, 4)
        return np.asarray([evaluate(row, last) for row in rows], np.uint32).reshape(-1, 4)


def _univariate(coefficients: np.ndarray, x) -> np.ndarray:
    """Σ_b coefficients[b] x^b (EF coefficients, base x)."""
    powers = F.powers(np.uint32(x), coefficients.shape[0])
    return F.ef_sum(F.ef_mul_base(coefficients, powers))


def verify(config: WhirConfig, proof: WhirProof, statement: Statement) -> None:
    """Convenience wrapper: raise unless ``proof`` proves ``statement`` under ``config``."""
    WhirVerifier(config).verify(proof, statement)
