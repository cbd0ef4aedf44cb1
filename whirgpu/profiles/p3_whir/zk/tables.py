"""The oracle's zk tables composition (``prove-tables --zk --tables ...``; upstream has no zk table PCS): the tables
are stacked in the **prefix** layout (``Witness::new_interleaved``, zero-padding to the first folding factor
included) and that polynomial is the one HidingWhirPcs commits; each batch's local point p (m coordinates) and
each of its current columns c give one HidingWhirPcs point p || bits(selector_value(c)) (the n - m selector bits,
most significant first), whose claimed value is MLE(col_c)(p). Points follow the batches in protocol order, the
columns in the order the batch lists them.

Contract: ``zk_tables_statement(protocol, fold, columns, local_points, field)`` -> (stacked polynomial (2^n,),
lifted points (E, n, 4), point map [(batch, table, column, selector_value, selector_bits)]); ``columns`` one
(width, 2^log_rows) array of Montgomery words per table, ``local_points`` one (m, 4) Montgomery array per batch.
``next`` columns are refused (``ConfigError``), as the oracle refuses them under --zk. ``lift_points(protocol, fold,
local_points, field)`` gives the points and the map alone (nothing stacked: what a verifier needs).
"""

from __future__ import annotations

import numpy as np

from ....errors import ConfigError
from ....field import Field
from ....ref.field_np import field_ops
from ..tables.shapes import TablesProtocol
from ..tables.stacking import plan_layout


def lift_points(protocol: TablesProtocol, fold: int, local_points, field: Field, layout=None):
    """(lifted points (E, n, 4), point map) of ``local_points`` without stacking anything (a verifier's view)."""
    if any(batch.next for batch in protocol.batches):
        raise ConfigError("the hiding PCS opens current columns only (no next openings)")
    if len(local_points) != len(protocol.batches):
        raise ConfigError(f"expected one local point per batch ({len(protocol.batches)}), got {len(local_points)}")
    ops = field_ops(field)
    layout = plan_layout(protocol, fold, "prefix") if layout is None else layout
    bit_words = ops.ef_from_base(np.array([ops.ZERO, ops.ONE], np.uint32))
    points, point_map = [], []
    for b, (batch, local) in enumerate(zip(protocol.batches, local_points)):
        local = np.asarray(local, np.uint32).reshape(-1, 4)
        if local.shape[0] != layout.table_log_rows[batch.table]:
            raise ConfigError(f"batch {b}: a point of {local.shape[0]} coordinates, table {batch.table} has "
                              f"{layout.table_log_rows[batch.table]} committed variables")
        for column in batch.current:
            bits = layout.selector_coordinates(batch.table, column)
            points.append(np.concatenate([local, bit_words[bits]]) if bits else local)
            value = layout.placement(batch.table).column(column).selector_value
            point_map.append((b, batch.table, column, value, len(bits)))
    if not points:
        return np.zeros((0, layout.num_variables, 4), np.uint32), point_map
    return np.stack(points).astype(np.uint32), point_map


def zk_tables_statement(protocol: TablesProtocol, fold: int, columns, local_points, field: Field):
    layout = plan_layout(protocol, fold, "prefix")
    points, point_map = lift_points(protocol, fold, local_points, field, layout)
    polynomial = layout.stack([np.asarray(c, np.uint32) for c in columns]).astype(np.uint32)
    return polynomial, points, point_map
