"""A p3-whir table document (``p3-whir-oracle/v2``: the oracle's ``prove-tables`` files and what whirgpu writes),
read and verified: nothing it states is trusted that its proof does not prove.

Contract:
- ``read_p3_tables_document_bytes(data)`` refuses text past ``MAX_PROOF_DOCUMENT_BYTES`` (as every proof document
  reader), parses the JSON boundedly (``bounded_json.loads_bounded``) and reads it as ``read_p3_tables_document`` does; ``read_p3_tables_document(doc)`` takes the decoded object and returns a
  ``P3TablesDocument``. Every size is bounded before anything is derived from it: the shapes and the schedule are
  read first (at most ``spec.MAX_TABLES`` tables and ``spec.MAX_BATCHES`` batches), the stacked arity they derive
  must be ``params.num_variables``, the configuration is derived from that (v1's ``derive``), and the proof is
  decoded within the bounds the configuration and the schedule put on every list. Malformed: ``ProofFormatError``
  naming the key. Hiding (``zk: true``) documents are refused.
- ``verify_p3_tables_document(document)`` verifies the proof against the schedule the document's ``params`` name
  (the core's ``verify_tables``), then every statement of the document, and returns a ``P3TablesVerified``: what
  was proved (shapes, layout, schedule, who chose the points, each batch's point and values). ``VerificationError``
  when the proof is false or the document states something else than it proves (``round="statement"``, ``check``
  ``claimed_values``, ``points`` or ``ood_points``); ``ProofFormatError`` when a copy disagrees with what it copies
  (checked after the proof).

Keys, and what is done with each (any other key is refused, naming it):
- required: ``format`` (``p3-whir-oracle/v2``), ``field``, ``params``, ``commitment``, ``proof``.
- ``params``: table_shapes [{log_rows, columns}], layout (``suffix`` | ``prefix``), open (the canonical ``--open``
  text: both colons, batches grouped by table), num_variables (the stacked arity: must be what the shapes derive),
  folding_factor, starting_log_inv_rate, round_log_inv_rates, security_level, pow_bits, soundness_type, points
  (``transcript`` | ``prescribed``); optional tables (== table_shapes as ``--tables`` text), layout_prover (the
  layout's upstream name), folding_factor_kind (``Constant``), seed (a u64 label, not checked: the verifier needs
  no instance), zk (false). Upstream's transcript binds only the stacked arity and the WHIR parameters, not the
  shapes, the layout or the schedule: the proof verifies against the schedule ``params`` states, and a verifier
  that cares pins them (``P3Expected``, ``--expect --tables ...``).
- restating the parameters (``ProofFormatError`` when they differ): ``plonky3_commit``, ``zk`` (false),
  ``config``, ``domain_separator_canonical``, ``opening_protocol`` (per table its committed shape and its batches
  with their opening index), ``self_check`` (only a verifying document's values), ``proof_field_encoding``.
- the statement (``VerificationError``): ``openings`` (one per batch in protocol order; its batch, table,
  columns and arity must be the schedule's, else ``ProofFormatError``): ``current_values_canonical`` /
  ``next_values_canonical`` == ``proof.evals[b]``; ``point_canonical``: with prescribed points the points the proof
  is verified at (then ``openings`` is required), with transcript points == the points the transcript draws;
  ``initial_ood_points_canonical`` == the OOD points the transcript draws.
- copies of the proof (``ProofFormatError``, after the proof): ``commitment_canonical``,
  ``commitment_root_canonical``, ``commitment_postcard_hex``, ``proof_canonical``, ``proof_postcard_hex``,
  ``proof_postcard_len``, as in v1.
- the witness, optional and bulky (``tables``: every column's values; ``stacking``: the placements and the stacked
  polynomial). The verifier never needs them and never trusts them: when present they are copies, checked and
  refused when they disagree — the shapes with ``params``, the placements with the stacking the layout derives,
  the tables stacked == ``stacking.polynomial_canonical``, and the stacked polynomial committed to again == the
  commitment (within v1's ``MAX_RECOMMIT_LOG_*``; a larger document carrying them is refused: leave them out).
  A document verifies the same with or without them.
- informational texts (at most ``MAX_TEXT`` characters): protocol, mmcs, instance_draw, points_derivation,
  extension_field, next_semantics; ``notes``, ``notes_v2``: lists of at most ``MAX_NOTES`` such texts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....errors import ProofFormatError, VerificationError
from ....field import Field, field_by_name
from ....files import check_size
from ....protocol.bounded_json import json_type, loads_bounded
from ....protocol.document_limits import MAX_PROOF_DOCUMENT_BYTES, PROOF_CAP_REASON
from ....ref.field_np import field_ops
from ..config import P3WhirConfig
from ..document_checks import check_stated_parameters, copy_inconsistency, derive
from ..format import merkle_cap_from_json, pcs_proof_from_json
from ..proof import MerkleCap, PcsProof
from ..document_checks import MAX_NOTES, canonical_array
from .document_checks import DOCUMENT_KEYS, NOTES_KEYS, REQUIRED_KEYS, TEXT_KEYS, check_keys, check_self_check, \
    check_tree, lst, opening_protocol_tree, read_openings, read_params, read_stacking, read_tables, text
from .spec import TablesSpec
from .verifier import tables_proof_bounds
from .witness_checks import check_witness, verify_core

FORMAT = "p3-whir-oracle/v2"
_V1_SHARED = ("plonky3_commit", "config", "domain_separator_canonical", "proof_field_encoding", "protocol", "mmcs",
              "instance_draw", "points_derivation", "extension_field", "notes")

__all__ = ["FORMAT", "P3TablesDocument", "P3TablesVerified", "read_p3_tables_document",
           "read_p3_tables_document_bytes", "verify_p3_tables_document"]


@dataclass(frozen=True)
class P3TablesDocument:
    """A read table document. ``spec``: shapes, schedule (protocol order), layout and who chose the points;
    ``points``: the prescribed points, one (m_b, 4) Montgomery array per batch, None with transcript points. The
    rest is what the document states besides the proof, each None when absent (Montgomery words): ``stated_points``
    (the openings' points, either mode), ``stated_current`` / ``stated_next`` (per batch), ``ood_points`` (t, n, 4),
    ``columns`` (the tables: one (columns, rows) array per table), ``polynomial`` (2^n stacked), ``stacking`` (its
    description without the polynomial); ``inconsistency``: the first copy that disagrees with what it copies."""

    field: Field
    config: P3WhirConfig
    spec: TablesSpec
    commitment: MerkleCap
    proof: PcsProof
    points: tuple | None
    seed: int | None = None
    stated_points: tuple | None = None
    stated_current: tuple | None = None
    stated_next: tuple | None = None
    ood_points: np.ndarray | None = None
    columns: tuple | None = None
    polynomial: np.ndarray | None = None
    stacking: dict | None = None
    inconsistency: str | None = None

    @property
    def prescribed(self) -> bool:
        return self.spec.prescribed

    @property
    def num_openings(self) -> int:
        """The number of opening points (batches), as v1's documents count them."""
        return len(self.spec.protocol.batches)


@dataclass(frozen=True)
class P3TablesVerified:
    """What a verified table document proves: under ``config`` over ``field``, the tables of ``spec`` (shapes,
    layout), stacked and committed by ``commitment``, open as ``spec``'s schedule says: batch b's current columns take
    ``current[b]`` (a_b, 4) and its next columns ``next[b]`` (b_b, 4) at ``points[b]`` (m_b, 4), Montgomery words;
    the points were prescribed by the document or drawn by the transcript (``spec.points``)."""

    field: Field
    config: P3WhirConfig
    spec: TablesSpec
    commitment: MerkleCap
    points: tuple
    current: tuple
    next: tuple

    @property
    def prescribed(self) -> bool:
        return self.spec.prescribed

    def describe(self) -> str:
        """What was proved, in the flags' words: ``tables=.. layout=.. open=.. points=transcript|prescribed``."""
        c = self.spec.canonical()
        return f"tables={c['tables']} layout={c['layout']} open={c['open'] or '-'} points_from={c['points']}"


def read_p3_tables_document_bytes(data) -> P3TablesDocument:
    """A ``P3TablesDocument`` from JSON text (bytes or str) from anyone (see the module contract)."""
    if isinstance(data, (bytes, bytearray, str)):  # the cap every proof document has (document_limits)
        check_size(data, MAX_PROOF_DOCUMENT_BYTES, "proof document", ProofFormatError, PROOF_CAP_REASON)
    return read_p3_tables_document(loads_bounded(data, "p3-whir table document"))


def _field(doc: dict) -> Field:
    name = doc["field"]
    if isinstance(name, str):
        try:
            return field_by_name(name)
        except KeyError:
            pass
    raise ProofFormatError(f"field: expected 'babybear' or 'koalabear', got {name!r:.40}")


def _stated_texts(doc: dict, config: P3WhirConfig) -> None:
    check_stated_parameters({k: doc[k] for k in _V1_SHARED if k in doc}, config)
    for key in TEXT_KEYS:
        if key in doc:
            text(doc[key], key)
    for key in NOTES_KEYS:
        if key in doc:
            notes = lst(doc[key], key, at_most=MAX_NOTES)
            for i, note in enumerate(notes):
                text(note, f"{key}[{i}]")
    check_self_check(doc)


def read_p3_tables_document(doc) -> P3TablesDocument:
    """A ``P3TablesDocument`` from the decoded JSON object (see the module contract)."""
    if not isinstance(doc, dict):
        raise ProofFormatError(f"a p3-whir table document is a JSON object, got {json_type(doc)}")
    if doc.get("format") != FORMAT:
        raise ProofFormatError(f"format: expected {FORMAT!r}, got {doc.get('format')!r:.40}")
    params = doc.get("params")
    if doc.get("zk", False) is not False or (isinstance(params, dict) and params.get("zk", False) is not False):
        raise ProofFormatError("zk: hiding table documents (upstream's HidingWhirPcs, the oracle's prove-tables --zk) "
                               "are not verified here; only zk = false")
    check_keys(doc, "document", DOCUMENT_KEYS)
    missing = [k for k in REQUIRED_KEYS if k not in doc]
    if missing:
        raise ProofFormatError(f"document: missing key(s) {', '.join(missing)}")
    field = _field(doc)
    n, params, spec, seed = read_params(doc["params"])
    config = derive(n, params, field)
    fold = config.folding_schedule[0]
    _stated_texts(doc, config)
    check_tree(doc, "opening_protocol", opening_protocol_tree(spec.protocol, fold))
    batches = spec.protocol.batches
    bounds = tables_proof_bounds(config, spec.protocol)
    commitment = merkle_cap_from_json(doc["commitment"], field.P, bounds=bounds)
    if commitment.roots.shape[0] != 1:
        raise ProofFormatError(f"commitment: expected a cap of height 0 (one root), got {commitment.roots.shape[0]}")
    proof = pcs_proof_from_json(doc["proof"], field.P, bounds=bounds)
    if len(proof.evals) != len(batches):
        raise ProofFormatError(f"proof.evals: {len(proof.evals)} batches, the schedule (params.open) has "
                               f"{len(batches)}")
    for b, (evals, batch) in enumerate(zip(proof.evals, batches)):
        if len(evals.current) != len(batch.current) or len(evals.next) != len(batch.next):
            raise ProofFormatError(f"proof.evals[{b}]: {len(evals.current)} current and {len(evals.next)} next "
                                   f"values, the schedule opens {len(batch.current)} and {len(batch.next)}")
    monty = field_ops(field).to_monty
    stated = {}
    if "openings" in doc:
        points, current, following = read_openings(doc["openings"], spec.protocol, fold, field.P)
        stated = {"stated_points": tuple(monty(p) for p in points), "stated_current": tuple(monty(c) for c in current),
                  "stated_next": tuple(monty(v) for v in following)}
    elif spec.prescribed:
        raise ProofFormatError("openings: missing (params.points is 'prescribed': the points are in "
                               "openings[*].point_canonical)")
    ood = None
    if "initial_ood_points_canonical" in doc:
        ood = monty(canonical_array(doc["initial_ood_points_canonical"], "initial_ood_points_canonical",
                                    (config.commitment_ood_samples, n, 4), field.P))
    columns = polynomial = stacking = None
    if "tables" in doc:
        columns = tuple(monty(c) for c in read_tables(doc["tables"], spec.protocol, config, field.P))
    if "stacking" in doc:
        stacking, polynomial = read_stacking(doc["stacking"], spec, config, field.P)
        polynomial = monty(polynomial)
    return P3TablesDocument(field, config, spec, commitment, proof,
                            stated.get("stated_points") if spec.prescribed else None, seed=seed,
                            ood_points=ood, columns=columns, polynomial=polynomial, stacking=stacking,
                            inconsistency=copy_inconsistency(doc, field, commitment, proof, bounds), **stated)


def _statement(check: str, key: str, stated, proven) -> None:
    if stated is None:
        return
    for b, (s, p) in enumerate(zip(stated, proven)):
        if not np.array_equal(np.asarray(s), np.asarray(p)):
            raise VerificationError(f"{key.replace('*', str(b))} is not what the proof proves", round="statement",
                                    check=check)


def verify_p3_tables_document(document: P3TablesDocument) -> P3TablesVerified:
    """Verify the proof and everything the document states (see the module contract); return what it proves."""
    if not isinstance(document, P3TablesDocument):
        raise ProofFormatError(f"expected a P3TablesDocument, got {type(document).__name__}")
    opened = verify_core(document)
    current, following = opened.current, opened.next
    _statement("claimed_values", "openings[*].current_values_canonical", document.stated_current, current)
    _statement("claimed_values", "openings[*].next_values_canonical", document.stated_next, following)
    _statement("points", "openings[*].point_canonical", document.stated_points, opened.points)
    if document.ood_points is not None:
        _statement("ood_points", "initial_ood_points_canonical", [document.ood_points], [opened.ood_points])
    if document.inconsistency is not None:
        raise ProofFormatError(document.inconsistency)
    check_witness(document)
    return P3TablesVerified(document.field, document.config, document.spec, document.commitment, opened.points,
                            current, following)

