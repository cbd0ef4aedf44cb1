"""A p3-whir proof document (``p3-whir-oracle/v1``, the golden-p3 files' format) read for verification.

Contract: ``read_p3_document(doc)`` takes the decoded JSON object and returns a ``P3Document``: the field, the
derived ``P3WhirConfig`` (from ``params``; a configuration upstream refuses is a ``ConfigError``), the
``MerkleCap`` commitment, the ``PcsProof`` (both from their serde JSON, Montgomery words of the field), the number
of openings and, in ``points: "prescribed"`` mode, their points (E, n, 4) Montgomery words from
``points_canonical``. Only what verification needs is read; the document's other keys are not checked. Anything
missing or of the wrong type is a ``ProofFormatError`` naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ProofFormatError
from ...field import Field, field_by_name
from ...ref.field_np import field_ops
from ...protocol.folding import Constant
from .config import P3Parameters, P3WhirConfig
from .format import merkle_cap_from_json, pcs_proof_from_json
from .proof import MerkleCap, PcsProof
from ...protocol.soundness import SoundnessType

FORMAT = "p3-whir-oracle/v1"
_PARAM_KEYS = ("num_variables", "folding_factor", "starting_log_inv_rate", "round_log_inv_rates", "security_level",
               "pow_bits", "soundness_type", "evaluations", "points")


@dataclass(frozen=True)
class P3Document:
    field: Field
    config: P3WhirConfig
    commitment: MerkleCap
    proof: PcsProof
    num_openings: int
    points: np.ndarray | None


def _int(value, what: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ProofFormatError(f"{what}: expected an integer >= {low}, got {value!r:.40}")
    return value


def read_p3_document(doc) -> P3Document:
    if not isinstance(doc, dict):
        raise ProofFormatError(f"a p3-whir document is a JSON object, got {type(doc).__name__}")
    if doc.get("format") != FORMAT:
        raise ProofFormatError(f"format: expected {FORMAT!r}, got {doc.get('format')!r:.40}")
    try:
        field = field_by_name(doc.get("field"))
    except (KeyError, TypeError):
        raise ProofFormatError(f"field: expected 'babybear' or 'koalabear', got {doc.get('field')!r:.40}") from None
    params = doc.get("params")
    if not isinstance(params, dict):
        raise ProofFormatError("params: missing or not an object")
    missing = [k for k in _PARAM_KEYS if k not in params]
    if missing:
        raise ProofFormatError(f"params: missing key(s) {', '.join(missing)}")
    if params.get("folding_factor_kind", "Constant") != "Constant":
        raise ProofFormatError(f"params.folding_factor_kind: only Constant is read, got "
                               f"{params['folding_factor_kind']!r:.40}")
    rates = params["round_log_inv_rates"]
    if not isinstance(rates, list):
        raise ProofFormatError("params.round_log_inv_rates: expected a list")
    n = _int(params["num_variables"], "params.num_variables")
    p3_params = P3Parameters(
        security_level=_int(params["security_level"], "params.security_level"),
        pow_bits=_int(params["pow_bits"], "params.pow_bits"),
        folding=Constant(_int(params["folding_factor"], "params.folding_factor", 1)),
        soundness_type=SoundnessType.parse(params["soundness_type"]),
        starting_log_inv_rate=_int(params["starting_log_inv_rate"], "params.starting_log_inv_rate"),
        round_log_inv_rates=tuple(_int(r, "params.round_log_inv_rates[]") for r in rates),
    )
    config = P3WhirConfig.derive(n, p3_params, field)
    for key in ("commitment", "proof"):
        if key not in doc:
            raise ProofFormatError(f"{key}: missing")
    commitment = merkle_cap_from_json(doc["commitment"], prime=field.P)
    proof = pcs_proof_from_json(doc["proof"], prime=field.P)
    openings = _int(params["evaluations"], "params.evaluations", 1)
    points = None
    if params["points"] == "prescribed":
        canonical = doc.get("points_canonical")
        try:
            points = np.asarray(canonical, dtype=np.int64)
        except (TypeError, ValueError):
            raise ProofFormatError("points_canonical: not an (E, n, 4) array of integers") from None
        if points.shape != (openings, n, 4) or np.any(points < 0) or np.any(points >= field.P):
            raise ProofFormatError(f"points_canonical: expected ({openings}, {n}, 4) canonical field elements")
        points = field_ops(field).to_monty(points.astype(np.uint64))
    elif params["points"] != "transcript":
        raise ProofFormatError(f"params.points: expected 'transcript' or 'prescribed', got {params['points']!r:.40}")
    return P3Document(field, config, commitment, proof, openings, points)


@dataclass(frozen=True)
class P3Verified:
    """What a verified p3-whir document proves: its opening points and claimed values (Montgomery words)."""

    field: Field
    config: P3WhirConfig
    num_openings: int
    points: np.ndarray
    values: np.ndarray
    prescribed: bool


def verify_p3_document(document: P3Document) -> P3Verified:
    from .verifier import P3Statement, P3WhirVerifier

    class _Recording(P3WhirVerifier):
        def _start(self, proof, statement):
            start = super()._start(proof, statement)
            self.proven = start.constraint.eq_points[:statement.num_openings]
            return start

    verifier = _Recording(document.config, document.field)
    verifier.verify(document.proof, P3Statement(document.commitment, document.num_openings, document.points))
    values = np.stack([e.current[0] for e in document.proof.evals])
    return P3Verified(document.field, document.config, document.num_openings, verifier.proven, values,
                      document.points is not None)
