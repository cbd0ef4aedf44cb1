"""What a stacked multi-table commitment commits and opens: upstream ``p3_sumcheck::layout``'s ``TableShape``,
``OpeningBatch`` and ``OpeningProtocol`` (Plonky3 5dc50e51), as plain frozen values shared by the prover, the
verifier, the documents and the command line.

Contracts:
- ``TableShape(log_rows, columns)``: a table of ``columns`` columns of 2^log_rows rows each (``log_rows >= 0``,
  ``columns >= 1``). A column's values are in hypercube index order: row i <-> (b_0 .. b_{m-1}), b_0 the most
  significant bit of i, so coordinate 0 of a point binds the most significant row bit.
- ``OpeningBatch(table, current, next)``: one opening point for ``table``; ``current`` columns are claimed at the
  point (``MLE(col)(p)``), ``next`` columns at the next row (the repeat-last successor: ``MLE(shift(col))(p)`` with
  ``shift[i] = col[min(i + 1, 2^m - 1)]``). Column indices are distinct within a side, ``current`` and ``next`` are
  not both empty; their order is the order of the claims (and of ``PcsProof.evals[b].current`` / ``.next``).
- ``TablesProtocol(shapes, batches)``: the tables, in the caller's (draw) order, and the batches in **protocol
  order**: stably grouped by table (all of table 0's batches, then table 1's, ...), as upstream's
  ``OpeningProtocol`` holds them per table. The constructor regroups the batches it is given that way, so batch
  index b (the b-th opening point, the b-th entry of ``PcsProof.evals``, the b-th transcript opening) means the
  same everywhere. A table may have no batch (committed, never opened).
- ``committed_log_rows(fold)``: upstream's ``pad_to_min_num_variables(fold)``: a table with fewer than ``fold``
  (the first folding factor) variables is committed zero-padded at the end of each column to ``fold`` variables,
  and its points have ``fold`` coordinates; ``next`` then runs over the padded column.

Nothing here knows about layouts or fields; ``stacking`` places the committed tables on the hypercube.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ....errors import ConfigError

MAX_LOG_ROWS = 40  # far above anything a device holds; bounds what a hostile document can make us derive


def _count(value, what: str, low: int, high: int | None = None) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{what} must be an int, got {value!r:.40}")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ConfigError(f"{what} must be {bound}, got {value}")
    return value


@dataclass(frozen=True)
class TableShape:
    """One table: ``columns`` columns of 2^``log_rows`` rows (upstream ``TableShape::new(log_rows, width)``)."""

    log_rows: int
    columns: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "log_rows", _count(self.log_rows, "a table's log_rows", 0, MAX_LOG_ROWS))
        object.__setattr__(self, "columns", _count(self.columns, "a table's number of columns", 1))

    def committed_log_rows(self, fold: int) -> int:
        """The arity the table is committed with: ``max(log_rows, fold)`` (zero padding up to the folding factor)."""
        return max(self.log_rows, fold)

    def __str__(self) -> str:  # the oracle's --tables item
        return f"{self.log_rows}x{self.columns}"


@dataclass(frozen=True)
class OpeningBatch:
    """One opening point of table ``table``: its ``current`` columns at the point, its ``next`` columns at the next
    row (upstream ``OpeningBatch::new(current, next)``)."""

    table: int
    current: tuple[int, ...] = ()
    next: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "table", _count(self.table, "an opening batch's table", 0))
        for side in ("current", "next"):
            value = getattr(self, side)
            if isinstance(value, (str, bytes)):
                raise ConfigError(f"an opening batch's {side} columns must be a sequence of ints, got {value!r:.40}")
            columns = tuple(_count(c, f"a {side} column index", 0) for c in value)
            if len(set(columns)) != len(columns):
                raise ConfigError(f"table {self.table}: a {side} column is repeated in one batch: {list(columns)}")
            object.__setattr__(self, side, columns)
        if not self.current and not self.next:
            raise ConfigError(f"table {self.table}: an opening batch needs at least one current or next column")

    @property
    def n_claims(self) -> int:
        return len(self.current) + len(self.next)

    def __str__(self) -> str:  # the oracle's canonical --open item, both colons
        return f"{self.table}:{','.join(map(str, self.current))}:{','.join(map(str, self.next))}"


@dataclass(frozen=True)
class TablesProtocol:
    """The tables and the opening batches (protocol order: grouped by table, stable; see the module contract)."""

    shapes: tuple[TableShape, ...]
    batches: tuple[OpeningBatch, ...] = ()

    def __post_init__(self) -> None:
        shapes, batches = tuple(self.shapes), tuple(self.batches)
        if not shapes:
            raise ConfigError("at least one table is needed")
        for shape in shapes:
            if not isinstance(shape, TableShape):
                raise ConfigError(f"tables must be TableShape values, got {type(shape).__name__}")
        for batch in batches:
            if not isinstance(batch, OpeningBatch):
                raise ConfigError(f"batches must be OpeningBatch values, got {type(batch).__name__}")
            if batch.table >= len(shapes):
                raise ConfigError(f"an opening batch names table {batch.table}; there are {len(shapes)} tables")
            width = shapes[batch.table].columns
            for column in batch.current + batch.next:
                if column >= width:
                    raise ConfigError(f"table {batch.table} has {width} columns; a batch opens column {column}")
        object.__setattr__(self, "shapes", shapes)
        object.__setattr__(self, "batches", tuple(sorted(batches, key=lambda b: b.table)))

    @classmethod
    def open_all(cls, shapes) -> "TablesProtocol":
        """The oracle's default schedule: one batch per table opening all its columns, no ``next``."""
        shapes = tuple(shapes)
        return cls(shapes, tuple(OpeningBatch(t, tuple(range(s.columns))) for t, s in enumerate(shapes)))

    def committed_log_rows(self, fold: int) -> tuple[int, ...]:
        """Each table's committed arity (``TableShape.committed_log_rows``), in table order."""
        _count(fold, "the folding factor", 1)
        return tuple(s.committed_log_rows(fold) for s in self.shapes)

    def batch_log_rows(self, fold: int) -> tuple[int, ...]:
        """The number of coordinates of each batch's point (its table's committed arity), in protocol order."""
        arities = self.committed_log_rows(fold)
        return tuple(arities[b.table] for b in self.batches)

    @property
    def n_claims(self) -> int:
        return sum(b.n_claims for b in self.batches)

    @property
    def tables_spec(self) -> str:
        """The oracle's ``--tables`` string, e.g. ``10x3,8x2``."""
        return ",".join(map(str, self.shapes))

    @property
    def open_spec(self) -> str:
        """The oracle's canonical ``--open`` string (both colons, protocol order), e.g. ``0:0,1:1/1:0:``."""
        return "/".join(map(str, self.batches))
