"""Writing a hiding (``zk: true``) ``p3-whir-oracle/v2`` document, keyed as the oracle's ``prove-tables --zk`` writes
it, so that the oracle's ``verify --in`` reads it (compact JSON, sorted keys: ``tables.document_write``'s text).

Contract: ``zk_document_tree(config, spec, commitment, proof, local_points, point_map, seed, mask_seed=None,
columns=None, polynomial=None)`` -> the JSON tree: format, field, plonky3_commit, zk (true), params (the oracle's
keys; ``layout_prover`` HidingWhirPcs's; ell_zk, mask_log_inv_rate; ``mask_seed`` only for a seeded proof; ``seed``,
the instance's SmallRng seed, only when ``seed`` is not None: the oracle's reader needs it, and a document that
records it names a witness anyone can draw again, so the hiding paths pass None), config
(the inner ``WhirConfig``), zk_config (with the oracle's note), domain_separator_canonical, opening_protocol,
openings (per batch its local point and current values), zk_point_map, points_canonical (the lifted points the
PCS opened), claimed_values_canonical (= ``proof.evals``), the commitment and the proof with their canonical
images (``ell_zk`` left as it is) and postcard bytes, ``hiding`` (what the masks came from), and for a seeded
proof only ``mask_seed`` and ``mask_rng`` (its draws: they key every mask, so a CSPRNG proof never writes them).
The witness (``tables``, ``stacking``, ``polynomial_evals_canonical``) is written only when ``columns`` and
``polynomial`` are given: a document that carries it hides nothing, and is for tests and the oracle's full check.
``config`` is a ``ZkWhirConfig``; ``spec`` a prefix, prescribed ``TablesSpec``; ``local_points`` one (m_b, 4)
Montgomery array per batch; ``point_map`` as ``zk.tables.zk_tables_statement`` returns it; ``proof.evals`` the
Montgomery values of the lifted points in that order; ``columns`` canonical, as ``tables.instance`` draws them.
"""

from __future__ import annotations

import numpy as np

from ....errors import ConfigError
from ....ref.field_np import field_ops
from ..defaults import PLONKY3_COMMIT
from ..format import merkle_cap_to_json, merkle_cap_to_postcard
from ..proof import MerkleCap
from ..tables.document import FORMAT
from ..tables.document_checks import opening_protocol_tree
from ..tables.document_write import canonical_tree, params_tree, witness_tree
from .config import ZkWhirConfig, zk_domain_separator
from .format import zk_proof_to_json, zk_proof_to_postcard
from .proof import ZkWhirProof
from .randomness import mask_draws

LAYOUT_PROVER = "HidingWhirPcs (prefix variable order)"
ZK_CONFIG_NOTE = ("ZkWhirConfig::new(n, params, ZkParameters { ell_zk, mask_log_inv_rate }); `inner` (key `config`) "
                  "is the plain WhirConfig whose commitment_ood_samples and final_folding_pow_bits are NOT transcript "
                  "steps in zk; final_queries / final_pow_bits here shadow inner's for the base case")
MASK_RNG_CONSTRUCTION = ("StdRng::seed_from_u64(mask_seed) (rand 0.10.1 StdRng = ChaCha12Rng of chacha20 0.10.0; "
                         "seed_from_u64 fills the 32-byte key with PCG32 outputs)")
MASK_RNG_NOTE = ("every draw HidingWhirPcs made from R, in order: StdRng::from_rng(&mut R) = one 32-byte fill_bytes "
                 "per commit and per open call; the forked StdRng(key = these bytes) then drives the encoding "
                 "randomness (commit) and the masks (open)")
HIDING_CSPRNG = ("zero-knowledge (HidingWhirPcs, honest-verifier): masks from StdRng keyed with 32 bytes of the "
                 "operating system's CSPRNG; no seed is recorded. Hidden: the committed columns. Not hidden: the "
                 "points, the claimed values, the table shapes and the schedule")


def hiding_text(mask_seed: int | None) -> str:
    if mask_seed is None:
        return HIDING_CSPRNG
    return (f"NOT hiding against anyone who knows the seed: masks from StdRng::seed_from_u64({mask_seed}) "
            "(--mask-seed), for tests and reproduction only")


def zk_params_tree(config: ZkWhirConfig, spec, seed: int | None, mask_seed: int | None) -> dict:
    params = params_tree(config.inner, spec, 0 if seed is None else seed)
    if seed is None:
        del params["seed"]
    params.update({"layout_prover": LAYOUT_PROVER, "zk": True, "ell_zk": config.ell_zk,
                   "mask_log_inv_rate": config.mask_log_inv_rate})
    if mask_seed is not None:
        params["mask_seed"] = mask_seed
    return params


def zk_document_tree(config: ZkWhirConfig, spec, commitment: MerkleCap, proof: ZkWhirProof, local_points, point_map,
                     seed: int | None, mask_seed: int | None = None, columns=None, polynomial=None) -> dict:
    """The hiding v2 JSON tree (see the module contract)."""
    field = config.inner.field
    canonical = field_ops(field).from_monty
    fold = config.fold(0)
    batches = spec.protocol.batches
    arities = spec.protocol.batch_log_rows(fold)
    values = canonical(np.asarray(proof.evals, np.uint32)).tolist()
    if len(local_points) != len(batches) or len(values) != len(point_map):
        raise ConfigError(f"{len(batches)} batches and {len(point_map)} lifted points, but {len(local_points)} "
                          f"points and {len(values)} values")
    openings, lifted, at = [], [], 0
    for b, (batch, m, point) in enumerate(zip(batches, arities, local_points)):
        point = np.asarray(point, np.uint32)
        if point.shape != (m, 4):
            raise ConfigError(f"batch {b}: a point of shape {point.shape}, expected ({m}, 4)")
        mine = values[at:at + len(batch.current)]
        at += len(batch.current)
        openings.append({"batch": b, "current_columns": list(batch.current), "current_values_canonical": mine,
                         "next_columns": [], "next_values_canonical": [], "num_variables": m,
                         "point_canonical": canonical(point).tolist(), "table": batch.table})
    one, zero = [1, 0, 0, 0], [0, 0, 0, 0]
    for (b, _, _, value, bits) in point_map:
        coords = openings[b]["point_canonical"]
        lifted.append(coords + [one if (value >> (bits - 1 - j)) & 1 else zero for j in range(bits)])
    cap_json, proof_json = merkle_cap_to_json(commitment), zk_proof_to_json(proof)
    postcard = zk_proof_to_postcard(proof)
    tree = {
        "format": FORMAT, "field": field.name, "plonky3_commit": PLONKY3_COMMIT, "zk": True,
        "hiding": hiding_text(mask_seed),
        "params": zk_params_tree(config, spec, seed, mask_seed), "config": config.inner.to_json_dict(),
        "zk_config": {**config.to_json_dict(), "note": ZK_CONFIG_NOTE},
        "domain_separator_canonical": [int(x) for x in zk_domain_separator(config)],
        "opening_protocol": opening_protocol_tree(spec.protocol, fold),
        "openings": openings,
        "zk_point_map": [{"batch": b, "column": c, "selector_bits": bits, "selector_value": value, "table": t}
                         for (b, t, c, value, bits) in point_map],
        "points_canonical": lifted, "claimed_values_canonical": values,
        "commitment": cap_json, "commitment_canonical": canonical_tree(cap_json, field),
        "commitment_root_canonical": canonical_tree(cap_json["cap"][0], field),
        "commitment_postcard_hex": merkle_cap_to_postcard(commitment).hex(),
        "proof": proof_json, "proof_canonical": canonical_tree(proof_json, field, skip=("ell_zk",)),
        "proof_postcard_hex": postcard.hex(), "proof_postcard_len": len(postcard),
    }
    if mask_seed is not None:
        tree["mask_seed"] = mask_seed
        tree["mask_rng"] = {"construction": MASK_RNG_CONSTRUCTION, "draws": mask_draws(mask_seed),
                            "note": MASK_RNG_NOTE}
    if columns is not None and polynomial is not None:
        tree.update(witness_tree(config.inner, spec, columns, field))
        tree["polynomial_evals_canonical"] = canonical(np.asarray(polynomial, np.uint32)).tolist()
    return tree


__all__ = ["HIDING_CSPRNG", "LAYOUT_PROVER", "hiding_text", "zk_document_tree", "zk_params_tree"]
