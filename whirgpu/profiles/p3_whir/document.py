"""A p3-whir proof document (``p3-whir-oracle/v1``: the golden-p3 files and what ``P3Prover`` writes), read and
verified: nothing it states is trusted that its proof does not prove.

Contract:
- ``read_p3_document_bytes(data)`` parses the JSON text boundedly (``json_tree.loads_bounded``: depth, repeated
  keys, NaN/Infinity, integer size) and reads it as ``read_p3_document`` does.
- ``read_p3_document(doc)`` takes the decoded JSON object and returns a ``P3Document``: the field, the derived
  ``P3WhirConfig``, the ``MerkleCap`` commitment, the ``PcsProof`` (both decoded within the bounds the
  configuration puts on every list), the number of openings, the prescribed points (or None), and what the
  document states besides, for ``verify_p3_document`` to check. Every size is bounded before anything is derived
  or allocated from it (``P3WhirConfig.derive`` checks n + rate < 64 before the folding schedule, pow_bits against
  ``MAX_GRIND_BITS``; integers are range-checked before any conversion). A malformed document is a
  ``ProofFormatError`` naming the key, including one whose parameters no proof can have (the ``ConfigError``'s
  reason, prefixed ``params:``, as the default profile reports such a document).
- ``verify_p3_document(document)`` verifies the proof (``verify_p3``) and then every statement of the document,
  and returns a ``P3Verified``: what was proven. It raises ``VerificationError`` when the proof is false or when
  the document states something else than what it proves (``round="statement"``, ``check`` one of
  ``claimed_values``, ``points``, ``ood_points``), and ``ProofFormatError`` when the proof has the wrong shape or
  when a copy in the document disagrees with what it copies (checked after the proof, so a false proof is still
  reported as false).

Keys, and what is done with each (any other key is refused, naming it):
- required: ``format`` (``p3-whir-oracle/v1``), ``field`` (``koalabear`` | ``babybear``), ``params``,
  ``commitment`` (serde JSON, one root), ``proof`` (serde JSON, Montgomery words).
- ``params``: num_variables, folding_factor, starting_log_inv_rate, round_log_inv_rates (empty: upstream's default
  schedule; else one per round, passed to the configuration, which the transcript's domain separator binds),
  security_level, pow_bits, soundness_type (upstream's name), evaluations (the openings' count), points
  (``transcript`` | ``prescribed``); optional folding_factor_kind (``Constant``), layout (``SuffixProver``), seed
  (a u64 label naming the SmallRng seed the instance was drawn from: not checked, as in the default profile; the
  verifier needs no instance).
- checked against the parameters at once (``ProofFormatError``): ``plonky3_commit`` (the commit this profile
  speaks), ``config`` (exactly ``P3WhirConfig.to_json_dict()``), ``domain_separator_canonical`` (exactly
  ``p3_domain_separator``), ``proof_field_encoding`` (a text starting with ``montgomery``), ``self_check``
  (only the values a verifying document has: true, true, ``accept``).
- the statement, checked against what the proof proves (``VerificationError``): ``claimed_values_canonical``
  (E, 4) == the proof's ``evals`` (the value of each opening); ``points_canonical`` (E, n, 4): in prescribed mode
  the points the proof is verified at (required), in transcript mode == the points the transcript's replay
  draws; ``initial_ood_points_canonical`` (t, n, 4) == the initial OOD points the replay draws.
- copies, checked after the proof (``ProofFormatError``): ``commitment_canonical``, ``commitment_root_canonical``,
  ``proof_canonical`` (the Montgomery trees mapped to canonical values), ``commitment_postcard_hex``,
  ``proof_postcard_hex`` (decoded, within the configuration's bounds, to exactly ``commitment`` / ``proof``:
  bytes that do not decode are refused at once), ``proof_postcard_len`` (the encoding's length);
  ``polynomial_evals_canonical`` (the 2^n evaluations: committed to again, the root must be the commitment's;
  refused above ``MAX_RECOMMIT_LOG_CODEWORD`` / ``MAX_RECOMMIT_LOG_LEAVES``).
- informational texts of at most ``MAX_TEXT`` characters: ``protocol``, ``mmcs``, ``instance_draw``,
  ``points_derivation``, ``extension_field``; ``notes``: a list of at most ``MAX_NOTES`` such texts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ProofFormatError, VerificationError
from ...field import Field, field_by_name
from ...protocol.json_tree import json_type, loads_bounded
from ...ref.field_np import field_ops
from .config import P3WhirConfig
from .document_checks import DOCUMENT_KEYS, PLONKY3_COMMIT, REQUIRED_KEYS, canonical_array, check_keys, \
    check_stated_parameters, copy_inconsistency, derive, read_params, read_polynomial, recommitted_root
from .format import ProofBounds, merkle_cap_from_json, pcs_proof_from_json
from .proof import MerkleCap, PcsProof
from .verifier import verify_p3

FORMAT = "p3-whir-oracle/v1"
__all__ = ["FORMAT", "PLONKY3_COMMIT", "P3Document", "P3Verified", "read_p3_document", "read_p3_document_bytes",
           "verify_p3_document"]


@dataclass(frozen=True)
class P3Document:
    """A read document. ``points``: the prescribed points (E, n, 4) Montgomery, None in transcript mode. The rest
    is what the document states besides the proof, each None when absent: ``claimed_values`` (E, 4),
    ``drawn_points`` (E, n, 4: transcript mode's ``points_canonical``), ``ood_points`` (t, n, 4), ``polynomial``
    (2^n), all Montgomery; ``inconsistency``: the first copy that disagrees with what it copies."""

    field: Field
    config: P3WhirConfig
    commitment: MerkleCap
    proof: PcsProof
    num_openings: int
    points: np.ndarray | None
    claimed_values: np.ndarray | None = None
    drawn_points: np.ndarray | None = None
    ood_points: np.ndarray | None = None
    polynomial: np.ndarray | None = None
    inconsistency: str | None = None

    @property
    def prescribed(self) -> bool:
        return self.points is not None


@dataclass(frozen=True)
class P3Verified:
    """What a verified document proves: under ``config`` over ``field``, the polynomial committed by
    ``commitment`` takes ``values[j]`` (E, 4) at ``points[j]`` (E, n, 4), Montgomery words; the points were
    ``prescribed`` by the document or drawn by the transcript."""

    field: Field
    config: P3WhirConfig
    commitment: MerkleCap
    num_openings: int
    points: np.ndarray
    values: np.ndarray
    prescribed: bool


def read_p3_document_bytes(data) -> P3Document:
    """A ``P3Document`` from JSON text (bytes or str) from anyone (see the module contract)."""
    return read_p3_document(loads_bounded(data, "p3-whir document"))


def _stated(doc: dict, key: str, shape: tuple[int, ...], field: Field) -> np.ndarray | None:
    if key not in doc:
        return None
    return field_ops(field).to_monty(canonical_array(doc[key], key, shape, field.P))


def read_p3_document(doc) -> P3Document:
    """A ``P3Document`` from the decoded JSON object (see the module contract)."""
    if not isinstance(doc, dict):
        raise ProofFormatError(f"a p3-whir document is a JSON object, got {json_type(doc)}")
    if doc.get("format") != FORMAT:
        raise ProofFormatError(f"format: expected {FORMAT!r}, got {doc.get('format')!r:.40}")
    check_keys(doc, "document", DOCUMENT_KEYS)
    missing = [k for k in REQUIRED_KEYS if k not in doc]
    if missing:
        raise ProofFormatError(f"document: missing key(s) {', '.join(missing)}")
    name = doc["field"]
    try:
        field = field_by_name(name) if isinstance(name, str) else None
    except KeyError:
        field = None
    if field is None:
        raise ProofFormatError(f"field: expected 'babybear' or 'koalabear', got {name!r:.40}")
    n, params, openings, prescribed = read_params(doc["params"])
    config = derive(n, params, field)
    check_stated_parameters(doc, config)
    bounds = ProofBounds.of(config, openings)
    commitment = merkle_cap_from_json(doc["commitment"], field.P, bounds=bounds)
    if commitment.roots.shape[0] != 1:
        raise ProofFormatError(f"commitment: expected a cap of height 0 (one root), got {commitment.roots.shape[0]}")
    proof = pcs_proof_from_json(doc["proof"], field.P, bounds=bounds)
    points = _stated(doc, "points_canonical", (openings, n, 4), field)
    if prescribed and points is None:
        raise ProofFormatError("points_canonical: missing (params.points is 'prescribed')")
    polynomial = None
    if "polynomial_evals_canonical" in doc:
        polynomial = field_ops(field).to_monty(read_polynomial(doc["polynomial_evals_canonical"], config, field.P))
    return P3Document(
        field, config, commitment, proof, openings, points if prescribed else None,
        claimed_values=_stated(doc, "claimed_values_canonical", (openings, 4), field),
        drawn_points=None if prescribed else points,
        ood_points=_stated(doc, "initial_ood_points_canonical", (config.commitment_ood_samples, n, 4), field),
        polynomial=polynomial,
        inconsistency=copy_inconsistency(doc, field, commitment, proof, bounds),
    )


def _statement(check: str, key: str, stated: np.ndarray | None, proven: np.ndarray) -> None:
    if stated is None or np.array_equal(stated, proven):
        return
    first = int(np.flatnonzero(np.any(stated.reshape(len(stated), -1) != proven.reshape(len(proven), -1), axis=1))[0])
    raise VerificationError(f"{key}[{first}] is not what the proof proves", round="statement", check=check)


def verify_p3_document(document: P3Document) -> P3Verified:
    """Verify the proof and everything the document states (see the module contract); return what it proves."""
    if not isinstance(document, P3Document):
        raise ProofFormatError(f"expected a P3Document, got {type(document).__name__}")
    opened = verify_p3(document.config, document.commitment, document.proof, document.field, document.points,
                       document.num_openings)
    _statement("claimed_values", "claimed_values_canonical", document.claimed_values, opened.values)
    _statement("points", "points_canonical", document.drawn_points, opened.points)
    _statement("ood_points", "initial_ood_points_canonical", document.ood_points, opened.ood_points)
    if document.inconsistency is not None:
        raise ProofFormatError(document.inconsistency)
    if document.polynomial is not None:
        root = recommitted_root(document.polynomial, document.config, document.field)
        if not np.array_equal(root, document.commitment.roots[0]):
            raise ProofFormatError("polynomial_evals_canonical: committing to it gives another root than "
                                   "commitment's")
    return P3Verified(document.field, document.config, document.commitment, document.num_openings, opened.points,
                      opened.values, document.prescribed)
