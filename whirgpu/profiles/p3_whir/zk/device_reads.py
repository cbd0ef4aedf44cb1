"""The read side of a recorded hiding proof (``OpeningReads``, which ``device_run.OpeningRun`` is made of): the two
sessions' proof regions, as read back, turned into the ``ZkWhirProof``. The first session's part is resolved while
the host absorbs (``resolve_first``); the second's openings are cut by a plan made from the host's positions while
the device opens them (``pruning``), so that what is left once its words are back is one gather per kind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ....backends.device_transcript import NOT_FOUND
from ....backends.device_values import resolve_openings
from ....native.prune import prune_many
from ..proof import MerkleCap, QueryOpenings
from .host_draws import HostDraws
from .proof import (
    BaseCaseZkProof,
    BlindedMask,
    MaskOpeningPair,
    ZkRoundProof,
    ZkSumcheckData,
    ZkWhirProof,
)

DIGEST = 8


class OpeningReads:
    """``OpeningRun``'s reads: its recorded values (``witnesses``, ``nonzero``, ``values``, ``batches``, ``rounds``,
    the base case's, ``source_openings``, ``fresh_openings``, ``group_openings``, ``query_witnesses``,
    ``final_witness``) located in the proof regions."""

    def resolve(self, words: np.ndarray, query_words: np.ndarray, drawn: "HostDraws | None" = None):
        """(commitment cap, proof) from the two sessions' proof regions (``words``, ``query_words``) and the host's
        draws (``drawn``, where the host drew: its witness); None when a check failed (a mask stream run short,
        ``witnesses``, ``nonzero``)."""
        first = self.resolve_first(words)
        return None if first is None else self.resolve_queries(first, query_words, drawn)

    def resolve_first(self, words: np.ndarray):
        """What the first session's proof region (``words``) gives of the proof, or None when one of its checks
        failed; ``resolve_queries`` finishes it (a replay resolves this while the second session runs). Its values
        are read-only views of a few gathers (``_first_plan``), one per kind."""
        plan = self._first_plan()
        if (words[plan.witnesses] == NOT_FOUND).any() or self.draws.short(words):
            return None
        if plan.nonzero_starts.size and not np.logical_or.reduceat(words[plan.nonzero] != 0,
                                                                   plan.nonzero_starts).all():
            return None
        values = words[plan.values].reshape(-1, 4)
        caps = iter(_frozen(words[plan.roots]).reshape(-1, 1, DIGEST))
        scalars = iter(words[plan.scalars].tolist())  # the rounds' witnesses
        efs = iter(_frozen(words[plan.efs]).reshape(-1, 4))  # each batch's mu, then the masked claim
        blinded = _frozen(words[plan.blinded])
        blinded = iter([blinded[a:b].reshape(-1, 4) for a, b in plan.blinded_cuts])
        sumchecks, mask_roots = [], []
        for (ell, recorded, _, _), (wires, witnesses) in zip(self.batches, plan.batches):
            sumchecks.append(ZkSumcheckData(next(efs), ell, words[wires].reshape(len(recorded.wires), -1, 4),
                                            words[witnesses]))
            mask_roots.append(MerkleCap.of_words(next(caps)))
        rounds = []
        opened = resolve_openings(words, [switch.openings for switch, _, _ in self.rounds])  # one pruning call
        for (switch, _, kind), answers, (rows, siblings) in zip(self.rounds, plan.answers, opened):
            witness = next(scalars) if switch.witness is not None else 0
            rounds.append(ZkRoundProof(MerkleCap.of_words(next(caps)), MerkleCap.of_words(next(caps)),
                                       words[answers].reshape(-1, 4), witness, _openings(kind, rows, siblings)))
        base = (MerkleCap.of_words(next(caps)), tuple(MerkleCap.of_words(next(caps)) for _ in self.fresh_groups),
                next(efs).reshape(4), next(blinded), next(blinded),
                tuple(BlindedMask(next(blinded), next(blinded)) for _ in self.blinded_masks))
        return MerkleCap.of_words(next(caps)), values, tuple(sumchecks), tuple(mask_roots), tuple(rounds), base

    def _first_plan(self) -> "_FirstReads":
        """Where ``resolve_first`` finds its many small values, as gather indices into the proof region's words:
        made once per recorded run (a replay reads the same places), so each kind is one numpy gather."""
        if self._first_reads is None:
            nonzero = [_word_index([v]) for v in self.nonzero]
            roots = [oracle.root for _, _, oracle, _ in self.batches]
            for switch, mask_commitment, _ in self.rounds:
                roots += [switch.commitment.root, mask_commitment.root]
            roots += [self.fresh_main.root] + [o.root for o in self.fresh_groups] + [self.commitment_root]
            ends = np.cumsum([v.words for v in self.blinded]).tolist()
            self._first_reads = _FirstReads(
                np.array([w.word for w in self.witnesses], np.intp),
                _word_index(self.nonzero),
                np.cumsum([0] + [x.size for x in nonzero[:-1]], dtype=np.intp) if nonzero else np.zeros(0, np.intp),
                _word_index(self.values),
                [(_word_index(recorded.wires), np.array([x.word for x in recorded.witnesses], np.intp))
                 for _, recorded, _, _ in self.batches],
                [_word_index(switch.answers) for switch, _, _ in self.rounds],
                _word_index(roots),
                np.array([switch.witness.word for switch, _, _ in self.rounds if switch.witness is not None], np.intp),
                _word_index([mu for _, _, _, mu in self.batches] + [self.masked_claim]),
                _word_index(self.blinded), list(zip([0] + ends[:-1], ends)))
        return self._first_reads

    def _second_openings(self) -> list:
        """The second session's openings in proof order, each (opening, the position set it opens (0 the final
        one), the EF entries of its rows the proof keeps or None for all). commit_matrix's rows are gathered whole
        (a power-of-two count of EF entries): a mask oracle's own come first."""
        triples = [(self.source_openings[0], 0, None), (self.fresh_openings, 0, None)]
        for g, (width, carried, fresh) in enumerate(self.group_openings):
            triples += [(carried, g + 1, width), (fresh, g + 1, width)]
        return triples

    def pruning(self, drawn: HostDraws) -> "_SecondPlan | None":
        """Where the second session's openings lie in its proof region, each multiproof cut as the host's position
        sets (``drawn``) prune it (``prune_many`` over path ids): a ``_SecondPlan``, made while the session runs.
        None where the positions are the device's or an opening is not pruned."""
        openings = self._second_openings()
        if not drawn.sets or any(value.indices is None for value, _, _ in openings):
            return None
        counts = tuple(drawn.sets[k].size for _, k, _ in openings)
        # openings of one position set and depth (a mask group's two oracles; the base case's) keep the same ids:
        # made by the host's compiled draws where it was asked for them (HostDraws.kept), else here
        keys = [(k, value.siblings.shape[1]) for value, k, _ in openings]
        unique = [key for key in dict.fromkeys(keys) if key not in drawn.kept]
        pruned = prune_many([(drawn.sets[k].astype(np.int64), _path_ids(drawn.sets[k].size, depth))
                             for k, depth in unique]) if unique else []
        by_key = {**drawn.kept, **{key: x.reshape(-1) for key, x in zip(unique, pruned)}}
        kept = [by_key[key] for key in keys]
        rows_index, row_shapes = self._rows_plan(counts)
        firsts = np.repeat(np.array([value.siblings.word for value, _, _ in openings], np.intp), [x.size for x in kept])
        digests = ((firsts + DIGEST * np.concatenate(kept).astype(np.intp))[:, None] + _DIGEST_WORDS).reshape(-1)
        views, at = [], rows_index.size
        for shape, start, x in zip(row_shapes, _starts(row_shapes), kept):
            views.append((start, start + math.prod(shape), shape, at, at + DIGEST * x.size, (x.size, DIGEST)))
            at += DIGEST * x.size
        return _SecondPlan(np.concatenate([rows_index, digests]), views)

    def second_prune_keys(self) -> tuple:
        """The (position set, depth) pairs of the second session's multiproofs, each once (``HostDraws.draw``'s
        ``prune``)."""
        return tuple(dict.fromkeys((k, value.siblings.shape[1]) for value, k, _ in self._second_openings()))

    def _rows_plan(self, counts: tuple) -> tuple:
        """(the proof-region words of every opening's kept rows, one after another; each opening's rows' shape) for
        position sets of ``counts``: the same every replay (the counts are the configuration's), made once."""
        cached = self.rows_plans
        if counts not in cached:
            parts, shapes = [], []
            for (value, _, width), count in zip(self._second_openings(), counts):
                rows = value.rows
                per = rows.words // max(1, rows.shape[0])
                entries = rows.shape[1] if width is None else width
                starts = rows.word + per * np.arange(count, dtype=np.intp)
                parts.append((starts[:, None] + np.arange(per if width is None else 4 * width, dtype=np.intp)).reshape(-1))
                shapes.append((count, entries) + rows.shape[2:])
            cached[counts] = (np.concatenate(parts), shapes)
        return cached[counts]

    def second_words(self, words: np.ndarray, plans: list) -> np.ndarray:
        """The second session's words as ``resolve_queries`` takes them: gathered by the ``pruning`` plan where
        ``plans`` holds one that is not None (``gathered``), else a copy of them all."""
        plan = plans[0] if plans else None
        return words.copy() if plan is None else words[plan.index]

    def _resolve_openings(self, query_words: np.ndarray, drawn, plan, gathered: bool = False) -> list:
        """(rows, pruned siblings) of each of the second session's openings: one gather by ``plan``
        (``pruning(drawn)``, made now when None; read-only views of one private array; ``gathered``: the words
        are that gather already, ``second_words``), else pruned from the indices read back."""
        openings = self._second_openings()
        if plan is None and drawn is not None:
            plan = self.pruning(drawn)
        if plan is None:
            resolved = resolve_openings(query_words, [value for value, _, _ in openings])
            return [(rows if width is None else np.asarray(rows)[:, :width], siblings)
                    for (rows, siblings), (_, _, width) in zip(resolved, openings)]
        got = query_words if gathered else query_words[plan.index]
        got.setflags(write=False)
        return [(got[a:b].reshape(rows), got[c:d].reshape(siblings)) for a, b, rows, c, d, siblings in plan.views]

    def resolve_queries(self, first: tuple, query_words: np.ndarray, drawn: "HostDraws | None" = None,
                        pruning: "_SecondPlan | None" = None, gathered: bool = False):
        """(commitment cap, proof): ``resolve_first``'s part and the second session's (``query_words``), the final
        witness ``drawn``'s where the host drew (``HostDraws``), else read back, and the multiproofs cut by
        ``pruning`` where given (``gathered``: ``query_words`` is its gather, ``second_words``, which then holds
        nothing else: the host drew); None when its proof of work found no witness in range."""
        if gathered and self.query_witnesses:
            raise AssertionError("resolve_queries: gathered words hold no proof-of-work witness")
        read_q = lambda value: np.asarray(value.read(query_words), np.uint32).copy()  # noqa: E731
        if any(int(read_q(w).reshape(-1)[0]) == NOT_FOUND for w in self.query_witnesses):
            return None
        cap, values, sumchecks, mask_roots, rounds, base = first
        kind = self.source_openings[1]
        resolved = iter(self._resolve_openings(query_words, drawn, pruning, gathered))
        source, fresh_main = next(resolved), next(resolved)
        mask_openings = []
        for _ in self.group_openings:
            pair = [_openings("extension", rows, siblings) for rows, siblings in (next(resolved), next(resolved))]
            mask_openings.append(MaskOpeningPair(*pair))
        if drawn is not None and drawn.witness is not None:
            witness = drawn.witness
        else:
            witness = int(read_q(self.final_witness).reshape(-1)[0]) if self.final_witness is not None else 0
        base_case = BaseCaseZkProof(*base, witness, _openings(kind, *source), _openings("extension", *fresh_main),
                                    tuple(mask_openings))
        return cap, ZkWhirProof(values, sumchecks, mask_roots, rounds, base_case)


@dataclass
class _FirstReads:
    """``OpeningRun._first_plan``: proof-word indices of the proofs of work's witnesses (their first words), of the
    values that must not be zero (each value's words from ``nonzero_starts``), of the statement's values, per batch
    (its wires, its witnesses), per round its OOD answers, and of the roots, scalars, EF values and blinded vectors
    below (each kind in the order ``resolve_first`` takes them)."""

    witnesses: np.ndarray
    nonzero: np.ndarray
    nonzero_starts: np.ndarray
    values: np.ndarray
    batches: list
    answers: list
    roots: np.ndarray  # every root's words: each batch's mask oracle, each round's commitment and mask commitment,
    # the base case's fresh main and fresh groups, then the commitment
    scalars: np.ndarray  # each grinding round's witness word
    efs: np.ndarray  # each batch's mu, then the masked claim
    blinded: np.ndarray  # the blinded vectors in observation order (message, randomness, each mask's two)
    blinded_cuts: list  # each blinded vector's (start, end) in them


def _word_index(values) -> np.ndarray:
    """The proof words of ``values`` (``DeviceValue``s) one after another: a gather index."""
    if not values:
        return np.zeros(0, np.intp)
    return np.concatenate([np.arange(v.word, v.word + v.words, dtype=np.intp) for v in values])


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _openings(kind: str, rows, siblings) -> QueryOpenings:
    return QueryOpenings.of_words(kind, np.asarray(rows, np.uint32), np.asarray(siblings, np.uint32).reshape(-1, DIGEST))


@dataclass
class _SecondPlan:
    """``OpeningReads.pruning``: the second session's proof-region words to gather (``index``: every opening's rows,
    then every opening's kept siblings), and per opening its rows' then its siblings' (start, end, shape) in them."""

    index: np.ndarray
    views: list


def _starts(shapes: list) -> list:
    """Where each of arrays of ``shapes`` starts, laid one after another."""
    return np.cumsum([0] + [math.prod(shape) for shape in shapes[:-1]]).tolist()


_DIGEST_WORDS = np.arange(DIGEST, dtype=np.intp)


@lru_cache(maxsize=64)
def _path_ids(count: int, depth: int) -> np.ndarray:
    """The path ids ``prune_many`` cuts for ``count`` positions of ``depth`` siblings (slot * depth + level), made
    once per shape (read-only)."""
    ids = np.arange(count * depth, dtype=np.uint32).reshape(count, depth, 1)
    ids.setflags(write=False)
    return ids
