"""The prover of the p3-whir profile (upstream Plonky3 ``p3-whir`` at 5dc50e51): the hooks of the one
``WhirProver`` step order that this profile does differently, and ``prove_p3``, its entry point.

Contract: ``prove_p3(config, field, backend, evaluations, num_openings=1, points=None)`` commits to ``evaluations``
(2^n base words, Montgomery form of ``field``) and returns a ``P3Proved``: the ``MerkleCap`` commitment, the
``PcsProof`` and the opening points (E, n, 4) Montgomery words. ``points=None`` is upstream's
``MultilinearPcs::open`` (``num_openings`` points drawn from the transcript); points (E, n, 4) is
``PrescribedPointPcs::open_at``. The statement is upstream's example flow: one table of one column, each opening
claims column 0's value at its point. The proof is byte for byte upstream's (the golden-p3 files are reproduced),
and ``p3_verifier.verify_p3`` accepts it. ``P3WhirProver.prove_many_p3`` proves many such openings with proofs
in flight, each proof carrying its own number of drawn points (``OpeningSource``).

What this profile does on the core's step order (``protocol.prover.WhirProver``), each a hook or data
(whir-p3-metal's are ``profiles.whir_p3_metal.prover.MetalWhirProver``'s):
- ``new_transcript``: the length-tagged challenger over the field's SmallRng(1) width-16 Poseidon2 after the p3
  domain separator; query indices are drawn one at a time and never collide (``distinct_query_indices``);
- ``_statement``: after the initial OOD answers, each opening's point (a sampled z expanded, or the prescribed
  one), its claim evaluated where the table is and observed (its ``next`` values: none);
- ``_shape``: the ``TableLayout`` of the profile (``P3_WHIR_LAYOUT``): suffix variable order ([h(0), c_inf]
  messages, the last variable folded first), row-major codewords, width-24 leaves, pruned openings;
- ``_materialize``: the ``PcsProof`` (the initial commitment outside it, ``evals`` the claims).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...backends.base import P3_WHIR_LAYOUT, Backend, ProofShape
from ...backends.memory import register_planned_proof
from ...errors import ConfigError
from ...field import Field
from ...ref.multilinear import expand_from_univariate
from .config import P3WhirConfig
from .proof import MerkleCap, OpeningEvals, PcsProof, QueryOpenings, RoundProof, SumcheckData
from .proof import WhirProof as P3WhirProof
from .verifier import p3_challenger
from ...protocol.proof import WhirProof
from ...protocol.proof_shape import proof_shape
from ...protocol.prover import MANY_INSTANCES, PolynomialSource, WhirProver
from ...protocol.query_indices import distinct_query_indices
from ...protocol.transcript import HostTranscript


@dataclass(frozen=True)
class OpeningSource(PolynomialSource):
    """A polynomial to open with ``drawn`` points drawn from the transcript (0: the statement's points are
    prescribed)."""

    drawn: int = 0


class P3Proved:
    """What ``prove_p3`` returns: the commitment (``MultilinearPcs::commit``'s ``MerkleCap``), the ``PcsProof``
    and ``points``, the opening points (E, n, 4) Montgomery words: the prescribed ones, or those the transcript
    drew, replayed from the proof on first use (a few host permutations a proof need not pay for)."""

    def __init__(self, commitment: MerkleCap, proof: PcsProof, points: np.ndarray | Callable[[], np.ndarray]):
        self.commitment = commitment
        self.proof = proof
        self._points = points

    @functools.cached_property
    def points(self) -> np.ndarray:
        return self._points() if callable(self._points) else self._points

    def __getstate__(self) -> dict:
        """Pickled with its points replayed (a worker process's proof travels back so)."""
        return {"commitment": self.commitment, "proof": self.proof, "_points": self.points}


class P3WhirProver(WhirProver):
    """Proves p3-whir openings under one ``P3WhirConfig`` over ``field`` on any backend."""

    claims_after_commitment = True
    variable_order = "suffix"  # the layout's (``P3_WHIR_LAYOUT``): upstream's SuffixProver, the example's

    def __init__(self, config: P3WhirConfig, field: Field, backend: Backend):
        super().__init__(config, backend)
        self.field = field
        self._transcript_points = 0

    def prove_p3(self, evaluations: np.ndarray, num_openings: int = 1, points: np.ndarray | None = None,
                 canonical: bool = False) -> P3Proved:
        """See the module contract; ``canonical``: the evaluations are canonical words (converted and checked by
        the backend) rather than Montgomery ones."""
        source, points = self._source(evaluations, num_openings, points, canonical)
        (commitment, proof, drawn), _ = self.prove_retrying(source, points, None)
        return P3Proved(commitment, proof, drawn if source.drawn else points)

    def prove_many_p3(self, instances, in_flight: int = 2, batch: int = MANY_INSTANCES):
        """Prove each (evaluations, num_openings, points) of ``instances`` as ``prove_p3(..., canonical=True)``
        does, yielding (``P3Proved``, whether its points were prescribed) in order with up to ``in_flight`` proofs in flight
        (``WhirProver.prove_many_points``: the same bytes); a bad instance raises its ``ConfigError`` in its turn,
        after the proofs before it."""
        def sources():
            for evaluations, num_openings, points in instances:
                yield self._source(evaluations, num_openings, points, True)

        for (commitment, proof, drawn), statement in self.prove_many_points(sources(), in_flight, batch):
            prescribed = statement.points.shape[0] > 0  # drawn openings prove with no statement points
            yield P3Proved(commitment, proof, statement.points if prescribed else drawn), prescribed

    def _source(self, evaluations, num_openings: int, points, canonical: bool):
        """(``OpeningSource``, the statement's points (E, n, 4), none when they are drawn), checked."""
        n = self.config.num_variables
        words = np.asarray(evaluations)
        if words.shape != (1 << n,):
            raise ConfigError(f"the polynomial must have 2^{n} = {1 << n} evaluations, got shape {words.shape}")
        if points is None:
            if isinstance(num_openings, bool) or not isinstance(num_openings, int) or num_openings < 1:
                raise ConfigError(f"num_openings must be a positive int, got {num_openings!r:.40}")
            drawn = num_openings
            points = np.zeros((0, n, 4), np.uint32)
        else:
            points = np.ascontiguousarray(points, dtype=np.uint32)
            self.check_statement_points(points)
            if points.shape[0] < 1:
                raise ConfigError("prescribed points: at least one opening point is needed")
            if np.any(points >= np.uint32(self.field.P)):
                raise ConfigError(f"prescribed points must be field elements below p = {self.field.P}")
            drawn = 0
        if not canonical:
            words = np.ascontiguousarray(words, dtype=np.uint32)
            if np.any(words >= np.uint32(self.field.P)):
                raise ConfigError(f"polynomial values must be field elements below p = {self.field.P}")
        return OpeningSource(words, canonical, drawn), points

    # -- hooks ---------------------------------------------------------------------------------------------------
    def _record(self, polynomial, points, values, finish):
        """The step order, with the number of drawn openings of the proof being recorded: ``_shape``,
        ``_statement`` and ``_replay_key`` read it while it records (several proofs may be in flight, each with
        its own)."""
        if isinstance(polynomial, OpeningSource):
            self._transcript_points = polynomial.drawn
        return super()._record(polynomial, points, values, finish)

    def _replay_key(self, polynomial, points, values):
        """The base key with what else fixes this profile's launches: the field and the drawn openings (the
        source's own, where ``prove_many_points`` asks before ``_record`` has set them)."""
        key = super()._replay_key(polynomial, points, values)
        drawn = polynomial.drawn if isinstance(polynomial, OpeningSource) else self._transcript_points
        return None if key is None else key.with_fields(field=self.field.name, drawn_openings=int(drawn))

    def new_transcript(self) -> HostTranscript:
        return HostTranscript(p3_challenger(self.config, self.field), query_sampler=distinct_query_indices)

    def _shape(self, n_points: int) -> ProofShape:
        return proof_shape(self.config, max(n_points, self._transcript_points),
                           P3_WHIR_LAYOUT(self.field, self.variable_order))

    def _statement(self, transcript, table, statement_points, claims):
        """Each opening's point (drawn: z sampled and expanded; or prescribed) and its claim, observed."""
        backend, n = self.backend, self.config.num_variables
        drawn = bool(self._transcript_points)
        count = self._transcript_points if drawn else len(statement_points)
        points, claims = [], []
        with self.timer.phase("claims"):
            for j in range(count):  # upstream: per opening, its point, then its claim observed
                point = backend.expand_point(transcript.sample_ef(), n) if drawn else statement_points[j]
                claim = backend.evaluate(table, point)
                transcript.observe(claim)  # the current values; there are no next values
                points.append(point)
                claims.append(claim)
        return backend.concat_points(points), claims

    def _initial_weights(self, statement_points, ood_points: list, alpha):
        """Two batches: the opening points are drawn after the OOD points (so they follow them in a backend's
        memory) but take the first powers of alpha; the weights are a sum, so the order of adding is free."""
        backend = self.backend
        m, t = len(statement_points), len(ood_points)
        coefficients = backend.challenge_powers(alpha, m + t)
        weights = backend.eq_weights(statement_points, coefficients[:m])
        if not t:
            return weights
        return backend.add_constraint_weights(weights, backend.concat_points(ood_points), coefficients[m:],
                                              np.zeros(0, np.uint32), np.zeros((0, 4), np.uint32))

    def _materialize(self, proof: WhirProof, read: Callable[[Any], Any], claimed: np.ndarray):
        def words(value, shape) -> np.ndarray:
            return np.asarray(read(value), np.uint32).reshape(shape)

        def ef_list(values) -> np.ndarray:
            return np.asarray([read(v) for v in values], np.uint32).reshape(-1, 4)

        def witness(value) -> int:
            return int(np.asarray(read(value)).reshape(-1)[0]) if value is not None else 0

        def sumcheck(data) -> SumcheckData:
            return SumcheckData(ef_list(data.evaluations).reshape(-1, 2, 4),
                                np.asarray([witness(w) for w in data.pow_witnesses], np.uint32))

        def openings(opened) -> QueryOpenings:
            rows, siblings = read(opened.openings)
            return QueryOpenings(opened.kind, np.asarray(rows, np.uint32), np.asarray(siblings, np.uint32))

        def cap(root) -> MerkleCap:
            return MerkleCap(words(root, (1, 8)))

        final_sumcheck = proof.final_sumcheck if self.config.final_sumcheck_rounds > 0 else None
        whir = P3WhirProof(
            initial_ood_answers=ef_list(proof.initial_ood_answers),
            initial_sumcheck=sumcheck(proof.initial_sumcheck),
            rounds=tuple(RoundProof(cap(r.commitment), ef_list(r.ood_answers), witness(r.pow_witness),
                                    openings(r.queries), sumcheck(r.sumcheck)) for r in proof.rounds),
            final_poly=words(proof.final_poly, (-1, 4)),
            final_pow_witness=witness(proof.final_pow_witness),
            final_openings=openings(proof.final_queries),
            final_sumcheck=None if final_sumcheck is None else sumcheck(final_sumcheck),
        )
        commitment = cap(proof.initial_commitment)
        return commitment, PcsProof(whir, self._opening_evals(claimed)), self._opened_points(commitment, whir,
                                                                                              claimed, read)

    def _opening_evals(self, claimed: np.ndarray) -> tuple[OpeningEvals, ...]:
        """``PcsProof.evals`` from the claims (-1, 4) in the order ``_statement`` made them: one opening of
        column 0 per claim, no next values."""
        return tuple(OpeningEvals(c.reshape(1, 4), np.zeros((0, 4), np.uint32)) for c in claimed)

    def _opened_points(self, commitment: MerkleCap, whir: P3WhirProof, claimed: np.ndarray, read):
        """What ``P3Proved.points`` will be when the points were drawn: a callable replaying them on first use
        (one drawn point per claim; read back after later proofs were recorded, so it reads no state of theirs)."""
        return lambda: self._replay_points(commitment, whir, claimed, len(claimed))

    def _replay_points(self, commitment: MerkleCap, whir: P3WhirProof, claimed: np.ndarray, drawn: int
                       ) -> np.ndarray:
        """The opening points the transcript drew, (E, n, 4): replayed on the host from the proof's own values (the
        root, the initial OOD answers, the claims), as the verifier draws them, so no backend reads its points
        back."""
        n = self.config.num_variables
        if not drawn:
            return np.zeros((0, n, 4), np.uint32)
        challenger = p3_challenger(self.config, self.field)
        challenger.observe_many(commitment.roots[0])
        for answer in whir.initial_ood_answers:
            challenger.sample_ef()
            challenger.observe_many(answer)
        points = []
        for claim in claimed:
            points.append(expand_from_univariate(challenger.sample_ef(), n, self.field))
            challenger.observe_many(claim)
        return np.asarray(points, np.uint32).reshape(-1, n, 4)


def prove_p3(config: P3WhirConfig, field: Field, backend: Backend, evaluations: np.ndarray, num_openings: int = 1,
             points: np.ndarray | None = None) -> P3Proved:
    """Commit to ``evaluations`` and open it (see the module contract)."""
    return P3WhirProver(config, field, backend).prove_p3(evaluations, num_openings, points)


def planned_proof(config: P3WhirConfig, backend: Backend, words: np.ndarray, statement_points: int, timer) -> None:
    """``P3Prover.prove``'s path for the device planner (``backends.memory.PLANNED_PROOFS``): canonical ``words``,
    ``statement_points`` openings drawn from the transcript."""
    prover = P3WhirProver(config, config.field, backend)
    prover.timer = backend.timer = timer
    prover.prove_p3(words, statement_points, canonical=True)


register_planned_proof(P3WhirConfig, planned_proof)
