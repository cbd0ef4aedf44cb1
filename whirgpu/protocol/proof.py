"""The WHIR proof and the statement it proves, as plain data.

Every field element here is a ``uint32`` **Montgomery** word (as the reference's serde writes it); extension
elements have a trailing axis of 4 (c0..c3). Shapes are given per attribute. Serialisation lives in
``profiles/whir_p3_metal/serialize.py``; this module only holds the shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

DIGEST_ELEMS = 8


@dataclass
class Statement:
    """Evaluation claims f(points[i]) = values[i] about the committed multilinear polynomial.

    points: (m, n, 4) EF coordinates, coordinate t binds variable x_t (x_0 = most significant bit of the table
    index). values: (m, 4) EF.
    """

    points: np.ndarray
    values: np.ndarray

    @property
    def num_claims(self) -> int:
        return int(self.points.shape[0])


@dataclass
class SumcheckData:
    """evaluations: (k, 2, 4) = [h(0), h(2)] per sumcheck round; pow_witnesses: (g,) one per round that grinds."""

    evaluations: np.ndarray
    pow_witnesses: np.ndarray

    @property
    def num_rounds(self) -> int:
        return int(self.evaluations.shape[0])


@dataclass
class QueryOpening:
    """One opened row of a committed matrix and its Merkle path.

    kind 'base': values (2^k,) base elements (round 0). kind 'extension': values (2^k, 4) EF (later rounds).
    siblings: (depth, 8) sibling digests from the leaf level to just below the root.
    """

    kind: Literal["base", "extension"]
    values: np.ndarray
    siblings: np.ndarray


class OpeningList(list):
    """The ``QueryOpening``s of one step read as one block: ``values`` (q, 2^k) or (q, 2^k, 4) and ``siblings``
    (q, depth, 8), whose rows the openings are views of. ``blocks()`` gives the two arrays while the list still
    holds the openings it was made with, each with the arrays it was made with (so an opening changed in place is
    changed in them too), else None. A copy or a pickle of it is a plain list."""

    def __init__(self, kind: str, values: np.ndarray, siblings: np.ndarray):
        super().__init__(QueryOpening(kind, values[i], siblings[i]) for i in range(len(values)))
        self._made = [(q, q.values, q.siblings) for q in self]
        self._blocks = (values, siblings)

    def __reduce__(self):
        return list, (list(self),)

    def blocks(self) -> tuple[np.ndarray, np.ndarray] | None:
        if len(self) != len(self._made):
            return None
        for q, (made, values, siblings) in zip(self, self._made):
            if q is not made or q.values is not values or q.siblings is not siblings:
                return None
        return self._blocks


class _PackedOpenings:
    """A list of openings of one kind, dtype and shapes, pickled as two byte strings: a proof holds hundreds of
    openings, which cross to a worker process (``verify_many``'s ``processes``) ~20x faster so than one numpy
    array at a time. Unpickles to a plain list of ``QueryOpening``s (views of two arrays); ``of`` returns None for
    any list it cannot pack exactly (which then pickles as it is)."""

    def __init__(self, queries: list):
        first = queries[0]
        self.args = (first.kind, len(queries),
                     first.values.dtype.str, first.values.shape, b"".join(q.values.tobytes() for q in queries),
                     first.siblings.dtype.str, first.siblings.shape, b"".join(q.siblings.tobytes() for q in queries))

    @classmethod
    def of(cls, queries):
        if not isinstance(queries, list) or not queries or not all(type(q) is QueryOpening for q in queries):
            return queries
        first = queries[0]
        if not all(type(q.values) is np.ndarray and type(q.siblings) is np.ndarray and type(q.kind) is str
                   and q.kind == first.kind and q.values.dtype == first.values.dtype
                   and q.values.shape == first.values.shape and q.siblings.dtype == first.siblings.dtype
                   and q.siblings.shape == first.siblings.shape for q in queries):
            return queries
        return cls(queries)

    def __reduce__(self):
        return _unpacked_openings, self.args


def _unpacked_openings(kind, count, values_dtype, values_shape, values, siblings_dtype, siblings_shape, siblings):
    rows = np.frombuffer(bytearray(values), np.dtype(values_dtype)).reshape((count,) + tuple(values_shape))
    paths = np.frombuffer(bytearray(siblings), np.dtype(siblings_dtype)).reshape((count,) + tuple(siblings_shape))
    return OpeningList(kind, rows, paths)


def _rebuilt(cls, state: dict):
    obj = cls.__new__(cls)
    obj.__dict__.update(state)
    return obj


def _reduce_packing(obj, name: str):
    """``obj`` pickled with its openings list ``name`` packed (``_PackedOpenings``)."""
    state = dict(vars(obj))
    state[name] = _PackedOpenings.of(state[name])
    return _rebuilt, (type(obj), state)


@dataclass
class RoundProof:
    """commitment (8,); ood_answers (t, 4); pow_witness: one base word (0 when the round does not grind);
    queries: the unique opened rows of the previous commitment, ascending by index."""

    commitment: np.ndarray
    ood_answers: np.ndarray
    pow_witness: np.uint32
    queries: list[QueryOpening]
    sumcheck: SumcheckData

    def __reduce__(self):
        return _reduce_packing(self, "queries")


@dataclass
class WhirProof:
    """Mirror of the reference's ``WhirProof`` (field names and order as its serde writes them)."""

    initial_commitment: np.ndarray
    initial_ood_answers: np.ndarray
    initial_sumcheck: SumcheckData
    rounds: list[RoundProof] = field(default_factory=list)
    final_poly: np.ndarray | None = None  # (2^fsr, 4)
    final_pow_witness: np.uint32 = np.uint32(0)
    final_queries: list[QueryOpening] = field(default_factory=list)
    final_sumcheck: SumcheckData | None = None

    def __reduce__(self):
        return _reduce_packing(self, "final_queries")
