"""The two encodings of a p3-whir proof (``proof.py``) and of its commitment, both ways.

serde JSON (``serde_json::to_value`` of ``PcsProof`` / ``MerkleCap``, as the golden-p3 files hold them):
    - a struct is an object of its members (keys sorted, as serde_json's ``Value`` writes them); a
      ``PhantomData`` member (``_phantom``, ``_marker``) is ``null``;
    - a field element is its Montgomery word as a JSON integer; an EF is ``{"_phantom": null, "value": [4]}``;
      a digest ``[8]``; ``[EF; 2]`` a list of 2;
    - ``Option``: ``null`` or the value; ``Poly<EF>`` (a tuple struct) ``[[EF...], null]``;
    - ``QueryOpenings``: externally tagged, ``{"Base": {...}}`` or ``{"Extension": {...}}``.
postcard (``postcard::to_allocvec``): see ``postcard.py`` for the wire rules; members in declaration
order, lengths as varints, every field element as 4 little-endian Montgomery bytes.

The JSON trees ``*_to_json`` return have their keys in sorted order, so ``json.dumps(tree, separators=(",",
":"))`` is the golden files' text. Decoders read exactly these structures: a missing or unknown key, a wrong
type, a word outside [0, 2^32) (or >= ``prime`` when one is given), rows of one opening with different widths,
truncated or trailing bytes, a bad varint, Option tag or variant index: each is a ``ProofFormatError`` naming
what and where (a JSON path such as ``proof.whir.rounds[0].openings.Base.rows[3][1]``, or a byte offset).
Given ``bounds`` (``ProofBounds.of(config, num_openings)``), the decoders also refuse any list longer than the
configuration allows, before they read or allocate anything for it: with them, memory stays proportional to what
the configuration derives, whatever the input claims. Encoders given a ``prime`` check every word against it the
same way. ``prime`` is the base field's modulus
(KoalaBear 2^31 - 2^24 + 1, BabyBear 2^31 - 2^27 + 1); without it the words are only checked to be u32s.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass

import numpy as np

from ...protocol.json_tree import JsonTreeReader, json_type
from ...errors import ProofFormatError
from ...field import EF_DEGREE
from .proof import (
    OPENING_KINDS, MerkleCap, OpeningEvals, PcsProof, QueryOpenings, RoundProof, SumcheckData, WhirProof,
)
from .postcard import PostcardReader, PostcardWriter
from ...protocol.proof import DIGEST_ELEMS

VARIANTS = ("Base", "Extension")  # serde's names of QueryOpenings' variants, in OPENING_KINDS' order
EF_BYTES = 4 * EF_DEGREE
DIGEST_BYTES = 4 * DIGEST_ELEMS


def check_words(value, prime: int, where: str = "proof") -> None:
    """Every word of a p3-whir object (any of ``p3_proof``'s classes, nested) is < ``prime``, or a
    ``ProofFormatError`` naming the member."""
    if isinstance(value, np.ndarray):
        if value.size and int(value.max()) >= prime:
            index = tuple(int(i) for i in np.argwhere(value >= prime)[0])
            raise ProofFormatError(f"{where}{list(index)}: {int(value[index])} is not a field element "
                                   f"(must be < {prime})")
    elif isinstance(value, tuple):
        for i, item in enumerate(value):
            check_words(item, prime, f"{where}[{i}]")
    elif is_dataclass(value):
        for f in fields(value):
            check_words(getattr(value, f.name), prime, f"{where}.{f.name}")
    elif isinstance(value, int) and not isinstance(value, bool) and value >= prime:
        raise ProofFormatError(f"{where}: {value} is not a field element (must be < {prime})")


def _checked(value, kind: type, prime: int | None, what: str):
    if not isinstance(value, kind):
        wanted = {int: "an integer", list: "an array", dict: "an object", str: "a string"}.get(kind)
        if wanted is None:  # an object of this package's own (a PcsProof, a MerkleCap)
            raise ProofFormatError(f"{what}: expected a {kind.__name__}, got {type(value).__name__}")
        raise ProofFormatError(f"{what}: expected {wanted}, got {json_type(value)}")
    if prime is not None:
        check_words(value, prime, what)
    return value


@dataclass(frozen=True)
class ProofBounds:
    """The most entries each list of a ``PcsProof`` may hold under one configuration, so that a decoder refuses a
    longer list before it allocates anything for it (``ProofBounds.of(config, num_openings)``). Phases: 0 is the
    initial commitment (its OOD answers, its sumcheck, the openings of round 0), i + 1 round i, and the last one
    the final phase. The counts are upper bounds: the verifier checks exact shapes and counts itself."""

    ood: tuple[int, ...]  # OOD answers: the initial ones, then each round's
    sumcheck: tuple[int, ...]  # sumcheck rounds (and PoW witnesses): initial, each round's, final
    rows: tuple[int, ...]  # queried rows of each round's openings, then of the final ones
    width: tuple[int, ...]  # elements a row
    siblings: tuple[int, ...]  # sibling hashes of one pruned multiproof: at most rows * depth
    rounds: int
    final_poly: int
    evals: int
    current: int = 1  # the opened column's value at each point
    next: int = 0  # no column is opened through its successor view
    roots: int = 1  # a cap of height 0

    @classmethod
    def of(cls, config, num_openings: int) -> ProofBounds:
        """The bounds of proofs under ``config`` (a ``P3WhirConfig``) with ``num_openings`` openings."""
        phases = [(r.domain_size, r.folding_factor, r.num_queries) for r in config.round_parameters]
        phases.append((config.final_domain_size, config.folding_schedule[config.n_rounds], config.final_queries))
        rows = tuple(min(queries, domain >> fold) for domain, fold, queries in phases)
        depths = tuple((domain >> fold).bit_length() - 1 for domain, fold, _ in phases)
        return cls(ood=(config.commitment_ood_samples,) + tuple(r.ood_samples for r in config.round_parameters),
                   sumcheck=tuple(config.folding_schedule) + (config.final_sumcheck_rounds,),
                   rows=rows, width=tuple(1 << fold for _, fold, _ in phases),
                   siblings=tuple(q * d for q, d in zip(rows, depths)), rounds=config.n_rounds,
                   final_poly=1 << config.final_sumcheck_rounds, evals=num_openings)


def _limits(bounds: ProofBounds | None):
    """``limit(name, phase=0)``: the bound on the lists called ``name`` (a ``ProofBounds`` field) in ``phase``, or
    None without bounds."""
    def limit(name: str, phase: int = 0) -> int | None:
        if bounds is None:
            return None
        value = getattr(bounds, name)
        return value[phase] if isinstance(value, tuple) else value
    return limit


# ---- to JSON ---------------------------------------------------------------------------------------------------

def _ef_json(e: np.ndarray) -> dict:
    return {"_phantom": None, "value": [int(x) for x in e]}


def _efs_json(a: np.ndarray) -> list:
    return [_ef_json(e) for e in a]


def _digests_json(a: np.ndarray) -> list:
    return [[int(x) for x in d] for d in a]


def _cap_json(cap: MerkleCap) -> dict:
    return {"_marker": None, "cap": _digests_json(cap.roots)}


def _sumcheck_json(s: SumcheckData) -> dict:
    return {"polynomial_evaluations": [_efs_json(pair) for pair in s.evaluations],
            "pow_witnesses": [int(w) for w in s.pow_witnesses]}


def _openings_json(o: QueryOpenings) -> dict:
    rows = [[int(x) for x in r] for r in o.rows] if o.kind == "base" else [_efs_json(r) for r in o.rows]
    variant = VARIANTS[OPENING_KINDS.index(o.kind)]
    return {variant: {"proof": {"sibling_hashes": _digests_json(o.sibling_hashes)}, "rows": rows}}


def _round_json(r: RoundProof) -> dict:
    return {
        "commitment": None if r.commitment is None else _cap_json(r.commitment),
        "ood_answers": _efs_json(r.ood_answers),
        "openings": _openings_json(r.openings),
        "pow_witness": r.pow_witness,
        "sumcheck": _sumcheck_json(r.sumcheck),
    }


def _whir_json(w: WhirProof) -> dict:
    return {
        "final_openings": _openings_json(w.final_openings),
        "final_poly": None if w.final_poly is None else [_efs_json(w.final_poly), None],
        "final_pow_witness": w.final_pow_witness,
        "final_sumcheck": None if w.final_sumcheck is None else _sumcheck_json(w.final_sumcheck),
        "initial_ood_answers": _efs_json(w.initial_ood_answers),
        "initial_sumcheck": _sumcheck_json(w.initial_sumcheck),
        "rounds": [_round_json(r) for r in w.rounds],
    }


def pcs_proof_to_json(proof: PcsProof, prime: int | None = None) -> dict:
    """The serde JSON tree of ``proof`` (Montgomery integers, keys sorted)."""
    _checked(proof, PcsProof, prime, "proof")
    return {"evals": [{"current": _efs_json(e.current), "next": _efs_json(e.next)} for e in proof.evals],
            "whir": _whir_json(proof.whir)}


def merkle_cap_to_json(cap: MerkleCap, prime: int | None = None) -> dict:
    """The serde JSON tree of a commitment: ``{"_marker": null, "cap": [[8 words] per root]}``."""
    return _cap_json(_checked(cap, MerkleCap, prime, "commitment"))


# ---- from JSON -------------------------------------------------------------------------------------------------

class _JsonReader(JsonTreeReader):
    """Typed, strict access to a serde JSON tree; every failure names the JSON path."""

    def __init__(self, prime: int | None, bounds: ProofBounds | None = None) -> None:
        self.prime = prime
        self.limit = _limits(bounds)

    @staticmethod
    def obj(value, path: str, keys: tuple[str, ...]) -> dict:
        """An object with exactly ``keys``."""
        if not isinstance(value, dict):
            raise ProofFormatError(f"{path}: expected an object, got {json_type(value)}")
        missing = [k for k in keys if k not in value]
        if missing:
            raise ProofFormatError(f"{path}: missing key(s) {', '.join(missing)}")
        extra = sorted(str(k) for k in value if k not in keys)
        if extra:
            raise ProofFormatError(f"{path}: unexpected key(s) {', '.join(extra)}"[:200])
        return value

    @staticmethod
    def null(value, path: str) -> None:
        if value is not None:
            raise ProofFormatError(f"{path}: expected null, got {value!r:.40}")


    def word(self, value, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ProofFormatError(f"{path}: expected an integer field element, got {value!r:.40}")
        if not 0 <= value < 1 << 32:
            raise ProofFormatError(f"{path}: {value} is not a u32")
        if self.prime is not None and value >= self.prime:
            raise ProofFormatError(f"{path}: {value} is not a field element (must be < {self.prime})")
        return value


    def ef(self, value, path: str) -> np.ndarray:
        self.obj(value, path, ("_phantom", "value"))
        self.null(value["_phantom"], f"{path}._phantom")
        return self.words(value["value"], f"{path}.value", EF_DEGREE)


    def digests(self, value, path: str, at_most: int | None = None) -> np.ndarray:
        items = self.lst(value, path, at_most=at_most)
        return np.array([self.words(d, f"{path}[{i}]", DIGEST_ELEMS) for i, d in enumerate(items)],
                        dtype=np.uint32).reshape(-1, DIGEST_ELEMS)

    def cap(self, value, path: str) -> MerkleCap:
        self.obj(value, path, ("_marker", "cap"))
        self.null(value["_marker"], f"{path}._marker")
        return MerkleCap(self.digests(value["cap"], f"{path}.cap", self.limit("roots")))

    def sumcheck(self, value, path: str, phase: int = 0) -> SumcheckData:
        self.obj(value, path, ("polynomial_evaluations", "pow_witnesses"))
        rounds = self.limit("sumcheck", phase)
        pairs = self.lst(value["polynomial_evaluations"], f"{path}.polynomial_evaluations", at_most=rounds)
        evaluations = np.array([self.efs(p, f"{path}.polynomial_evaluations[{i}]", 2) for i, p in enumerate(pairs)],
                               dtype=np.uint32).reshape(-1, 2, EF_DEGREE)
        return SumcheckData(evaluations, self.words(value["pow_witnesses"], f"{path}.pow_witnesses", at_most=rounds))

    def openings(self, value, path: str, phase: int = 0) -> QueryOpenings:
        if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in VARIANTS:
            found = list(value)[:3] if isinstance(value, dict) else json_type(value)
            raise ProofFormatError(f"{path}: expected {{\"Base\": ...}} or {{\"Extension\": ...}}, got {found!s:.60}")
        (variant, inner), = value.items()
        path = f"{path}.{variant}"
        kind = OPENING_KINDS[VARIANTS.index(variant)]
        self.obj(inner, path, ("proof", "rows"))
        self.obj(inner["proof"], f"{path}.proof", ("sibling_hashes",))
        siblings = self.digests(inner["proof"]["sibling_hashes"], f"{path}.proof.sibling_hashes",
                                self.limit("siblings", phase))
        read_row = self.words if kind == "base" else self.efs
        width = self.limit("width", phase)
        rows = [read_row(r, f"{path}.rows[{j}]", at_most=width)
                for j, r in enumerate(self.lst(inner["rows"], f"{path}.rows", at_most=self.limit("rows", phase)))]
        _check_widths([len(r) for r in rows], f"{path}.rows")
        tail = (len(rows[0]) if rows else 0,) + (() if kind == "base" else (EF_DEGREE,))
        return QueryOpenings(kind, np.array(rows, dtype=np.uint32).reshape((len(rows),) + tail), siblings)

    def round(self, value, path: str, i: int = 0) -> RoundProof:
        self.obj(value, path, ("commitment", "ood_answers", "openings", "pow_witness", "sumcheck"))
        commitment = value["commitment"]
        return RoundProof(
            commitment=None if commitment is None else self.cap(commitment, f"{path}.commitment"),
            ood_answers=self.efs(value["ood_answers"], f"{path}.ood_answers", at_most=self.limit("ood", i + 1)),
            pow_witness=self.word(value["pow_witness"], f"{path}.pow_witness"),
            openings=self.openings(value["openings"], f"{path}.openings", i),
            sumcheck=self.sumcheck(value["sumcheck"], f"{path}.sumcheck", i + 1),
        )

    def whir(self, value, path: str) -> WhirProof:
        self.obj(value, path, ("final_openings", "final_poly", "final_pow_witness", "final_sumcheck",
                               "initial_ood_answers", "initial_sumcheck", "rounds"))
        final_poly = value["final_poly"]
        if final_poly is not None:  # Poly(Vec<EF>, PhantomData): a tuple struct, so a list of 2
            self.lst(final_poly, f"{path}.final_poly", 2)
            self.null(final_poly[1], f"{path}.final_poly[1]")
            final_poly = self.efs(final_poly[0], f"{path}.final_poly[0]", at_most=self.limit("final_poly"))
        final_sumcheck = value["final_sumcheck"]
        rounds = self.lst(value["rounds"], f"{path}.rounds", at_most=self.limit("rounds"))
        last = len(rounds) if self.limit("rounds") is None else self.limit("rounds")
        return WhirProof(
            initial_ood_answers=self.efs(value["initial_ood_answers"], f"{path}.initial_ood_answers",
                                         at_most=self.limit("ood", 0)),
            initial_sumcheck=self.sumcheck(value["initial_sumcheck"], f"{path}.initial_sumcheck", 0),
            rounds=[self.round(r, f"{path}.rounds[{i}]", i) for i, r in enumerate(rounds)],
            final_poly=final_poly,
            final_pow_witness=self.word(value["final_pow_witness"], f"{path}.final_pow_witness"),
            final_openings=self.openings(value["final_openings"], f"{path}.final_openings", last),
            final_sumcheck=None if final_sumcheck is None else self.sumcheck(final_sumcheck,
                                                                             f"{path}.final_sumcheck", last + 1),
        )

    def evals(self, value, path: str) -> OpeningEvals:
        self.obj(value, path, ("current", "next"))
        return OpeningEvals(self.efs(value["current"], f"{path}.current", at_most=self.limit("current")),
                            self.efs(value["next"], f"{path}.next", at_most=self.limit("next")))


def _check_widths(widths: list[int], path: str) -> None:
    """The rows of one opening share a width (the object model's one restriction beyond serde's)."""
    for j, w in enumerate(widths):
        if w != widths[0]:
            raise ProofFormatError(f"{path}[{j}]: a row of {w} element(s), but rows[0] has {widths[0]} "
                                   f"(the rows of one opening share a width)")


def pcs_proof_from_json(tree, prime: int | None = None, path: str = "proof",
                        bounds: ProofBounds | None = None) -> PcsProof:
    """A ``PcsProof`` from its serde JSON tree (``json.loads`` of it); ``path`` prefixes the error locations;
    ``bounds``: the configuration's limits on every list, checked before the list is read."""
    r = _JsonReader(prime, bounds)
    r.obj(tree, path, ("evals", "whir"))
    evals = r.lst(tree["evals"], f"{path}.evals", at_most=r.limit("evals"))
    return PcsProof(whir=r.whir(tree["whir"], f"{path}.whir"),
                    evals=[r.evals(e, f"{path}.evals[{i}]") for i, e in enumerate(evals)])


def merkle_cap_from_json(tree, prime: int | None = None, path: str = "commitment",
                         bounds: ProofBounds | None = None) -> MerkleCap:
    """A ``MerkleCap`` from its serde JSON tree (with ``bounds``: at most one root, cap height 0)."""
    return _JsonReader(prime, bounds).cap(tree, path)


# ---- postcard --------------------------------------------------------------------------------------------------

def _write_cap(w: PostcardWriter, cap: MerkleCap) -> None:
    w.varint(len(cap.roots))
    w.words(cap.roots)


def _write_efs(w: PostcardWriter, a: np.ndarray) -> None:
    w.varint(len(a))
    w.words(a)


def _write_sumcheck(w: PostcardWriter, s: SumcheckData) -> None:
    _write_efs(w, s.evaluations)  # Vec<[EF; 2]>: a length, then each pair as 8 words
    _write_efs(w, s.pow_witnesses)


def _write_openings(w: PostcardWriter, o: QueryOpenings) -> None:
    w.varint(OPENING_KINDS.index(o.kind))
    w.varint(o.num_queries)
    for row in o.rows:
        w.varint(len(row))
        w.words(row)
    w.varint(len(o.sibling_hashes))
    w.words(o.sibling_hashes)


def pcs_proof_to_postcard(proof: PcsProof, prime: int | None = None) -> bytes:
    """``postcard::to_allocvec(&proof)``."""
    _checked(proof, PcsProof, prime, "proof")
    w = PostcardWriter()
    whir = proof.whir
    _write_efs(w, whir.initial_ood_answers)
    _write_sumcheck(w, whir.initial_sumcheck)
    w.varint(len(whir.rounds))
    for r in whir.rounds:
        w.option(r.commitment is not None)
        if r.commitment is not None:
            _write_cap(w, r.commitment)
        _write_efs(w, r.ood_answers)
        w.words(np.array([r.pow_witness], dtype=np.uint32))
        _write_openings(w, r.openings)
        _write_sumcheck(w, r.sumcheck)
    w.option(whir.final_poly is not None)
    if whir.final_poly is not None:
        _write_efs(w, whir.final_poly)
    w.words(np.array([whir.final_pow_witness], dtype=np.uint32))
    _write_openings(w, whir.final_openings)
    w.option(whir.final_sumcheck is not None)
    if whir.final_sumcheck is not None:
        _write_sumcheck(w, whir.final_sumcheck)
    w.varint(len(proof.evals))
    for e in proof.evals:
        _write_efs(w, e.current)
        _write_efs(w, e.next)
    return w.getvalue()


def merkle_cap_to_postcard(cap: MerkleCap, prime: int | None = None) -> bytes:
    """``postcard::to_allocvec(&cap)``: the root count, then 32 bytes a root."""
    w = PostcardWriter()
    _write_cap(w, _checked(cap, MerkleCap, prime, "commitment"))
    return w.getvalue()


class _PostcardProofReader:
    """Reads the members of a p3-whir proof in declaration order; errors name the member and the byte offset."""

    def __init__(self, data, prime: int | None, name: str, bounds: ProofBounds | None = None) -> None:
        self.r = PostcardReader(data, name)
        self.prime = prime
        self.limit = _limits(bounds)

    def words(self, shape: tuple[int, ...], what: str) -> np.ndarray:
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        return self.r.words(count, what, self.prime).reshape(shape)

    def vec(self, tail: tuple[int, ...], what: str, at_most: int | None = None) -> np.ndarray:
        """A Vec of fixed-size items of ``tail`` words each (() for a base element)."""
        per_item = int(np.prod(tail, dtype=np.int64)) if tail else 1
        n = self.r.length(what, 4 * per_item, at_most)
        return self.words((n,) + tail, what)

    def word(self, what: str) -> int:
        return int(self.words((1,), what)[0])

    def cap(self, what: str) -> MerkleCap:
        return MerkleCap(self.vec((DIGEST_ELEMS,), f"{what}.cap", self.limit("roots")))

    def sumcheck(self, what: str, phase: int = 0) -> SumcheckData:
        rounds = self.limit("sumcheck", phase)
        return SumcheckData(self.vec((2, EF_DEGREE), f"{what}.polynomial_evaluations", rounds),
                            self.vec((), f"{what}.pow_witnesses", rounds))

    def openings(self, what: str, phase: int = 0) -> QueryOpenings:
        kind = OPENING_KINDS[self.r.variant(what, VARIANTS)]
        what = f"{what}.{VARIANTS[OPENING_KINDS.index(kind)]}"
        tail = () if kind == "base" else (EF_DEGREE,)
        n = self.r.length(f"{what}.rows", 1, self.limit("rows", phase))
        rows = [self.vec(tail, f"{what}.rows[{j}]", self.limit("width", phase)) for j in range(n)]
        _check_widths([len(row) for row in rows], f"{what}.rows")
        shape = (n, len(rows[0]) if rows else 0) + tail
        siblings = self.vec((DIGEST_ELEMS,), f"{what}.proof.sibling_hashes", self.limit("siblings", phase))
        return QueryOpenings(kind, np.array(rows, dtype=np.uint32).reshape(shape), siblings)

    def round(self, what: str, i: int = 0) -> RoundProof:
        commitment = self.cap(f"{what}.commitment") if self.r.option(f"{what}.commitment") else None
        return RoundProof(
            commitment=commitment,
            ood_answers=self.vec((EF_DEGREE,), f"{what}.ood_answers", self.limit("ood", i + 1)),
            pow_witness=self.word(f"{what}.pow_witness"),
            openings=self.openings(f"{what}.openings", i),
            sumcheck=self.sumcheck(f"{what}.sumcheck", i + 1),
        )

    def whir(self, what: str) -> WhirProof:
        initial_ood_answers = self.vec((EF_DEGREE,), f"{what}.initial_ood_answers", self.limit("ood", 0))
        initial_sumcheck = self.sumcheck(f"{what}.initial_sumcheck", 0)
        n_rounds = self.r.length(f"{what}.rounds", 1, self.limit("rounds"))
        rounds = [self.round(f"{what}.rounds[{i}]", i) for i in range(n_rounds)]
        last = n_rounds if self.limit("rounds") is None else self.limit("rounds")
        final_poly = self.vec((EF_DEGREE,), f"{what}.final_poly", self.limit("final_poly")) \
            if self.r.option(f"{what}.final_poly") else None
        final_pow_witness = self.word(f"{what}.final_pow_witness")
        final_openings = self.openings(f"{what}.final_openings", last)
        final_sumcheck = self.sumcheck(f"{what}.final_sumcheck", last + 1) \
            if self.r.option(f"{what}.final_sumcheck") else None
        return WhirProof(initial_ood_answers, initial_sumcheck, rounds, final_poly, final_pow_witness,
                         final_openings, final_sumcheck)

    def proof(self, what: str) -> PcsProof:
        whir = self.whir(f"{what}.whir")
        n = self.r.length(f"{what}.evals", 2, self.limit("evals"))
        evals = [OpeningEvals(self.vec((EF_DEGREE,), f"{what}.evals[{i}].current", self.limit("current")),
                              self.vec((EF_DEGREE,), f"{what}.evals[{i}].next", self.limit("next")))
                 for i in range(n)]
        self.r.finish(what)
        return PcsProof(whir, evals)


def pcs_proof_from_postcard(data, prime: int | None = None, bounds: ProofBounds | None = None) -> PcsProof:
    """A ``PcsProof`` from its postcard bytes (the whole of ``data``: trailing bytes are an error); ``bounds``:
    the configuration's limits on every length, checked before anything is allocated for it."""
    return _PostcardProofReader(data, prime, "proof postcard", bounds).proof("proof")


def merkle_cap_from_postcard(data, prime: int | None = None, bounds: ProofBounds | None = None) -> MerkleCap:
    """A ``MerkleCap`` from its postcard bytes (the whole of ``data``)."""
    reader = _PostcardProofReader(data, prime, "commitment postcard", bounds)
    cap = reader.cap("commitment")
    reader.r.finish("commitment")
    return cap
