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

``WhirVerifier.walk`` is the step order of every protocol profile; what a profile does is a hook method (listed in
the class docstring) of its subclass: ``profiles.whir_p3_metal.verifier.MetalWhirVerifier`` (openings hashed in
one batch, as above) and ``profiles.p3_whir.verifier.P3WhirVerifier`` (each round's openings checked where it meets
them). The pieces every profile's hooks share are public: ``check_array``, ``draw_ood_points``, ``field_array``,
``reject``, ``Constraint``, ``Start``, ``Openings``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from dataclasses import dataclass, field

import numpy as np

from ..errors import ProofFormatError, VerificationError
from ..field import P, TWO_ADIC_GENERATORS
from ..native.permute import fast_permute_lanes
from ..ref import field_np as F
from ..ref import merkle
from ..ref.multilinear import eq_at, evaluate, expand_from_univariate, horner, select_at
from ..ref.shift import lifted_next_at
from .proof import Statement, WhirProof
from .schedule import Schedule
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


def field_array(value, shape: tuple[int, ...], what: str, p: int = P) -> np.ndarray:
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


@dataclass
class Start:
    """What a profile's statement phase hands the shared rounds: the challenger (alpha sampled), the WHIR proof
    to walk, the initial commitment's root (8,), the initial constraint and the claimed sum it batches."""

    challenger: DuplexChallenger
    whir: object
    root: np.ndarray
    constraint: Constraint
    claimed_sum: np.ndarray


class WhirVerifier(ABC):
    """Checks proofs made under one configuration (a ``Schedule``); what a profile does is its subclass's
    (``profiles.whir_p3_metal.verifier.MetalWhirVerifier``, ``profiles.p3_whir.verifier.P3WhirVerifier``).

    ``walk`` is the step order of whir-spec §4 (initial sumcheck; per round: root, OOD, PoW, checkpoint,
    queries, combination, sumcheck; final polynomial, PoW, queries, final sumcheck, closing equation), written
    once for every profile. What a profile does differently is a hook: the statement phase up to alpha
    (``_start``), where the proof keeps its rounds, roots and openings (``_round_proofs``, ``_round_root``,
    ``_round_openings``, ``_final_openings``), the query sampler (``_query_indices``), one sumcheck round's
    update (``_round_value``), the opening check and fold (``_queries``), and the data ``field`` (None: BabyBear
    through the module-level operations) and ``reverse_folding`` (variables bound last-first, so folding points
    are read reversed), ``round_type`` and ``sumcheck_type`` (the proof's parts). This class has no profile of its
    own: its hooks are abstract methods.
    """

    field = None
    reverse_folding = False
    round_type: type  # hook: the type of one round's proof
    sumcheck_type: type  # hook: the type of one sumcheck's data
    F = F  # the field's operations (a module or a FieldOps: the same names)
    P = P
    generators = TWO_ADIC_GENERATORS

    def __init__(self, config: Schedule):
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
            answers = self.check_array(round_proof.ood_answers, (rc.ood_samples, 4), f"{name} OOD answers")
            ood_points = self.draw_ood_points(challenger, answers, nv)
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
        final_poly = self.check_array(whir.final_poly, (1 << fsr, 4), "final polynomial")
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

    # -- hooks: what a profile does (``profiles/<profile>/verifier.py`` subclasses this class) ------------------
    @abstractmethod
    def _start(self, proof, statement) -> Start:
        """Hook: the statement phase up to alpha (types checked, commitment and OOD answers absorbed, the
        statement's claims batched): the ``Start`` the shared rounds walk on from."""

    @abstractmethod
    def _round_proofs(self, whir) -> list:
        """Hook: the intermediate rounds' proofs, ``config.n_rounds`` of them, or ``ProofFormatError``."""

    @abstractmethod
    def _round_root(self, name: str, round_proof) -> np.ndarray:
        """Hook: the root (8,) of the commitment a round's proof makes."""

    @staticmethod
    @abstractmethod
    def _round_openings(round_proof):
        """Hook: where a round's proof keeps its query openings."""

    @staticmethod
    @abstractmethod
    def _final_openings(whir):
        """Hook: where the proof keeps the final round's query openings."""

    @staticmethod
    @abstractmethod
    def _query_indices(challenger, domain_size: int, folding_factor: int, num_queries: int) -> list[int]:
        """Hook: the query indices the transcript draws into the folded domain."""

    @staticmethod
    @abstractmethod
    def _round_value(claimed_sum, h0, h1, r) -> np.ndarray:
        """Hook: h(r) of one sumcheck round from the claim and its message."""

    @abstractmethod
    def _queries(self, name, queries, indices, root, kind, domain_size, folding_factor, folding, openings):
        """Hook: check the openings' form and count, check (or queue in ``openings``) their Merkle paths against
        ``root``, and return each row folded at the last ``folding_factor`` challenges: (q, 4)."""

    # -- pieces every profile shares ----------------------------------------------------------------------------
    def check_array(self, value, shape: tuple[int, ...], what: str) -> np.ndarray:
        """``value`` as a ``uint32`` array of exactly ``shape`` with every word below the field's prime
        (``field_array`` at ``self.P``), or ``ProofFormatError`` naming ``what``: how every hook reads a part of
        the proof."""
        return field_array(value, shape, what, self.P)

    def draw_ood_points(self, challenger, answers: np.ndarray, num_variables: int) -> np.ndarray:
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
        witness = self.check_array(witness, (), f"{name} PoW witness")
        if bits > 0:
            if not challenger.check_witness(bits, witness):
                raise reject(name, "pow", f"proof-of-work witness fails the {bits}-bit check")
        elif witness != 0:
            raise reject(name, "pow", "PoW witness present where the configuration asks for none")

    def _sumcheck(self, name, data, challenger, n_rounds: int, pow_bits: int, claimed_sum):
        if not isinstance(data, self.sumcheck_type):
            raise ProofFormatError(f"{name}: missing sumcheck data")
        evaluations = self.check_array(data.evaluations, (n_rounds, 2, 4), f"{name} evaluations")
        n_witnesses = n_rounds if pow_bits > 0 else 0
        witnesses = self.check_array(data.pow_witnesses, (n_witnesses,), f"{name} PoW witnesses")
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

