"""The WHIR prover (commit + open) as the reference runs it, over any ``Backend``.

The step order of whir-spec.md §4 lives here, once, for every backend; any change breaks compatibility. The
prover talks to a transcript and a backend whose values are *handles*: host numpy arrays on the cpu backend
(its transcript is the host ``DuplexChallenger``), slots of device buffers on a GPU backend (its transcript is a
kernel in the command stream, and nothing is read back until the proof is done). So the proof is assembled from
handles, and ``backend.end_proof`` turns them into host arrays at the end (on a GPU: one readback).

What a handle may be asked for: ``len`` / slicing of its leading axis (coefficients), being observed, or being
passed back to the backend. The prover never reads a value: the running claimed sum of the sumcheck is not part
of the proof (the verifier recomputes it), so it is not tracked here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .. import activity
from ..backends.base import Backend, Commitment, DeviceBuffer, PowRangeExceeded, ProofShape, TransferStats
from ..backends.program_key import ProgramKey
from ..errors import ConfigError
from ..field import P
from .proof import RoundProof, Statement, SumcheckData, WhirProof
from .schedule import Schedule
from .transcript import HostTranscript


MANY_INSTANCES = 16  # proofs of one shape prove_many runs in the same launches, at most (the backend may allow fewer)


@dataclass
class PhaseTimer:
    """Wall-clock seconds per prover phase (host view). ``sync``, when set, is called at the end of every phase
    (a profiling backend waits for the device there, so each phase holds its own device time). The phase running
    is the process's current activity (``whirgpu.activity``), which a progress line shows."""

    seconds: dict[str, float] = field(default_factory=dict)
    sync: Callable[[], None] | None = None

    @contextmanager
    def phase(self, name: str):
        start = time.perf_counter()
        try:
            with activity.doing(name):  # what a progress line shows while the phase runs
                yield
                if self.sync is not None:
                    self.sync()
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start


@dataclass
class _State:
    table: DeviceBuffer
    weights: DeviceBuffer
    commitment: Commitment


@dataclass
class _Opened:
    """An opening step's handles: the backend's openings and the kind of rows they hold."""

    kind: str
    openings: Any


def check_polynomial(config: Schedule, polynomial: np.ndarray) -> np.ndarray:
    """Validate a Montgomery base table of 2^n words and return it as a contiguous uint32 array."""
    polynomial = np.asarray(polynomial)
    n = config.num_variables
    if polynomial.shape != (1 << n,):
        raise ConfigError(f"the polynomial must have 2^{n} = {1 << n} evaluations, got shape {polynomial.shape}")
    polynomial = np.ascontiguousarray(polynomial, dtype=np.uint32)
    if np.any(polynomial >= P):
        raise ConfigError("polynomial values must be field elements below p = 2013265921")
    return polynomial


@dataclass(frozen=True)
class PolynomialSource:
    """The polynomial to commit, as the backend takes it: ``words`` is a (2^n,) uint32 host array or a table
    already on the backend's device (``Backend.device_table``). ``canonical``: the words are canonical field
    elements, converted and range-checked by the backend (``Backend.upload_canonical``: a word >= p is a
    ``ConfigError`` and no proof); else they are Montgomery words, uploaded as they are."""

    words: Any
    canonical: bool = True


class WhirProver(ABC):
    """Proves evaluation claims about a committed multilinear polynomial (values in Montgomery form).

    The step order (``_prove`` .. ``_final_round``) is written once, for every profile; what a profile does is a
    hook (``new_transcript``, ``_shape``, ``_statement``, ``_materialize``, ``_initial_weights`` and the data
    ``claims_after_commitment``) or the backend's ``TableLayout`` (the shape carries it), defined by the
    profile's subclass: ``profiles.whir_p3_metal.prover.MetalWhirProver``, ``profiles.p3_whir.prover.
    P3WhirProver``. This class has no profile of its own: its hooks are abstract methods.

    What every profile's entry points share: ``check_statement_points`` (the points' shape) and
    ``prove_retrying`` (the step order under the backend's proof lock)."""

    claims_after_commitment: bool  # hook: the statement's claims are evaluated (and observed) after the OOD answers

    def __init__(self, config: Schedule, backend: Backend):
        self.config = config
        self.backend = backend
        self.timer = PhaseTimer(sync=backend.sync if getattr(backend, "profile", False) else None)
        backend.timer = self.timer  # the backend reports its own sub-phases (ntt, merkle) into the same timer
        self.stats = TransferStats()  # bytes uploaded / downloaded / copied by the last ``prove``

    # -- public ----------------------------------------------------------------------------------------------
    def prove(self, polynomial: np.ndarray, statement: Statement) -> WhirProof:
        """Commit to ``polynomial`` (2^n Montgomery base words) and prove ``statement`` about it."""
        polynomial = check_polynomial(self.config, polynomial)
        self.check_statement_points(statement.points)
        return self.prove_retrying(PolynomialSource(polynomial, canonical=False), statement.points,
                                   statement.values)[0]

    def prove_points(self, polynomial: PolynomialSource, points: np.ndarray) -> tuple[WhirProof, Statement]:
        """Commit to ``polynomial``, evaluate it at ``points`` (m, n, 4) Montgomery where the table is (on a GPU
        backend on the device, read back with the proof) and prove those claims. Returns the proof and the
        statement (points, claimed values)."""
        self.check_statement_points(points)
        if isinstance(polynomial.words, np.ndarray) and polynomial.words.shape != (1 << self.config.num_variables,):
            raise ConfigError(f"the polynomial must have 2^{self.config.num_variables} evaluations, got shape "
                              f"{polynomial.words.shape}")
        proof, values = self.prove_retrying(polynomial, points, None)
        return proof, Statement(points, values)

    def prove_many_points(self, sources, in_flight: int = 2, instances: int = MANY_INSTANCES):
        """Prove each (``PolynomialSource``, points (m, n, 4) Montgomery) of ``sources`` as ``prove_points`` does,
        yielding (proof, ``Statement``) in order, with up to ``in_flight`` proofs (or batches) recorded before the
        oldest is read back: the host records proof i + 1 (and uploads its table) while the device runs proof i,
        on a backend that ``overlaps_proofs`` (else one at a time). Once a shape has a recording, up to
        ``instances`` proofs of it in a row run in the same launches (``Backend.replay_many``, as many as the
        backend's ``instances_for`` allows; 1: never). Byte for byte the proofs ``prove_points`` makes. Holds the
        backend's ``proof_lock`` from the first proof to the last (other threads' proofs wait). A source that
        fails (a bad instance) raises in its turn, after the proofs before it have been yielded."""
        if isinstance(in_flight, bool) or not isinstance(in_flight, int) or in_flight < 1:
            raise ConfigError(f"in_flight must be a positive int, got {in_flight!r:.40}")
        if isinstance(instances, bool) or not isinstance(instances, int) or instances < 1:
            raise ConfigError(f"instances must be a positive int, got {instances!r:.40}")
        backend = self.backend
        with backend.proof_lock:
            depth = in_flight if backend.overlaps_proofs else 1
            pending: deque = deque()  # started groups (one proof, or one instanced run), oldest first
            waiting: list = []  # (polynomial, points) of one shape, read and not started (a batch being filled)
            waiting_key = None
            try:
                source = iter(sources)
                while True:
                    try:  # a bad instance fails in its turn: the proofs before it are yielded first
                        item = next(source, None)
                        if item is not None:
                            polynomial, points = item
                            points = np.asarray(points, np.uint32)
                            self.check_statement_points(points)
                            if isinstance(polynomial.words, np.ndarray) and \
                                    polynomial.words.shape != (1 << self.config.num_variables,):
                                raise ConfigError(f"the polynomial must have 2^{self.config.num_variables} "
                                                  f"evaluations, got shape {polynomial.words.shape}")
                    except Exception:
                        self._start(waiting, waiting_key, pending)
                        while pending:
                            yield from self._collect_group(pending.popleft())
                        raise
                    if item is None:
                        break
                    key = self._replay_key(polynomial, points, None) if instances > 1 else None
                    wanted = backend.instances_for(key, instances) if key is not None else 1
                    if waiting and (key != waiting_key or wanted < 2):
                        self._start(waiting, waiting_key, pending)
                    waiting.append((polynomial, points))
                    waiting_key = key
                    if len(waiting) >= wanted:
                        self._start(waiting, waiting_key, pending)
                    while len(pending) >= depth:
                        yield from self._collect_group(pending.popleft())
                self._start(waiting, waiting_key, pending)
                while pending:
                    yield from self._collect_group(pending.popleft())
            finally:
                for group in pending:  # abandoned or failed: read the rest back so their memory returns
                    for collect, _, _ in group:
                        try:
                            collect()
                        except Exception:  # noqa: BLE001 - their results are dropped with them
                            pass
                backend.drop_batches()  # a batch's K copies of the proof's buffers do not outlive the iteration

    def _start(self, waiting: list, key, pending: deque) -> None:
        """Start the proofs of ``waiting`` (then emptied): one instanced run where the backend takes them
        together, else one by one; each start appends its group to ``pending``."""
        backend = self.backend
        items, waiting[:] = list(waiting), []
        self.stats = backend.stats = TransferStats()
        if len(items) > 1:
            extra = self._replay_inputs()
            with self.timer.phase("replay"):
                collects = backend.replay_many(key, [(p.words, pts, extra) for p, pts in items], self)
            if collects is not None:
                pending.append([(c, p, pts) for c, (p, pts) in zip(collects, items)])
                return
        for polynomial, points in items:
            self.stats = backend.stats = TransferStats()
            pending.append([(self._record(polynomial, points, None, backend.end_proof_deferred), polynomial,
                             points)])

    def _collect_group(self, group: list):
        for collect, polynomial, points in group:
            yield self._collect(collect, polynomial, points)

    def _collect(self, collect, polynomial: PolynomialSource, points: np.ndarray):
        try:
            proof, values = collect()
        except PowRangeExceeded:  # as _prove_locked: this one again, every nonce searched
            self.backend.pow_full_range = True
            try:
                proof, values = self._prove(polynomial, points, None)
            finally:
                self.backend.pow_full_range = False
        return proof, Statement(points, values)

    def check_statement_points(self, points: np.ndarray) -> None:
        """``ConfigError`` unless ``points`` is an (m, num_variables, 4) array of evaluation points: the check every
        entry point (this class's and a profile's) runs before a proof starts."""
        n = self.config.num_variables
        if points.ndim != 3 or points.shape[1:] != (n, 4):
            raise ConfigError(f"statement points must have shape (m, {n}, 4), got {points.shape}")

    def prove_retrying(self, polynomial: PolynomialSource, points: np.ndarray, values: np.ndarray | None):
        """The one way into the step order for every entry point: (proof, claimed values), ``values`` as given,
        or computed by the backend when None. Holds the backend's ``proof_lock`` throughout (proofs of several
        threads on one backend run one after another) and proves again over every nonce in the rare case a
        grind's range runs out, so the bytes never depend on it."""
        with self.backend.proof_lock:
            return self._prove_locked(polynomial, points, values)

    def _prove_locked(self, polynomial: PolynomialSource, points: np.ndarray, values: np.ndarray | None):
        self.stats = self.backend.stats = TransferStats()  # the backend counts this proof's transfers afresh
        try:
            return self._prove(polynomial, points, values)
        except PowRangeExceeded:
            # Odds below e^-32 per grind: prove again with searches over every nonce (same bytes, smallest nonce).
            self.backend.pow_full_range = True
            try:
                return self._prove(polynomial, points, values)
            finally:
                self.backend.pow_full_range = False

    # -- hooks: what a profile does (``profiles/<profile>/prover.py`` subclasses this class) ---------------------
    @abstractmethod
    def new_transcript(self) -> HostTranscript:
        """Hook: the host transcript every proof starts from, the profile's challenger after its domain
        separator (a profile's table prover starts its own proofs from it too)."""

    @abstractmethod
    def _shape(self, n_points: int) -> ProofShape:
        """Hook: the proof's ``ProofShape`` for ``n_points`` statement points (``proof_shape`` with the profile's
        ``TableLayout``)."""

    @abstractmethod
    def _statement(self, transcript, table: DeviceBuffer, statement_points, claims):
        """Hook: the statement's points and claims, after the commitment's OOD answers (observed or not, as the
        profile's transcript has them)."""

    @abstractmethod
    def _materialize(self, proof: WhirProof, read: Callable[[Any], Any], claimed: np.ndarray):
        """Hook: the profile's proof object, every handle of ``proof`` replaced by ``read(handle)``."""

    @abstractmethod
    def _initial_weights(self, statement_points, ood_points: list, alpha):
        """Hook: the initial constraint's weights over the statement's points and the OOD points at alpha's
        powers, in the profile's order."""

    def _replay_key(self, polynomial: PolynomialSource, points: np.ndarray, values: np.ndarray | None):
        """What fixes every launch of a proof (``Backend.replay_proof``): this profile, the configuration and the
        number of points; None for a proof that is not replayed (claimed values given, Montgomery or device-table
        input, or a table the upload would refuse: it then fails as it always does)."""
        words = polynomial.words
        if values is not None or not polynomial.canonical or not isinstance(words, np.ndarray) or \
                words.dtype != np.uint32 or words.shape != (1 << self.config.num_variables,) or \
                not words.flags.c_contiguous:
            return None
        return ProgramKey(type(self), self.config, int(points.shape[0]))

    def _replay_inputs(self) -> dict | None:
        """A replayed proof's inputs besides its table and points (``Backend.replay_proof``); None: none."""
        return None

    def _release(self, *items) -> None:
        """The proof is done with these buffers / commitments (``Backend.release``); a profile holding a
        commitment across proofs keeps its own out (``tables.prover``)."""
        self.backend.release(*items)

    # -- the step order ------------------------------------------------------------------------------------------
    def _prove(self, polynomial: PolynomialSource, points: np.ndarray, values: np.ndarray | None):
        return self._record(polynomial, points, values, self.backend.end_proof)

    def _record(self, polynomial: PolynomialSource, points: np.ndarray, values: np.ndarray | None, finish):
        """Record the whole proof on the backend, then ``finish(resolve)``: ``backend.end_proof`` (the proof
        read back) or ``backend.end_proof_deferred`` (a ``collect`` for later, the device still running it)."""
        backend = self.backend
        key = self._replay_key(polynomial, points, values)
        if key is not None:  # a shape proved before: the backend may replay its recorded launches
            with self.timer.phase("replay"):
                replayed = backend.replay_proof(key, polynomial.words, points, finish == backend.end_proof_deferred,
                                                self._replay_inputs(), self)
            if replayed is not None:
                return replayed
        backend.record_proof(key)  # every proof says whether it may be recorded (None: it may not)
        shape = self._shape(points.shape[0])
        transcript, point_handles = backend.begin_proof(shape, self.new_transcript(), points)
        try:
            proof, state, claims = self._commit(polynomial, point_handles, transcript, values is None)
            for round_index in range(self.config.n_rounds):
                self._round(round_index, proof, state, transcript)
            self._final_round(proof, state, transcript)
            self._release(state.table, state.weights, state.commitment)

            def resolve(read, prover=None):  # prover: the one whose proof replays this recording (its state)
                claimed = values if claims is None else \
                    np.asarray([read(c) for c in claims], np.uint32).reshape(-1, 4)
                return (prover or self)._materialize(proof, read, claimed), claimed

            with self.timer.phase("download"):
                return finish(resolve)
        except BaseException:
            backend.abort_proof()
            raise

    # -- commit ----------------------------------------------------------------------------------------------
    def _commit(self, polynomial: PolynomialSource, statement_points, transcript, evaluate_claims: bool):
        """Commit the polynomial (``_commit_table``), then the rest of the initial phase (``_open_committed``)."""
        table, commitment, claims = self._commit_table(polynomial, statement_points, evaluate_claims)
        return self._open_committed(table, commitment, statement_points, transcript, claims)

    def _commit_table(self, polynomial: PolynomialSource, statement_points, evaluate_claims: bool):
        """Upload and commit the polynomial (and evaluate it at the statement's points when asked: those claims
        are not observed, so where they are computed does not change the transcript): (table, commitment, claims
        or None). Touches no transcript, so a commitment made once may serve several openings (a profile that
        holds one overrides this; ``tables.prover``)."""
        config, backend = self.config, self.backend
        n = config.num_variables
        k0 = config.fold(0)
        with self.timer.phase("upload"):
            if polynomial.canonical:
                table = backend.upload_canonical(polynomial.words)
            else:
                table = backend.upload(polynomial.words)
        claims = None
        if evaluate_claims and not self.claims_after_commitment:
            with self.timer.phase("claims"):
                claims = [backend.evaluate(table, statement_points[i]) for i in range(len(statement_points))]
        commitment = backend.commit(table, k0, n + config.starting_log_inv_rate - k0)
        return table, commitment, claims

    def _open_committed(self, table: DeviceBuffer, commitment: Commitment, statement_points, transcript, claims):
        """The initial phase after the commitment: root observed, OOD answers, the statement, alpha, the initial
        sumcheck; returns (proof, state, claims)."""
        config = self.config
        n = config.num_variables
        k0 = config.fold(0)
        transcript.observe(commitment.root)
        ood_points, ood_answers = self._ood(transcript, table, n, config.commitment_ood_samples)
        statement_points, claims = self._statement(transcript, table, statement_points, claims)
        proof = WhirProof(
            initial_commitment=commitment.root,
            initial_ood_answers=ood_answers,
            initial_sumcheck=SumcheckData([], []),
        )
        # Initial constraint: the statement's claims first, then the commitment's OOD claims, combined with powers
        # of alpha.
        alpha = transcript.sample_ef()
        with self.timer.phase("weights"):
            weights = self._initial_weights(statement_points, ood_points, alpha)
        state = _State(table, weights, commitment)
        proof.initial_sumcheck = self._sumcheck(state, transcript, k0, config.starting_folding_pow_bits)
        return proof, state, claims

    def _ood(self, transcript, table: DeviceBuffer, num_variables: int, samples: int):
        """Out-of-domain samples of ``table``: each point z (expanded) and the answer f(z), observed in turn."""
        points, answers = [], []
        with self.timer.phase("ood"):
            for _ in range(samples):
                point = self.backend.expand_point(transcript.sample_ef(), num_variables)
                answer = self.backend.evaluate(table, point)
                transcript.observe(answer)
                points.append(point)
                answers.append(answer)
        return points, answers

    # -- sumcheck --------------------------------------------------------------------------------------------
    def _sumcheck(self, state: _State, transcript, n_rounds: int, pow_bits: int) -> SumcheckData:
        if pow_bits == 0 and n_rounds > 0:
            with self.timer.phase("sumcheck"):
                fused = self.backend.sumcheck_rounds(state.table, state.weights, transcript, n_rounds)
            if fused is not None:
                evaluations, state.table, state.weights = fused
                return SumcheckData(evaluations, [])
        evaluations, witnesses = [], []
        for _ in range(n_rounds):
            with self.timer.phase("sumcheck"):
                h = self.backend.sumcheck_round(state.table, state.weights)  # (h(0), h(2))
            transcript.observe(h)
            if pow_bits > 0:
                with self.timer.phase("pow"):
                    witnesses.append(transcript.grind(pow_bits))
            r = transcript.sample_ef()
            with self.timer.phase("fold"):
                old = (state.table, state.weights)
                state.table, state.weights = self.backend.fold(state.table, state.weights, r)
                self._release(*old)
            evaluations.append(h)
        return SumcheckData(evaluations, witnesses)

    # -- intermediate rounds ---------------------------------------------------------------------------------
    def _round(self, i: int, proof: WhirProof, state: _State, transcript) -> None:
        config, backend = self.config, self.backend
        round_config = config.rounds[i]
        nv = round_config.num_variables
        k_next = config.fold(i + 1)
        log_height = nv - k_next + config.round_log_inv_rate(i)
        commitment = backend.commit(state.table, k_next, log_height)
        transcript.observe(commitment.root)
        ood_points, ood_answers = self._ood(transcript, state.table, nv, round_config.ood_samples)

        pow_witness = np.uint32(0)
        if round_config.pow_bits > 0:
            with self.timer.phase("pow"):
                pow_witness = transcript.grind(round_config.pow_bits)
        transcript.sample()  # checkpoint: one base element, discarded

        with self.timer.phase("openings"):
            queries = transcript.sample_queries(round_config.domain_size, round_config.folding_factor,
                                                round_config.num_queries)
            # gamma is drawn right after the queries (the openings are not observed, so the order of the two
            # steps is free): on a GPU both then ride on the query sort's launch.
            gamma = transcript.sample_ef()
            # gamma^0 .. for the OOD claims, then one per query (0 for query slots the transcript did not fill)
            coefficients = backend.challenge_powers(gamma, len(ood_points), queries)
            opened = self._open(state.commitment, queries)
            select_vars = backend.domain_points(queries, round_config.log_folded_domain_size)
        with self.timer.phase("weights"):
            n_ood = len(ood_points)
            eq_points = backend.concat_points(ood_points) if n_ood else None
            state.weights = backend.add_constraint_weights(state.weights, eq_points, coefficients[:n_ood],
                                                           select_vars, coefficients[n_ood:])
        self._release(state.commitment)
        state.commitment = commitment
        sumcheck = self._sumcheck(state, transcript, k_next, round_config.folding_pow_bits)
        proof.rounds.append(RoundProof(commitment.root, ood_answers, pow_witness, opened, sumcheck))

    def _open(self, commitment: Commitment, queries) -> _Opened:
        kind = "extension" if commitment.is_ext else "base"
        return _Opened(kind, self.backend.open_rows(commitment, queries))

    # -- final round -----------------------------------------------------------------------------------------
    def _final_round(self, proof: WhirProof, state: _State, transcript) -> None:
        config, backend = self.config, self.backend
        final_poly = backend.final_poly(state.table)
        transcript.observe(final_poly)
        proof.final_poly = final_poly
        if config.final_pow_bits > 0:
            with self.timer.phase("pow"):
                proof.final_pow_witness = transcript.grind(config.final_pow_bits)
        with self.timer.phase("openings"):
            queries = transcript.sample_queries(config.final_domain_size, config.fold(config.n_rounds),
                                                config.final_queries)
            proof.final_queries = self._open(state.commitment, queries)
        if config.final_sumcheck_rounds > 0:
            proof.final_sumcheck = self._sumcheck(
                state, transcript, config.final_sumcheck_rounds, config.final_folding_pow_bits
            )

