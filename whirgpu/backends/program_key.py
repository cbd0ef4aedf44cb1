"""What makes two proofs share a launch program: the one decision of record-and-replay (``backends/gpu/replay``).

Two proofs share a program exactly when their ``ProgramKey``s are equal, so a key must hold every input that
changes a launch (a kernel, a binding, a params word, a workgroup count, a write's place) and nothing that only
changes the values the launches compute (the table's words, the points, the held root: a program's *inputs*).
The fields, and who fills them:
- ``prover``: the prover's class (the profile, and the kind of proof: one column, tables, a tables commitment);
- ``config``: the protocol configuration (arity, folding schedule, rates, grinding budgets, field where the
  profile fixes it);
- ``n_points``: the statement's points given to ``begin_proof`` (drawn openings count as their own field);
- ``field``, ``drawn_openings``: the p3-whir profile's field and the openings its transcript draws;
- ``stacked``, ``protocol``, ``prescribed``: a tables proof's stacked layout, its tables protocol (shapes and
  opening batches; a commitment's own bracket: the shapes only) and whether its points are prescribed;
- ``held_inputs``: each stacked table's held (shape, orientation) as the user gave it; ``residency``: the device
  storage of a held commitment an opening proves (``Backend.residency``);
- ``phase``: "proof", or "commit" for a tables commitment's own bracket;
- ``device``: the backend's binding and buffer limits, proof-of-work search range and storage policy
  (``GpuBackend`` fills it, ``on_device``).
A prover returns None instead of a key for a proof that must not be replayed (its launches depend on values:
claimed values given, Montgomery or device-table input, a table the upload would refuse).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class ProgramKey:
    """The inputs that fix every launch of a proof (module docstring); hashable, compared field by field."""

    prover: type
    config: Any
    n_points: int
    field: str | None = None
    drawn_openings: int = 0
    stacked: Any = None
    protocol: Any = None
    prescribed: bool | None = None
    held_inputs: tuple | None = None
    residency: tuple | None = None
    phase: str = "proof"
    device: tuple = ()

    def on_device(self, binding_limit: int, buffer_limit: int, pow_full_range: bool, storage: str) -> "ProgramKey":
        """This key with the backend's part filled in."""
        return replace(self, device=(int(binding_limit), int(buffer_limit), bool(pow_full_range), storage))

    def with_fields(self, **fields) -> "ProgramKey":
        """This key with a profile's own fields set (``dataclasses.replace``)."""
        return replace(self, **fields)
