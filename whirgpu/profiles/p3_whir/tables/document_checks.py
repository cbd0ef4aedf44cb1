"""The key-by-key rules of a ``p3-whir-oracle/v2`` table document (``tables/document.py`` states them; this module
applies them), beside v1's ``document_checks`` whose pieces it reuses.

Contract: every function raises ``ProofFormatError`` naming the key (and, for a derived value, the first place
where it differs) or returns what it read, on decoded JSON of any shape; every list's length is checked against
what the parameters derive before its entries are read.
"""

from __future__ import annotations

import numpy as np

from ....errors import ConfigError, ProofFormatError
from ....protocol.folding import Constant
from ....protocol.json_tree import first_difference, json_type
from ....protocol.soundness import SoundnessType
from ..config import P3Parameters, P3WhirConfig
from ..document_checks import MAX_RATES, MAX_RECOMMIT_LOG_CODEWORD, MAX_RECOMMIT_LOG_LEAVES, MAX_TEXT, \
    SOUNDNESS_NAMES, canonical_array
from .shapes import MAX_LOG_ROWS, TableShape, TablesProtocol
from .spec import LAYOUT_PROVERS, LAYOUTS, MAX_COLUMNS, MAX_OPEN_TEXT, MAX_TABLES, POINTS, TablesSpec, format_open, format_tables, parse_open

REQUIRED_KEYS = ("format", "field", "params", "commitment", "proof")
# restate the parameters or copy the proof: checked against them (ProofFormatError)
CHECKED_KEYS = ("plonky3_commit", "zk", "config", "domain_separator_canonical", "opening_protocol",
                "commitment_canonical", "commitment_root_canonical", "commitment_postcard_hex", "proof_canonical",
                "proof_postcard_hex", "proof_postcard_len", "self_check", "proof_field_encoding")
STATEMENT_KEYS = ("openings", "initial_ood_points_canonical")  # checked against what the proof proves
BULKY_KEYS = ("tables", "stacking")  # the witness: optional, checked as copies when present
TEXT_KEYS = ("protocol", "mmcs", "instance_draw", "points_derivation", "extension_field", "next_semantics")
NOTES_KEYS = ("notes", "notes_v2")
DOCUMENT_KEYS = REQUIRED_KEYS + CHECKED_KEYS + STATEMENT_KEYS + BULKY_KEYS + TEXT_KEYS + NOTES_KEYS
PARAM_KEYS = ("table_shapes", "layout", "open", "num_variables", "folding_factor", "starting_log_inv_rate",
              "round_log_inv_rates", "security_level", "pow_bits", "soundness_type", "points")
OPTIONAL_PARAM_KEYS = ("tables", "layout_prover", "folding_factor_kind", "seed", "zk")
SELF_CHECK = {"current_claims_equal_mle_of_column": True, "initial_ood_answers_equal_stacked_poly_at_replayed_points":
              True, "next_claims_equal_mle_of_shifted_column": True, "stacking_matches_witness_poly": True,
              "verify": "accept"}
OPENING_KEYS = ("batch", "table", "current_columns", "next_columns", "num_variables", "point_canonical",
                "current_values_canonical", "next_values_canonical")
TABLE_KEYS = ("index", "log_rows", "columns", "committed_log_rows", "columns_canonical")
STACKING_KEYS = ("num_variables", "layout", "witness_constructor", "index_map", "committed_table_shapes",
                 "placements", "polynomial_canonical")
WITNESS_CONSTRUCTORS = {"suffix": "Witness::new (SuffixProver::new_witness)",
                        "prefix": "Witness::new_interleaved (PrefixProver::new_witness)"}


def check_keys(value: dict, where: str, allowed) -> None:
    unknown = sorted(str(k) for k in value if k not in allowed)
    if unknown:
        known = f"the format defines {', '.join(sorted(allowed))}" if len(allowed) <= 12 else \
            "not a key of p3-whir-oracle/v2"
        raise ProofFormatError(f"{where}: unknown key {unknown[0]!r:.60} ({known})")


def uint(value, what: str, low: int = 0, high: int = (1 << 64) - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ProofFormatError(f"{what}: expected an integer in [{low}, {high}], got {value!r:.40}")
    return value


def obj(value, where: str, keys, optional=()) -> dict:
    if not isinstance(value, dict):
        raise ProofFormatError(f"{where}: expected an object, got {json_type(value)}")
    check_keys(value, where, tuple(keys) + tuple(optional))
    missing = [k for k in keys if k not in value]
    if missing:
        raise ProofFormatError(f"{where}: missing key(s) {', '.join(missing)}")
    return value


def lst(value, where: str, length: int | None = None, at_most: int | None = None) -> list:
    if not isinstance(value, list):
        raise ProofFormatError(f"{where}: expected an array, got {json_type(value)}")
    if length is not None and len(value) != length:
        raise ProofFormatError(f"{where}: expected {length} entries, got {len(value)}")
    if at_most is not None and len(value) > at_most:
        raise ProofFormatError(f"{where}: {len(value)} entries, more than the {at_most} allowed")
    return value


def text(value, where: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        got = f"{len(value)} characters" if isinstance(value, str) else json_type(value)
        raise ProofFormatError(f"{where}: expected a text of at most {MAX_TEXT} characters, got {got}")
    return value


def stacked_arity(shapes, fold: int) -> int:
    """``n = ceil(log2(sum columns * 2^m))`` (m a table's committed arity), as upstream's ``plan_layout``."""
    cells = sum(s.columns << s.committed_log_rows(fold) for s in shapes)
    return (cells - 1).bit_length()


def _shapes(value) -> tuple[TableShape, ...]:
    shapes = []
    for i, item in enumerate(lst(value, "params.table_shapes", at_most=MAX_TABLES)):
        item = obj(item, f"params.table_shapes[{i}]", ("columns", "log_rows"))
        shapes.append(TableShape(uint(item["log_rows"], f"params.table_shapes[{i}].log_rows", 0, MAX_LOG_ROWS),
                                 uint(item["columns"], f"params.table_shapes[{i}].columns", 1, 1 << 63)))
    if not shapes:
        raise ProofFormatError("params.table_shapes: at least one table is needed")
    if sum(s.columns for s in shapes) > MAX_COLUMNS:
        raise ProofFormatError(f"params.table_shapes: {sum(s.columns for s in shapes)} columns in all, above "
                               f"MAX_COLUMNS {MAX_COLUMNS}")
    return tuple(shapes)


def _choice(block: dict, key: str, choices) -> str:
    if block[key] not in choices:
        raise ProofFormatError(f"params.{key}: expected one of {', '.join(choices)}, got {block[key]!r:.40}")
    return block[key]


def read_params(block) -> tuple[int, P3Parameters, TablesSpec, int | None]:
    """``params`` -> (the stacked num_variables, the WHIR parameters, the tables spec, the seed or None). The
    stacked arity the shapes derive must be ``num_variables``; ``tables`` and ``open`` must be canonical."""
    block = obj(block, "params", PARAM_KEYS, OPTIONAL_PARAM_KEYS)
    if block.get("zk", False) is not False:
        raise ProofFormatError("params.zk: hiding (zk) table documents are not read by this verifier; only "
                               "zk = false")
    if block.get("folding_factor_kind", "Constant") != "Constant":
        raise ProofFormatError(f"params.folding_factor_kind: only 'Constant' is defined, got "
                               f"{block['folding_factor_kind']!r:.40}")
    layout = _choice(block, "layout", LAYOUTS)
    if block.get("layout_prover", LAYOUT_PROVERS[layout]) != LAYOUT_PROVERS[layout]:
        raise ProofFormatError(f"params.layout_prover: layout {layout} is {LAYOUT_PROVERS[layout]}, the document "
                               f"says {block['layout_prover']!r:.40}")
    points = _choice(block, "points", POINTS)
    seed = uint(block["seed"], "params.seed") if "seed" in block else None
    rates = lst(block["round_log_inv_rates"], "params.round_log_inv_rates", at_most=MAX_RATES)
    _choice(block, "soundness_type", SOUNDNESS_NAMES)
    fold = uint(block["folding_factor"], "params.folding_factor", 1, 63)
    params = P3Parameters(
        security_level=uint(block["security_level"], "params.security_level"),
        pow_bits=uint(block["pow_bits"], "params.pow_bits"),
        folding=Constant(fold),
        soundness_type=SoundnessType[block["soundness_type"]],
        starting_log_inv_rate=uint(block["starting_log_inv_rate"], "params.starting_log_inv_rate"),
        round_log_inv_rates=tuple(uint(r, f"params.round_log_inv_rates[{i}]") for i, r in enumerate(rates)))
    shapes = _shapes(block["table_shapes"])
    n = uint(block["num_variables"], "params.num_variables", 0, 63)
    derived = stacked_arity(shapes, fold)
    if derived != n:
        raise ProofFormatError(f"params.num_variables: {n}, but the tables {format_tables(shapes)} committed with "
                               f"fold {fold} stack to {derived} variables")
    if "tables" in block and block["tables"] != format_tables(shapes):
        raise ProofFormatError(f"params.tables: {block['tables']!r:.60} is not table_shapes "
                               f"({format_tables(shapes)!r:.60})")
    if not isinstance(block["open"], str) or len(block["open"]) > MAX_OPEN_TEXT:
        raise ProofFormatError(f"params.open: expected a text of at most MAX_OPEN_TEXT {MAX_OPEN_TEXT} characters")
    try:
        batches = parse_open(block["open"], shapes, flag="params.open")
    except ConfigError as exc:
        raise ProofFormatError(str(exc)) from None
    if format_open(batches) != block["open"]:
        raise ProofFormatError(f"params.open: {block['open']!r:.60} is not canonical (both colons, batches grouped "
                               f"by table): {format_open(batches)!r:.60}")
    return n, params, TablesSpec(TablesProtocol(shapes, batches), layout, points), seed


def opening_protocol_tree(protocol: TablesProtocol, fold: int) -> list:
    """``opening_protocol`` as the parameters derive it: per table its committed shape and batches."""
    arities = protocol.committed_log_rows(fold)
    tree = [{"batches": [], "shape": {"num_variables": m, "width": s.columns}, "table": t}
            for t, (s, m) in enumerate(zip(protocol.shapes, arities))]
    for b, batch in enumerate(protocol.batches):
        tree[batch.table]["batches"].append({"current": list(batch.current), "next": list(batch.next),
                                             "opening": b})
    return tree


def check_tree(doc: dict, key: str, want) -> None:
    if key in doc and (where := first_difference(doc[key], want, key)) is not None:
        raise ProofFormatError(f"{key} disagrees with what the parameters derive at {where}")


def check_self_check(doc: dict) -> None:
    if "self_check" not in doc:
        return
    block = obj(doc["self_check"], "self_check", (), SELF_CHECK)
    for key, value in block.items():
        if value != SELF_CHECK[key] or type(value) is not type(SELF_CHECK[key]):
            raise ProofFormatError(f"self_check.{key}: a document that verifies says {SELF_CHECK[key]!r}, this one "
                                   f"says {value!r:.40}")


def read_openings(value, protocol: TablesProtocol, fold: int, prime: int):
    """``openings`` -> (points, current values, next values), each a tuple with one canonical uint64 array per batch
    ((m, 4), (a, 4), (b, 4)); the batch, table, columns and arity of each entry must be the schedule's."""
    batches = protocol.batches
    arities = protocol.batch_log_rows(fold)
    items = lst(value, "openings", len(batches))
    points, current, following = [], [], []
    for b, (item, batch, m) in enumerate(zip(items, batches, arities)):
        where = f"openings[{b}]"
        item = obj(item, where, OPENING_KEYS)
        for key, want in (("batch", b), ("table", batch.table), ("current_columns", list(batch.current)),
                          ("next_columns", list(batch.next)), ("num_variables", m)):
            got = item[key]
            if first_difference(got, want, key) is not None:
                raise ProofFormatError(f"{where}.{key}: {got!r:.60}, the schedule (params.open) says {want!r:.60}")
        points.append(canonical_array(item["point_canonical"], f"{where}.point_canonical", (m, 4), prime))
        current.append(canonical_array(item["current_values_canonical"], f"{where}.current_values_canonical",
                                       (len(batch.current), 4), prime))
        following.append(canonical_array(item["next_values_canonical"], f"{where}.next_values_canonical",
                                         (len(batch.next), 4), prime))
    return tuple(points), tuple(current), tuple(following)


def recommit_bound(config: P3WhirConfig, key: str) -> None:
    n, rate, fold = config.num_variables, config.starting_log_inv_rate, config.folding_schedule[0]
    if n + rate > MAX_RECOMMIT_LOG_CODEWORD or n + rate - fold > MAX_RECOMMIT_LOG_LEAVES:
        raise ProofFormatError(
            f"{key}: checking it means committing to the stacked polynomial again (a 2^{n + rate} codeword, "
            f"2^{n + rate - fold} leaves), above the verifier's MAX_RECOMMIT_LOG_CODEWORD {MAX_RECOMMIT_LOG_CODEWORD}"
            f" / MAX_RECOMMIT_LOG_LEAVES {MAX_RECOMMIT_LOG_LEAVES}; leave the key out")


def read_tables(value, protocol: TablesProtocol, config: P3WhirConfig, prime: int) -> tuple[np.ndarray, ...]:
    """``tables`` -> one canonical uint64 array (columns, 2^log_rows) per table; shapes as ``params``."""
    recommit_bound(config, "tables")
    fold = config.folding_schedule[0]
    out = []
    for t, (item, shape) in enumerate(zip(lst(value, "tables", len(protocol.shapes)), protocol.shapes)):
        where = f"tables[{t}]"
        item = obj(item, where, TABLE_KEYS)
        for key, want in (("index", t), ("log_rows", shape.log_rows), ("columns", shape.columns),
                          ("committed_log_rows", shape.committed_log_rows(fold))):
            if first_difference(item[key], want, key) is not None:
                raise ProofFormatError(f"{where}.{key}: {item[key]!r:.40}, params.table_shapes says {want}")
        out.append(canonical_array(item["columns_canonical"], f"{where}.columns_canonical",
                                   (shape.columns, 1 << shape.log_rows), prime))
    return tuple(out)


def read_stacking(value, spec: TablesSpec, config: P3WhirConfig, prime: int) -> tuple[dict, np.ndarray]:
    """``stacking`` -> (its description without the polynomial, for the caller to compare with the placement the
    core derives; the stacked polynomial (2^n canonical uint64))."""
    recommit_bound(config, "stacking")
    block = obj(value, "stacking", STACKING_KEYS)
    fold = config.folding_schedule[0]
    for key, want in (("num_variables", config.num_variables), ("layout", spec.layout),
                      ("witness_constructor", WITNESS_CONSTRUCTORS[spec.layout]),
                      ("committed_table_shapes", [{"num_variables": m, "width": s.columns} for s, m in
                                                  zip(spec.protocol.shapes, spec.protocol.committed_log_rows(fold))])):
        if (where := first_difference(block[key], want, f"stacking.{key}")) is not None:
            raise ProofFormatError(f"stacking.{key} disagrees with what the parameters derive at {where}")
    text(block["index_map"], "stacking.index_map")
    lst(block["placements"], "stacking.placements", len(spec.protocol.shapes))
    polynomial = canonical_array(block["polynomial_canonical"], "stacking.polynomial_canonical",
                                 (1 << config.num_variables,), prime)
    return {k: v for k, v in block.items() if k != "polynomial_canonical"}, polynomial


__all__ = ["BULKY_KEYS", "CHECKED_KEYS", "check_keys", "DOCUMENT_KEYS", "OPENING_KEYS", "PARAM_KEYS", "REQUIRED_KEYS",
           "SELF_CHECK", "STATEMENT_KEYS", "TEXT_KEYS", "check_self_check", "check_tree", "lst", "obj",
           "opening_protocol_tree", "read_openings", "read_params", "read_stacking", "read_tables", "recommit_bound",
           "stacked_arity", "text", "uint"]
