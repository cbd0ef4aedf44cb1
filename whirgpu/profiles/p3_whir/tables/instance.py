"""The oracle's random table instance (``oracle-p3 prove-tables --seed S``), drawn bit for bit as upstream's
``Table::rand`` and ``Point::rand`` draw it, so that ``whirgpu prove --profile p3-whir --tables ... --seed S`` proves
the oracle's instance.

Contract: ``draw_instance(protocol, seed, field, fold, prescribed)`` returns ``(columns, points)``:
- ``columns``: one (columns, 2^log_rows) uint32 array of **canonical** values per table, in table order, from one
  ``SmallRng::seed_from_u64(seed)`` (``ref.rng.Xoshiro256PlusPlus``): for each table
  ``Table::rand(rng, columns, log_rows)`` = columns x 2^log_rows ``StandardUniform`` base draws, column 0's values
  first (``ref.rng.random_base``; compiled by ``native.xoshiro`` once built: the same words);
- ``points``: with ``prescribed``, one (m, 4) Montgomery array per batch in protocol order (m = the table's
  committed arity with first folding factor ``fold``), ``Point::rand(rng, m)`` drawn after every table from the same
  generator (coordinate 0 first, each EF four base draws c0..c3); None otherwise.
"""

from __future__ import annotations

import numpy as np

from ....field import Field
from ....ref.field_np import field_ops
from ....native.xoshiro import sample_ef, sample_monty
from ....ref.rng import Xoshiro256PlusPlus
from .shapes import TablesProtocol


def draw_instance(protocol: TablesProtocol, seed: int, field: Field, fold: int, prescribed: bool = False):
    """(columns, points) as the oracle draws them (see the module contract)."""
    rng = Xoshiro256PlusPlus(seed)
    canonical = field_ops(field).from_monty
    columns = []
    for shape in protocol.shapes:
        words = sample_monty(rng, shape.columns << shape.log_rows, field)
        columns.append(np.ascontiguousarray(canonical(words).astype(np.uint32).reshape(shape.columns, -1)))
    points = None
    if prescribed:
        points = tuple(sample_ef(rng, m, field) for m in protocol.batch_log_rows(fold))
    return columns, points


__all__ = ["draw_instance"]
