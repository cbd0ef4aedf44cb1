"""The Fiat-Shamir transcript of a GPU proof, kept in device memory and advanced by kernels in the command stream.

``DeviceTranscript`` has the interface of the host transcript the prover drives (``observe``, ``sample_ef``,
``sample``, ``grind``, ``sample_queries``), but its values are ``DeviceValue``s and nothing is read back: each
call appends an op to a short program that one ``transcript`` launch runs (transcript.wgsl / .metal). Pending
ops are recorded as one launch just before the next launch of any other kernel (``flush``), so consecutive
transcript steps cost one dispatch. Bit-exact with ``protocol.transcript.DuplexChallenger`` (the challenger's
state layout is in ``device_values``).

Proof of work runs on the device challenger: one ``pow_search`` launch per grind, a fixed grid of ``POW_GROUPS``
workgroups that claim batches of ``POW_BATCH`` nonces in increasing order and stop past the smallest hit, bounded
to 2^(bits + POW_COVER_SLACK) nonces (a miss has odds below e^-32) and to ``POW_LAUNCH`` nonces a launch (only a
grind of more than 23 bits takes several launches, the later ones exiting at their first claim after a hit). A
search that finds nothing leaves ``NOT_FOUND`` (never a field word) in its witness slot, and the prover then
proves again with ``full_range`` searches that cover every nonce below P.

The proof region is bound to the transcript kernel as a window holding just the words its ops touch (they are
the last few values recorded), so the region may be larger than one binding.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..field import P, TWO_ADIC_GENERATORS
from ..ref import field_np as F
from ..runtime.base import RtView
from .device_values import POW_MAX_COUNTERS, DeviceQueries, DeviceValue

OP_OBSERVE, OP_SAMPLE, OP_WITNESS, OP_QUERIES, OP_POW_RESET = 1, 2, 3, 4, 5
MAX_OPS = 15  # ops per transcript launch (the params struct holds 15)
POW_WG = 64
POW_BATCH = POW_WG  # nonces a workgroup claims at once, one a thread (pow_search.wgsl)
# Workgroups of one search: 65,536 threads, what it takes to keep a large GPU's ALUs busy on Poseidon2 (8 of
# these groups per SM of a 132-SM H100, about all its registers hold); where fewer fit, the rest start later and
# exit at their first claim once a hit is known. In flight past the smallest hit: at most one batch a group.
POW_GROUPS = 1024
POW_LAUNCH = 1 << 28  # most nonces per pow_search launch: ~85 ms at 3.2 G permutations/s, no driver watchdog
POW_COVER_SLACK = 5  # a grind's launches cover 2^(bits + this) nonces in all
NOT_FOUND = 0xFFFFFFFF  # a witness slot whose search found no nonce
MAX_QUERY_BITS = 20  # bits one sample_bits call of the query sampler draws at most (query_indices.py)


def query_calls(num_queries: int, log_size: int) -> int:
    """Indices drawn per ``sample_bits`` call by the query sampler (``protocol.query_indices``'s three cases)."""
    if num_queries * log_size <= MAX_QUERY_BITS:
        return num_queries
    per_call = MAX_QUERY_BITS // log_size
    return per_call if per_call >= 2 else 1


def pow_launches(bits: int, full_range: bool = False) -> list[tuple[int, int]]:
    """The (first batch, end batch) of each ``pow_search`` launch of one grind: 2^(bits + POW_COVER_SLACK) nonces
    (every nonce below P when ``full_range``) in ranges of at most POW_LAUNCH nonces, so one launch for a grind of
    up to 23 bits. ``bits`` >= 1 (a grind of 0 bits launches nothing)."""
    end_nonce = P if full_range else min(P, 1 << (bits + POW_COVER_SLACK))
    return [(start // POW_BATCH, -(-min(start + POW_LAUNCH, end_nonce) // POW_BATCH))
            for start in range(0, end_nonce, POW_LAUNCH)]


class DeviceTranscript:
    """The device challenger of one proof (``backend``'s current session). Values returned live in the session's
    scratch (challenges) or proof (witnesses) region."""

    def __init__(self, backend, session):
        self.backend = backend
        self.session = session
        self.pending: list[tuple[int, int, int, int]] = []
        self.proof_words: list[tuple[int, int]] = []  # (first, end) proof words each pending op touches
        self.witnesses: list[DeviceValue] = []
        self.full_range = False

    # -- recording -----------------------------------------------------------------------------------------------
    def _op(self, code: int, y: int = 0, z: int = 0, w: int = 0) -> None:
        if len(self.pending) == MAX_OPS:
            self.flush()
        self.pending.append((code, y, z, w))

    def flush(self) -> None:
        """Record the pending ops as one transcript launch (called before any other launch)."""
        if not self.pending:
            return
        ops, self.pending = [list(op) for op in self.pending], []
        touched, self.proof_words = self.proof_words, []
        regions = self.session.regions
        align = regions.proof.align
        first = min((a for a, _ in touched), default=0) * 4 // align * align  # bytes, aligned down
        end = max((b for _, b in touched), default=1) * 4
        for op in ops:  # proof offsets relative to the window
            if op[0] == OP_OBSERVE:
                op[1] -= first // 4
            elif op[0] == OP_WITNESS:
                op[2] -= first // 4
        params = np.zeros(4 + 4 * MAX_OPS, np.uint32)
        params[0] = len(ops)
        params[4:4 + 4 * len(ops)] = np.asarray(ops, np.uint32).reshape(-1)
        window = RtView(regions.proof.buffer, first, -(-(end - first) // 16) * 16)
        self.session.batch.dispatch(self.backend._drivers.kernel("transcript"),
                                    [regions.scratch.buffer, window, self.backend._round_constants()], params, 1)

    # -- the challenger's interface ------------------------------------------------------------------------------
    def observe(self, value: DeviceValue) -> None:
        """Absorb a value of the proof region (root, OOD answer, sumcheck values, final polynomial), word by word."""
        if value.buffer is not self.session.regions.proof.buffer:
            raise ValueError("the device transcript observes values of the proof region only")
        if value.words:
            self._op(OP_OBSERVE, value.word, value.words)
            self.proof_words.append((value.word, value.word + value.words))

    def sample_ef(self) -> DeviceValue:
        out = self.session.regions.scratch.take((4,))
        self._op(OP_SAMPLE, out.word, 4)
        return out

    def sample(self) -> None:
        """One base sample, dropped (the checkpoint before query sampling)."""
        self._op(OP_SAMPLE, self.session.regions.discard.word, 1)

    def grind(self, bits: int) -> DeviceValue:
        """Proof of work on the device: the smallest valid nonce's Montgomery word into a proof slot, absorbed as
        ``check_witness`` does. ``bits`` in [1, 30]."""
        bits = int(bits)
        if not 0 < bits <= 30:
            raise ConfigError(f"proof-of-work bits = {bits} outside [1, 30]")
        regions = self.session.regions
        launches = pow_launches(bits, self.full_range)
        if len(launches) > POW_MAX_COUNTERS:
            raise RuntimeError(f"{len(launches)} proof-of-work launches exceed {POW_MAX_COUNTERS} counters")
        work = regions.scratch.take((1 + len(launches),))
        witness = regions.proof.take(())
        # The reset rides on the transcript launch of the ops recorded before the grind (the searches read the
        # challenger they leave); the witness op starts the next one.
        self._op(OP_POW_RESET, work.word, work.word + 1, len(launches))
        self.flush()
        rt = self.backend._drivers
        kernel = rt.kernel("pow_search", constants={"WG": POW_WG})
        rc = self.backend._round_constants()
        for i, (first, end) in enumerate(launches):
            params = np.array([(1 << bits) - 1, work.word, work.word + 1 + i, first, end, 0, 0, 0], np.uint32)
            self.session.batch.dispatch(kernel, [regions.scratch.buffer, rc], params, min(POW_GROUPS, end - first))
        self._op(OP_WITNESS, work.word, witness.word)
        self.proof_words.append((witness.word, witness.word + 1))
        self.witnesses.append(witness)
        return witness

    def sample_queries(self, domain_size: int, folding_factor: int, num_queries: int) -> DeviceQueries:
        """Query indices into the folded domain, drawn, sorted and de-duplicated on the device
        (``protocol.query_indices``), with their domain points generator^index."""
        folded = domain_size >> folding_factor
        log_size = folded.bit_length() - 1
        q = int(num_queries)
        slots = min(q, folded)
        regions = self.session.regions
        raw = regions.scratch.take((q,))
        self._op(OP_QUERIES, raw.word, q | (log_size << 16), query_calls(q, log_size))
        flags = regions.scratch.take((q,))
        indices = regions.scratch.take((slots,))
        count = regions.scratch.take((1,))
        points = regions.scratch.take((slots,))
        proof_count = regions.proof.take((1,))
        self.flush()
        generator = int(F.constant(TWO_ADIC_GENERATORS[log_size]))
        params = np.array([raw.word, q, indices.word, slots, count.word, 0, points.word, flags.word,
                           generator, 0, 0, 0], np.uint32)
        rt = self.backend._drivers
        self.session.batch.dispatch(rt.kernel("queries"), [regions.scratch.buffer, proof_count.view()], params, 1)
        return DeviceQueries(indices, count, proof_count, points, slots)
