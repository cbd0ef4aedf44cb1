"""Where every column of every table lies on the stacked hypercube (upstream ``p3_sumcheck::layout``'s
``plan_layout`` and ``Witness::new`` / ``Witness::new_interleaved``, Plonky3 5dc50e51), shared by prover and
verifier.

Contracts (n = the stacked arity, m = a table's committed arity ``TableShape.committed_log_rows(fold)``; indices
big-endian: index bit b_0, the most significant, is variable x_0, bound by coordinate 0 of a point):
- **Placement order**: tables sorted by committed arity ascending (stable), then taken in reverse: the largest
  first and, among equal arities, the **higher table index first**. Each column, in column order, takes the next
  free slot of 2^m cells: slot = offset >> m, offset += 2^m (offsets stay aligned since arities only shrink).
  n = ceil(log2(Σ columns * 2^m)); unused cells are zero. A column shorter than 2^m (a table below the folding
  factor) is zero-padded at its end.
- **Layouts** (``LAYOUTS``):
  - ``suffix`` (``SuffixProver``, ``Witness::new``): ``stacked[(slot << m) + i] = col[i]``; the selector is the
    n - m high bits (selector_value = slot), the row the m low bits: a column's local variables are the window
    x_{n-m} .. x_{n-1}, and a point p on it lifts to ``bits(slot) || p``.
  - ``prefix`` (``PrefixProver``, ``Witness::new_interleaved``): ``stacked[(i << (n-m)) | bitrev_{n-m}(slot)] =
    col[i]``; the row is the m high bits, the selector (selector_value = bitrev_{n-m}(slot)) the n - m low bits: the
    window is x_0 .. x_{m-1} and p lifts to ``p || bits(selector_value)``.
  ``bits(v)`` lists v's n - m bits most significant first, as field elements 0 / 1.
- The stacked polynomial's multilinear extension at a lifted point is the column's at p (the selector
  coordinates are boolean), so a current opening is an eq claim on the stacked polynomial, for free.

``plan_layout(protocol, fold, layout)`` returns a ``StackedLayout``; ``StackedLayout.stack(columns)`` builds the
(2^n,) stacked polynomial from each table's (columns, 2^log_rows) array (any dtype of words, copied as they are:
canonical in, canonical out; Montgomery in, Montgomery out).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....errors import ConfigError
from .shapes import TablesProtocol

LAYOUTS = ("suffix", "prefix")
MAX_STACKED_VARIABLES = 40  # bounds what a hostile document can make a verifier derive


def bit_reverse(value: int, bits: int) -> int:
    """``value``'s low ``bits`` bits in reverse order."""
    return int(format(value, f"0{bits}b")[::-1], 2) if bits else 0


@dataclass(frozen=True)
class ColumnPlacement:
    """One column's place: its ``slot`` (offset >> m) and ``selector_value`` (the n - m selector bits' value)."""

    table: int
    column: int
    slot: int
    selector_value: int


@dataclass(frozen=True)
class TablePlacement:
    """One table's place: its committed arity ``log_rows`` (m), its ``width`` columns in slots ``first_slot`` ..
    ``first_slot + width - 1`` (column order), the selector's ``selector_bits`` (n - m) and the ``layout``'s
    selector values (``column``; ``columns`` lists them all)."""

    table: int
    log_rows: int
    first_slot: int
    width: int
    selector_bits: int
    layout: str

    def column(self, column: int) -> ColumnPlacement:
        if not 0 <= column < self.width:
            raise ConfigError(f"table {self.table} has {self.width} columns, not a column {column}")
        slot = self.first_slot + column
        value = slot if self.layout == "suffix" else bit_reverse(slot, self.selector_bits)
        return ColumnPlacement(self.table, column, slot, value)

    @property
    def columns(self) -> tuple[ColumnPlacement, ...]:
        return tuple(self.column(c) for c in range(self.width))


@dataclass(frozen=True)
class StackedLayout:
    """The stacked hypercube of one ``TablesProtocol`` under one layout and folding factor (module contract)."""

    layout: str
    num_variables: int
    fold: int
    placements: tuple[TablePlacement, ...]  # placement order
    table_log_rows: tuple[int, ...]  # committed arity per table, in table order

    def placement(self, table: int) -> TablePlacement:
        for placement in self.placements:
            if placement.table == table:
                return placement
        raise ConfigError(f"no table {table} in this layout ({len(self.table_log_rows)} tables)")

    def selector_bits(self, table: int) -> int:
        return self.num_variables - self.table_log_rows[table]

    def window(self, table: int) -> tuple[int, int]:
        """(start, m): the stacked variables x_start .. x_{start+m-1} that index a row of ``table``'s columns."""
        m = self.table_log_rows[table]
        return (self.num_variables - m, m) if self.layout == "suffix" else (0, m)

    def selector_coordinates(self, table: int, column: int) -> list[int]:
        """The selector's bits (0 / 1), most significant first: the coordinates outside the window."""
        bits = self.selector_bits(table)
        value = self.placement(table).column(column).selector_value
        return [(value >> (bits - 1 - t)) & 1 for t in range(bits)]

    def first_index(self, table: int, column: int) -> int:
        """The stacked index of the column's row 0 (``row_indices(table, column)[0]``, in O(1))."""
        placed = self.placement(table).column(column)
        return placed.slot << self.table_log_rows[table] if self.layout == "suffix" else placed.selector_value

    def row_indices(self, table: int, column: int) -> np.ndarray:
        """The stacked index of each of the column's 2^m (committed) rows."""
        m = self.table_log_rows[table]
        bits = self.num_variables - m
        placed = self.placement(table).column(column)
        rows = np.arange(1 << m, dtype=np.int64)
        if self.layout == "suffix":
            return (placed.slot << m) + rows
        return (rows << bits) | placed.selector_value

    def stack(self, columns) -> np.ndarray:
        """The (2^n,) stacked polynomial from one (columns, 2^log_rows) array per table, in table order (see the
        module contract); ``ConfigError`` for arrays of the wrong shapes."""
        columns = list(columns)
        if len(columns) != len(self.table_log_rows):
            raise ConfigError(f"expected one column array per table ({len(self.table_log_rows)}), got {len(columns)}")
        arrays = [np.asarray(c) for c in columns]
        dtype = np.result_type(*arrays) if arrays else np.uint32
        out = np.zeros(1 << self.num_variables, dtype=dtype)
        for placement in self.placements:
            array = arrays[placement.table]
            width = placement.width
            if array.ndim != 2 or array.shape[0] != width or array.shape[1] > 1 << placement.log_rows or \
                    array.shape[1] & (array.shape[1] - 1) or array.shape[1] == 0:
                raise ConfigError(f"table {placement.table}: expected ({width}, 2^log_rows) column values, got shape "
                                  f"{array.shape}")
            for column in range(width):
                out[self.row_indices(placement.table, column)[:array.shape[1]]] = array[column]
        return out


def plan_layout(protocol: TablesProtocol, fold: int, layout: str) -> StackedLayout:
    """The ``StackedLayout`` of ``protocol``'s tables committed with first folding factor ``fold`` (module
    contract)."""
    if layout not in LAYOUTS:
        raise ConfigError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r:.40}")
    if not isinstance(protocol, TablesProtocol):
        raise ConfigError(f"expected a TablesProtocol, got {type(protocol).__name__}")
    arities = protocol.committed_log_rows(fold)
    ascending = sorted(range(len(arities)), key=lambda t: arities[t])  # stable
    order = ascending[::-1]
    total = sum(protocol.shapes[t].columns << arities[t] for t in order)
    n = (total - 1).bit_length()  # ceil(log2(total)); total >= 2^fold >= 2
    if n > MAX_STACKED_VARIABLES:
        raise ConfigError(f"the stacked polynomial would have 2^{n} values; at most 2^{MAX_STACKED_VARIABLES}")
    offset = 0
    placements = []
    for t in order:  # O(tables): a column's slot and selector are derived when asked for (``TablePlacement``)
        m, width = arities[t], protocol.shapes[t].columns
        placements.append(TablePlacement(t, m, offset >> m, width, n - m, layout))
        offset += width << m
    return StackedLayout(layout, n, fold, tuple(placements), arities)
