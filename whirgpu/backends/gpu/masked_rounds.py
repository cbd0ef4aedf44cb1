"""The GPU backend's masked sumcheck batch (``Backend.masked_rounds``): the k rounds of one batch of the hiding
PCS in ONE host-valued session, the transcript on the device.

The host challenger's state goes up with the plan's constants; per round the sums (the first by
``sumcheck_round``, the others by the previous fold, ``fold_and_sum``), the round message (``zk_wire``, whose
epilogue observes it), the proof of work (``pow_search``), the challenge and the fold are recorded in order; the last fold
sums nothing. The sums, messages, witnesses, challenges and the challenger's final state are read back once, and
the host challenger takes that state. A search that finds no witness (odds below e^-32) runs the batch again
with full-range searches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base import DeviceBuffer
from ..device_transcript import NOT_FOUND, PROOF_WINDOW, TailLaunch
from ..device_values import POW_MAX_COUNTERS, STATE_WORDS
from ..masked_rounds import MaskedRoundsPlan, MaskedRoundsTrace
from .transcript import copy_challenger, from_host_challenger, load_challenger, until_found


READ_TABLES_MAX_WORDS = 1 << 16  # the folded tables come back with the batch up to 2 x 2^13 EF entries


@dataclass
class RecordedRounds:
    """A recorded batch's device values: per round the sums (2, 4) and wire (w, 4) (proof region), the witness
    (proof, with pow_bits) and gamma (scratch); ``tables``: the folded (evals, weights)."""

    sums: list
    wires: list
    witnesses: list
    gammas: list
    tables: tuple


class MaskedRounds:
    """``run(table, weights, challenger, plan)`` over the backend's ``DeviceState``; ``reductions`` makes the sums
    and folds, ``memory`` takes back the tables the batch folds through."""

    def __init__(self, state, reductions, memory):  # state: the backend's DeviceState
        self.state = state
        self.reductions = reductions
        self.memory = memory

    def run(self, table: DeviceBuffer, weights: DeviceBuffer, challenger, plan: MaskedRoundsPlan):
        k = plan.rounds
        if k == 0 or table.shape[0] < 1 << k or plan.wire_len < 2:
            return None
        return until_found(lambda full_range: self._session(table, weights, challenger, plan, full_range))

    def _session(self, table, weights, challenger, plan: MaskedRoundsPlan, full_range: bool):
        state, k, w = self.state, plan.rounds, plan.wire_len
        ell = plan.masks.shape[1]
        slot = state.alignment() // 4
        folded = table.shape[0] >> k  # entries of the folded tables (EF): read back too when the plan asks
        read_tables = plan.read_tables and 8 * folded <= READ_TABLES_MAX_WORDS
        proof_words = k * (8 + 4 * w + 1 + 4) + STATE_WORDS + (4 * k + 4) * slot + (8 * folded if read_tables else 0)
        consts_words = 4 * (w + 2 + ell)
        scratch_words = 4 + k * (consts_words + 4) + POW_MAX_COUNTERS + (3 * k + 2) * slot
        with state.host_call(proof_words=proof_words, scratch_words=scratch_words) as session:
            regions = session.regions
            from_host_challenger(state, session, challenger, full_range)
            zero_mask = np.zeros((ell, 4), np.uint32)
            consts = [state.put(regions.scratch, np.concatenate(
                [plan.templates[j], plan.lives[j][None], np.asarray(plan.e, np.uint32).reshape(1, 4),
                 plan.masks[j - 1] if j else zero_mask]).astype(np.uint32)) for j in range(k)]
            rounds = self.record(table, weights, consts, w, ell, plan.pow_bits)
            batch = state.batch()
            copies = [regions.proof.take((4,)) for _ in range(k)]
            for gamma, copy in zip(rounds.gammas, copies):
                batch.copy(gamma.buffer, gamma.offset, copy.buffer, copy.offset, 16)
            final = copy_challenger(state, session)
            tables = [state.copy_table_to_proof(t) for t in rounds.tables] if read_tables else None
        found = np.array([int(session.read(x).reshape(-1)[0]) for x in rounds.witnesses], np.uint32)
        if np.any(found == NOT_FOUND):
            self.memory.release(*rounds.tables)
            return None
        load_challenger(challenger, session.read(final))
        trace = MaskedRoundsTrace(np.stack([session.read(x) for x in rounds.sums]).reshape(k, 2, 4),
                                  np.stack([session.read(x) for x in rounds.wires]).reshape(k, w, 4), found,
                                  np.stack([session.read(x) for x in copies]).reshape(k, 4),
                                  None if tables is None else tuple(session.read(x).copy() for x in tables))
        return rounds.tables[0], rounds.tables[1], trace

    def record(self, table: DeviceBuffer, weights: DeviceBuffer, consts: list, w: int, ell: int,
               pow_bits: int) -> RecordedRounds:
        """Record the rounds of one batch into the running session, the transcript on the device: ``consts[j]``
        (one per round) a scratch ``DeviceValue`` of [template_j (w, 4), live_j, e, masks[j-1] (ell, 4), zeros for
        j = 0] (the plan's words, host-written or computed on the device). The input tables are the caller's;
        the intermediate ones go back to the pool."""
        state, k = self.state, len(consts)
        regions = state.session.regions
        transcript = state.session.transcript
        past = state.put(regions.scratch, np.zeros(4, np.uint32))
        kernel = transcript.kernel("zk_wire")
        io = [regions.scratch.buffer, PROOF_WINDOW, transcript.round_constants()]
        out = RecordedRounds([], [], [], [], (table, weights))
        h = self.reductions.sumcheck_round(table, weights)
        current = (table, weights)
        for j in range(k):
            out.sums.append(h)
            wire = regions.proof.take((w, 4))
            head = [0, 0, past.word, out.gammas[-1].word if j else 0, consts[j].word, w, ell if j else 0, 0]
            # the wire made and observed in one launch: its observation (and what follows) the kernel's epilogue
            transcript.defer(TailLaunch(kernel, [(io, head, 1)], out=(wire.word, wire.word + 4 * w), out_field=1,
                                        points=False, reads=((0, h.word, h.word + 8),)))
            out.wires.append(wire)
            transcript.observe(wire)
            if pow_bits > 0:
                out.witnesses.append(transcript.grind(pow_bits))
            out.gammas.append(transcript.sample_ef())
            if j + 1 < k:
                t, wt, h = self.reductions.fold_and_sum(*current, out.gammas[-1])
            else:
                t, wt = self.reductions.fold(*current, out.gammas[-1])
            if j:
                self.memory.release(*current)
            current = (t, wt)
        out.tables = current
        return out
