"""The WHIR verifier: replays the transcript and checks a proof, using only ``whirgpu.ref`` and ints.

``verify`` returns normally on acceptance and raises ``VerificationError`` (with ``round`` and ``check`` set)
on rejection, or ``ProofFormatError`` when the proof is not even of the right form for the configuration.
It never raises anything else on hostile input. It is at least as strict as the reference verifier: it also
rejects a query count other than the number of distinct sampled indices and non-zero unused PoW witnesses,
neither of which an honest prover (ours or the reference's) produces.

Order of checks: the transcript is replayed step by step (whir-spec §4), and every check happens where the
reference makes it, except that the Merkle openings of all rounds are hashed together, in one batch, when the
final round's openings are known (each round's openings only add hints, which the transcript never absorbs).
The first failure reported is still the first in the step-by-step order: when any other check fails first, the
openings of the rounds before it are checked before that failure is raised.

``WhirVerifier.walk`` is the step order of every protocol profile; what a profile does differently is a hook
method (listed in the class docstring). ``p3_verifier.P3WhirVerifier`` is the p3-whir profile's; it checks each
round's openings where it meets them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from ..errors import ProofFormatError, VerificationError
from ..field import P, TWO_ADIC_GENERATORS
from ..native.permute import fast_permute_lanes
from ..ref import field_np as F
from ..ref import merkle
from ..ref.multilinear import eq_at, evaluate, evaluate_rows, expand_from_univariate, horner, select_at
from ..ref.poseidon2_constants import Poseidon2Constants
from ..ref.shift import lifted_next_at
from ..ref.sumcheck import evaluate_round_polynomial
from .domain_separator import domain_separator
from .config import WhirConfig
from .proof import DIGEST_ELEMS, QueryOpening, RoundProof, Statement, SumcheckData, WhirProof
from .query_indices import sample_query_indices
from .transcript import DuplexChallenger


def _no_next() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.zeros((0, 0, 4), np.uint32), np.zeros((0, 2), np.int64), np.zeros((0, 4), np.uint32)


@dataclass
class Constraint:
    """Σ_j eq_coefficients[j] eq(eq_points[j], .) + Σ_m select_coefficients[m] select(select_vars[m], .)
    over the last ``num_variables`` challenges; ``next``: (points (q, nv, 4), windows (q, 2), coefficients (q, 4))
    of next-row weights (``ref.shift.lifted_next_at``, ``Backend.add_next_weights``), none by default."""

    num_variables: int
    eq_points: np.ndarray
    eq_coefficients: np.ndarray
    select_vars: np.ndarray
    select_coefficients: np.ndarray
    next: tuple[np.ndarray, np.ndarray, np.ndarray] = field(default_factory=_no_next)


def _weight_at(constraints: list[Constraint], r_star: np.ndarray, reverse: bool = False, field=None) -> np.ndarray:
    """Σ over the constraints of their weights at the last ``num_variables`` coordinates of ``r_star`` (M, 4)
    -> EF (4,) (``reverse``: those coordinates in reverse order, the suffix-order profile's local point). Every
    eq term is evaluated in one batch and every select term in another: a constraint over fewer variables has
    its points (and its part of r_star) padded with leading zeros, which multiply by 1. ``field``: None for
    BabyBear (the module-level operations), else a ``whirgpu.field.Field``."""
    ops = F if field is None else F.field_ops(field)
    m = len(r_star)
    eq_points, eq_at_points, eq_coefficients = [], [], []
    select_vars, select_at_points, select_coefficients = [], [], []
    for c in constraints:
        pad = m - c.num_variables
        local = r_star[pad:][::-1] if reverse else r_star[pad:]
        point = np.concatenate([np.zeros((pad, 4), np.uint32), local])
        eq_points.append(np.pad(c.eq_points, ((0, 0), (pad, 0), (0, 0))))
        eq_at_points.append(np.broadcast_to(point, (len(c.eq_points), m, 4)))
        eq_coefficients.append(c.eq_coefficients)
        select_vars.append(c.select_vars)
        select_at_points.append(np.broadcast_to(point, (len(c.select_vars), m, 4)))
        select_coefficients.append(c.select_coefficients)
    next_terms = []
    for c in constraints:
        pad = m - c.num_variables
        local = r_star[pad:][::-1] if reverse else r_star[pad:]
        for point, (start, width), coefficient in zip(*c.next):
            next_terms.append(ops.ef_mul(coefficient, lifted_next_at(point, int(start), int(width), local, field)))
    terms = np.concatenate([
        ops.ef_mul(np.concatenate(eq_coefficients),
                   eq_at(np.concatenate(eq_points), np.concatenate(eq_at_points), field)),
        ops.ef_mul(np.concatenate(select_coefficients),
                   select_at(np.concatenate(select_vars), np.concatenate(select_at_points), field)),
        np.asarray(next_terms, np.uint32).reshape(-1, 4),
    ])
    return ops.ef_sum(terms) if len(terms) else np.zeros(4, np.uint32)


@dataclass
class Openings:
    """Merkle openings waiting for their check: (round name, rows (q, words), indices, siblings, root) each.
    ``walk`` adds each round's and calls ``check`` once the final round's are known; a subclass whose ``check``
    does nothing leaves them in ``pending`` for a caller that hashes many proofs' openings in one batch
    (``many.batch_verify``, which reports them with ``first_bad_opening``)."""

    pending: list[tuple] = field(default_factory=list)

    def add(self, name: str, rows: np.ndarray, indices: list[int], siblings: np.ndarray, root: np.ndarray) -> None:
        self.pending.append((name, rows.reshape(len(indices), -1), np.asarray(indices, np.int64), siblings, root))

    def check(self) -> None:
        """Hash every pending opening in one batch; raise the first failure (round order, then index order)."""
        pending, self.pending = self.pending, []
        if not pending:  # a profile that checks its openings where it meets them queues none
            return
        roots = merkle.compute_roots_batched([(rows, indices, siblings) for _, rows, indices, siblings, _ in pending],
                                             permute=fast_permute_lanes())
        error = first_bad_opening(pending, roots)
        if error is not None:
            raise error


def first_bad_opening(pending: list[tuple], roots: list[np.ndarray]) -> VerificationError | None:
    """The rejection of the first opening of ``pending`` (``Openings.pending``'s tuples) whose computed roots
    (``roots[i]``: (q, 8), one per index of entry i) miss its root, in round order then index order; None when
    every one reaches it."""
    for (name, _, indices, _, root), computed in zip(pending, roots):
        bad = np.flatnonzero(np.any(computed != root[None, :], axis=1))
        if bad.size:
            return reject(name, "merkle", f"Merkle path of the opening at index {indices[bad[0]]} does not reach "
                                          f"the root")
    return None


def reject(round_name: str, check: str, message: str) -> VerificationError:
    """The ``VerificationError`` of a failed check: ``round_name`` ("initial", "round 0", "final", ...) and
    ``check`` (the check's name, as ``VerificationError.check`` reports it), the message prefixed with the round."""
    return VerificationError(f"{round_name}: {message}", round=round_name, check=check)


def _check_array(value, shape: tuple[int, ...], what: str, p: int = P) -> np.ndarray:
    """A uint32 array of exactly ``shape`` holding field elements (words below ``p``), or ProofFormatError."""
    try:
        array = np.asarray(value)
    except Exception as exc:  # noqa: BLE001 - any non-array input is a format error
        raise ProofFormatError(f"{what}: not an array ({exc})") from None
    if array.shape != shape:
        raise ProofFormatError(f"{what}: expected shape {shape}, got {array.shape}")
    if array.size and (array.dtype.kind not in "ui" or np.any(array < 0) or np.any(array >= p)):
        raise ProofFormatError(f"{what}: values must be field elements in [0, p)")
    return array.astype(np.uint32)


@functools.lru_cache(maxsize=16)
def _challenger_after(separator: tuple[int, ...]) -> DuplexChallenger:
    challenger = DuplexChallenger()
    challenger.observe_many(F.to_monty(np.asarray(separator, dtype=np.uint64)))
    return challenger


def new_challenger(config: WhirConfig) -> DuplexChallenger:
    """A challenger that has absorbed the domain separator (digest 8), as every proof starts. The state after
    the separator depends on the configuration only, so it is computed once per configuration."""
    return _challenger_after(tuple(domain_separator(config))).clone()


@dataclass
class Start:
    """What a profile's statement phase hands the shared rounds: the challenger (alpha sampled), the WHIR proof
    to walk, the initial commitment's root (8,), the initial constraint and the claimed sum it batches."""

    challenger: DuplexChallenger
    whir: object
    root: np.ndarray
    constraint: Constraint
    claimed_sum: np.ndarray


class WhirVerifier:
    """Checks proofs made under one ``WhirConfig`` (the whir-p3-metal profile).

    ``walk`` is the step order of whir-spec §4 (initial sumcheck; per round: root, OOD, PoW, checkpoint,
    queries, combination, sumcheck; final polynomial, PoW, queries, final sumcheck, closing equation), written
    once for every profile. What a profile does differently is a hook: the statement phase up to alpha
    (``_start``), where the proof keeps its rounds, roots and openings (``_round_proofs``, ``_round_root``,
    ``_round_openings``, ``_final_openings``), the query sampler (``_query_indices``), one sumcheck round's
    update (``_round_value``), the opening check and fold (``_queries``), and the data ``field`` (None: BabyBear
    through the module-level operations) and ``reverse_folding`` (variables bound last-first, so folding points
    are read reversed). ``p3_verifier.P3WhirVerifier`` overrides them for upstream Plonky3 p3-whir.
    """

    field = None
    reverse_folding = False
    round_type: type = RoundProof
    sumcheck_type: type = SumcheckData
    F = F  # the field's operations (a module or a FieldOps: the same names)
    P = P
    generators = TWO_ADIC_GENERATORS

    def __init__(self, config: WhirConfig):
        self.config = config

    def verify(self, proof: WhirProof, statement: Statement) -> None:
        openings = Openings()
        try:
            self.walk(proof, statement, openings)
        except (ProofFormatError, VerificationError):
            openings.check()  # a bad opening of an earlier round is the first failure in step order
            raise

    def walk(self, proof, statement, openings: Openings) -> None:
        """The step order over ``proof`` and ``statement``, raising the first failure other than a Merkle
        opening's (``VerificationError`` or ``ProofFormatError``); the openings go to ``openings`` (checked by
        its ``check`` once the final round's are added). ``verify`` is this with an ``Openings`` that checks."""
        config = self.config
        ops = self.F
        start = self._start(proof, statement)
        challenger, whir = start.challenger, start.whir
        constraints: list[Constraint] = [start.constraint]
        challenges: list[np.ndarray] = []

        claimed_sum, folding = self._sumcheck(
            "initial sumcheck", whir.initial_sumcheck, challenger, config.fold(0),
            config.starting_folding_pow_bits, start.claimed_sum,
        )
        challenges.extend(folding)

        round_proofs = self._round_proofs(whir)
        previous_root = start.root
        for i, round_proof in enumerate(round_proofs):
            name = f"round {i}"
            if not isinstance(round_proof, self.round_type):
                raise ProofFormatError(f"{name}: expected a RoundProof, got {type(round_proof).__name__}")
            rc = config.rounds[i]
            nv = rc.num_variables
            round_root = self._round_root(name, round_proof)
            challenger.observe_many(round_root)
            answers = self._check(round_proof.ood_answers, (rc.ood_samples, 4), f"{name} OOD answers")
            ood_points = self._ood_points(challenger, answers, nv)
            self._check_pow(name, challenger, rc.pow_bits, round_proof.pow_witness)
            challenger.sample()  # checkpoint
            indices = self._query_indices(challenger, rc.domain_size, rc.folding_factor, rc.num_queries)
            kind = "base" if i == 0 else "extension"
            folded = self._queries(name, self._round_openings(round_proof), indices, previous_root, kind,
                                   rc.domain_size, rc.folding_factor, folding, openings)
            select_vars = self._domain_points(rc.domain_size, rc.folding_factor, indices)
            gamma = challenger.sample_ef()
            coefficients = ops.ef_powers(gamma, len(ood_points) + len(indices))
            all_values = np.concatenate([answers, folded])
            if len(coefficients):
                claimed_sum = ops.ef_add(claimed_sum, ops.ef_sum(ops.ef_mul(coefficients, all_values)))
            constraints.append(Constraint(nv, ood_points, coefficients[:len(ood_points)], select_vars,
                                           coefficients[len(ood_points):]))
            claimed_sum, folding = self._sumcheck(
                f"{name} sumcheck", round_proof.sumcheck, challenger, config.fold(i + 1), rc.folding_pow_bits,
                claimed_sum,
            )
            challenges.extend(folding)
            previous_root = round_root

        # -- final round
        name = "final round"
        fsr = config.final_sumcheck_rounds
        if whir.final_poly is None:
            raise ProofFormatError("final polynomial missing")
        final_poly = self._check(whir.final_poly, (1 << fsr, 4), "final polynomial")
        challenger.observe_many(final_poly.reshape(-1))
        self._check_pow(name, challenger, config.final_pow_bits, whir.final_pow_witness)
        k_final = config.fold(config.n_rounds)
        indices = self._query_indices(challenger, config.final_domain_size, k_final, config.final_queries)
        kind = "base" if config.n_rounds == 0 else "extension"
        folded = self._queries(name, self._final_openings(whir), indices, previous_root, kind,
                               config.final_domain_size, k_final, folding, openings)
        openings.check()  # every round's openings are known now
        expected = horner(final_poly, self._domain_points(config.final_domain_size, k_final, indices), self.field)
        bad = np.flatnonzero(np.any(folded != expected, axis=1))
        if bad.size:
            raise reject(name, "final-query", f"query at index {indices[bad[0]]} does not match the final polynomial")

        final_challenges: list[np.ndarray] = []
        if fsr > 0:
            if whir.final_sumcheck is None:
                raise ProofFormatError(f"final sumcheck missing ({fsr} rounds expected)")
            claimed_sum, final_challenges = self._sumcheck(
                "final sumcheck", whir.final_sumcheck, challenger, fsr, config.final_folding_pow_bits, claimed_sum
            )
            challenges.extend(final_challenges)
        elif whir.final_sumcheck is not None:  # tolerated only if empty: the configuration has no final rounds
            self._sumcheck("final sumcheck", whir.final_sumcheck, challenger, 0, config.final_folding_pow_bits,
                           claimed_sum)

        # -- the closing equation: S == W(r*) * f_final(r_final)
        r_final = np.asarray(final_challenges, np.uint32).reshape(-1, 4)
        weight = _weight_at(constraints, np.asarray(challenges, np.uint32).reshape(-1, 4), self.reverse_folding,
                            self.field)
        final_value = evaluate(final_poly, r_final[::-1] if self.reverse_folding else r_final, self.field)
        if not np.array_equal(claimed_sum, ops.ef_mul(weight, final_value)):
            raise reject("final", "sumcheck-claim", "the sumcheck claim does not match the constraint weights "
                                                     "at the folding point times the final polynomial")

    # -- hooks: the whir-p3-metal profile ------------------------------------------------------------------------
    def _start(self, proof: WhirProof, statement: Statement) -> Start:
        """Check the proof's and statement's types, absorb the commitment and its OOD answers, sample alpha and
        batch the statement's claims (alpha^0.. to the statement's points, then the OOD points)."""
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
        root = _check_array(proof.initial_commitment, (DIGEST_ELEMS,), "initial commitment")
        challenger.observe_many(root)
        ood = _check_array(proof.initial_ood_answers, (config.commitment_ood_samples, 4), "initial OOD answers")
        ood_points = self._ood_points(challenger, ood, n)
        all_points = np.concatenate([points, ood_points])
        all_values = np.concatenate([values, ood])
        alpha = challenger.sample_ef()
        coefficients = F.ef_powers(alpha, len(all_points))
        claimed_sum = F.ef_sum(F.ef_mul(coefficients, all_values)) if len(all_points) else np.zeros(4, np.uint32)
        constraint = Constraint(n, all_points, coefficients, np.zeros(0, np.uint32), np.zeros((0, 4), np.uint32))
        return Start(challenger, proof, root, constraint, claimed_sum)

    def _round_proofs(self, whir) -> list:
        config = self.config
        if not isinstance(whir.rounds, list) or len(whir.rounds) != config.n_rounds:
            got = len(whir.rounds) if isinstance(whir.rounds, list) else type(whir.rounds).__name__
            raise ProofFormatError(f"expected a list of {config.n_rounds} rounds, got {got}")
        return whir.rounds

    def _round_root(self, name: str, round_proof) -> np.ndarray:
        return self._check(round_proof.commitment, (DIGEST_ELEMS,), f"{name} commitment")

    @staticmethod
    def _round_openings(round_proof):
        return round_proof.queries

    @staticmethod
    def _final_openings(whir):
        return whir.final_queries

    @staticmethod
    def _query_indices(challenger, domain_size: int, folding_factor: int, num_queries: int) -> list[int]:
        return sample_query_indices(challenger, domain_size, folding_factor, num_queries)

    @staticmethod
    def _round_value(claimed_sum, h0, h2, r) -> np.ndarray:
        """h(r) of one sumcheck round from the claim and its message [h(0), h(2)]."""
        return evaluate_round_polynomial(claimed_sum, h0, h2, r)

    def _queries(self, name, queries, indices, root, kind, domain_size, folding_factor, folding, openings):
        """Check the openings' form and count, queue their Merkle check against ``root``, and return each row
        folded at the last ``folding_factor`` challenges: (q, 4)."""
        if not isinstance(queries, list):
            raise ProofFormatError(f"{name}: queries must be a list")
        if len(queries) != len(indices):
            raise reject(name, "query-count", f"expected {len(indices)} distinct query openings, got {len(queries)}")
        width = 1 << folding_factor
        depth = (domain_size >> folding_factor).bit_length() - 1
        rows, siblings = _opened_rows(name, queries, kind, width, depth)
        if not indices:
            return np.zeros((0, 4), np.uint32)
        openings.add(name, rows, indices, siblings, root)
        last = np.asarray(folding[len(folding) - folding_factor:], np.uint32).reshape(-1, 4)
        return evaluate_rows(rows, last)

    # -- pieces every profile shares ----------------------------------------------------------------------------
    def _check(self, value, shape: tuple[int, ...], what: str) -> np.ndarray:
        return _check_array(value, shape, what, self.P)

    def _ood_points(self, challenger, answers: np.ndarray, num_variables: int) -> np.ndarray:
        """Sample one OOD point per answer, observing each answer after its point: (t, num_variables, 4)."""
        points = np.zeros((len(answers), num_variables, 4), np.uint32)
        for j, answer in enumerate(answers):
            points[j] = expand_from_univariate(challenger.sample_ef(), num_variables, self.field)
            challenger.observe_many(answer)
        return points

    def _domain_points(self, domain_size: int, folding_factor: int, indices: list[int]) -> np.ndarray:
        """ω^a for each query index a, ω generating the folded domain of size domain_size >> folding_factor."""
        generator = self.generators[domain_size.bit_length() - 1 - folding_factor]
        return self.F.to_monty(np.array([pow(generator, a, self.P) for a in indices], dtype=np.uint64))

    def _check_pow(self, name: str, challenger, bits: int, witness) -> None:
        witness = self._check(witness, (), f"{name} PoW witness")
        if bits > 0:
            if not challenger.check_witness(bits, witness):
                raise reject(name, "pow", f"proof-of-work witness fails the {bits}-bit check")
        elif witness != 0:
            raise reject(name, "pow", "PoW witness present where the configuration asks for none")

    def _sumcheck(self, name, data, challenger, n_rounds: int, pow_bits: int, claimed_sum):
        if not isinstance(data, self.sumcheck_type):
            raise ProofFormatError(f"{name}: missing sumcheck data")
        evaluations = self._check(data.evaluations, (n_rounds, 2, 4), f"{name} evaluations")
        n_witnesses = n_rounds if pow_bits > 0 else 0
        witnesses = self._check(data.pow_witnesses, (n_witnesses,), f"{name} PoW witnesses")
        challenges = []
        for j in range(n_rounds):
            h0, h2 = evaluations[j]
            challenger.observe_many(evaluations[j])  # both message values, c0..c3 each
            if pow_bits > 0 and not challenger.check_witness(pow_bits, witnesses[j]):
                raise reject(name, "pow", f"round {j}: proof-of-work witness fails the {pow_bits}-bit check")
            r = challenger.sample_ef()
            claimed_sum = self._round_value(claimed_sum, h0, h2, r)
            challenges.append(r)
        return claimed_sum, challenges


def _opened_rows(name: str, queries: list, kind: str, width: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The openings' rows (q, width) base or (q, width, 4) EF and Merkle paths (q, depth, 8), as uint32 arrays;
    ProofFormatError names the first malformed opening (kind, then values, then path, query by query)."""
    value_shape = (width,) if kind == "base" else (width, 4)
    path_shape = (depth, DIGEST_ELEMS)
    # The common case, uint32 arrays of the right shapes, is checked for range in one batch; anything else goes
    # through the query-by-query check, which also names the first problem.
    plain = all(
        isinstance(q, QueryOpening) and isinstance(q.kind, str) and q.kind == kind
        and type(q.values) is np.ndarray and q.values.dtype == np.uint32 and q.values.shape == value_shape
        and type(q.siblings) is np.ndarray and q.siblings.dtype == np.uint32 and q.siblings.shape == path_shape
        for q in queries
    )
    if plain:
        rows = np.array([q.values for q in queries], np.uint32).reshape((len(queries),) + value_shape)
        siblings = np.array([q.siblings for q in queries], np.uint32).reshape((len(queries),) + path_shape)
        if not (np.any(rows >= P) or np.any(siblings >= P)):
            return rows, siblings
    rows, siblings = [], []
    for j, query in enumerate(queries):
        if not isinstance(query, QueryOpening) or not isinstance(query.kind, str) or query.kind != kind:
            raise ProofFormatError(f"{name}: query {j} must be a {kind} opening")
        rows.append(_check_array(query.values, value_shape, f"{name} query {j} values"))
        siblings.append(_check_array(query.siblings, path_shape, f"{name} query {j} Merkle path"))
    return (np.array(rows, np.uint32).reshape((len(queries),) + value_shape),
            np.array(siblings, np.uint32).reshape((len(queries),) + path_shape))


def verify(config: WhirConfig, proof: WhirProof, statement: Statement) -> None:
    """Convenience wrapper: raise unless ``proof`` proves ``statement`` under ``config``."""
    WhirVerifier(config).verify(proof, statement)
