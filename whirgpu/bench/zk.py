"""``whirgpu bench --tables SPEC --zk``: the zero-knowledge proof of stacked tables timed beside the same proof
without zero knowledge, on the cpu backend (the hiding prover is the numpy reference in this version; issue 40).

Contract: ``run_zk_bench(spec, config, zk_config, runs, warmup, seed) -> dict``: ``spec`` a prefix, prescribed
``TablesSpec`` (current columns only), ``config`` the stacked ``P3WhirConfig``, ``zk_config`` the ``ZkWhirConfig``
of the same parameters. The instance is the oracle's (``tables.instance.draw_instance``: tables and points from
SmallRng(seed)). Each of ``runs`` timed rounds (after ``warmup`` untimed ones) makes one plain proof
(``P3Tables(..., layout="prefix", backend="cpu").prove(batches, points)``) and one hiding proof
(``zk.api.prove_zk_statement``, masks from the OS CSPRNG), alternated; one document of each is verified through
``whirgpu.verify`` (untimed). The result holds the per-run milliseconds, their medians, ``ratio`` = zk / plain
and both postcard proof sizes. ``render_zk_bench(result)`` gives the lines to print.
"""

from __future__ import annotations

import statistics
import time

from ..profiles.p3_whir.config import P3WhirConfig
from ..profiles.p3_whir.tables.api import P3Tables
from ..profiles.p3_whir.tables.instance import draw_instance
from ..profiles.p3_whir.zk.api import prove_zk_statement
from ..profiles.p3_whir.zk.config import ZkWhirConfig
from ..ref.field_np import field_ops
from ..verifying import verify


def run_zk_bench(spec, config: P3WhirConfig, zk_config: ZkWhirConfig, runs: int, warmup: int, seed: int) -> dict:
    field, fold = config.field, config.folding_schedule[0]
    columns, points = draw_instance(spec.protocol, seed, field, fold, True)
    canonical_points = [field_ops(field).from_monty(p).astype("int64") for p in points]
    tables = P3Tables(list(columns), orient="columns", params=config.params, field=field, layout="prefix",
                      backend="cpu")
    plain_ms, zk_ms, plain_doc, zk_doc = [], [], None, None
    for i in range(warmup + runs):
        start = time.perf_counter()
        plain_doc = tables.prove(spec.protocol.batches, canonical_points)
        middle = time.perf_counter()
        zk_doc = prove_zk_statement(zk_config, spec, columns, points, None, seed)
        end = time.perf_counter()
        if i >= warmup:
            plain_ms.append((middle - start) * 1e3)
            zk_ms.append((end - middle) * 1e3)
    tables.close()
    verify(plain_doc)
    verify(zk_doc)
    plain, zk = statistics.median(plain_ms), statistics.median(zk_ms)
    return {"tables": spec.canonical()["tables"], "open": spec.canonical()["open"], "layout": "prefix",
            "points": "prescribed", "backend": "cpu", "num_variables": config.num_variables,
            "field": field.name, "folding_factor": fold, "rate": config.params.starting_log_inv_rate,
            "security": config.params.security_level, "pow_bits": config.params.pow_bits,
            "ell_zk": zk_config.ell_zk, "mask_log_inv_rate": zk_config.mask_log_inv_rate, "runs": runs,
            "warmup": warmup, "seed": seed, "plain_ms": plain_ms, "zk_ms": zk_ms, "plain_median_ms": plain,
            "zk_median_ms": zk, "ratio": zk / plain if plain else None,
            "plain_proof_bytes": plain_doc.to_json()["proof_postcard_len"],
            "zk_proof_bytes": zk_doc.tree["proof_postcard_len"]}


def render_zk_bench(result: dict) -> list[str]:
    return [f"zk bench: --tables {result['tables']} --open {result['open']} (prefix, prescribed points) "
            f"n={result['num_variables']} {result['field']} fold={result['folding_factor']} rate={result['rate']} "
            f"security={result['security']} pow_bits={result['pow_bits']} ell_zk={result['ell_zk']} "
            f"mask_log_inv_rate={result['mask_log_inv_rate']}, cpu backend, median of {result['runs']}",
            f"  plain (P3Tables prefix)  {result['plain_median_ms']:10.1f} ms  proof {result['plain_proof_bytes']} "
            "bytes",
            f"  zk (HidingWhirPcs)       {result['zk_median_ms']:10.1f} ms  proof {result['zk_proof_bytes']} bytes",
            f"  ratio zk / plain         {result['ratio']:10.2f}x"]


__all__ = ["render_zk_bench", "run_zk_bench"]
