"""The verifier of the p3-whir profile (upstream Plonky3 ``p3-whir`` at 5dc50e51): the hooks of the one
``WhirVerifier`` step order that this profile does differently.

Contract: ``verify_p3(config, commitment, proof, field, points=None, num_openings=None)`` returns a ``P3Opened`` on
acceptance (what the proof proves: each opening's point, prescribed or drawn, and value, and the initial OOD points
the transcript drew) and raises ``VerificationError`` (``round`` and ``check`` set) on rejection, or
``ProofFormatError`` when the proof (or the statement) does not have the configuration's shape; nothing else on
hostile input. ``config`` is a
``P3WhirConfig``, ``commitment`` the ``MerkleCap`` the commit returned (cap height 0: one root), ``proof`` a
``PcsProof``, ``field`` a ``whirgpu.field.Field``. The statement is upstream's example flow: one table of one
column, ``num_openings`` openings of column 0 (1 when neither it nor ``points`` is given), each claiming one value
(``PcsProof.evals[j].current``, no ``next`` values). ``points=None`` is ``MultilinearPcs::verify`` (each opening
point drawn from the transcript); ``points`` (E, n, 4) Montgomery words is ``PrescribedPointPcs::verify_at``.

What this profile does on the core's step order (``protocol.verifier.WhirVerifier``), each a hook
(whir-p3-metal's are ``profiles.whir_p3_metal.verifier.MetalWhirVerifier``'s):
- ``_start``: a length-tagged challenger over the field's SmallRng(1) width-16 Poseidon2 absorbs the p3 domain
  separator (Montgomery words), then the given root; the initial OOD answers (sample z, observe the answer);
  then per opening: its point (sampled z expanded, or the prescribed one) and its current, then next values;
  alpha; powers of alpha go to the opening claims first, then to the OOD claims.
- ``_round_value``: messages are [h(0), c_inf] (c_inf the X^2 coefficient): h(r) = h(0)(1 - r) + h(1) r +
  c_inf r (r - 1), h(1) = claim - h(0).
- ``_query_indices``: ``distinct_query_indices``.
- ``_queries``: one ``QueryOpenings`` per round, rows at the sorted indices and one pruned multiproof; leaves are
  ``hash_rows_24`` of the row (an EF row flattened to c0..c3 per entry), nodes the width-16 compression; the
  multiproof is checked where it is met. A row is folded at the last folding challenges reversed.
- ``reverse_folding``: variables are bound last-first (upstream's Suffix order), so the closing check evaluates
  each constraint at the reversed tail of the challenges and the final polynomial at the reversed final ones.
- roots are ``MerkleCap``s of one root; rounds a tuple; PoW witnesses base words (0 when unused).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ...errors import ProofFormatError
from ...field import Field, field_by_name
from ...ref.field_np import field_ops
from ...ref.merkle_pruned import root_from_pruned
from ...ref.multilinear import evaluate_rows, expand_from_univariate
from ...ref.poseidon2 import compress, hash_rows_24
from ...ref.poseidon2_constants import Poseidon2Constants
from .config import P3WhirConfig
from .domain_separator import p3_domain_separator
from .proof import MerkleCap, PcsProof, QueryOpenings, RoundProof, SumcheckData
from ...protocol.proof import DIGEST_ELEMS
from ...protocol.query_indices import distinct_query_indices
from ...protocol.transcript import DuplexChallenger
from ...protocol.verifier import Constraint, Start, WhirVerifier, reject


@dataclass(frozen=True)
class P3Statement:
    """What the p3-whir verifier is told besides the proof: the commitment, the number of openings (of column 0 of
    the one committed table) and, for ``verify_at``, their prescribed points (E, n, 4) Montgomery words."""

    commitment: MerkleCap
    num_openings: int = 1
    points: np.ndarray | None = None


@functools.lru_cache(maxsize=16)
def _challenger_after(field_name: str, separator: tuple[int, ...]) -> DuplexChallenger:
    field = field_by_name(field_name)
    challenger = DuplexChallenger(Poseidon2Constants.smallrng_16_24(field)[0], length_tagged=True)
    challenger.observe_many(field_ops(field).to_monty(np.asarray(separator, dtype=np.uint64)))
    return challenger


def p3_challenger(config: P3WhirConfig, field: Field) -> DuplexChallenger:
    """A fresh length-tagged challenger over ``field``'s SmallRng(1) width-16 Poseidon2 that has absorbed the
    domain separator of ``config`` (the state every p3-whir transcript starts from; computed once per
    configuration)."""
    return _challenger_after(field.name, _separator(config)).clone()


@functools.lru_cache(maxsize=16)
def _separator(config: P3WhirConfig) -> tuple[int, ...]:
    return tuple(p3_domain_separator(config))


@dataclass(frozen=True)
class P3Opened:
    """What an accepted proof proves, all Montgomery words: the committed column's multilinear extension takes
    ``values[j]`` (E, 4) at ``points[j]`` (E, n, 4), the prescribed points or those the transcript drew; and the
    initial OOD points (t, n, 4) the transcript drew after the commitment (its answers are the proof's)."""

    points: np.ndarray
    values: np.ndarray
    ood_points: np.ndarray


class P3WhirVerifier(WhirVerifier):
    """Checks p3-whir proofs made under one ``P3WhirConfig`` over ``field``. ``verify`` returns the ``P3Opened``
    of the proof it accepts (one verification at a time per instance)."""

    reverse_folding = True
    round_type = RoundProof
    sumcheck_type = SumcheckData

    def __init__(self, config: P3WhirConfig, field: Field):
        super().__init__(config)
        self.field = field
        self.F = field_ops(field)
        self.P = field.P
        self.generators = field.TWO_ADIC_GENERATORS
        constants16, constants24 = Poseidon2Constants.smallrng_16_24(field)
        self._leaf_constants = constants24
        self._compress = lambda left, right: compress(left, right, constants16)

    def verify(self, proof: PcsProof, statement: P3Statement) -> P3Opened:
        self._opened = None
        super().verify(proof, statement)
        return self._opened

    def new_challenger(self) -> DuplexChallenger:
        """A length-tagged challenger that has absorbed the domain separator (computed once per configuration)."""
        return p3_challenger(self.config, self.field)

    # -- hooks --------------------------------------------------------------------------------------------------
    def _start(self, proof: PcsProof, statement: P3Statement) -> Start:
        config, ops = self.config, self.F
        n = config.num_variables
        if not isinstance(proof, PcsProof):
            raise ProofFormatError(f"expected a PcsProof, got {type(proof).__name__}")
        if not isinstance(statement, P3Statement):
            raise ProofFormatError(f"expected a P3Statement, got {type(statement).__name__}")
        num_openings = statement.num_openings
        if isinstance(num_openings, bool) or not isinstance(num_openings, int) or num_openings < 1:
            raise ProofFormatError(f"num_openings: expected a positive int, got {num_openings!r:.40}")
        points = None
        if statement.points is not None:
            points = self.check_array(statement.points, (num_openings, n, 4), "prescribed points")
        root = self.cap_root("commitment", statement.commitment)

        challenger = self.new_challenger()
        challenger.observe_many(root)
        whir = proof.whir
        ood = self.check_array(whir.initial_ood_answers, (config.commitment_ood_samples, 4), "initial OOD answers")
        ood_points = self.draw_ood_points(challenger, ood, n)
        if len(proof.evals) != num_openings:
            raise ProofFormatError(f"expected {num_openings} opening evaluations, got {len(proof.evals)}")
        opening_points = np.zeros((num_openings, n, 4), np.uint32)
        values = np.zeros((num_openings, 4), np.uint32)
        for j, evals in enumerate(proof.evals):
            current = self.check_array(evals.current, (1, 4), f"opening {j} current evaluations")
            following = self.check_array(evals.next, (0, 4), f"opening {j} next evaluations")
            if points is None:
                opening_points[j] = expand_from_univariate(challenger.sample_ef(), n, self.field)
            else:
                opening_points[j] = points[j]
            challenger.observe_many(current)
            challenger.observe_many(following)
            values[j] = current[0]
        alpha = challenger.sample_ef()
        all_points = np.concatenate([opening_points, ood_points])
        coefficients = ops.ef_powers(alpha, len(all_points))
        claimed_sum = ops.ef_sum(ops.ef_mul(coefficients, np.concatenate([values, ood])))
        constraint = Constraint(n, all_points, coefficients, np.zeros(0, np.uint32), np.zeros((0, 4), np.uint32))
        self._opened = P3Opened(_frozen(opening_points), _frozen(values), _frozen(ood_points))
        return Start(challenger, whir, root, constraint, claimed_sum)

    def cap_root(self, what: str, cap) -> np.ndarray:
        """The one root of a height-0 ``MerkleCap`` (checked as ``check_array`` does), or ``ProofFormatError``
        naming ``what``."""
        if not isinstance(cap, MerkleCap):
            raise ProofFormatError(f"{what}: expected a MerkleCap, got {type(cap).__name__}")
        if cap.roots.shape[0] != 1:
            raise ProofFormatError(f"{what}: expected a cap of height 0 (one root), got {cap.roots.shape[0]} roots")
        return self.check_array(cap.roots[0], (DIGEST_ELEMS,), f"{what} root")

    def _round_proofs(self, whir) -> tuple:
        if len(whir.rounds) != self.config.n_rounds:
            raise ProofFormatError(f"expected {self.config.n_rounds} rounds, got {len(whir.rounds)}")
        return whir.rounds

    def _round_root(self, name: str, round_proof: RoundProof) -> np.ndarray:
        if round_proof.commitment is None:
            raise ProofFormatError(f"{name}: commitment missing")
        return self.cap_root(f"{name} commitment", round_proof.commitment)

    @staticmethod
    def _round_openings(round_proof):
        return round_proof.openings

    @staticmethod
    def _final_openings(whir):
        return whir.final_openings

    @staticmethod
    def _query_indices(challenger, domain_size: int, folding_factor: int, num_queries: int) -> list[int]:
        return distinct_query_indices(challenger, domain_size, folding_factor, num_queries)

    def _round_value(self, claimed_sum, h0, c_inf, r) -> np.ndarray:
        """h(r) = h(0) + (h(1) - h(0)) r + c_inf r (r - 1), h(1) = claim - h(0)."""
        ops = self.F
        h1 = ops.ef_sub(claimed_sum, h0)
        r_minus_1 = ops.ef_sub(r, ops.ef_from_base(ops.ONE))
        linear = ops.ef_add(h0, ops.ef_mul(ops.ef_sub(h1, h0), r))
        return ops.ef_add(linear, ops.ef_mul(c_inf, ops.ef_mul(r, r_minus_1)))

    def _queries(self, name, queries, indices, root, kind, domain_size, folding_factor, folding, openings):
        """Check the round's shared opening against ``root`` and return each row folded at the last
        ``folding_factor`` challenges (reversed under ``reverse_folding``, the suffix order): (q, 4)."""
        if not isinstance(queries, QueryOpenings):
            raise ProofFormatError(f"{name}: expected QueryOpenings, got {type(queries).__name__}")
        if queries.kind != kind:
            raise ProofFormatError(f"{name}: expected {kind} openings, got {queries.kind}")
        if queries.num_queries != len(indices):
            raise reject(name, "query-count", f"expected {len(indices)} distinct query openings, "
                                               f"got {queries.num_queries}")
        width = 1 << folding_factor
        if not indices:
            if queries.sibling_hashes.shape[0]:
                raise ProofFormatError(f"{name}: sibling hashes without queries")
            return np.zeros((0, 4), np.uint32)
        if queries.width != width:
            raise ProofFormatError(f"{name}: rows of {queries.width} values, expected {width}")
        rows = self.check_array(queries.rows, queries.rows.shape, f"{name} rows")
        siblings = self.check_array(queries.sibling_hashes, queries.sibling_hashes.shape, f"{name} sibling hashes")
        depth = (domain_size >> folding_factor).bit_length() - 1
        leaves = hash_rows_24(rows.reshape(len(indices), -1), self._leaf_constants)  # EF: c0..c3 per entry
        try:
            computed = root_from_pruned(indices, leaves, siblings, depth, self._compress)
        except ValueError as exc:  # the sibling count the transcript's indices call for: a failed opening
            raise reject(name, "merkle", str(exc)) from None
        if not np.array_equal(computed, root):
            raise reject(name, "merkle", "the pruned Merkle multiproof of the openings does not reach the root")
        last = np.asarray(folding[len(folding) - folding_factor:], np.uint32).reshape(-1, 4)
        return evaluate_rows(rows, last[::-1] if self.reverse_folding else last, self.field)


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=np.uint32)
    array.setflags(write=False)
    return array


def verify_p3(config: P3WhirConfig, commitment: MerkleCap, proof: PcsProof, field: Field, points=None,
              num_openings: int | None = None) -> P3Opened:
    """Raise unless ``proof`` opens ``commitment`` under ``config``; return what it proves (see the module
    docstring)."""
    if num_openings is None:
        try:
            num_openings = 1 if points is None else len(points)
        except TypeError:
            raise ProofFormatError(f"prescribed points: expected an (E, n, 4) array, got "
                                   f"{type(points).__name__}") from None
    return P3WhirVerifier(config, field).verify(proof, P3Statement(commitment, num_openings, points))
