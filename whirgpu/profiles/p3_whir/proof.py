"""The proof object of upstream Plonky3 p3-whir (commit 5dc50e51): ``PcsProof`` and what it holds, as plain data.

This is the second protocol profile's proof (the current profile's is ``protocol/proof.py``). It mirrors the
Rust types member for member, so that both of its encodings (``format.py``) are a walk over it:

    PcsProof { whir: WhirProof, evals: Vec<OpeningBatch<EF>> }
    WhirProof { initial_ood_answers: Vec<EF>, initial_sumcheck: SumcheckData, rounds: Vec<WhirRoundProof>,
                final_poly: Option<Poly<EF>>, final_pow_witness: F, final_openings: QueryOpenings,
                final_sumcheck: Option<SumcheckData> }
    WhirRoundProof { commitment: Option<MerkleCap>, ood_answers: Vec<EF>, pow_witness: F,
                     openings: QueryOpenings, sumcheck: SumcheckData }
    SumcheckData { polynomial_evaluations: Vec<[EF; 2]>, pow_witnesses: Vec<F> }
    QueryOpenings = Base(SharedProofOpening<F>) | Extension(SharedProofOpening<EF>)
    SharedProofOpening<T> { rows: Vec<Vec<T>>, proof: PrunedMerklePaths { sibling_hashes: Vec<[F; 8]> } }
    OpeningBatch<EF> { current: Vec<EF>, next: Vec<EF> }
    MerkleCap { cap: Vec<[F; 8]> }       (also the commitment ``MultilinearPcs::commit`` returns)

Every field element is a **Montgomery** word (x * 2^32 mod p, as ``MontyField31`` stores and serialises it),
held in a read-only ``uint32`` numpy array; an extension element (EF, degree 4) is a trailing axis of 4,
c0..c3 for c0 + c1 X + c2 X^2 + c3 X^3. A single base element (a PoW witness) is a Python int. The objects do
not know the field: words are only checked to be u32 here; the codecs check them against a prime when given one.

The one restriction beyond the Rust types: the rows of one ``QueryOpenings`` share a width (they are rows of
one committed matrix, as upstream's verifier requires), so they form one array.

Objects are frozen; ``==`` compares shapes and words member by member.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

import numpy as np

from ...errors import ProofFormatError
from ...field import EF_DEGREE
from ...protocol.proof import DIGEST_ELEMS

OPENING_KINDS = ("base", "extension")  # QueryOpenings' variants in declaration order (Base = 0, Extension = 1)


def _asarray(value, what: str) -> np.ndarray:
    try:
        return np.asarray(value)
    except (ValueError, TypeError):  # ragged nested lists
        raise ProofFormatError(f"{what}: not a regular array (rows of different lengths?)") from None


def _words(value, tail: tuple[int, ...], what: str) -> np.ndarray:
    """``value`` as a read-only uint32 array of shape (..., *tail) with ``1 + len(tail)`` axes; an empty array of
    any dtype is accepted (``np.asarray([])`` is float)."""
    array = _asarray(value, what)
    ndim = 1 + len(tail)
    if array.size == 0:
        if array.ndim == 1 and ndim > 1 and array.shape == (0,):  # [] for "no rows"
            array = array.reshape((0,) + tail)
        array = array.astype(np.uint32)
    elif array.dtype.kind not in "iu":
        raise ProofFormatError(f"{what}: expected integer words, got {array.dtype} values")
    if array.ndim != ndim or (tail and array.shape[-len(tail):] != tail):
        shape = "(n" + "".join(f", {t}" for t in tail) + ")"
        raise ProofFormatError(f"{what}: expected an array of shape {shape}, got {array.shape}")
    if array.size and array.dtype != np.uint32 and (int(array.min()) < 0 or int(array.max()) >> 32):
        raise ProofFormatError(f"{what}: words must lie in [0, 2^32)")
    array = np.array(array, dtype=np.uint32)  # a private copy, so freezing it freezes nothing of the caller's
    array.setflags(write=False)
    return array


def _word(value, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not 0 <= value < 1 << 32:
        raise ProofFormatError(f"{what}: expected a u32 word, got {value!r:.40}")
    return int(value)


def _typed(value, kind: type, what: str):
    if not isinstance(value, kind):
        raise ProofFormatError(f"{what}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _typed_tuple(values, kind: type, what: str) -> tuple:
    if isinstance(values, (str, bytes, np.ndarray)) or not hasattr(values, "__iter__"):
        raise ProofFormatError(f"{what}: expected a sequence of {kind.__name__}, got {type(values).__name__}")
    return tuple(_typed(v, kind, f"{what}[{i}]") for i, v in enumerate(values))


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and \
            bool(np.array_equal(a, b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


class _Value:
    """Member-by-member equality for the frozen dataclasses below (numpy arrays compare by shape and words)."""

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(_same(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    __hash__ = None  # mutable-looking members (arrays) make these unhashable, as the dataclass default would


def _set(obj, name: str, value) -> None:
    object.__setattr__(obj, name, value)  # frozen dataclasses normalise their members once, here


@dataclass(frozen=True, eq=False)
class MerkleCap(_Value):
    """``MerkleCap<F, [F; 8]>``: the top layer of a Merkle tree; roots (2^h, 8) words. Cap height 0 (one root)
    is what p3-whir commits with; the codecs accept any count, as serde does."""

    roots: np.ndarray

    def __post_init__(self) -> None:
        _set(self, "roots", _words(self.roots, (DIGEST_ELEMS,), "MerkleCap.roots"))

    @classmethod
    def of_words(cls, roots: np.ndarray) -> "MerkleCap":
        """``MerkleCap(roots)`` for an array a prover made, kept as it is where it is what the checks make (read-only
        uint32 (n, 8)); anything else goes through the checks."""
        if (isinstance(roots, np.ndarray) and roots.dtype == np.uint32 and roots.ndim == 2
                and roots.shape[1] == DIGEST_ELEMS and not roots.flags.writeable):
            out = object.__new__(cls)
            _set(out, "roots", roots)
            return out
        return cls(roots)


@dataclass(frozen=True, eq=False)
class SumcheckData(_Value):
    """``SumcheckData<F, EF>``: evaluations (k, 2, 4) = [h(0), h(inf)] per sumcheck round; pow_witnesses (g,) one
    base word per round that grinds (none when the sumcheck does not)."""

    evaluations: np.ndarray
    pow_witnesses: np.ndarray

    def __post_init__(self) -> None:
        _set(self, "evaluations", _words(self.evaluations, (2, EF_DEGREE), "SumcheckData.evaluations"))
        _set(self, "pow_witnesses", _words(self.pow_witnesses, (), "SumcheckData.pow_witnesses"))


@dataclass(frozen=True, eq=False)
class QueryOpenings(_Value):
    """``QueryOpenings::Base | Extension(SharedProofOpening { rows, proof: PrunedMerklePaths })``.

    kind: 'base' (rows (q, w) base words: the initial commitment's rows) or 'extension' (rows (q, w, 4) EF:
    every folded commitment's). rows[j] is the leaf opened at the j-th queried index (sorted, distinct); no
    rows at all have width 0 (the wire holds no width for them).
    sibling_hashes (s, 8): the one pruned multiproof for all q rows, boundary siblings level 0 first, by
    ascending parent, missing children ascending."""

    kind: Literal["base", "extension"]
    rows: np.ndarray
    sibling_hashes: np.ndarray

    def __post_init__(self) -> None:
        if self.kind not in OPENING_KINDS:
            raise ProofFormatError(f"QueryOpenings.kind: expected 'base' or 'extension', got {self.kind!r:.40}")
        tail = (None,) if self.kind == "base" else (None, EF_DEGREE)
        rows = _asarray(self.rows, "QueryOpenings.rows")
        width = rows.shape[1] if rows.ndim >= 2 else 0
        if rows.size == 0 and rows.ndim == len(tail) + 1 and rows.shape[0] == 0:
            width = 0  # no rows carry no width on the wire: one shape for "no rows", so decoding is exact
            rows = rows.reshape((0, 0) + rows.shape[2:])
        _set(self, "rows", _words(rows, tuple(width if t is None else t for t in tail), "QueryOpenings.rows"))
        _set(self, "sibling_hashes", _words(self.sibling_hashes, (DIGEST_ELEMS,), "QueryOpenings.sibling_hashes"))

    @classmethod
    def of_words(cls, kind: str, rows: np.ndarray, sibling_hashes: np.ndarray) -> "QueryOpenings":
        """``QueryOpenings(kind, rows, sibling_hashes)`` for arrays a prover made, kept as they are where they are
        what the checks make (read-only uint32, rows (q, w) or (q, w, 4) with q > 0, siblings (s, 8)); anything
        else goes through the checks."""
        ext = kind == "extension"
        if (kind in OPENING_KINDS and isinstance(rows, np.ndarray) and isinstance(sibling_hashes, np.ndarray)
                and rows.dtype == np.uint32 and sibling_hashes.dtype == np.uint32 and rows.ndim == 2 + ext
                and rows.shape[0] > 0 and (not ext or rows.shape[2] == EF_DEGREE) and sibling_hashes.ndim == 2
                and sibling_hashes.shape[1] == DIGEST_ELEMS and not rows.flags.writeable
                and not sibling_hashes.flags.writeable):
            out = object.__new__(cls)
            _set(out, "kind", kind)
            _set(out, "rows", rows)
            _set(out, "sibling_hashes", sibling_hashes)
            return out
        return cls(kind, rows, sibling_hashes)

    @property
    def num_queries(self) -> int:
        return int(self.rows.shape[0])

    @property
    def width(self) -> int:
        """Elements per row (base words or EF values)."""
        return int(self.rows.shape[1])


@dataclass(frozen=True, eq=False)
class RoundProof(_Value):
    """``WhirRoundProof``: commitment (the round's Merkle cap, or None), ood_answers (t, 4) EF, pow_witness (a
    base word, 0 when the round does not grind), openings of the *previous* commitment, sumcheck."""

    commitment: MerkleCap | None
    ood_answers: np.ndarray
    pow_witness: int
    openings: QueryOpenings
    sumcheck: SumcheckData

    def __post_init__(self) -> None:
        if self.commitment is not None:
            _typed(self.commitment, MerkleCap, "RoundProof.commitment")
        _set(self, "ood_answers", _words(self.ood_answers, (EF_DEGREE,), "RoundProof.ood_answers"))
        _set(self, "pow_witness", _word(self.pow_witness, "RoundProof.pow_witness"))
        _typed(self.openings, QueryOpenings, "RoundProof.openings")
        _typed(self.sumcheck, SumcheckData, "RoundProof.sumcheck")


@dataclass(frozen=True, eq=False)
class WhirProof(_Value):
    """``WhirProof``: the proximity transcript. initial_ood_answers (t, 4) EF; initial_sumcheck; rounds;
    final_poly (2^final_sumcheck_rounds, 4) EF evaluations, or None; final_pow_witness (a base word);
    final_openings of the last commitment; final_sumcheck (None when there are no final sumcheck rounds).
    The initial commitment is not in the proof (the verifier is given it)."""

    initial_ood_answers: np.ndarray
    initial_sumcheck: SumcheckData
    rounds: tuple[RoundProof, ...]
    final_poly: np.ndarray | None
    final_pow_witness: int
    final_openings: QueryOpenings
    final_sumcheck: SumcheckData | None

    def __post_init__(self) -> None:
        _set(self, "initial_ood_answers", _words(self.initial_ood_answers, (EF_DEGREE,),
                                                 "WhirProof.initial_ood_answers"))
        _typed(self.initial_sumcheck, SumcheckData, "WhirProof.initial_sumcheck")
        _set(self, "rounds", _typed_tuple(self.rounds, RoundProof, "WhirProof.rounds"))
        if self.final_poly is not None:
            _set(self, "final_poly", _words(self.final_poly, (EF_DEGREE,), "WhirProof.final_poly"))
        _set(self, "final_pow_witness", _word(self.final_pow_witness, "WhirProof.final_pow_witness"))
        _typed(self.final_openings, QueryOpenings, "WhirProof.final_openings")
        if self.final_sumcheck is not None:
            _typed(self.final_sumcheck, SumcheckData, "WhirProof.final_sumcheck")


@dataclass(frozen=True, eq=False)
class OpeningEvals(_Value):
    """``OpeningBatch<EF>``: the claimed values at one opening point; current (a, 4) EF for the columns
    evaluated at the point, next (b, 4) EF for those evaluated through the repeat-last successor view."""

    current: np.ndarray
    next: np.ndarray

    def __post_init__(self) -> None:
        _set(self, "current", _words(self.current, (EF_DEGREE,), "OpeningEvals.current"))
        _set(self, "next", _words(self.next, (EF_DEGREE,), "OpeningEvals.next"))


@dataclass(frozen=True, eq=False)
class PcsProof(_Value):
    """``PcsProof``: what ``MultilinearPcs::open`` returns. whir: the proximity proof; evals: one
    ``OpeningEvals`` per opening point, in the opening schedule's order."""

    whir: WhirProof
    evals: tuple[OpeningEvals, ...]

    def __post_init__(self) -> None:
        _typed(self.whir, WhirProof, "PcsProof.whir")
        _set(self, "evals", _typed_tuple(self.evals, OpeningEvals, "PcsProof.evals"))
