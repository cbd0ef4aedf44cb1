"""What a ``p3-whir-oracle/v2`` zk document (``prove-tables --zk``) states, read for the hiding PCS's reference.

Contract: ``read_zk_instance(doc)`` returns a ``ZkInstance``: the field, the derived ``ZkWhirConfig``, the mask
seed, the committed polynomial (2^n base Montgomery words: ``polynomial_evals_canonical``, the prefix stacking for
tables), the HidingWhirPcs points (E, n, 4) and claimed values (E, 4) as Montgomery words. Malformed input raises
``ProofFormatError``. ``verify_zk_document(doc)`` checks such a document whole and verifies its proof.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....errors import ProofFormatError
from ....field import Field, field_by_name
from ....protocol.folding import Constant
from ....protocol.soundness import SoundnessType
from ....ref.field_np import field_ops
from ..config import P3Parameters
from .config import ZkWhirConfig


@dataclass(frozen=True)
class ZkInstance:
    field: Field
    config: ZkWhirConfig
    mask_seed: int
    polynomial: np.ndarray
    points: np.ndarray
    values: np.ndarray


def _int(block: dict, key: str) -> int:
    value = block.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 64:
        raise ProofFormatError(f"params.{key}: expected an integer in [0, 2^64), got {value!r:.40}")
    return value


def zk_parameters(block: dict) -> tuple[int, P3Parameters, int, int]:
    """``params`` -> (num_variables, the WHIR parameters, ell_zk, mask_log_inv_rate)."""
    if not isinstance(block, dict) or block.get("zk") is not True:
        raise ProofFormatError("params: not a zk document (params.zk is not true)")
    try:
        soundness = SoundnessType[block["soundness_type"]]
    except (KeyError, TypeError):
        raise ProofFormatError(f"params.soundness_type: unknown {block.get('soundness_type')!r:.40}") from None
    rates = block.get("round_log_inv_rates")
    if not isinstance(rates, list):
        raise ProofFormatError("params.round_log_inv_rates: expected a list")
    params = P3Parameters(security_level=_int(block, "security_level"), pow_bits=_int(block, "pow_bits"),
                          folding=Constant(_int(block, "folding_factor")), soundness_type=soundness,
                          starting_log_inv_rate=_int(block, "starting_log_inv_rate"),
                          round_log_inv_rates=tuple(rates))
    return _int(block, "num_variables"), params, _int(block, "ell_zk"), _int(block, "mask_log_inv_rate")


def _monty(values, shape: tuple[int, ...], field: Field, what: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.int64)
    except (ValueError, TypeError, OverflowError):
        raise ProofFormatError(f"{what}: not a regular integer array") from None
    if array.shape != shape or (array.size and (array.min() < 0 or array.max() >= field.P)):
        raise ProofFormatError(f"{what}: expected shape {shape} of canonical values, got {array.shape}")
    return field_ops(field).to_monty(array.astype(np.uint64))


def read_zk_instance(doc: dict) -> ZkInstance:
    try:
        field = field_by_name(doc["field"])
    except (KeyError, TypeError, ValueError):
        raise ProofFormatError(f"field: unknown {doc.get('field')!r:.40}") from None
    n, params, ell_zk, mask_rate = zk_parameters(doc.get("params"))
    config = ZkWhirConfig.derive(n, params, field, ell_zk, mask_rate)
    points = doc.get("points_canonical")
    count = len(points) if isinstance(points, list) else -1
    return ZkInstance(field, config, _int(doc["params"], "mask_seed"),
                      _monty(doc.get("polynomial_evals_canonical"), (1 << n,), field, "polynomial_evals_canonical"),
                      _monty(points, (count, n, 4), field, "points_canonical"),
                      _monty(doc.get("claimed_values_canonical"), (count, 4), field, "claimed_values_canonical"))


def verify_zk_document(doc: dict) -> ZkInstance:
    """Verify an oracle zk document whole: its stated ``zk_config`` and domain separator (when present) must be the
    derived ones, its postcard bytes (when present) the encoding of its JSON proof, its claimed values the proof's
    ``evals``; then the proof must open ``commitment`` at ``points_canonical``. Returns the instance; raises
    ``ProofFormatError`` for an inconsistent or malformed document and ``VerificationError`` for a false proof."""
    from .config import zk_domain_separator
    from .format import (
        zk_commitment_from_json,
        zk_proof_from_json,
        zk_proof_to_postcard,
    )
    from .verifier import zk_verify
    if not isinstance(doc, dict):
        raise ProofFormatError("a zk document is a JSON object")
    instance = read_zk_instance(doc)
    config = instance.config
    stated = doc.get("zk_config")
    if stated is not None and {k: v for k, v in stated.items() if k != "note"} != config.to_json_dict():
        raise ProofFormatError("zk_config: not the configuration params derive")
    if "domain_separator_canonical" in doc and doc["domain_separator_canonical"] != zk_domain_separator(config):
        raise ProofFormatError("domain_separator_canonical: not the pattern params derive")
    commitment = zk_commitment_from_json(doc.get("commitment"), instance.field)
    proof = zk_proof_from_json(doc.get("proof"), instance.field)
    if "proof_postcard_hex" in doc:
        stated_hex = doc["proof_postcard_hex"]
        if not isinstance(stated_hex, str) or stated_hex != zk_proof_to_postcard(proof).hex():
            raise ProofFormatError("proof_postcard_hex: not the postcard encoding of proof")
    if proof.evals.shape == instance.values.shape and not np.array_equal(proof.evals, instance.values):
        raise ProofFormatError("claimed_values_canonical: not the proof's evals")
    zk_verify(config, instance.field, commitment, proof, instance.points)
    return instance
