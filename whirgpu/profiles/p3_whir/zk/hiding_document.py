"""A hiding (``zk: true``) ``p3-whir-oracle/v2`` document — the oracle's ``prove-tables --zk`` files and what
``whirgpu prove --zk`` / ``P3ZkTables`` write — read and verified: nothing it states is trusted that its proof does
not prove.

Contract:
- ``read_p3_zk_document(doc)`` -> ``P3ZkDocument`` (decoded JSON in; ``ProofFormatError`` naming the key for
  anything malformed or unknown). ``params`` must be exactly what the parameters derive (``zk_params_tree``: zk
  true, prefix layout, prescribed points, HidingWhirPcs's layout_prover, ell_zk, mask_log_inv_rate, and
  ``mask_seed`` only in a seeded document); ``openings`` (required) give each batch's local point; the document
  is then rebuilt from the parameters, the commitment, the proof and those points (``zk.document_write``) and
  every key it states is compared with the rebuilt one: config, zk_config, domain separator, opening_protocol,
  openings (values = ``proof.evals``), zk_point_map, points_canonical (= the lifted local points: what the proof
  is verified at), claimed_values_canonical (= ``proof.evals``), every copy of the commitment and the proof,
  mask_seed / mask_rng (a seeded document only: their draws), hiding (the text a document of that seed carries).
  Informational texts (protocol, mmcs, instance_draw, extension_field, proof_field_encoding, notes, notes_v2) are
  bounded and not read; stdrng_kat and self_check must be the verifying oracle's.
- the witness (``tables``, ``stacking``, ``polynomial_evals_canonical``), optional: when present, checked as the
  non-zk reader checks it (the prefix stacking of ``tables``), every claim = MLE(stacked)(lifted point), and in a
  seeded document the proof re-made from the seed must be the document's, byte for byte (the oracle's check).
- ``verify_p3_zk_document(document)`` runs the hiding verifier (``zk_verify``) at the lifted points and returns the
  document; ``VerificationError`` for a false proof.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....errors import ConfigError, ProofFormatError
from ....field import Field, field_by_name
from ....protocol.json_tree import first_difference
from ....ref.field_np import field_ops
from ....ref.multilinear import evaluate
from ..config import P3WhirConfig
from ..proof import MerkleCap
from ..tables.document_checks import lst, read_openings, read_params, read_stacking, read_tables, text, uint
from ..tables.spec import TablesSpec
from .config import ZkWhirConfig
from .document_write import LAYOUT_PROVER, zk_document_tree
from .format import zk_commitment_from_json, zk_proof_from_json, zk_proof_to_postcard
from .proof import ZkWhirProof
from .randomness import mask_rng
from .tables import lift_points, zk_tables_statement

ZK_PARAM_KEYS = ("zk", "ell_zk", "mask_log_inv_rate", "mask_seed", "layout_prover")
REBUILT_KEYS = ("format", "plonky3_commit", "zk", "hiding", "params", "config", "zk_config",
                "domain_separator_canonical", "opening_protocol", "openings", "zk_point_map", "points_canonical",
                "claimed_values_canonical", "commitment", "commitment_canonical", "commitment_root_canonical",
                "commitment_postcard_hex", "proof", "proof_canonical", "proof_postcard_hex", "proof_postcard_len",
                "mask_seed", "mask_rng")
TEXT_KEYS = ("protocol", "mmcs", "instance_draw", "extension_field", "proof_field_encoding")
NOTES_KEYS = ("notes", "notes_v2")
WITNESS_KEYS = ("tables", "stacking", "polynomial_evals_canonical")
FIXED = {
    "stdrng_kat": {"chacha12_tc1_fill_bytes_matches": True, "chacha12_tc1_next_u32_matches": True,
                   "construction_matches": True,
                   "construction_next_u64_from_rng": [10719222850664546238, 14064965282130556830],
                   "source": "rand 0.10.1 src/rngs/std.rs tests test_stdrng_construction and test_chacha_true_values_1 "
                             "(ChaCha12, zero key)"},
    "self_check": {"claims_equal_mle_of_column_and_stacked_poly_at_lifted_points": True,
                   "stacking_matches_witness_new_interleaved": True, "stdrng_reproduces_rand_test_vectors": True,
                   "verify": "accept"},
}
KNOWN_KEYS = ("field",) + REBUILT_KEYS + TEXT_KEYS + NOTES_KEYS + WITNESS_KEYS + tuple(FIXED)
MAX_NOTES = 64

__all__ = ["P3ZkDocument", "is_zk_document", "read_p3_zk_document", "verify_p3_zk_document"]


@dataclass(frozen=True)
class P3ZkDocument:
    """A read hiding document: ``config`` the inner ``P3WhirConfig`` (its WHIR parameters), ``zk_config`` the
    ``ZkWhirConfig``, ``spec`` (prefix, prescribed), ``points`` the lifted points (E, n, 4) and ``local_points`` one
    (m_b, 4) per batch (Montgomery), ``mask_seed`` None unless the document says it is seeded."""

    field: Field
    config: P3WhirConfig
    zk_config: ZkWhirConfig
    spec: TablesSpec
    commitment: MerkleCap
    proof: ZkWhirProof
    points: np.ndarray
    local_points: tuple
    seed: int | None
    mask_seed: int | None

    @property
    def num_openings(self) -> int:
        """The number of opening points as a table document counts them: one per batch (each batch's columns are
        opened at its point lifted by their selector bits: ``points`` has one row per opened column)."""
        return len(self.spec.protocol.batches)

    @property
    def hiding(self) -> bool:
        return self.mask_seed is None


def is_zk_document(doc) -> bool:
    return isinstance(doc, dict) and (doc.get("zk") is True or (isinstance(doc.get("params"), dict)
                                                                  and doc["params"].get("zk") is True))


def _params(block):
    if not isinstance(block, dict):
        raise ProofFormatError("params: expected an object")
    if block.get("zk") is not True:
        raise ProofFormatError("params.zk: a hiding document says zk = true in params too")
    if block.get("layout_prover") != LAYOUT_PROVER:
        raise ProofFormatError(f"params.layout_prover: a hiding document is {LAYOUT_PROVER!r}")
    plain = {k: v for k, v in block.items() if k not in ZK_PARAM_KEYS}
    n, params, spec, seed = read_params(plain)
    if spec.layout != "prefix" or not spec.prescribed:
        raise ProofFormatError("params: HidingWhirPcs has the prefix layout and prescribed points only")
    if any(b.next for b in spec.protocol.batches):
        raise ProofFormatError("params.open: a hiding document opens current columns only (no next openings)")
    ell_zk = uint(block.get("ell_zk"), "params.ell_zk", 0, 1 << 32)
    rate = uint(block.get("mask_log_inv_rate"), "params.mask_log_inv_rate", 0, 1 << 32)
    mask_seed = uint(block["mask_seed"], "params.mask_seed") if "mask_seed" in block else None
    return n, params, spec, seed, ell_zk, rate, mask_seed


def read_p3_zk_document(doc) -> P3ZkDocument:
    """Read and cross-check a hiding document (see the module contract)."""
    if not isinstance(doc, dict):
        raise ProofFormatError("a hiding document is a JSON object")
    unknown = sorted(str(k) for k in doc if k not in KNOWN_KEYS)
    if unknown:
        raise ProofFormatError(f"{unknown[0]!r:.60}: not a key of a hiding p3-whir-oracle/v2 document")
    for key in ("field", "params", "commitment", "proof", "openings", "points_canonical"):
        if key not in doc:
            raise ProofFormatError(f"missing key {key!r} (a hiding document states its field, params, commitment, "
                                   "proof, openings and points_canonical)")
    try:
        field = field_by_name(doc["field"])
    except (KeyError, TypeError, ValueError):
        raise ProofFormatError(f"field: unknown {doc['field']!r:.40}") from None
    n, params, spec, seed, ell_zk, rate, mask_seed = _params(doc["params"])
    try:
        config = ZkWhirConfig.derive(n, params, field, ell_zk, rate)
    except (ConfigError, ValueError, OverflowError) as exc:
        raise ProofFormatError(f"params: no hiding configuration derives from them: {exc}") from None
    commitment = zk_commitment_from_json(doc["commitment"], field)
    proof = zk_proof_from_json(doc["proof"], field)
    fold = config.fold(0)
    local, _, _ = read_openings(doc["openings"], spec.protocol, fold, field.P)
    ops = field_ops(field)
    local = tuple(ops.to_monty(p) for p in local)
    if len(proof.evals) != spec.protocol.n_claims:
        raise ProofFormatError(f"proof.evals: {len(proof.evals)} values, the schedule (params.open) opens "
                               f"{spec.protocol.n_claims} columns")
    try:
        points, point_map = lift_points(spec.protocol, fold, local, field)
    except ConfigError as exc:
        raise ProofFormatError(f"openings: {exc}") from None
    rebuilt = zk_document_tree(config, spec, commitment, proof, local, point_map, seed, mask_seed)
    for key in REBUILT_KEYS:
        if key in doc and (where := first_difference(doc[key], rebuilt.get(key), key)) is not None:
            if key not in rebuilt:
                raise ProofFormatError(f"{key}: only a seeded document (params.mask_seed) states it")
            raise ProofFormatError(f"{key} is not what the parameters, commitment, proof and openings derive "
                                   f"(first difference at {where})")
    for key in TEXT_KEYS:
        if key in doc:
            text(doc[key], key)
    for key in NOTES_KEYS:
        if key in doc:
            for i, note in enumerate(lst(doc[key], key, at_most=MAX_NOTES)):
                text(note, f"{key}[{i}]")
    for key, want in FIXED.items():
        if key in doc and doc[key] != want:
            raise ProofFormatError(f"{key}: not the values of a document that verifies")
    document = P3ZkDocument(field, config.inner, config, spec, commitment, proof, points, local, seed, mask_seed)
    if any(key in doc for key in WITNESS_KEYS):
        _check_witness(doc, document)
    return document


def _check_witness(doc: dict, document: P3ZkDocument) -> None:
    """The witness keys, when present (see the module contract)."""
    config, spec, field = document.config, document.spec, document.field
    ops = field_ops(field)
    polynomial = None
    if "tables" in doc:
        columns = read_tables(doc["tables"], spec.protocol, config, field.P)
        monty = [ops.to_monty(c) for c in columns]
        polynomial, _, _ = zk_tables_statement(spec.protocol, config.folding_schedule[0], monty,
                                               document.local_points, field)
    if "stacking" in doc:
        _, stacked = read_stacking(doc["stacking"], spec, config, field.P)
        stacked = ops.to_monty(stacked)
        if polynomial is not None and not np.array_equal(stacked, polynomial):
            raise ProofFormatError("stacking.polynomial_canonical is not the prefix stacking of tables")
        polynomial = stacked
    if "polynomial_evals_canonical" in doc:
        stated = lst(doc["polynomial_evals_canonical"], "polynomial_evals_canonical", 1 << config.num_variables)
        stated = ops.to_monty(np.asarray([uint(v, "polynomial_evals_canonical", 0, field.P - 1) for v in stated],
                                         np.uint64))
        if polynomial is not None and not np.array_equal(stated, polynomial):
            raise ProofFormatError("polynomial_evals_canonical is not the stacking of the tables")
        polynomial = stated
    for i, point in enumerate(document.points):
        if not np.array_equal(evaluate(polynomial, point, field), document.proof.evals[i]):
            raise ProofFormatError(f"claimed_values_canonical[{i}]: not the stated polynomial's value at "
                                   f"points_canonical[{i}]")
    if document.mask_seed is not None:
        from .prover import zk_prove  # noqa: PLC0415

        commitment, proof = zk_prove(document.zk_config, field, polynomial, document.points,
                                     mask_rng(document.mask_seed))
        if not np.array_equal(commitment.roots, document.commitment.roots) or \
                zk_proof_to_postcard(proof) != zk_proof_to_postcard(document.proof):
            raise ProofFormatError("proof: not the proof the stated witness and mask_seed make (a seeded document "
                                   "is reproducible)")


def verify_p3_zk_document(document: P3ZkDocument) -> P3ZkDocument:
    from .verifier import zk_verify  # noqa: PLC0415

    zk_verify(document.zk_config, document.field, document.commitment, document.proof, document.points)
    return document
