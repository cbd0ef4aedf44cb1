"""The instance every ``benchmarks/zk_*`` script proves: one column of 2^n KoalaBear values, upstream's example
configuration at starting rate 2 (``zk_config_for`` with default ``ZkOptions``), the oracle's SmallRng(1) column
and prescribed point (``draw_instance``), and the hiding statement over it (``zk_tables_statement``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from whirgpu.field import KOALABEAR
from whirgpu.profiles.p3_whir.tables.instance import draw_instance
from whirgpu.profiles.p3_whir.tables.spec import TablesSpec
from whirgpu.profiles.p3_whir.zk.api import ZkOptions, zk_config_for
from whirgpu.profiles.p3_whir.zk.tables import zk_tables_statement
from whirgpu.ref.field_np import field_ops


@dataclass
class ZkInstance:
    """``columns`` canonical, ``points`` Montgomery (one per batch); ``polynomial`` (2^n Montgomery words) and
    ``statement_points`` (E, n, 4) the hiding prover's input."""

    spec: TablesSpec
    config: object
    columns: list
    points: list
    polynomial: np.ndarray
    statement_points: np.ndarray

    def canonical_points(self) -> list:
        """The points as ``P3Tables.prove`` takes them (canonical int64)."""
        ops = field_ops(KOALABEAR)
        return [ops.from_monty(p).astype("int64") for p in self.points]


def zk_instance(n: int, field=KOALABEAR) -> ZkInstance:
    spec = TablesSpec.parse(f"{n}x1", None, "prefix", "prescribed")
    config, _ = zk_config_for(spec.protocol.shapes, None, field, ZkOptions(), False)
    columns, points = draw_instance(spec.protocol, 1, field, config.inner.folding_schedule[0], True)
    monty = [field_ops(field).to_monty(np.asarray(c, np.uint64)) for c in columns]
    polynomial, statement_points, _ = zk_tables_statement(spec.protocol, config.fold(0), monty, points, field)
    return ZkInstance(spec, config, list(columns), list(points), polynomial, statement_points)
