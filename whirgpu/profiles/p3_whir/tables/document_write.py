"""Writing a ``p3-whir-oracle/v2`` table document: the keys the oracle's ``verify`` reads, as the oracle writes them
(compact JSON, sorted keys, no trailing newline), so that a document whirgpu writes is one the oracle accepts.

Contract: ``tables_document_tree(field, config, spec, commitment, proof, points, ood_points, seed=0, columns=None)``
returns the JSON tree: format, field, plonky3_commit, zk (false), params (exactly the oracle's keys: tables,
table_shapes, layout, layout_prover, open, num_variables, folding_factor, folding_factor_kind,
starting_log_inv_rate, round_log_inv_rates, security_level, pow_bits, soundness_type, seed, points, zk), config,
domain_separator_canonical, opening_protocol, openings (per batch: point and values, canonical),
initial_ood_points_canonical, the commitment and the proof with their canonical images and postcard bytes, and
with ``columns`` (one (columns, 2^log_rows) array of canonical values per table) the witness keys ``tables`` and
``stacking``. ``points``: one (m_b, 4) Montgomery array per batch (prescribed or drawn); ``ood_points`` (t, n, 4)
Montgomery, or None to leave ``initial_ood_points_canonical`` out; the values are ``proof.evals``. ``seed`` is the SmallRng seed the instance was drawn from; the oracle
needs the key, and its full check (not ``--whir-only``) compares ``tables`` and prescribed points with that draw,
so a document of the caller's own columns or points carries 0 and verifies there with ``--whir-only``.
``dumps_tables_document(tree)`` is the text. ``ConfigError`` when the parts disagree in shape.
"""

from __future__ import annotations

import json

import numpy as np

from ....errors import ConfigError
from ....field import Field
from ....ref.field_np import field_ops
from ..config import P3WhirConfig
from ..defaults import PLONKY3_COMMIT
from ..domain_separator import p3_domain_separator
from ..format import merkle_cap_to_json, merkle_cap_to_postcard, pcs_proof_to_json, pcs_proof_to_postcard
from ..proof import MerkleCap, PcsProof
from .document import FORMAT
from .document_checks import opening_protocol_tree
from .spec import LAYOUT_PROVERS, TablesSpec, format_tables
from .witness_checks import stacking_tree


def canonical_tree(tree, field: Field, skip: tuple[str, ...] = ()):
    """Every integer of ``tree`` (Montgomery words) as its canonical value, except under the keys ``skip``."""
    r_inv, p = field.R_INV, field.P

    def words(node):  # a list of words (bools excluded), else None
        return [v * r_inv % p for v in node] if all(type(v) is int for v in node) else None

    def walk(node):
        # Lists of words are converted in comprehensions, in place of a call per word: a document holds thousands
        # of EF elements ({"_phantom": None, "value": [4 words]}) and digests.
        if isinstance(node, dict):
            out = {}
            for k, v in node.items():
                if k in skip or v is None:
                    out[k] = v
                else:
                    converted = words(v) if type(v) is list else None
                    out[k] = converted if converted is not None else walk(v)
            return out
        if isinstance(node, list):
            converted = words(node)
            return converted if converted is not None else [walk(v) for v in node]
        if isinstance(node, int) and not isinstance(node, bool):
            return node * r_inv % p
        return node

    return walk(tree)


def params_tree(config: P3WhirConfig, spec: TablesSpec, seed: int) -> dict:
    p = config.params
    shapes = spec.protocol.shapes
    return {"folding_factor": p.folding.k, "folding_factor_kind": "Constant", "layout": spec.layout,
            "layout_prover": LAYOUT_PROVERS[spec.layout], "num_variables": config.num_variables,
            "open": spec.canonical()["open"], "points": spec.points, "pow_bits": p.pow_bits,
            "round_log_inv_rates": [r.log_inv_rate for r in config.round_parameters],
            "security_level": p.security_level, "seed": seed, "soundness_type": p.soundness_type.name,
            "starting_log_inv_rate": p.starting_log_inv_rate,
            "table_shapes": [{"columns": s.columns, "log_rows": s.log_rows} for s in shapes],
            "tables": format_tables(shapes), "zk": False}


def witness_tree(config: P3WhirConfig, spec: TablesSpec, columns, field: Field) -> dict:
    """The witness keys ``tables`` and ``stacking`` (with ``polynomial_canonical``) of canonical ``columns``."""
    from .stacking import plan_layout  # noqa: PLC0415

    fold = config.folding_schedule[0]
    layout = plan_layout(spec.protocol, fold, spec.layout)
    arrays = [np.asarray(c, dtype=np.uint64) for c in columns]
    tables = [{"columns": s.columns, "columns_canonical": a.tolist(), "committed_log_rows": s.committed_log_rows(fold),
               "index": t, "log_rows": s.log_rows} for t, (s, a) in enumerate(zip(spec.protocol.shapes, arrays))]
    stacking = stacking_tree(layout, spec.protocol)
    stacking["polynomial_canonical"] = layout.stack(arrays).tolist()
    return {"tables": tables, "stacking": stacking}


def tables_document_tree(field: Field, config: P3WhirConfig, spec: TablesSpec, commitment: MerkleCap,
                         proof: PcsProof, points, ood_points, seed: int = 0, columns=None) -> dict:
    """The v2 JSON tree (see the module contract)."""
    batches = spec.protocol.batches
    arities = spec.protocol.batch_log_rows(config.folding_schedule[0])
    if len(points) != len(batches) or len(proof.evals) != len(batches):
        raise ConfigError(f"{len(batches)} batches, but {len(points)} points and {len(proof.evals)} evaluations")
    canonical = field_ops(field).from_monty
    openings = []
    for b, (batch, m, point, evals) in enumerate(zip(batches, arities, points, proof.evals)):
        if np.shape(point) != (m, 4):
            raise ConfigError(f"batch {b}: a point of shape {np.shape(point)}, expected ({m}, 4)")
        openings.append({"batch": b, "current_columns": list(batch.current),
                         "current_values_canonical": canonical(evals.current).tolist(),
                         "next_columns": list(batch.next), "next_values_canonical": canonical(evals.next).tolist(),
                         "num_variables": m, "point_canonical": canonical(np.asarray(point, np.uint32)).tolist(),
                         "table": batch.table})
    cap_json, proof_json = merkle_cap_to_json(commitment), pcs_proof_to_json(proof)
    postcard = pcs_proof_to_postcard(proof)
    tree = {
        "format": FORMAT, "field": field.name, "plonky3_commit": PLONKY3_COMMIT, "zk": False,
        "params": params_tree(config, spec, seed), "config": config.to_json_dict(),
        "domain_separator_canonical": [int(x) for x in p3_domain_separator(config)],
        "opening_protocol": opening_protocol_tree(spec.protocol, config.folding_schedule[0]),
        "openings": openings,
        "commitment": cap_json, "commitment_canonical": canonical_tree(cap_json, field),
        "commitment_root_canonical": canonical_tree(cap_json["cap"][0], field),
        "commitment_postcard_hex": merkle_cap_to_postcard(commitment).hex(),
        "proof": proof_json, "proof_canonical": canonical_tree(proof_json, field),
        "proof_postcard_hex": postcard.hex(), "proof_postcard_len": len(postcard),
    }
    if ood_points is not None:
        tree["initial_ood_points_canonical"] = canonical(np.asarray(ood_points, np.uint32)).tolist()
    if columns is not None:
        tree.update(witness_tree(config, spec, columns, field))
    return tree


def dumps_tables_document(tree: dict) -> str:
    """Compact JSON with sorted keys, no trailing newline: the oracle's text."""
    return json.dumps(tree, sort_keys=True, separators=(",", ":"))


__all__ = ["canonical_tree", "dumps_tables_document", "params_tree", "tables_document_tree", "witness_tree"]
