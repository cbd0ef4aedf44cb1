"""Correctness while benchmarking: at one grid point every backend must prove the same bytes, and they must verify.

Proofs are a deterministic function of (configuration, polynomial, statement) (PoW takes the smallest nonce), so
rows are compared by the sha256 of their binary proof file. The reference row is cpu's when it has a proof (the
numpy oracle), else the first row with one; a row that differs from it gets an error. Only the reference proof
is verified, which covers every row identical to it.
"""

from __future__ import annotations

from typing import Callable

from ..errors import WhirGpuError
from .results import Row


def reference_row(rows: list[Row]) -> Row | None:
    """cpu's row when it has a proof, else the first row with one; None when no row has a proof."""
    with_proof = [row for row in rows if row.proof_sha256]
    cpu = [row for row in with_proof if row.backend == "cpu"]
    return (cpu or with_proof or [None])[0]


def _fail_once(row: Row, message: str) -> None:
    if message not in (row.error or ""):  # results checked again after a --load keep one copy of each error
        row.fail(message)


def compare_proofs(rows: list[Row]) -> Row | None:
    """Give every row whose proof differs from the reference row's an error; return the reference row."""
    reference = reference_row(rows)
    if reference is None:
        return None
    for row in rows:
        if row.proof_sha256 and row.proof_sha256 != reference.proof_sha256:
            _fail_once(row, f"proof differs from {reference.backend}'s (sha256 {row.proof_sha256[:12]} vs "
                            f"{reference.proof_sha256[:12]})")
    return reference


def record_verification(rows: list[Row], reference: Row, verify: Callable[[], None]) -> None:
    """Run ``verify`` (raises on a bad proof) for the reference's proof; set ``verified`` on every row with the
    same bytes, and an error on them when it was rejected."""
    try:
        verify()
        accepted, reason = True, ""
    except WhirGpuError as exc:
        accepted, reason = False, f"proof rejected by the verifier: {exc}"
    except Exception as exc:  # noqa: BLE001 - a verifier crash is reported as a failed check, not a lost grid
        accepted, reason = False, f"the verifier failed: {type(exc).__name__}: {exc}"
    for row in rows:
        if row.proof_sha256 == reference.proof_sha256:
            row.verified = accepted
            if not accepted:
                _fail_once(row, reason)
