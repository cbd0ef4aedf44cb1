"""What a table document's optional witness keys (``tables``, ``stacking``) must be, and the one call into the core's
verifier: ``tables/document.py`` uses both.

Contract:
- ``placements_tree(layout)`` / ``stacking_tree(layout)``: the oracle's ``stacking`` description (without the
  polynomial) of a ``StackedLayout`` (``stacking.plan_layout``): per table in placement order its committed arity,
  selector bits and, per column, slot, selector value, stacked index of row 0 and stride.
- ``check_witness(document)``: the witness copies of a ``P3TablesDocument``, after its proof verified: ``stacking``
  == the layout's description; the tables stacked == ``stacking.polynomial_canonical``; the stacked polynomial
  (from either key) committed to again == the document's commitment. ``ProofFormatError`` naming the key
  otherwise; nothing when neither key is present.
- ``verify_core(document)``: the core's ``verify_tables`` on the document's configuration, commitment, proof,
  schedule, layout and (prescribed) points; returns its ``TablesOpened`` (``points``, ``current``, ``next`` per
  batch, ``ood_points``).
"""

from __future__ import annotations

import numpy as np

from ....errors import ConfigError, ProofFormatError
from ....protocol.json_tree import first_difference
from ..document_checks import recommitted_root
from .document_checks import WITNESS_CONSTRUCTORS
from .stacking import StackedLayout, plan_layout

INDEX_MAPS = {"suffix": "stacked[(slot << m) + i] = col[i]  (m = committed log rows of the table)",
              "prefix": "stacked[(i << (n - m)) | bitrev_{n-m}(slot)] = col[i]  (selector_value = bitrev_{n-m}(slot))"}


def placements_tree(layout: StackedLayout) -> list:
    n = layout.num_variables
    out = []
    for order, placement in enumerate(layout.placements):
        m = placement.log_rows
        columns = [{"column": c.column, "selector_value": c.selector_value, "slot": c.slot,
                    "stacked_index_of_row_0": (c.slot << m) if layout.layout == "suffix" else c.selector_value,
                    "stacked_index_stride": 1 if layout.layout == "suffix" else 1 << (n - m)}
                   for c in placement.columns]
        out.append({"columns": columns, "committed_log_rows": m, "placement_order": order,
                    "selector_bits": n - m, "table": placement.table})
    return out


def stacking_tree(layout: StackedLayout, protocol) -> dict:
    """``stacking`` without ``polynomial_canonical``."""
    return {"committed_table_shapes": [{"num_variables": m, "width": s.columns}
                                       for s, m in zip(protocol.shapes, layout.table_log_rows)],
            "index_map": INDEX_MAPS[layout.layout], "layout": layout.layout, "num_variables": layout.num_variables,
            "placements": placements_tree(layout), "witness_constructor": WITNESS_CONSTRUCTORS[layout.layout]}


def layout_of(document) -> StackedLayout:
    try:
        return plan_layout(document.spec.protocol, document.config.folding_schedule[0], document.spec.layout)
    except ConfigError as exc:
        raise ProofFormatError(f"params: {exc}") from None


def check_witness(document) -> None:
    """The witness copies of ``document`` (see the module contract)."""
    if document.stacking is None and document.columns is None:
        return
    layout = layout_of(document)
    polynomial = document.polynomial
    if document.stacking is not None:
        where = first_difference(document.stacking, stacking_tree(layout, document.spec.protocol), "stacking")
        if where is not None:
            raise ProofFormatError(f"stacking disagrees with the placement the layout derives at {where}")
    if document.columns is not None:
        stacked = layout.stack(document.columns)
        if polynomial is not None and not np.array_equal(stacked, polynomial):
            first = int(np.flatnonzero(stacked != polynomial)[0])
            raise ProofFormatError(f"stacking.polynomial_canonical[{first}] is not the tables stacked")
        polynomial = stacked
    if layout.layout == "prefix":  # PrefixProver's leaf i holds the 2^k values that share the low n - k bits
        polynomial = polynomial.reshape(1 << layout.fold, -1).T.ravel()
    root = recommitted_root(polynomial, document.config, document.field)
    if not np.array_equal(root, document.commitment.roots[0]):
        key = "tables" if document.columns is not None else "stacking.polynomial_canonical"
        raise ProofFormatError(f"{key}: committing to the stacked polynomial gives another root than commitment's")


def verify_core(document):
    """The core verifier on ``document`` (see the module contract)."""
    from .verifier import verify_tables  # noqa: PLC0415

    return verify_tables(document.config, document.field, document.commitment, document.proof,
                         document.spec.protocol, document.spec.layout, document.points)
