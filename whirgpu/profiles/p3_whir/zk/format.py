"""The hiding PCS's proof encodings: serde JSON (``serde_json::to_value(ZkWhirProof)``, Montgomery words, EF as
``{"_phantom": null, "value": [c0..c3]}``, a cap as ``{"_marker": null, "cap": [[8 words]]}``) and postcard
(``postcard::to_allocvec``: members in declaration order, lengths and enum tags as varints, a field element as
4 little-endian Montgomery bytes, ``ell_zk`` a varint). ``SharedProofOpening`` carries no enum tag; a
``QueryOpenings`` is ``{"Base"|"Extension": SharedProofOpening}``.

Contract: ``zk_proof_to_postcard(proof)`` -> bytes; ``zk_proof_to_json(proof)`` -> the serde tree;
``zk_proof_from_json(tree, field)`` -> ``ZkWhirProof`` or ``ProofFormatError`` (naming the path) for any tree
that is not a well-formed proof with canonical words; ``zk_proof_from_postcard(data, field)`` likewise.
"""

from __future__ import annotations

import numpy as np

from ....errors import ProofFormatError
from ....field import Field
from ..postcard import PostcardReader, PostcardWriter
from ..proof import MerkleCap, QueryOpenings
from .proof import (
    BaseCaseZkProof,
    BlindedMask,
    MaskOpeningPair,
    ZkRoundProof,
    ZkSumcheckData,
    ZkWhirProof,
)

KINDS = {"base": "Base", "extension": "Extension"}


# ---- postcard writer -------------------------------------------------------------------------------------------

def _efs(w: PostcardWriter, a: np.ndarray) -> None:
    w.varint(len(a))
    w.words(a)


def _cap(w: PostcardWriter, cap: MerkleCap) -> None:
    w.varint(len(cap.roots))
    w.words(cap.roots)


def _shared(w: PostcardWriter, o: QueryOpenings) -> None:
    w.varint(o.num_queries)
    for row in o.rows:
        w.varint(len(row))
        w.words(row)
    w.varint(len(o.sibling_hashes))
    w.words(o.sibling_hashes)


def _openings(w: PostcardWriter, o: QueryOpenings) -> None:
    w.varint(0 if o.kind == "base" else 1)
    _shared(w, o)


def zk_proof_to_postcard(proof: ZkWhirProof) -> bytes:
    w = PostcardWriter()
    _efs(w, proof.evals)
    w.varint(len(proof.sumchecks))
    for s in proof.sumchecks:
        w.words(s.mu_tilde)
        w.varint(s.ell_zk)
        w.varint(len(s.round_coefficients))
        for wire in s.round_coefficients:
            _efs(w, wire)
        _efs(w, s.pow_witnesses)
    w.varint(len(proof.sumcheck_mask_commitments))
    for cap in proof.sumcheck_mask_commitments:
        _cap(w, cap)
    w.varint(len(proof.rounds))
    for r in proof.rounds:
        _cap(w, r.commitment)
        _cap(w, r.mask_commitment)
        _efs(w, r.ood_answers)
        w.words(np.array([r.pow_witness], np.uint32))
        _openings(w, r.openings)
    b = proof.base_case
    _cap(w, b.fresh_main_commitment)
    w.varint(len(b.fresh_mask_commitments))
    for cap in b.fresh_mask_commitments:
        _cap(w, cap)
    w.words(b.masked_claim)
    _efs(w, b.blinded_message)
    _efs(w, b.blinded_randomness)
    w.varint(len(b.blinded_masks))
    for m in b.blinded_masks:
        _efs(w, m.message)
        _efs(w, m.randomness)
    w.words(np.array([b.pow_witness], np.uint32))
    _openings(w, b.source_openings)
    _shared(w, b.fresh_main_openings)
    w.varint(len(b.mask_openings))
    for pair in b.mask_openings:
        _shared(w, pair.carried)
        _shared(w, pair.fresh)
    return w.getvalue()


# ---- serde JSON writer -----------------------------------------------------------------------------------------

def _ef_json(e) -> dict:
    return {"_phantom": None, "value": [int(c) for c in e]}


def _efs_json(a) -> list:
    return [_ef_json(e) for e in a]


def _cap_json(cap: MerkleCap) -> dict:
    return {"_marker": None, "cap": cap.roots.tolist()}


def _shared_json(o: QueryOpenings) -> dict:
    rows = o.rows.tolist() if o.kind == "base" else [_efs_json(row) for row in o.rows]
    return {"proof": {"sibling_hashes": o.sibling_hashes.tolist()}, "rows": rows}


def zk_proof_to_json(proof: ZkWhirProof) -> dict:
    b = proof.base_case
    return {
        "base_case": {
            "blinded_masks": [{"message": _efs_json(m.message), "randomness": _efs_json(m.randomness)}
                              for m in b.blinded_masks],
            "blinded_message": _efs_json(b.blinded_message), "blinded_randomness": _efs_json(b.blinded_randomness),
            "fresh_main_commitment": _cap_json(b.fresh_main_commitment),
            "fresh_main_openings": _shared_json(b.fresh_main_openings),
            "fresh_mask_commitments": [_cap_json(c) for c in b.fresh_mask_commitments],
            "mask_openings": [{"carried": _shared_json(p.carried), "fresh": _shared_json(p.fresh)}
                              for p in b.mask_openings],
            "masked_claim": _ef_json(b.masked_claim), "pow_witness": int(b.pow_witness),
            "source_openings": {KINDS[b.source_openings.kind]: _shared_json(b.source_openings)}},
        "evals": _efs_json(proof.evals),
        "rounds": [{"commitment": _cap_json(r.commitment), "mask_commitment": _cap_json(r.mask_commitment),
                    "ood_answers": _efs_json(r.ood_answers),
                    "openings": {KINDS[r.openings.kind]: _shared_json(r.openings)}, "pow_witness": int(r.pow_witness)}
                   for r in proof.rounds],
        "sumcheck_mask_commitments": [_cap_json(c) for c in proof.sumcheck_mask_commitments],
        "sumchecks": [{"ell_zk": s.ell_zk, "mu_tilde": _ef_json(s.mu_tilde), "pow_witnesses": s.pow_witnesses.tolist(),
                       "round_coefficients": [_efs_json(w) for w in s.round_coefficients]} for s in proof.sumchecks],
    }


# ---- serde JSON reader -----------------------------------------------------------------------------------------

class _Json:
    def __init__(self, field: Field):
        self.p = field.P

    @staticmethod
    def obj(value, path: str, keys: tuple[str, ...]) -> dict:
        if not isinstance(value, dict) or set(value) != set(keys):
            got = sorted(value) if isinstance(value, dict) else type(value).__name__
            raise ProofFormatError(f"{path}: expected an object with keys {sorted(keys)}, got {got}")
        return value

    @staticmethod
    def list(value, path: str) -> list:
        if not isinstance(value, list):
            raise ProofFormatError(f"{path}: expected a list, got {type(value).__name__}")
        return value

    def word(self, value, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < self.p:
            raise ProofFormatError(f"{path}: expected a field element word below {self.p}, got {value!r:.40}")
        return value

    def words(self, value, path: str, count: int | None = None) -> np.ndarray:
        items = self.list(value, path)
        if count is not None and len(items) != count:
            raise ProofFormatError(f"{path}: expected {count} words, got {len(items)}")
        return np.array([self.word(v, f"{path}[{i}]") for i, v in enumerate(items)], np.uint32)

    def ef(self, value, path: str) -> np.ndarray:
        node = self.obj(value, path, ("_phantom", "value"))
        if node["_phantom"] is not None:
            raise ProofFormatError(f"{path}._phantom: expected null")
        return self.words(node["value"], f"{path}.value", 4)

    def efs(self, value, path: str) -> np.ndarray:
        items = self.list(value, path)
        return np.array([self.ef(v, f"{path}[{i}]") for i, v in enumerate(items)], np.uint32).reshape(-1, 4)

    def cap(self, value, path: str) -> MerkleCap:
        node = self.obj(value, path, ("_marker", "cap"))
        if node["_marker"] is not None:
            raise ProofFormatError(f"{path}._marker: expected null")
        roots = [self.words(r, f"{path}.cap[{i}]", 8) for i, r in enumerate(self.list(node["cap"], f"{path}.cap"))]
        return MerkleCap(np.array(roots, np.uint32).reshape(-1, 8))

    def caps(self, value, path: str) -> tuple[MerkleCap, ...]:
        return tuple(self.cap(v, f"{path}[{i}]") for i, v in enumerate(self.list(value, path)))

    def shared(self, value, path: str, kind: str = "extension") -> QueryOpenings:
        node = self.obj(value, path, ("proof", "rows"))
        proof = self.obj(node["proof"], f"{path}.proof", ("sibling_hashes",))
        siblings = [self.words(s, f"{path}.proof.sibling_hashes[{i}]", 8)
                    for i, s in enumerate(self.list(proof["sibling_hashes"], f"{path}.proof.sibling_hashes"))]
        read = self.words if kind == "base" else self.efs
        rows = [read(r, f"{path}.rows[{i}]") for i, r in enumerate(self.list(node["rows"], f"{path}.rows"))]
        if len({len(r) for r in rows}) > 1:
            raise ProofFormatError(f"{path}.rows: rows of different widths")
        tail = () if kind == "base" else (4,)
        array = np.array(rows, np.uint32) if rows else np.zeros((0, 0) + tail, np.uint32)
        return QueryOpenings(kind, array, np.array(siblings, np.uint32).reshape(-1, 8))

    def openings(self, value, path: str) -> QueryOpenings:
        if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in ("Base", "Extension"):
            raise ProofFormatError(f"{path}: expected {{\"Base\" | \"Extension\": ...}}")
        tag, inner = next(iter(value.items()))
        return self.shared(inner, f"{path}.{tag}", "base" if tag == "Base" else "extension")

    def sumcheck(self, value, path: str) -> ZkSumcheckData:
        node = self.obj(value, path, ("ell_zk", "mu_tilde", "pow_witnesses", "round_coefficients"))
        ell_zk = node["ell_zk"]
        if isinstance(ell_zk, bool) or not isinstance(ell_zk, int) or not 0 <= ell_zk < 1 << 64:
            raise ProofFormatError(f"{path}.ell_zk: expected a usize")
        wires = [self.efs(w, f"{path}.round_coefficients[{i}]")
                 for i, w in enumerate(self.list(node["round_coefficients"], f"{path}.round_coefficients"))]
        if len({len(w) for w in wires}) > 1:
            raise ProofFormatError(f"{path}.round_coefficients: rounds of different lengths")
        coefficients = np.array(wires, np.uint32) if wires else np.zeros((0, 0, 4), np.uint32)
        return ZkSumcheckData(self.ef(node["mu_tilde"], f"{path}.mu_tilde"), ell_zk, coefficients,
                              self.words(node["pow_witnesses"], f"{path}.pow_witnesses"))

    def round(self, value, path: str) -> ZkRoundProof:
        node = self.obj(value, path, ("commitment", "mask_commitment", "ood_answers", "openings", "pow_witness"))
        return ZkRoundProof(self.cap(node["commitment"], f"{path}.commitment"),
                            self.cap(node["mask_commitment"], f"{path}.mask_commitment"),
                            self.efs(node["ood_answers"], f"{path}.ood_answers"),
                            self.word(node["pow_witness"], f"{path}.pow_witness"),
                            self.openings(node["openings"], f"{path}.openings"))

    def base_case(self, value, path: str) -> BaseCaseZkProof:
        node = self.obj(value, path, ("blinded_masks", "blinded_message", "blinded_randomness",
                                      "fresh_main_commitment", "fresh_main_openings", "fresh_mask_commitments",
                                      "mask_openings", "masked_claim", "pow_witness", "source_openings"))
        masks = []
        for i, m in enumerate(self.list(node["blinded_masks"], f"{path}.blinded_masks")):
            m = self.obj(m, f"{path}.blinded_masks[{i}]", ("message", "randomness"))
            masks.append(BlindedMask(self.efs(m["message"], f"{path}.blinded_masks[{i}].message"),
                                     self.efs(m["randomness"], f"{path}.blinded_masks[{i}].randomness")))
        pairs = []
        for i, pair in enumerate(self.list(node["mask_openings"], f"{path}.mask_openings")):
            pair = self.obj(pair, f"{path}.mask_openings[{i}]", ("carried", "fresh"))
            pairs.append(MaskOpeningPair(self.shared(pair["carried"], f"{path}.mask_openings[{i}].carried"),
                                         self.shared(pair["fresh"], f"{path}.mask_openings[{i}].fresh")))
        return BaseCaseZkProof(
            self.cap(node["fresh_main_commitment"], f"{path}.fresh_main_commitment"),
            self.caps(node["fresh_mask_commitments"], f"{path}.fresh_mask_commitments"),
            self.ef(node["masked_claim"], f"{path}.masked_claim"),
            self.efs(node["blinded_message"], f"{path}.blinded_message"),
            self.efs(node["blinded_randomness"], f"{path}.blinded_randomness"), tuple(masks),
            self.word(node["pow_witness"], f"{path}.pow_witness"),
            self.openings(node["source_openings"], f"{path}.source_openings"),
            self.shared(node["fresh_main_openings"], f"{path}.fresh_main_openings"), tuple(pairs))


def zk_proof_from_json(tree, field: Field, path: str = "proof") -> ZkWhirProof:
    r = _Json(field)
    node = r.obj(tree, path, ("base_case", "evals", "rounds", "sumcheck_mask_commitments", "sumchecks"))
    return ZkWhirProof(r.efs(node["evals"], f"{path}.evals"),
                       tuple(r.sumcheck(s, f"{path}.sumchecks[{i}]")
                             for i, s in enumerate(r.list(node["sumchecks"], f"{path}.sumchecks"))),
                       r.caps(node["sumcheck_mask_commitments"], f"{path}.sumcheck_mask_commitments"),
                       tuple(r.round(x, f"{path}.rounds[{i}]")
                             for i, x in enumerate(r.list(node["rounds"], f"{path}.rounds"))),
                       r.base_case(node["base_case"], f"{path}.base_case"))


def zk_commitment_from_json(tree, field: Field, path: str = "commitment") -> MerkleCap:
    return _Json(field).cap(tree, path)


# ---- postcard reader -------------------------------------------------------------------------------------------

class _Postcard:
    def __init__(self, data: bytes, field: Field):
        self.r = PostcardReader(bytes(data), "zk proof")
        self.p = field.P

    def efs(self, what: str) -> np.ndarray:
        n = self.r.length(what, 16)
        return self.r.words(4 * n, what, self.p).reshape(n, 4)

    def word(self, what: str) -> int:
        return int(self.r.words(1, what, self.p)[0])

    def cap(self, what: str) -> MerkleCap:
        n = self.r.length(what, 32)
        return MerkleCap(self.r.words(8 * n, what, self.p).reshape(n, 8))

    def caps(self, what: str) -> tuple[MerkleCap, ...]:
        return tuple(self.cap(f"{what}[{i}]") for i in range(self.r.length(what, 1)))

    def shared(self, what: str, kind: str = "extension") -> QueryOpenings:
        rows = []
        for i in range(self.r.length(f"{what}.rows", 1)):
            if kind == "base":
                n = self.r.length(f"{what}.rows[{i}]", 4)
                rows.append(self.r.words(n, f"{what}.rows[{i}]", self.p))
            else:
                rows.append(self.efs(f"{what}.rows[{i}]"))
        if len({len(row) for row in rows}) > 1:
            raise ProofFormatError(f"{what}.rows: rows of different widths")
        tail = () if kind == "base" else (4,)
        array = np.array(rows, np.uint32) if rows else np.zeros((0, 0) + tail, np.uint32)
        n = self.r.length(f"{what}.sibling_hashes", 32)
        return QueryOpenings(kind, array, self.r.words(8 * n, f"{what}.sibling_hashes", self.p).reshape(n, 8))

    def openings(self, what: str) -> QueryOpenings:
        tag = self.r.variant(what, ("Base", "Extension"))
        return self.shared(what, "base" if tag == 0 else "extension")

    def proof(self) -> ZkWhirProof:
        evals = self.efs("evals")
        sumchecks = []
        for i in range(self.r.length("sumchecks", 18)):
            what = f"sumchecks[{i}]"
            mu = self.r.words(4, f"{what}.mu_tilde", self.p)
            ell_zk = self.r.varint(f"{what}.ell_zk")
            wires = [self.efs(f"{what}.round_coefficients[{j}]")
                     for j in range(self.r.length(f"{what}.round_coefficients", 1))]
            if len({len(w) for w in wires}) > 1:
                raise ProofFormatError(f"{what}.round_coefficients: rounds of different lengths")
            coefficients = np.array(wires, np.uint32) if wires else np.zeros((0, 0, 4), np.uint32)
            n = self.r.length(f"{what}.pow_witnesses", 4)
            sumchecks.append(ZkSumcheckData(mu, ell_zk, coefficients,
                                            self.r.words(n, f"{what}.pow_witnesses", self.p)))
        mask_caps = self.caps("sumcheck_mask_commitments")
        rounds = []
        for i in range(self.r.length("rounds", 1)):
            what = f"rounds[{i}]"
            rounds.append(ZkRoundProof(self.cap(f"{what}.commitment"), self.cap(f"{what}.mask_commitment"),
                                       self.efs(f"{what}.ood_answers"), self.word(f"{what}.pow_witness"),
                                       self.openings(f"{what}.openings")))
        main = self.cap("base_case.fresh_main_commitment")
        fresh_caps = self.caps("base_case.fresh_mask_commitments")
        masked = self.r.words(4, "base_case.masked_claim", self.p)
        message, randomness = self.efs("base_case.blinded_message"), self.efs("base_case.blinded_randomness")
        masks = tuple(BlindedMask(self.efs(f"base_case.blinded_masks[{i}].message"),
                                  self.efs(f"base_case.blinded_masks[{i}].randomness"))
                      for i in range(self.r.length("base_case.blinded_masks", 2)))
        pow_witness = self.word("base_case.pow_witness")
        source = self.openings("base_case.source_openings")
        fresh_main = self.shared("base_case.fresh_main_openings")
        pairs = tuple(MaskOpeningPair(self.shared(f"base_case.mask_openings[{i}].carried"),
                                      self.shared(f"base_case.mask_openings[{i}].fresh"))
                      for i in range(self.r.length("base_case.mask_openings", 2)))
        self.r.finish("zk proof")
        return ZkWhirProof(evals, tuple(sumchecks), mask_caps, tuple(rounds),
                           BaseCaseZkProof(main, fresh_caps, masked, message, randomness, masks, pow_witness, source,
                                           fresh_main, pairs))


def zk_proof_from_postcard(data: bytes, field: Field) -> ZkWhirProof:
    return _Postcard(data, field).proof()
