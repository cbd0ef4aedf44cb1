"""The GPU backend's code-switching round of the hiding PCS (``Backend.code_switch``): its device part in ONE
host-valued session, the transcript on the device.

The host challenger's state goes up with the plan; the interleaved table and its commitment are recorded and the
root observed as the tree's last launch ends (``Commitments``); the mask root, put in the proof region, is
observed; per OOD sample the challenge is expanded (y^(2^(m-1)), ..., y) in the points region, the residual
evaluated there in the kernel's powers mode (sum_b f[b] z^b), the answer made by ``zk_ood`` and observed (its
epilogue); then the proof of work, the dropped sample, the distinct query draw, the source's openings at those
indices and the combination challenge. One read brings back the root, the samples, evaluations, answers, witness,
indices, rows, paths (pruned on the host), the combination and the challenger's state, which the host challenger
takes. A search that finds no witness (odds below e^-32) runs the round again with a full-range search.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...kernels.merkle import DIGEST
from ..base import Commitment, DeviceBuffer
from ..code_switch import CodeSwitchPlan, CodeSwitchTrace
from ..device_transcript import NOT_FOUND, TailLaunch
from ..device_values import POW_MAX_COUNTERS, STATE_WORDS, DeviceValue, resolve_value
from .geometry import log2
from .transcript import copy_challenger, from_host_challenger, load_challenger, until_found


@dataclass
class RecordedSwitch:
    """A recorded round's device values: the new ``commitment`` (its root a proof value); per OOD sample z
    (scratch), the evaluation and the answer (proof); the witness (proof, or None without PoW); the queries
    (``DeviceQueries``), the source's openings (``DeviceOpenings``) and the combination challenge (scratch)."""

    commitment: Commitment
    zs: list
    evaluations: list
    answers: list
    witness: DeviceValue | None = None
    queries: object = None
    openings: object = None
    combination: DeviceValue | None = None


class CodeSwitch:
    """``run(table, source, challenger, plan)`` over the backend's ``DeviceState``, with its ``Commitments``
    (interleave, commit, openings), ``Reductions`` (the evaluations), ``Proofs`` (the point expansion) and
    ``DeviceMemory``."""

    def __init__(self, state, commitments, reductions, proofs, memory):  # state: the backend's DeviceState
        self.state = state
        self.commitments = commitments
        self.reductions = reductions
        self.proofs = proofs
        self.memory = memory

    def run(self, table: DeviceBuffer, source: Commitment, challenger, plan: CodeSwitchPlan):
        fresh = np.ascontiguousarray(plan.fresh, np.uint32)
        if fresh.nbytes > self.state.window_limit or not table.is_ext or source.handle is None:
            return None  # the randomness rows do not fit one binding: the caller's steps (a host interleave)
        return until_found(lambda full_range: self._session(table, source, challenger, plan, full_range))

    def _session(self, table, source, challenger, plan: CodeSwitchPlan, full_range: bool):
        state = self.state
        m, s, q = log2(table.shape[0]), plan.ood_samples, plan.num_queries
        depth = len(source.handle[1]) - 1
        slot = state.alignment() // 4
        proof_words = (2 * DIGEST + 8 * s + 1 + 2 * q + 1 + q * (source.width + depth * DIGEST) + 4 * s + 4
                       + STATE_WORDS + (3 * s + 16) * slot)
        scratch_words = (4 * plan.mask_message.shape[0] + 4 * s + 4 + 5 * q + 8 + POW_MAX_COUNTERS
                         + (s + 16) * slot)
        with state.host_call(proof_words=proof_words, scratch_words=scratch_words,
                             points_words=s * (4 * m + 4)) as session:
            regions = session.regions
            from_host_challenger(state, session, challenger, full_range)
            consts = state.put(regions.scratch, plan.mask_message)
            mask_root = state.put(regions.proof, np.asarray(plan.mask_root, np.uint32).reshape(DIGEST))
            round_ = self.record(table, source, plan, mask_root, consts)
            batch = state.batch()
            copies = [regions.proof.take((4,)) for _ in range(s + 1)]
            for value, copy in zip(round_.zs + [round_.combination], copies):
                batch.copy(value.buffer, value.offset, copy.buffer, copy.offset, 16)
            final = copy_challenger(state, session)
        words = session.words
        commitment, witness, openings = round_.commitment, round_.witness, round_.openings
        found = int(witness.read(words).reshape(-1)[0]) if witness is not None else 0
        if found == NOT_FOUND:
            self.memory.release(commitment)
            return None
        commitment.root = commitment.root.read(words).reshape(DIGEST).copy()
        load_challenger(challenger, final.read(words))
        count = int(openings.count.read(words)[0])
        indices = openings.indices.read(words)[:count].astype(np.int64)
        rows, siblings = resolve_value(words, openings)
        read = lambda values: np.array([v.read(words).reshape(4) for v in values], np.uint32).reshape(-1, 4)  # noqa: E731
        return CodeSwitchTrace(commitment, read(copies[:s]), read(round_.evaluations), read(round_.answers), found,
                               indices, np.asarray(rows, np.uint32), np.asarray(siblings, np.uint32),
                               copies[s].read(words).reshape(4).copy())

    def record(self, table: DeviceBuffer, source: Commitment, plan: CodeSwitchPlan, mask_root: DeviceValue,
               mask_message: DeviceValue, fresh_source: tuple | None = None) -> RecordedSwitch:
        """Record the round's device part into the running session, the transcript on the device, with the mask
        oracle's root in the proof region and its message (M, 4) in scratch (``plan.mask_root`` and
        ``plan.mask_message`` are not read: host-written or computed on the device, these are). ``fresh_source``:
        what a recording calls the write of ``plan.fresh`` (the proof's input it is)."""
        state = self.state
        m, s, q = log2(table.shape[0]), plan.ood_samples, plan.num_queries
        regions, transcript = state.session.regions, state.session.transcript
        interleaved = self.commitments.interleave_columns(table, plan.fresh, plan.log_folding, plan.rows,
                                                          fresh_source)
        commitment = self.commitments.commit(interleaved, plan.log_folding, plan.log_height)
        self.memory.release(interleaved)
        transcript.observe(commitment.root)
        transcript.observe(mask_root)
        kernel = transcript.kernel("zk_ood")
        io = state.tail_io(points=True)
        io[-1] = transcript.round_constants()
        out = RecordedSwitch(commitment, [], [], [])
        for _ in range(s):
            z = transcript.sample_ef()
            evaluation = self.reductions.evaluate(table, self.proofs.expand_point(z, m), powers=True)
            answer = regions.proof.take((4,))
            head = [0, z.word, mask_message.word, mask_message.shape[0], m, 0, 0, 0]
            # the answer made and observed in one launch: its observation (and what follows) the kernel's epilogue
            transcript.defer(TailLaunch(kernel, [(io, head, 1)], out=(answer.word, answer.word + 4), out_field=5,
                                        reads=((0, evaluation.word, evaluation.word + 4),)))
            transcript.observe(answer)
            out.zs.append(z)
            out.evaluations.append(evaluation)
            out.answers.append(answer)
        out.witness = transcript.grind(plan.pow_bits) if plan.pow_bits > 0 else None
        transcript.sample()
        out.queries = transcript.sample_queries(plan.domain_size, plan.folding, q)
        out.openings = self.commitments.open_rows(source, out.queries)
        out.combination = transcript.sample_ef()
        return out
