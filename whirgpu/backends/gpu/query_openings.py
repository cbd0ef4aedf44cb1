"""The GPU backend's proof of work, query draw and openings of several commitments at the drawn indices in ONE
host-valued session (``Backend.query_openings``), the transcript on the device: what the hiding PCS's base case
opens (the last round's oracle and the fresh source oracle at the same positions).

The host challenger's state goes up; the grind (when ``pow_bits`` > 0), the distinct query draw
(``protocol.query_indices.distinct_query_indices(challenger, domain_size, folding, num_queries)``) and each
commitment's rows and pruned multiproof at those indices are recorded in order; one read brings back the witness,
the indices, the openings and the challenger's state, which the host challenger takes. A search that finds no
witness (odds below e^-32) runs the step again with a full-range search.
"""

from __future__ import annotations

import numpy as np

from ...kernels.merkle import DIGEST
from ..device_transcript import NOT_FOUND
from ..device_values import POW_MAX_COUNTERS, STATE_WORDS, resolve_value
from .transcript import copy_challenger, from_host_challenger, load_challenger, until_found


class QueryOpenings:
    """``run(challenger, pow_bits, domain_size, folding, num_queries, commitments)`` over the backend's
    ``DeviceState`` with its ``Commitments`` (the openings); None where the running layout's openings are not
    pruned (the indices are read from beside the rows)."""

    def __init__(self, state, commitments):  # state: the backend's DeviceState
        self.state = state
        self.commitments = commitments

    def run(self, challenger, pow_bits: int, domain_size: int, folding: int, num_queries: int, commitments):
        if not commitments or self.state.layout.openings != "pruned" \
                or any(c.handle is None or c.height < domain_size >> folding for c in commitments):
            return None  # the caller's steps (they name what is wrong)
        return until_found(lambda full_range: self._session(challenger, pow_bits, domain_size, folding,
                                                            num_queries, commitments, full_range))

    def _session(self, challenger, pow_bits, domain_size, folding, q, commitments, full_range: bool):
        state = self.state
        slot = state.alignment() // 4
        opened = sum(q * (c.width + (len(c.handle[1]) - 1) * DIGEST + 1) for c in commitments)
        proof_words = 1 + 2 * q + 1 + opened + STATE_WORDS + (len(commitments) + 8) * slot
        with state.host_call(proof_words=proof_words, scratch_words=5 * q + 8 + POW_MAX_COUNTERS + 8 * slot) \
                as session:
            transcript = session.transcript
            from_host_challenger(state, session, challenger, full_range)
            witness = transcript.grind(pow_bits) if pow_bits > 0 else None
            queries = transcript.sample_queries(domain_size, folding, q)
            openings = [self.commitments.open_rows(c, queries) for c in commitments]
            final = copy_challenger(state, session)
        words = session.words
        found = int(witness.read(words).reshape(-1)[0]) if witness is not None else 0
        if found == NOT_FOUND:
            return None
        load_challenger(challenger, final.read(words))
        count = int(openings[0].count.read(words)[0])
        indices = openings[0].indices.read(words)[:count].astype(np.int64)
        out = []
        for opening in openings:
            rows, siblings = resolve_value(words, opening)
            out.append((np.asarray(rows, np.uint32), np.asarray(siblings, np.uint32)))
        return found, indices, out
