"""The verifier of stacked multi-table commitments in the p3-whir profile: upstream Plonky3 5dc50e51's
``MultilinearPcs::verify`` (points from the transcript) and ``PrescribedPointPcs::verify_at`` (the caller's
points), in either layout.

Contract: ``verify_tables(config, field, commitment, proof, protocol, layout, points=None) -> TablesOpened`` on
acceptance; ``VerificationError`` (``round`` and ``check`` set) when the proof is false, ``ProofFormatError`` when
it (or the statement) does not have the shape ``config`` and ``protocol`` call for; nothing else on hostile
input. ``config`` is the ``P3WhirConfig`` of the stacked arity, ``commitment`` the ``MerkleCap`` (one root),
``proof`` a ``PcsProof`` with one ``OpeningEvals`` per batch (protocol order; current values then next values,
as the batch lists its columns), ``protocol`` a ``TablesProtocol``, ``layout`` "suffix" or "prefix", ``points``
None (drawn: each batch's point is ``expand_from_univariate(z, m)`` of a transcript sample) or one (m_b, 4)
Montgomery array per batch (prescribed; as upstream's ``verify_at``, the caller observes the commitment, which
this verifier does for it, exactly as in transcript mode).

The shapes, the schedule and the layout are not bound by the transcript (upstream's domain separator binds the
stacked arity and the WHIR parameters only): they are the caller's expectations, and a proof made for others is
rejected only where they change what is proved. ``TablesOpened`` says what an accepted proof proves.

What this verifier does beyond the single-column one (``P3WhirVerifier``): ``_start`` walks the batches (point,
current values, next values observed), batches the claims in placement order (``claims``) with next-row claims as
``next`` terms of the initial constraint (their weight at the folding point in closed form, ``ref.shift``), and
``reverse_folding`` is the layout's (prefix: no reversal, rows folded at the challenges in order).
``tables_proof_bounds(config, protocol)``: the bounds a proof decoder applies to table proofs (``format``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ....errors import ConfigError, ProofFormatError
from ....field import Field
from ....ref.multilinear import expand_from_univariate
from ...p3_whir.config import P3WhirConfig
from ...p3_whir.format import ProofBounds
from ...p3_whir.proof import MerkleCap, PcsProof
from ...p3_whir.verifier import P3WhirVerifier
from ....protocol.verifier import Constraint, Start
from .claims import claim_terms, stacked_claims
from .shapes import TablesProtocol
from .stacking import LAYOUTS, StackedLayout, plan_layout


@dataclass(frozen=True)
class TablesStatement:
    """What the verifier is told besides the proof: the commitment and, for ``verify_at``, the points (one
    (m_b, 4) Montgomery array per batch)."""

    commitment: MerkleCap
    points: tuple[np.ndarray, ...] | None = None


@dataclass(frozen=True)
class TablesOpened:
    """What an accepted proof proves (Montgomery words): batch b's columns take ``current[b]`` (c_b, 4) at
    ``points[b]`` (m_b, 4) and their successors ``next[b]`` (d_b, 4) there; the stacked polynomial's initial OOD
    points (t, n, 4) (its answers are the proof's); ``stacked``: where each column lies."""

    points: tuple[np.ndarray, ...]
    current: tuple[np.ndarray, ...]
    next: tuple[np.ndarray, ...]
    ood_points: np.ndarray
    stacked: StackedLayout


class P3TablesVerifier(P3WhirVerifier):
    """Checks stacked multi-table proofs under one ``P3WhirConfig`` over ``field``, for one ``TablesProtocol`` in
    one layout (module contract). ``verify`` returns the ``TablesOpened``."""

    def __init__(self, config: P3WhirConfig, field: Field, protocol: TablesProtocol, layout: str):
        super().__init__(config, field)
        if layout not in LAYOUTS:
            raise ProofFormatError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r:.40}")
        if not isinstance(protocol, TablesProtocol):
            raise ProofFormatError(f"expected a TablesProtocol, got {type(protocol).__name__}")
        try:
            self.stacked = plan_layout(protocol, config.fold(0), layout)
        except ConfigError as exc:
            raise ProofFormatError(f"tables: {exc}") from None
        if self.stacked.num_variables != config.num_variables:
            raise ProofFormatError(f"the tables stack into 2^{self.stacked.num_variables} values; the configuration "
                                   f"is for num_variables = {config.num_variables}")
        self.protocol = protocol
        self.reverse_folding = layout == "suffix"  # SuffixProver binds the last variable first

    def _start(self, proof: PcsProof, statement: TablesStatement) -> Start:
        config, ops, field = self.config, self.F, self.field
        n = config.num_variables
        batches = self.protocol.batches
        arities = [self.stacked.table_log_rows[b.table] for b in batches]
        if not isinstance(proof, PcsProof):
            raise ProofFormatError(f"expected a PcsProof, got {type(proof).__name__}")
        if not isinstance(statement, TablesStatement):
            raise ProofFormatError(f"expected a TablesStatement, got {type(statement).__name__}")
        prescribed = None
        if statement.points is not None:
            try:
                given = list(statement.points)
            except TypeError:
                raise ProofFormatError("prescribed points: expected one (m, 4) array per batch") from None
            if len(given) != len(batches):
                raise ProofFormatError(f"prescribed points: expected {len(batches)} (one per batch), got {len(given)}")
            prescribed = [self.check_array(p, (m, 4), f"batch {b} prescribed point")
                          for b, (p, m) in enumerate(zip(given, arities))]
        root = self.cap_root("commitment", statement.commitment)

        challenger = self.new_challenger()
        challenger.observe_many(root)
        whir = proof.whir
        ood = self.check_array(whir.initial_ood_answers, (config.commitment_ood_samples, 4), "initial OOD answers")
        ood_points = self.draw_ood_points(challenger, ood, n)
        if len(proof.evals) != len(batches):
            raise ProofFormatError(f"expected {len(batches)} opening evaluations (one per batch), got "
                                   f"{len(proof.evals)}")
        points, current, following = [], [], []
        for b, (batch, evals, m) in enumerate(zip(batches, proof.evals, arities)):
            values = self.check_array(evals.current, (len(batch.current), 4), f"batch {b} current evaluations")
            successors = self.check_array(evals.next, (len(batch.next), 4), f"batch {b} next evaluations")
            if prescribed is None:
                points.append(expand_from_univariate(challenger.sample_ef(), m, field))
            else:
                points.append(prescribed[b])
            challenger.observe_many(values)
            challenger.observe_many(successors)
            current.append(values)
            following.append(successors)
        alpha = challenger.sample_ef()

        claims = stacked_claims(self.stacked, self.protocol, points, field)
        total = claims.n_claims + len(ood_points)
        coefficients = ops.ef_powers(alpha, total) if total else np.zeros((0, 4), np.uint32)
        values = np.zeros((total, 4), np.uint32)
        for term in claim_terms(self.stacked, self.protocol):
            values[term.power] = (following if term.next else current)[term.batch][term.position]
        values[claims.n_claims:] = ood
        claimed_sum = ops.ef_sum(ops.ef_mul(coefficients, values)) if total else np.zeros(4, np.uint32)
        constraint = Constraint(
            n, np.concatenate([claims.eq_points, ood_points]),
            np.concatenate([coefficients[claims.eq_powers], coefficients[claims.n_claims:]]),
            np.zeros(0, np.uint32), np.zeros((0, 4), np.uint32),
            (claims.next_points, claims.next_windows, coefficients[claims.next_powers]))
        self._opened = TablesOpened(tuple(map(_frozen, points)), tuple(map(_frozen, current)),
                                    tuple(map(_frozen, following)), _frozen(ood_points), self.stacked)
        return Start(challenger, whir, root, constraint, claimed_sum)


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=np.uint32)
    array.setflags(write=False)
    return array


def tables_proof_bounds(config: P3WhirConfig, protocol: TablesProtocol) -> ProofBounds:
    """The ``ProofBounds`` a decoder of table proofs under ``config`` and ``protocol`` applies: one evals entry per
    batch, at most the widest batch's current (and next) values each (the verifier checks exact counts)."""
    batches = protocol.batches
    return replace(ProofBounds.of(config, len(batches)), current=max((len(b.current) for b in batches), default=0),
                   next=max((len(b.next) for b in batches), default=0))


def verify_tables(config: P3WhirConfig, field: Field, commitment: MerkleCap, proof: PcsProof,
                  protocol: TablesProtocol, layout: str = "suffix", points=None) -> TablesOpened:
    """Raise unless ``proof`` opens ``commitment``'s tables as ``protocol`` says; return what it proves (module
    contract)."""
    return P3TablesVerifier(config, field, protocol, layout).verify(proof, TablesStatement(commitment, points))
