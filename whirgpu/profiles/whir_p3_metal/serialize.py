"""Proof files: the reference's serde JSON (``whir-p3-json/v1``) and whirgpu's compact binary format.

A proof file carries the protocol parameters, the statement (points and claimed values) and the proof, so it
can be verified on its own. Both decoders validate everything (types, lengths against the configuration the
header derives, field elements < p, no trailing data) and raise ``ProofFormatError`` naming the first problem.
Optional fields that restate others must agree with them: ``params.num_points`` (in either format) must count the
statement's points, and a whir-p3-json ``proof_canonical`` must be ``proof`` mapped to canonical values (checked
here, reported by ``whirgpu.verify`` once ``proof`` has been judged: see ``ProofFile.inconsistency``).

whir-p3-json/v1: keys sorted, compact separators, exactly as the reference writes them (golden/README.md).
Everything outside ``proof`` is canonical; inside ``proof`` every integer is a Montgomery word.

Binary (little-endian u32 words unless noted; every field element is its Montgomery word):
    magic b"WHIRGPU\\x01" | u32 header_len | header: UTF-8 JSON {"params": ..., "num_claims": m} |
    points m*n*4 | values m*4 | initial_commitment 8 | initial_ood t*4 | sumcheck(k0) |
    per round: commitment 8 | ood t_i*4 | pow_witness 1 | u32 q | q * (row, siblings) | sumcheck(k_i) |
    final_poly 2^fsr*4 | final_pow_witness 1 | u32 q | q * (row, siblings) | sumcheck(fsr) (if fsr > 0)
where sumcheck(k) = k*2*4 evaluations followed by k witnesses if that sumcheck grinds, and a row is 2^k words
(base, round 0) or 2^k*4 words (extension), its siblings depth*8 words.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass

import numpy as np

from ...protocol.json_tree import JsonTreeReader, json_type, loads_bounded
from ...errors import ConfigError, FileError, ProofFormatError
from ...files import check_size, read_capped
from ...protocol.document_limits import MAX_PROOF_DOCUMENT_BYTES, PROOF_CAP_REASON
from ...field import P, from_monty_int
from ...ref import field_np as F
from .binary_words import Reader as _Reader, Writer as _Writer, read_queries as _read_queries, \
    read_sumcheck as _read_sumcheck, write_queries as _write_queries, write_sumcheck as _write_sumcheck
from .document_checks import check_document, check_keys, check_params_block, first_difference
from .config import WhirConfig
from ...protocol.parameters import ProtocolParameters
from ...protocol.proof import DIGEST_ELEMS, QueryOpening, RoundProof, Statement, SumcheckData, WhirProof

JSON_FORMAT = "whir-p3-json/v1"
BINARY_MAGIC = b"WHIRGPU\x01"
FORMATS = ("binary", "whir-p3-json")


@dataclass
class ProofFile:
    """Everything a verifier needs: parameters, statement (Montgomery) and proof.

    ``inconsistency``: set by the whir-p3-json decoder when the optional ``proof_canonical`` disagrees with
    ``proof`` (what the first difference is). The file is then rejected: ``whirgpu.verify`` judges ``proof`` first
    (a false proof stays a ``VerificationError``, as without the copy) and raises ``ProofFormatError`` with this
    message if the proof itself verifies."""

    params: ProtocolParameters
    statement: Statement
    proof: WhirProof
    seed: int | None = None  # the instance seed, when the instance was drawn from SmallRng(seed)
    inconsistency: str | None = None

    @property
    def config(self) -> WhirConfig:
        return WhirConfig.from_params(self.params)


# ---- whir-p3-json ----------------------------------------------------------------------------------------------

def _ef_json(e) -> dict:
    return {"_phantom": None, "value": [int(x) for x in e]}


def _digest_json(d) -> list[int]:
    return [int(x) for x in d]


def _sumcheck_json(s: SumcheckData) -> dict:
    return {
        "polynomial_evaluations": [[_ef_json(h0), _ef_json(h2)] for h0, h2 in s.evaluations],
        "pow_witnesses": [int(w) for w in s.pow_witnesses],
    }


def _query_json(q: QueryOpening) -> dict:
    values = [int(v) for v in q.values] if q.kind == "base" else [_ef_json(v) for v in q.values]
    return {"proof": [_digest_json(s) for s in q.siblings], "type": q.kind, "values": values}


def proof_to_json_tree(proof: WhirProof) -> dict:
    """The reference's serde tree of a proof (Montgomery integers)."""
    return {
        "final_poly": None if proof.final_poly is None else [_ef_json(e) for e in proof.final_poly],
        "final_pow_witness": int(proof.final_pow_witness),
        "final_queries": [_query_json(q) for q in proof.final_queries],
        "final_sumcheck": None if proof.final_sumcheck is None else _sumcheck_json(proof.final_sumcheck),
        "initial_commitment": {"_marker": None, "cap": [_digest_json(proof.initial_commitment)]},
        "initial_ood_answers": [_ef_json(e) for e in proof.initial_ood_answers],
        "initial_sumcheck": _sumcheck_json(proof.initial_sumcheck),
        "rounds": [
            {
                "commitment": {"_marker": None, "cap": [_digest_json(r.commitment)]},
                "ood_answers": [_ef_json(e) for e in r.ood_answers],
                "pow_witness": int(r.pow_witness),
                "queries": [_query_json(q) for q in r.queries],
                "sumcheck": _sumcheck_json(r.sumcheck),
            }
            for r in proof.rounds
        ],
    }


def _canonical_tree(tree):
    """Map every integer of a Montgomery tree to its canonical value (the golden files' ``proof_canonical``)."""
    if isinstance(tree, dict):
        return {k: _canonical_tree(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_canonical_tree(v) for v in tree]
    if isinstance(tree, int) and not isinstance(tree, bool):
        return from_monty_int(tree)
    return tree


def to_whir_p3_json(pf: ProofFile, include_debug: bool = True) -> str:
    """Serialise to the reference's JSON layout (sorted keys, compact)."""
    config = pf.config
    proof_tree = proof_to_json_tree(pf.proof)
    doc = {
        "format": JSON_FORMAT,
        "params": pf.params.params_dict(num_points=pf.statement.num_claims, seed=pf.seed),
        "points_canonical": F.from_monty(pf.statement.points).astype(np.int64).tolist(),
        "claimed_values_canonical": F.from_monty(pf.statement.values).astype(np.int64).tolist(),
        "proof_field_encoding": "montgomery",
        "proof": proof_tree,
    }
    if include_debug:
        from .domain_separator import domain_separator

        doc["derived"] = config.to_derived_dict()
        doc["domain_separator_canonical"] = [int(x) for x in domain_separator(config)]
        doc["proof_canonical"] = _canonical_tree(proof_tree)
        doc["field"] = {
            "extension": "BinomialExtensionField<BabyBear, 4>: a0 + a1*X + a2*X^2 + a3*X^3, X^4 = W",
            "extension_w": 11,
            "name": "BabyBear",
            "p": P,
        }
        doc["crypto"] = {
            "challenger": "DuplexChallenger<BabyBear, Perm, 16, 8>",
            "compress": "TruncatedPermutation<Perm, 2, 8, 16>",
            "hash": "PaddingFreeSponge<Perm, 16, 8, 8>",
            "permutation": "Poseidon2BabyBear<16>::new_from_rng_128(SmallRng::seed_from_u64(1))",
        }
        doc["source"] = {"path": "whirgpu"}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


class _JsonReader(JsonTreeReader):
    """Typed access to a decoded JSON tree; every failure is a ProofFormatError naming the path."""

    @staticmethod
    def obj(value, path: str, keys: tuple[str, ...], optional: tuple[str, ...] | None = None) -> dict:
        """An object holding ``keys``; with ``optional`` given, holding no key outside ``keys + optional``."""
        if not isinstance(value, dict):
            raise ProofFormatError(f"{path}: expected an object, got {json_type(value)}")
        missing = [k for k in keys if k not in value]
        if missing:
            raise ProofFormatError(f"{path}: missing key(s) {', '.join(missing)}")
        if optional is not None:
            check_keys(value, path, keys + optional)
        return value

    @staticmethod
    def marker(value: dict, key: str, path: str) -> None:
        """serde's zero-sized ``_phantom`` / ``_marker`` fields: absent or null."""
        if value.get(key) is not None:
            raise ProofFormatError(f"{path}.{key}: expected null, got {value[key]!r:.40}")


    @staticmethod
    def word(value, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ProofFormatError(f"{path}: expected an integer field element, got {value!r:.40}")
        if not 0 <= value < P:
            raise ProofFormatError(f"{path}: {value} is not a field element (must be in [0, {P}))")
        return value


    def ef(self, value, path: str) -> np.ndarray:
        self.obj(value, path, ("value",), ("_phantom",))
        self.marker(value, "_phantom", path)
        return self.words(value["value"], f"{path}.value", 4)


    def digest(self, value, path: str) -> np.ndarray:
        self.obj(value, path, ("cap",), ("_marker",))
        self.marker(value, "_marker", path)
        cap = self.lst(value["cap"], f"{path}.cap", 1)
        return self.words(cap[0], f"{path}.cap[0]", DIGEST_ELEMS)

    def sumcheck(self, value, path: str) -> SumcheckData:
        self.obj(value, path, ("polynomial_evaluations", "pow_witnesses"), ())
        rounds = self.lst(value["polynomial_evaluations"], f"{path}.polynomial_evaluations")
        evaluations = np.array(
            [self.efs(r, f"{path}.polynomial_evaluations[{i}]", 2) for i, r in enumerate(rounds)], dtype=np.uint32
        ).reshape(-1, 2, 4)
        return SumcheckData(evaluations, self.words(value["pow_witnesses"], f"{path}.pow_witnesses"))

    def query(self, value, path: str) -> QueryOpening:
        self.obj(value, path, ("type", "values", "proof"), ())
        kind = value["type"]
        if kind not in ("base", "extension"):
            raise ProofFormatError(f"{path}.type: expected 'base' or 'extension', got {kind!r:.40}")
        values = self.words(value["values"], f"{path}.values") if kind == "base" else self.efs(
            value["values"], f"{path}.values"
        )
        siblings = np.array(
            [self.words(s, f"{path}.proof[{i}]", DIGEST_ELEMS) for i, s in
             enumerate(self.lst(value["proof"], f"{path}.proof"))], dtype=np.uint32,
        ).reshape(-1, DIGEST_ELEMS)
        return QueryOpening(kind, values, siblings)

    def queries(self, value, path: str) -> list[QueryOpening]:
        return [self.query(q, f"{path}[{i}]") for i, q in enumerate(self.lst(value, path))]


def proof_from_json_tree(tree) -> WhirProof:
    """Inverse of ``proof_to_json_tree`` with full validation."""
    r = _JsonReader()
    keys = ("initial_commitment", "initial_ood_answers", "initial_sumcheck", "rounds", "final_poly",
            "final_pow_witness", "final_queries", "final_sumcheck")
    r.obj(tree, "proof", keys, ())
    rounds = []
    for i, rt in enumerate(r.lst(tree["rounds"], "proof.rounds")):
        path = f"proof.rounds[{i}]"
        r.obj(rt, path, ("commitment", "ood_answers", "pow_witness", "queries", "sumcheck"), ())
        rounds.append(RoundProof(
            r.digest(rt["commitment"], f"{path}.commitment"),
            r.efs(rt["ood_answers"], f"{path}.ood_answers"),
            np.uint32(r.word(rt["pow_witness"], f"{path}.pow_witness")),
            r.queries(rt["queries"], f"{path}.queries"),
            r.sumcheck(rt["sumcheck"], f"{path}.sumcheck"),
        ))
    return WhirProof(
        initial_commitment=r.digest(tree["initial_commitment"], "proof.initial_commitment"),
        initial_ood_answers=r.efs(tree["initial_ood_answers"], "proof.initial_ood_answers"),
        initial_sumcheck=r.sumcheck(tree["initial_sumcheck"], "proof.initial_sumcheck"),
        rounds=rounds,
        final_poly=None if tree["final_poly"] is None else r.efs(tree["final_poly"], "proof.final_poly"),
        final_pow_witness=np.uint32(r.word(tree["final_pow_witness"], "proof.final_pow_witness")),
        final_queries=r.queries(tree["final_queries"], "proof.final_queries"),
        final_sumcheck=None if tree["final_sumcheck"] is None else r.sumcheck(
            tree["final_sumcheck"], "proof.final_sumcheck"
        ),
    )


def _canonical_words(value, path: str, shape: tuple[int, ...]) -> np.ndarray:
    """Canonical integers of a given nested shape -> Montgomery words."""
    try:
        array = np.array(value, dtype=object)
    except Exception:  # noqa: BLE001 - ragged or exotic input
        raise ProofFormatError(f"{path}: not a regular nested list") from None
    if array.shape != shape:
        raise ProofFormatError(f"{path}: expected shape {shape}, got {array.shape}")
    flat = array.reshape(-1)
    for i, v in enumerate(flat):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < P:
            raise ProofFormatError(f"{path}: entry {i} ({v!r:.40}) is not a canonical field element in [0, {P})")
    return F.to_monty(np.array(flat.tolist(), dtype=np.uint64)).reshape(shape)


def _params_and_config(block, where: str) -> tuple[ProtocolParameters, WhirConfig]:
    """A ``params`` block -> parameters and the configuration they derive, or ProofFormatError: a file whose
    parameters the reference would reject (or that overflow the soundness formulas) is malformed."""
    _JsonReader.obj(block, where, ())
    check_params_block(block, where)
    try:
        params = ProtocolParameters.from_golden_params(block)
        return params, WhirConfig.from_params(params)
    except ConfigError as exc:
        raise ProofFormatError(f"{where}: {exc}") from None
    except OverflowError as exc:  # ints too large for the f64 soundness formulas
        raise ProofFormatError(f"{where}: a parameter is out of range ({exc})") from None


def params_and_statement_from_json(doc: dict, path: str = "") -> tuple[ProtocolParameters, Statement]:
    """The parameters and statement of a golden-format document (canonical points and claimed values)."""
    r = _JsonReader()
    r.obj(doc, path or "document", ("params", "points_canonical", "claimed_values_canonical"))
    params, _ = _params_and_config(doc["params"], "params")
    n = params.num_variables
    points_raw = r.lst(doc["points_canonical"], "points_canonical")
    m = len(points_raw)
    points = _canonical_words(points_raw, "points_canonical", (m, n, 4)) if m else np.zeros((0, n, 4), np.uint32)
    values = _canonical_words(doc["claimed_values_canonical"], "claimed_values_canonical", (m, 4)) if m else \
        np.zeros((0, 4), np.uint32)
    if not m and doc["claimed_values_canonical"] != []:
        raise ProofFormatError("claimed_values_canonical: expected no values for no points")
    _check_num_points(doc["params"], m, "params.num_points", "points_canonical holds")
    return params, Statement(points, values)


def _check_num_points(block: dict, m: int, what: str, holder: str) -> None:
    """``num_points`` is optional in a params block; where present it must count the statement's points."""
    if "num_points" in block:
        k = block["num_points"]
        if isinstance(k, bool) or not isinstance(k, int) or k != m:
            raise ProofFormatError(f"{what}: {k!r:.40} disagrees with the statement ({holder} {m} point(s))")


def from_whir_p3_json(text: str | bytes) -> ProofFile:
    """Parse and validate a whir-p3-json/v1 proof file."""
    if not isinstance(text, (str, bytes, bytearray)):
        raise ProofFormatError(f"expected JSON text (str or bytes), got {type(text).__name__}")
    return from_whir_p3_tree(loads_bounded(text, "whir-p3-json document"))


def from_whir_p3_tree(doc) -> ProofFile:
    """``from_whir_p3_json`` on a document already decoded from JSON (``json.loads``'s tree)."""
    r = _JsonReader()
    r.obj(doc, "document", ("format", "params", "points_canonical", "claimed_values_canonical", "proof"))
    if doc["format"] != JSON_FORMAT:
        raise ProofFormatError(f"format: expected {JSON_FORMAT!r}, got {doc['format']!r:.40}")
    encoding = doc.get("proof_field_encoding", "montgomery")
    if encoding != "montgomery":
        raise ProofFormatError(f"proof_field_encoding: only 'montgomery' is defined, got {encoding!r:.40}")
    params, statement = params_and_statement_from_json(doc)
    check_document(doc, WhirConfig.from_params(params))  # params_and_statement_from_json derived it once
    proof = proof_from_json_tree(doc["proof"])
    inconsistency = None
    if "proof_canonical" in doc:  # optional, for debugging; a copy that disagrees makes the document inconsistent
        try:
            where = first_difference(doc["proof_canonical"], _canonical_tree(doc["proof"]), "proof_canonical")
        except RecursionError:  # keys the decoder ignores may nest as deep as the JSON parser allows
            raise ProofFormatError("proof_canonical: nested too deeply to compare with proof") from None
        if where is not None:
            inconsistency = f"proof_canonical disagrees with proof (mapped to canonical values) at {where}"
    seed = doc["params"].get("seed")
    seed = seed if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0 else None
    return ProofFile(params, statement, proof, seed, inconsistency)


# ---- binary ----------------------------------------------------------------------------------------------------

def to_binary(pf: ProofFile) -> bytes:
    """Serialise to whirgpu's compact binary format (see the module docstring)."""
    proof, statement = pf.proof, pf.statement
    header = json.dumps({"params": pf.params.params_dict(num_points=statement.num_claims, seed=pf.seed),
                         "num_claims": statement.num_claims}, sort_keys=True, separators=(",", ":")).encode()
    w = _Writer()
    w.parts.append(BINARY_MAGIC)
    w.count(len(header))
    w.parts.append(header)
    w.words(statement.points)
    w.words(statement.values)
    w.words(proof.initial_commitment)
    w.words(proof.initial_ood_answers)
    _write_sumcheck(w, proof.initial_sumcheck)
    for rp in proof.rounds:
        w.words(rp.commitment)
        w.words(rp.ood_answers)
        w.words(np.asarray([rp.pow_witness]))
        _write_queries(w, rp.queries)
        _write_sumcheck(w, rp.sumcheck)
    w.words(proof.final_poly)
    w.words(np.asarray([proof.final_pow_witness]))
    _write_queries(w, proof.final_queries)
    if proof.final_sumcheck is not None:
        _write_sumcheck(w, proof.final_sumcheck)
    return w.bytes()


MAX_HEADER_BYTES = 1 << 16


def from_binary(data: bytes) -> ProofFile:
    """Parse and validate a binary proof file."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ProofFormatError(f"expected bytes, got {type(data).__name__}")
    data = bytes(data)
    if not data.startswith(BINARY_MAGIC):
        raise ProofFormatError("not a whirgpu binary proof (bad magic; is it a whir-p3-json file?)")
    if len(data) < len(BINARY_MAGIC) + 4:
        raise ProofFormatError("truncated: header length missing")
    (header_len,) = struct.unpack_from("<I", data, len(BINARY_MAGIC))
    start = len(BINARY_MAGIC) + 4
    if header_len > MAX_HEADER_BYTES or start + header_len > len(data):
        raise ProofFormatError(f"header length {header_len} does not fit the {len(data)}-byte file")
    header = loads_bounded(data[start:start + header_len], "header")
    _JsonReader.obj(header, "header", ("params", "num_claims"), ())
    params, config = _params_and_config(header["params"], "header params")
    m = header["num_claims"]
    if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m <= 1 << 16:
        raise ProofFormatError(f"header: num_claims must be an integer in [0, 65536], got {m!r:.40}")
    _check_num_points(header["params"], m, "header params.num_points", "num_claims counts")
    n = config.num_variables
    r = _Reader(data, start + header_len)
    statement = Statement(r.words((m, n, 4), "statement points"), r.words((m, 4), "statement values"))

    def depth_of(domain_size: int, fold: int) -> int:
        return (domain_size >> fold).bit_length() - 1

    proof = WhirProof(
        initial_commitment=r.words((DIGEST_ELEMS,), "initial commitment"),
        initial_ood_answers=r.words((config.commitment_ood_samples, 4), "initial OOD answers"),
        initial_sumcheck=_read_sumcheck(r, config.fold(0), config.starting_folding_pow_bits > 0, "initial sumcheck"),
    )
    for i, rc in enumerate(config.rounds):
        what = f"round {i}"
        kind = "base" if i == 0 else "extension"
        proof.rounds.append(RoundProof(
            r.words((DIGEST_ELEMS,), f"{what} commitment"),
            r.words((rc.ood_samples, 4), f"{what} OOD answers"),
            np.uint32(r.words((1,), f"{what} PoW witness")[0]),
            _read_queries(r, rc.num_queries, kind, 1 << rc.folding_factor,
                          depth_of(rc.domain_size, rc.folding_factor), what),
            _read_sumcheck(r, config.fold(i + 1), rc.folding_pow_bits > 0, f"{what} sumcheck"),
        ))
    fsr = config.final_sumcheck_rounds
    proof.final_poly = r.words((1 << fsr, 4), "final polynomial")
    proof.final_pow_witness = np.uint32(r.words((1,), "final PoW witness")[0])
    k_final = config.fold(config.n_rounds)
    proof.final_queries = _read_queries(
        r, config.final_queries, "base" if config.n_rounds == 0 else "extension", 1 << k_final,
        depth_of(config.final_domain_size, k_final), "final",
    )
    if fsr > 0:
        proof.final_sumcheck = _read_sumcheck(r, fsr, config.final_folding_pow_bits > 0, "final sumcheck")
    if r.offset != len(data):
        raise ProofFormatError(f"{len(data) - r.offset} trailing bytes after the proof")
    seed = header["params"].get("seed")
    seed = seed if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0 else None
    return ProofFile(params, statement, proof, seed)


def check_proof_file(pf, what: str = "proof file") -> ProofFile:
    """``pf`` if it is a ``ProofFile`` whose parts have their types; a ``ProofFormatError`` naming the part and
    the type found otherwise (never an AttributeError further in)."""
    if not isinstance(pf, ProofFile):
        raise ProofFormatError(f"expected a ProofFile, got {type(pf).__name__}")
    for field, kind in (("params", ProtocolParameters), ("statement", Statement), ("proof", WhirProof)):
        if not isinstance(getattr(pf, field), kind):
            raise ProofFormatError(f"{what} {field}: expected {kind.__name__}, got "
                                   f"{type(getattr(pf, field)).__name__}")
    return pf


def dump(pf: ProofFile, fmt: str = "binary") -> bytes:
    """Serialise in ``fmt`` ('binary', the default, or 'whir-p3-json'). Anything but a well-typed ``ProofFile`` (including
    arrays of the wrong shape inside one) is a ``ProofFormatError``."""
    check_proof_file(pf)
    if fmt not in FORMATS:
        raise ProofFormatError(f"unknown proof format {fmt!r}; choose one of {', '.join(FORMATS)}")
    try:
        return to_binary(pf) if fmt == "binary" else to_whir_p3_json(pf).encode()
    except (AttributeError, TypeError, ValueError, IndexError) as exc:  # a hand-built ProofFile's wrong parts
        if isinstance(exc, ProofFormatError):
            raise
        raise ProofFormatError(f"cannot serialise this ProofFile: {type(exc).__name__}: {exc}") from None


_JSON_SPACE = b" \t\n\r"
_JSON_START = frozenset(b'{["-0123456789tfn')


def check_document_head(head: bytes) -> None:
    """Refuse, from its first bytes alone, a stream that can be neither format: not the binary magic (or a prefix
    of it) and not JSON (whose first byte other than JSON whitespace begins a value). ``/dev/zero`` is refused at
    once instead of being read to the cap. Anything that might be JSON is left to the parser's fuller message."""
    body = head.lstrip(_JSON_SPACE)
    if not body or body[0] in _JSON_START or head.startswith(BINARY_MAGIC) or BINARY_MAGIC.startswith(head):
        return
    raise ProofFormatError(f"not a proof document of any profile: not JSON: it starts with byte {body[0]:#04x} "
                           "(and not the binary format)")


def read_source(source) -> bytes | str:
    """The document a proof source names. The rule: bytes (``bytes``, ``bytearray``, ``memoryview``) are the
    document itself, in either format; an ``os.PathLike`` names a file; a ``str`` is JSON text when its first
    character other than whitespace is ``{``, and otherwise names a file. A file is read no further than
    ``MAX_PROOF_DOCUMENT_BYTES`` + 1 bytes. A file that cannot be read, a document larger than that cap, and
    anything else, is a ``ProofFormatError`` of one line."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        check_size(memoryview(source).cast("B"), MAX_PROOF_DOCUMENT_BYTES, "proof document", ProofFormatError,
                   PROOF_CAP_REASON)
        return bytes(source)
    if isinstance(source, str) and source.lstrip().startswith("{"):
        check_size(source, MAX_PROOF_DOCUMENT_BYTES, "proof document", ProofFormatError, PROOF_CAP_REASON)
        return source
    if not isinstance(source, (str, os.PathLike)):
        raise ProofFormatError(f"expected a ProofFile, its bytes, a path or JSON text, got {type(source).__name__}")
    if isinstance(source, str) and (not source.strip() or "\x00" in source or not os.path.exists(source)):
        raise ProofFormatError(f"{source!r:.80} is not JSON text (which starts with '{{') and names no file")
    try:
        return read_capped(source, MAX_PROOF_DOCUMENT_BYTES, "proof document", ProofFormatError,
                           PROOF_CAP_REASON, head=check_document_head)
    except (FileError, ValueError) as exc:  # ValueError: a NUL in the path
        if isinstance(exc, ProofFormatError):
            raise
        reason = str(exc).split(": ", 1)[-1] if isinstance(exc, FileError) else str(exc)
        raise ProofFormatError(f"cannot read proof file {os.fspath(source)!s:.200}: {reason}") from None


def load(data, fmt: str = "auto") -> ProofFile:
    """Parse the proof ``data`` names as ``fmt``; 'auto' tells the formats apart by the binary magic.

    ``data``: the document's bytes, a path (``str`` or ``os.PathLike``) or JSON text (a ``str`` starting with
    ``{``): see ``read_source``."""
    data = read_source(data)
    if fmt == "auto":
        binary = not isinstance(data, str) and bytes(data[:len(BINARY_MAGIC)]) == BINARY_MAGIC
        fmt = "binary" if binary else "whir-p3-json"
    if fmt == "binary":
        return from_binary(data)
    if fmt == "whir-p3-json":
        return from_whir_p3_json(data)
    raise ProofFormatError(f"unknown proof format {fmt!r}; choose one of auto, {', '.join(FORMATS)}")
