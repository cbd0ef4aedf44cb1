"""The claims of a stacked multi-table opening and how they are batched (upstream ``p3_sumcheck::layout``'s
``StackedClaims`` at Plonky3 5dc50e51), shared by prover and verifier.

Contracts (all field values Montgomery words of the profile's field; EF values (..., 4)):
- A batch b of table t opens at one local point p_b (m coordinates, m = t's committed arity, coordinate 0 binding
  the most significant row bit): ``current`` column c claims MLE(col_c)(p_b), ``next`` column c claims
  MLE(shift(col_c))(p_b) (the repeat-last successor, ``ref.shift``). ``evaluate_batch`` computes both from the
  column values (one eq table per batch).
- On the stacked polynomial a current claim is an eq claim at the lifted point (``lift_point``: the selector bits
  and p_b in the layout's order, ``stacking``); a next claim is a next-row weight over the table's window times eq
  on the selector bits (``Backend.add_next_weights``, ``ref.shift.lifted_next_at``).
- **Batching order** (``claim_terms``): alpha's powers go to the claims walked in *placement* order (largest table
  first, higher index first among equals), then that table's batches in protocol order, then each batch's current
  columns as listed, then its next columns as listed; the initial OOD claims take the powers after them. This is
  not the transcript order (batches in protocol order) when tables are listed smaller-first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....field import Field
from ....ref.field_np import field_ops
from ....ref.multilinear import eq_table
from ....ref.shift import next_table
from .shapes import TablesProtocol
from .stacking import StackedLayout


@dataclass(frozen=True)
class ClaimTerm:
    """One claim: the ``power``-th power of alpha batches it; batch ``batch`` (protocol order) of ``table`` opens
    ``column`` at the current row (``next`` False) or the next one; ``position``: its index in the batch's
    current (or next) list, i.e. in ``PcsProof.evals[batch].current`` (or ``.next``)."""

    power: int
    batch: int
    table: int
    column: int
    next: bool
    position: int


def claim_terms(stacked: StackedLayout, protocol: TablesProtocol) -> tuple[ClaimTerm, ...]:
    """Every claim of ``protocol``, in batching (alpha power) order: see the module contract."""
    terms: list[ClaimTerm] = []
    for placement in stacked.placements:
        for b, batch in enumerate(protocol.batches):
            if batch.table != placement.table:
                continue
            for position, column in enumerate(batch.current):
                terms.append(ClaimTerm(len(terms), b, batch.table, column, False, position))
            for position, column in enumerate(batch.next):
                terms.append(ClaimTerm(len(terms), b, batch.table, column, True, position))
    return tuple(terms)


def lift_point(stacked: StackedLayout, table: int, column: int, point: np.ndarray, field: Field) -> np.ndarray:
    """The (n, 4) stacked point of a local point (m, 4) of ``column`` of ``table``: selector bits (as EF 0 / 1)
    outside the table's window, ``point`` inside it."""
    ops = field_ops(field)
    start, m = stacked.window(table)
    point = np.asarray(point, np.uint32).reshape(m, 4)
    selector = np.zeros((stacked.num_variables - m, 4), np.uint32)
    selector[:, 0] = np.where(np.asarray(stacked.selector_coordinates(table, column), bool), ops.ONE, 0)
    if start == 0:
        return np.concatenate([point, selector])
    return np.concatenate([selector, point])


def evaluate_batch(columns: np.ndarray, current, following, point: np.ndarray, field: Field
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(current values (c, 4), next values (d, 4)) of a batch: ``columns`` (w, 2^m) the table's base columns
    (committed, i.e. zero-padded to 2^m rows), ``current`` / ``following`` the column indices, ``point`` (m, 4)."""
    ops = field_ops(field)
    columns = np.asarray(columns, np.uint32)
    values = []
    for indices, weights in ((current, eq_table), (following, next_table)):
        if len(indices) == 0:
            values.append(np.zeros((0, 4), np.uint32))
            continue
        table = weights(point, None, field)
        values.append(np.stack([ops.ef_dot_base(columns[c], table) for c in indices]).reshape(-1, 4))
    return values[0], values[1]


@dataclass(frozen=True)
class StackedClaims:
    """The claims as weights on the stacked polynomial: eq claims at ``eq_points`` (a, n, 4) batched by alpha's
    ``eq_powers`` (a,); next-row claims at ``next_points`` (b, n, 4) over ``next_windows`` (b, 2) batched by
    ``next_powers`` (b,); ``n_claims`` = a + b (the OOD claims take the powers from there)."""

    eq_points: np.ndarray
    eq_powers: np.ndarray
    next_points: np.ndarray
    next_windows: np.ndarray
    next_powers: np.ndarray

    @property
    def n_claims(self) -> int:
        return len(self.eq_powers) + len(self.next_powers)


def stacked_claims(stacked: StackedLayout, protocol: TablesProtocol, points, field: Field) -> StackedClaims:
    """The ``StackedClaims`` of ``protocol`` with batch b opened at ``points[b]`` (m_b, 4)."""
    n = stacked.num_variables
    eq_points, eq_powers, next_points, next_windows, next_powers = [], [], [], [], []
    for term in claim_terms(stacked, protocol):
        lifted = lift_point(stacked, term.table, term.column, points[term.batch], field)
        if term.next:
            next_points.append(lifted)
            next_windows.append(stacked.window(term.table))
            next_powers.append(term.power)
        else:
            eq_points.append(lifted)
            eq_powers.append(term.power)
    return StackedClaims(np.asarray(eq_points, np.uint32).reshape(-1, n, 4), np.asarray(eq_powers, np.int64),
                         np.asarray(next_points, np.uint32).reshape(-1, n, 4),
                         np.asarray(next_windows, np.int64).reshape(-1, 2), np.asarray(next_powers, np.int64))


def column_descriptors(stacked: StackedLayout, table: int, current, following) -> np.ndarray:
    """(k, 3) ints (offset, log_stride, next) of a batch's claims on the stacked polynomial, current columns then
    next ones (``Backend.evaluate_columns``): column c's row i lies at offset + (i << log_stride) (``stacking``:
    stride 1 in the suffix layout, 2^(n - m) in the prefix one)."""
    m = stacked.table_log_rows[table]
    log_stride = 0 if stacked.layout == "suffix" else stacked.num_variables - m
    rows = [(stacked.first_index(table, c), log_stride, 0) for c in current]
    rows += [(stacked.first_index(table, c), log_stride, 1) for c in following]
    return np.asarray(rows, np.int64).reshape(-1, 3)
