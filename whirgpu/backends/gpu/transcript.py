"""The GPU backend's whole proof: beginning and ending a proof (a session's lifetime; the proof region read back
once), the transcript's scalars (points, powers, the final polynomial), grinding."""

from __future__ import annotations

import numpy as np

from ...errors import ConfigError, ProverBusy
from ...ref import field_np as F
from ..base import DeviceBuffer, PowRangeExceeded, ProofShape
from ..device_transcript import NOT_FOUND, TranscriptVariant
from ..device_values import (POW_MAX_COUNTERS, STATE_WORDS, DeviceQueries, DeviceValue, concat_points,
                             region_bytes, resolve_value)
from .geometry import EF_BYTES


def challenger_words(sponge, input_buffer, output_len: int) -> np.ndarray:
    """The device challenger's 26 words (device_values layout) for a host challenger's state."""
    words = np.zeros(STATE_WORDS, np.uint32)
    words[:16] = sponge
    words[16] = len(input_buffer)
    words[17] = output_len
    words[18:18 + len(input_buffer)] = input_buffer
    return words


def load_challenger(challenger, words) -> None:
    """Give a host challenger the state of the device challenger's 26 words (the inverse of
    ``challenger_words``: the output buffer is the sponge's first ``output length`` words)."""
    words = np.asarray(words, np.uint32).reshape(STATE_WORDS)
    challenger.sponge_state = words[:16]
    challenger.input_buffer = [int(x) for x in words[18:18 + int(words[16])]]
    challenger.output_buffer = [int(x) for x in words[:int(words[17])]]


def from_host_challenger(state, session, challenger, full_range: bool = False) -> None:
    """Start ``session``'s device transcript at a host challenger's state (its PoW searches full-range or not)."""
    state.drivers.write(session.regions.scratch.buffer,
                        challenger_words(challenger.sponge_state, challenger.input_buffer,
                                         len(challenger.output_buffer)), session.regions.state.offset)
    session.transcript.full_range = full_range


def copy_challenger(state, session):
    """Record a copy of the device challenger into the proof region (read back with it): its ``DeviceValue``,
    which ``load_challenger`` takes. Record it after the session's last transcript step."""
    regions = session.regions
    final = regions.proof.take((STATE_WORDS,))
    state.batch().copy(regions.scratch.buffer, regions.state.offset, final.buffer, final.offset, 4 * STATE_WORDS)
    return final


def until_found(attempt):
    """``attempt(full_range)`` with searches over the usual range, then, where a search found no witness (it
    returned None; odds below e^-32), over every nonce."""
    for full_range in (False, True):
        out = attempt(full_range)
        if out is not None:
            return out
    raise AssertionError("a full-range proof-of-work search found no witness")


class Proofs:
    """The GPU backend's proofs over its ``DeviceState``: ``begin_proof`` .. ``end_proof`` (a session's lifetime,
    recorded through ``replays``), the transcript-dependent scalars, ``grind``; ``memory``: its ``DeviceMemory``
    (the range checks read at the end)."""

    def __init__(self, state, memory, replays):  # state: the backend's DeviceState
        self.state = state
        self.memory = memory
        self.replays = replays

    # -- a whole proof -----------------------------------------------------------------------------------------
    def begin_proof(self, shape: ProofShape, transcript, statement_points: np.ndarray,
                    variant: TranscriptVariant | None = None):
        """Start a device proof: the regions ``shape`` needs, the host transcript's challenger (after the domain
        separator) and the statement's points uploaded once. Returns the device transcript (of ``variant``, by
        default whir-p3's challenger) and the points (m, n, 4) as a ``DeviceValue``."""
        challenger = transcript.challenger
        state = self.state
        if not state.building.acquire(blocking=False):  # checked and taken at once: two threads cannot both pass
            raise ProverBusy(f"begin_proof: a proof is already being built on this {state.rt.name} backend (share "
                             "a backend between threads through Prover, which queues proofs on backend.proof_lock)")
        try:
            return self._begin_proof(shape, challenger, statement_points, variant)
        except BaseException:
            self.replays.cancel()
            state.session = None
            state.building.release()
            raise

    def _begin_proof(self, shape: ProofShape, challenger, statement_points: np.ndarray, variant):
        state = self.state
        state.layout = shape.layout
        align = max(EF_BYTES, int(state.rt.offset_alignment))
        session = state.open_session(*region_bytes(shape, align),
                                     variant=state.transcript_variant if variant is None else variant)
        self.replays.start_recording(session)  # when record_proof asked for it: from the first write on
        state.session = session
        session.fold_fuses = [k < rounds for rounds in shape.sumcheck_phases for k in range(1, rounds + 1)]
        regions = session.regions
        words = challenger_words(challenger.sponge_state, challenger.input_buffer, len(challenger.output_buffer))
        state.drivers.write(regions.scratch.buffer, words, regions.state.offset)
        points = np.asarray(statement_points, np.uint32).reshape(-1, shape.num_variables, 4)
        statement = regions.points.take(points.shape)
        if points.size:
            state.drivers.write(regions.points.buffer, points.reshape(-1), statement.offset, source=("points",))
        return session.transcript, statement

    def end_proof(self, resolve, outputs=()):
        """Submit the rest, read the proof region back once, and return ``resolve(read)`` where ``read`` maps a
        device value (or openings) to host arrays. Raises ``PowRangeExceeded`` when a grind needs a wider search."""
        state = self.state
        session, state.session = state.session, None
        try:
            session.submit()
            state.free_submitted(session)  # before the recording ends: a program checks them free to replay
            recorded = self.replays.finish_recording(session, resolve, outputs)
            try:
                session.words = state.finish_session(session, keep_regions=recorded is not None)
            finally:
                if recorded is not None:  # the recording's regions are its program's first region set
                    recorded[0].release(state.pool, recorded[1])
        finally:
            session.recorder = None
            state.building.release()
        return self._result(session, resolve)

    def _result(self, session, resolve):
        """A read-back proof's ``resolve(read)``, after its range checks and searches are checked."""
        self.memory.check_canonical(session)
        words = session.words
        if any(w.read(words).reshape(-1)[0] == NOT_FOUND for w in session.transcript.witnesses):
            raise PowRangeExceeded("a proof-of-work search found no nonce in its encoded range")
        return resolve(lambda value: resolve_value(words, value))

    @property
    def overlaps_proofs(self) -> bool:
        """Whether a proof may be recorded while the one before it runs: the runtime orders the host's writes
        after the work submitted before them (WebGPU's queue; msl-cpu runs a submission at once), so buffers the
        earlier proof released can serve the next one."""
        return bool(getattr(self.state.rt, "queue_ordered_writes", False))

    def end_proof_deferred(self, resolve):
        """Submit what is left of the proof and detach it: the backend may begin the next proof at once while the
        device runs this one. The returned ``collect()`` reads the proof region back (the proof's regions stay
        out of the pool until then) and returns ``resolve(read)``, raising what ``end_proof`` raises."""
        state = self.state
        session, state.session = state.session, None
        recorded = None
        try:
            session.submit()
            state.free_submitted(session)  # before the recording ends: a program checks them free to replay
            recorded = self.replays.finish_recording(session, resolve)
            # asked for now: the map then waits for this proof's work only, not for the next proof's
            pending = state.drivers.read_later(session.regions.proof.buffer, session.regions.proof.top)
        except BaseException:
            session.recorder = None
            if recorded is not None:  # the regions go back to the pool below: the program must not keep them
                self.replays.forget_program(recorded[0])
            state.building.release()
            state.finish_session(session, read=False)
            raise
        state.building.release()

        def collect():
            try:
                session.words = state.finish_session(session, keep_regions=recorded is not None, pending=pending)
            finally:
                if recorded is not None:
                    recorded[0].release(state.pool, recorded[1])
            return self._result(session, resolve)

        return collect

    def abort_proof(self) -> None:
        """Drop a proof that failed while being encoded (its regions return to the pool)."""
        state = self.state
        session, state.session = state.session, None
        self.replays.cancel()
        if session is not None:
            try:
                state.close_session(session, read=False)
                state.rt.wait()
            finally:
                state.building.release()

    # -- transcript-dependent scalars --------------------------------------------------------------------------
    def expand_point(self, z: DeviceValue, num_variables: int) -> DeviceValue:
        """The point (z^(2^(nv-1)), ..., z^2, z) in the points region (a transcript op: it rides on the launch
        that sampled z)."""
        session = self.state.session
        out = session.regions.points.take((num_variables, 4))
        if num_variables:
            session.transcript.expand(z, out, num_variables)
        return out

    def concat_points(self, points: list[DeviceValue]) -> DeviceValue:
        return concat_points(points)

    def challenge_powers(self, x: DeviceValue, n: int, queries: DeviceQueries | None = None) -> DeviceValue:
        """(n + slots, 4): x^0 .. x^(n-1), then x^n .. for each query slot (0 past the drawn count); a transcript
        op, like ``expand_point``."""
        slots = queries.slots if queries is not None else 0
        session = self.state.session
        out = session.regions.scratch.take((n + slots, 4))
        if n + slots:
            session.transcript.powers(x, out, n, slots, queries.count if queries is not None else None)
        return out

    def domain_points(self, queries: DeviceQueries, log_folded_domain: int) -> DeviceValue:
        return queries.domain_points

    def final_poly(self, table: DeviceBuffer) -> DeviceValue:
        """The final table (EF) copied into the proof region."""
        if not table.is_ext:
            raise ValueError("the final polynomial is an EF table (at least one sumcheck round precedes it)")
        return self.state.copy_table_to_proof(table)

    # -- proof of work -------------------------------------------------------------------------------------------
    def grind(self, challenger, bits: int) -> np.uint32:
        """The smallest valid nonce for a host challenger, searched on the device (as in a proof); then absorbed
        by ``challenger``."""
        bits = int(bits)
        if bits == 0:
            return np.uint32(0)
        if not 0 < bits <= 30:
            raise ConfigError(f"proof-of-work bits = {bits} outside [0, 30]")
        for full_range in (False, True):
            with self.state.host_call(proof_words=1, scratch_words=1 + POW_MAX_COUNTERS) as session:
                from_host_challenger(self.state, session, challenger, full_range)
                witness = session.transcript.grind(bits)
            if session.read(witness).reshape(-1)[0] != NOT_FOUND:
                break
        witness = np.uint32(session.read(witness))
        if not challenger.check_witness(bits, witness):
            raise AssertionError(f"GPU proof of work returned {int(F.from_monty(witness))}, which the transcript "
                                 f"rejects")
        return witness
