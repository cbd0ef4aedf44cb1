"""Backend selection: ``select_backend(name)`` returns a ready backend and the one-line reason it was chosen.

Names: ``cpu`` (the numpy reference, always available) and ``auto`` (the best available device, falling back
to the CPU and saying why). ``WHIRGPU_BACKEND`` overrides ``auto``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import BackendUnavailable
from .base import Backend, Commitment, DeviceBuffer, DeviceLimits, StorageMode
from .cpu import CpuBackend

BACKEND_NAMES = ("auto", "cpu")

__all__ = [
    "BACKEND_NAMES",
    "Backend",
    "BackendChoice",
    "Commitment",
    "CpuBackend",
    "DeviceBuffer",
    "DeviceLimits",
    "StorageMode",
    "select_backend",
]


@dataclass
class BackendChoice:
    """The backend a proof will use and why (one line, for the CLI and ``--json``)."""

    backend: Backend
    reason: str


def select_backend(name: str | Backend = "auto") -> BackendChoice:
    """Resolve a backend name (or pass a ready ``Backend`` through)."""
    if isinstance(name, Backend):
        return BackendChoice(name, "given by the caller")
    requested = name
    if name == "auto" and os.environ.get("WHIRGPU_BACKEND"):
        name = os.environ["WHIRGPU_BACKEND"]
        if name not in BACKEND_NAMES or name == "auto":
            raise BackendUnavailable(
                f"WHIRGPU_BACKEND={name!r} is not a backend; choose one of {', '.join(BACKEND_NAMES[1:])}"
            )
    if name == "cpu":
        reason = "requested" if requested == "cpu" else "WHIRGPU_BACKEND=cpu"
        return BackendChoice(CpuBackend(), reason)
    if name == "auto":
        return BackendChoice(CpuBackend(), "no GPU backend is available in this build; using the numpy reference")
    raise BackendUnavailable(f"unknown backend {name!r}; choose one of {', '.join(BACKEND_NAMES)}")
