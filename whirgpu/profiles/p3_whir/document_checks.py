"""The key-by-key rules of a p3-whir proof document (``document.py`` states them; this module applies them).

Contract: every function raises ``ProofFormatError`` naming the key (and, for a derived value, the first place
where it differs) or returns what it read; nothing else, on decoded JSON of any shape (``json_tree.loads_bounded``
keeps it at most ``MAX_JSON_DEPTH`` deep). ``copy_inconsistency`` returns the first copy that disagrees with what
it copies as a message, for the caller to report once the proof itself has been judged.
"""

from __future__ import annotations

import json
import re

import numpy as np

from ...errors import ConfigError, ProofFormatError
from ...field import Field
from ...protocol.folding import Constant
from ...protocol.json_tree import first_difference, json_type
from ...protocol.soundness import SoundnessType
from .config import MAX_GRIND_BITS, P3Parameters, P3WhirConfig
from .defaults import MAX_OPENINGS, PLONKY3_COMMIT
from .domain_separator import p3_domain_separator
from .format import ProofBounds, merkle_cap_from_postcard, merkle_cap_to_json, \
    pcs_proof_from_postcard, pcs_proof_to_json, pcs_proof_to_postcard
from .proof import MerkleCap, PcsProof

REQUIRED_KEYS = ("format", "field", "params", "commitment", "proof")
CHECKED_KEYS = ("plonky3_commit", "config", "domain_separator_canonical", "commitment_canonical",
                "commitment_root_canonical", "commitment_postcard_hex", "proof_canonical", "proof_postcard_hex",
                "proof_postcard_len", "points_canonical", "claimed_values_canonical", "initial_ood_points_canonical",
                "polynomial_evals_canonical", "self_check", "proof_field_encoding")
TEXT_KEYS = ("protocol", "mmcs", "instance_draw", "points_derivation", "extension_field")
NOTES_KEY = "notes"
DOCUMENT_KEYS = REQUIRED_KEYS + CHECKED_KEYS + TEXT_KEYS + (NOTES_KEY,)
PARAM_KEYS = ("num_variables", "folding_factor", "starting_log_inv_rate", "round_log_inv_rates", "security_level",
              "pow_bits", "soundness_type", "evaluations", "points")
OPTIONAL_PARAM_KEYS = {"folding_factor_kind": "Constant", "layout": "SuffixProver", "seed": None}
SELF_CHECK = {"claims_equal_poly_at_points": True, "initial_ood_answers_equal_poly_at_replayed_points": True,
              "verify": "accept"}
SOUNDNESS_NAMES = tuple(s.name for s in SoundnessType)
MAX_TEXT = 4096  # characters of one informational text
MAX_NOTES = 64
MAX_RATES = 64  # one per round: fewer than the 64 variables a domain can have
# The polynomial is checked by committing to it again: at most 2^20 codeword entries and 2^15 Merkle leaves
# (about half a second on one core); a larger document's polynomial is refused rather than trusted.
MAX_RECOMMIT_LOG_CODEWORD = 20
MAX_RECOMMIT_LOG_LEAVES = 15
_HEX = re.compile(r"(?:[0-9a-f]{2})*")


def check_keys(value: dict, where: str, allowed) -> None:
    unknown = sorted(str(k) for k in value if k not in allowed)
    if unknown:
        known = f"the format defines {', '.join(sorted(allowed))}" if len(allowed) <= 12 else \
            "not a key of p3-whir-oracle/v1"
        raise ProofFormatError(f"{where}: unknown key {unknown[0]!r:.60} ({known})")


def _int(value, what: str, low: int = 0) -> int:
    """A u64 of at least ``low`` (upstream's usize parameters)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value < 1 << 64:
        raise ProofFormatError(f"{what}: expected an integer in [{low}, 2^64), got {value!r:.40}")
    return value


def read_params(block) -> tuple[int, P3Parameters, int, bool]:
    """``params`` -> (num_variables, the parameters, the number of openings, whether points are prescribed)."""
    if not isinstance(block, dict):
        raise ProofFormatError(f"params: expected an object, got {json_type(block)}")
    check_keys(block, "params", PARAM_KEYS + tuple(OPTIONAL_PARAM_KEYS))
    missing = [k for k in PARAM_KEYS if k not in block]
    if missing:
        raise ProofFormatError(f"params: missing key(s) {', '.join(missing)}")
    for key, want in OPTIONAL_PARAM_KEYS.items():
        if key in block and want is not None and block[key] != want:
            raise ProofFormatError(f"params.{key}: only {want!r} is defined, got {block[key]!r:.40}")
    if "seed" in block:
        _int(block["seed"], "params.seed")
    rates = block["round_log_inv_rates"]
    if not isinstance(rates, list) or len(rates) > MAX_RATES:
        raise ProofFormatError(f"params.round_log_inv_rates: expected a list of at most {MAX_RATES} rates")
    if block["soundness_type"] not in SOUNDNESS_NAMES:
        raise ProofFormatError(f"params.soundness_type: expected one of {', '.join(SOUNDNESS_NAMES)}, got "
                               f"{block['soundness_type']!r:.40}")
    if block["points"] not in ("transcript", "prescribed"):
        raise ProofFormatError(f"params.points: expected 'transcript' or 'prescribed', got {block['points']!r:.40}")
    params = P3Parameters(
        security_level=_int(block["security_level"], "params.security_level"),
        pow_bits=_int(block["pow_bits"], "params.pow_bits"),
        folding=Constant(_int(block["folding_factor"], "params.folding_factor", 1)),
        soundness_type=SoundnessType[block["soundness_type"]],
        starting_log_inv_rate=_int(block["starting_log_inv_rate"], "params.starting_log_inv_rate"),
        round_log_inv_rates=tuple(_int(r, f"params.round_log_inv_rates[{i}]") for i, r in enumerate(rates)),
    )
    n = _int(block["num_variables"], "params.num_variables")
    openings = _int(block["evaluations"], "params.evaluations", 1)
    if openings > MAX_OPENINGS:  # the prover's own bound (defaults.MAX_OPENINGS): no honest document exceeds it
        raise ProofFormatError(f"params.evaluations: {openings} openings, above MAX_OPENINGS {MAX_OPENINGS}")
    return n, params, openings, block["points"] == "prescribed"


def derive(n: int, params: P3Parameters, field: Field) -> P3WhirConfig:
    """The configuration of a document's parameters; one upstream (or this implementation) refuses makes the
    document malformed: ``ProofFormatError`` with the ``ConfigError``'s reason, as the default profile does."""
    try:
        config = P3WhirConfig.derive(n, params, field)
    except ConfigError as exc:
        raise ProofFormatError(f"params: {exc}") from None
    if config.max_pow_bits > MAX_GRIND_BITS:  # upstream's budget allows it; no proof-of-work check can sample it
        raise ProofFormatError(f"params: the derived proof-of-work of {config.max_pow_bits} bits is above "
                               f"MAX_GRIND_BITS {MAX_GRIND_BITS} (a check samples b bits with 2^b < p)")
    return config


def _difference(got, want, path: str) -> str | None:
    """``first_difference``, walked only when the two trees' JSON texts (which tell 1, 1.0 and true apart)
    differ."""
    try:
        if json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True):
            return None
    except (TypeError, ValueError):  # keys that do not sort together: walk
        pass
    return first_difference(got, want, path)


def _equal(doc: dict, key: str, want) -> None:
    if key in doc and (where := _difference(doc[key], want, key)) is not None:
        raise ProofFormatError(f"{key} disagrees with what the parameters derive at {where}")


def _text(value, where: str) -> None:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        got = f"{len(value)} characters" if isinstance(value, str) else json_type(value)
        raise ProofFormatError(f"{where}: expected a text of at most {MAX_TEXT} characters, got {got}")


def check_stated_parameters(doc: dict, config: P3WhirConfig) -> None:
    """The keys that restate the parameters or describe the protocol (see ``document.py``)."""
    if "plonky3_commit" in doc and doc["plonky3_commit"] != PLONKY3_COMMIT:
        raise ProofFormatError(f"plonky3_commit: this profile speaks upstream Plonky3 at {PLONKY3_COMMIT}, the "
                               f"document names {doc['plonky3_commit']!r:.60}")
    _equal(doc, "config", config.to_json_dict())
    _equal(doc, "domain_separator_canonical", [int(x) for x in p3_domain_separator(config)])
    for key in TEXT_KEYS:
        if key in doc:
            _text(doc[key], key)
    if NOTES_KEY in doc:
        notes = doc[NOTES_KEY]
        if not isinstance(notes, list) or len(notes) > MAX_NOTES:
            raise ProofFormatError(f"{NOTES_KEY}: expected a list of at most {MAX_NOTES} texts")
        for i, note in enumerate(notes):
            _text(note, f"{NOTES_KEY}[{i}]")
    if "proof_field_encoding" in doc:
        _text(doc["proof_field_encoding"], "proof_field_encoding")
        if not doc["proof_field_encoding"].startswith("montgomery"):
            raise ProofFormatError(f"proof_field_encoding: the proof's words are Montgomery words, the document "
                                   f"says {doc['proof_field_encoding']!r:.40}")
    if "self_check" in doc:
        block = doc["self_check"]
        if not isinstance(block, dict):
            raise ProofFormatError(f"self_check: expected an object, got {json_type(block)}")
        check_keys(block, "self_check", SELF_CHECK)
        for key, value in block.items():
            if value != SELF_CHECK[key] or type(value) is not type(SELF_CHECK[key]):
                raise ProofFormatError(f"self_check.{key}: a document that verifies says {SELF_CHECK[key]!r}, this "
                                       f"one says {value!r:.40}")


def canonical_array(value, path: str, shape: tuple[int, ...], prime: int) -> np.ndarray:
    """Nested lists of exactly ``shape`` (each length checked before its entries are read) of canonical field
    elements -> a uint64 array."""
    flat: list[int] = []

    def walk(node, where: str, axis: int) -> None:
        if axis == len(shape):
            if isinstance(node, bool) or not isinstance(node, int) or not 0 <= node < prime:
                raise ProofFormatError(f"{where}: {node!r:.40} is not a canonical field element in [0, {prime})")
            flat.append(node)
            return
        if not isinstance(node, list) or len(node) != shape[axis]:
            got = f"{len(node)} entries" if isinstance(node, list) else json_type(node)
            raise ProofFormatError(f"{where}: expected {shape[axis]} entries (shape {shape}), got {got}")
        for i, item in enumerate(node):
            walk(item, f"{where}[{i}]", axis + 1)

    walk(value, path, 0)
    return np.array(flat, dtype=np.uint64).reshape(shape)


def read_polynomial(value, config: P3WhirConfig, prime: int) -> np.ndarray:
    """``polynomial_evals_canonical``: 2^n canonical values, in a document small enough to commit to again."""
    n, rate, fold = config.num_variables, config.starting_log_inv_rate, config.folding_schedule[0]
    if n + rate > MAX_RECOMMIT_LOG_CODEWORD or n + rate - fold > MAX_RECOMMIT_LOG_LEAVES:
        raise ProofFormatError(
            f"polynomial_evals_canonical: checking it means committing to it again (a 2^{n + rate} codeword, "
            f"2^{n + rate - fold} leaves), above the verifier's MAX_RECOMMIT_LOG_CODEWORD "
            f"{MAX_RECOMMIT_LOG_CODEWORD} / MAX_RECOMMIT_LOG_LEAVES {MAX_RECOMMIT_LOG_LEAVES}; leave the key out")
    return canonical_array(value, "polynomial_evals_canonical", (1 << n,), prime)


def _canonical_tree(tree, field: Field):
    """Every integer of a Montgomery JSON tree mapped to its canonical value."""
    if isinstance(tree, dict):
        return {k: _canonical_tree(v, field) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_canonical_tree(v, field) for v in tree]
    if isinstance(tree, int) and not isinstance(tree, bool):
        return tree * field.R_INV % field.P
    return tree


def _postcard(doc: dict, key: str) -> bytes:
    text = doc[key]
    if not isinstance(text, str) or not _HEX.fullmatch(text):
        raise ProofFormatError(f"{key}: expected lower-case hex digits, an even number of them")
    return bytes.fromhex(text)


def _decoded(decode, doc: dict, key: str, field: Field, bounds: ProofBounds):
    try:
        return decode(_postcard(doc, key), field.P, bounds)
    except ProofFormatError as exc:
        message = str(exc)
        raise ProofFormatError(message if message.startswith(key) else f"{key}: {message}") from None


def copy_inconsistency(doc: dict, field: Field, commitment: MerkleCap, proof: PcsProof,
                       bounds: ProofBounds) -> str | None:
    """The first copy of the commitment or the proof that disagrees with it: its canonical images, its postcard
    bytes (decoded within ``bounds``: bytes that do not decode are a ``ProofFormatError`` at once), the postcard
    length, the root."""
    cap_json, proof_json = merkle_cap_to_json(commitment), pcs_proof_to_json(proof)
    if "commitment_canonical" in doc:
        if (where := _difference(doc["commitment_canonical"], _canonical_tree(cap_json, field),
                                      "commitment_canonical")) is not None:
            return f"commitment_canonical disagrees with commitment (mapped to canonical values) at {where}"
    if "commitment_root_canonical" in doc:
        if (where := _difference(doc["commitment_root_canonical"], _canonical_tree(cap_json["cap"][0], field),
                                      "commitment_root_canonical")) is not None:
            return f"commitment_root_canonical disagrees with the commitment's root at {where}"
    if "commitment_postcard_hex" in doc:
        decoded = _decoded(merkle_cap_from_postcard, doc, "commitment_postcard_hex", field, bounds)
        if decoded != commitment:
            return "commitment_postcard_hex decodes to another commitment than commitment"
    if "proof_canonical" in doc:
        if (where := _difference(doc["proof_canonical"], _canonical_tree(proof_json, field),
                                      "proof_canonical")) is not None:
            return f"proof_canonical disagrees with proof (mapped to canonical values) at {where}"
    postcard = None
    if "proof_postcard_hex" in doc:
        postcard = _postcard(doc, "proof_postcard_hex")
        decoded = _decoded(pcs_proof_from_postcard, doc, "proof_postcard_hex", field, bounds)
        if decoded != proof:
            where = first_difference(pcs_proof_to_json(decoded), proof_json, "proof_postcard_hex")
            return f"proof_postcard_hex decodes to another proof than proof (first difference at {where})"
    if "proof_postcard_len" in doc:
        _int(doc["proof_postcard_len"], "proof_postcard_len")
        if postcard is None:
            postcard = pcs_proof_to_postcard(proof)
        if doc["proof_postcard_len"] != len(postcard):
            return f"proof_postcard_len {doc['proof_postcard_len']} disagrees with the proof's {len(postcard)} bytes"
    return None


def recommitted_root(polynomial: np.ndarray, config: P3WhirConfig, field: Field) -> np.ndarray:
    """The root (8,) Montgomery words of the commitment to ``polynomial`` (2^n Montgomery words)."""
    from ...ref.p3_codeword import commitment_root  # noqa: PLC0415 - only documents with a polynomial need it

    return commitment_root(polynomial, config.folding_schedule[0], config.starting_log_inv_rate, field)


__all__ = ["DOCUMENT_KEYS", "PLONKY3_COMMIT", "canonical_array", "check_keys", "check_stated_parameters",
           "copy_inconsistency", "derive", "read_params", "read_polynomial", "recommitted_root"]
