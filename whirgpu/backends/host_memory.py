"""Host memory for a proof on the cpu backend: what it needs (a measured model) and what the host has.

- ``cpu_proof_bytes(config)``: an upper estimate of the peak bytes the numpy reference allocates proving
  ``config``. The first commitment dominates: its Merkle tree hashes 2^(n + rate - k0) rows through lane arrays
  (``BYTES_PER_LEAF``), over a codeword of 2^(n + rate) words and its NTT temporaries
  (``BYTES_PER_CODEWORD_WORD``); proof-of-work batches, transcript and interpreter stay under ``FIXED_BYTES``.
  Fitted with ``tracemalloc`` (numpy reports its allocations to it) at n = 14-20, folds 1-6, rates 1-3: the
  measured peaks were 0.5-0.8 of the estimate.
- ``available_bytes()``: the smaller of ``MemAvailable`` (/proc/meminfo) and the room left under a cgroup v2
  ``memory.max``; ``os.sysconf`` where there is no /proc; None when nothing says.
- ``check_cpu_proof(config)``: a ``DeviceOutOfMemory`` naming both sizes when the estimate exceeds what is
  available, so a proof that cannot finish is refused before it starts instead of failing after a minute.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import DeviceOutOfMemory

BYTES_PER_LEAF = 960
BYTES_PER_CODEWORD_WORD = 16
FIXED_BYTES = 64 << 20


def cpu_proof_bytes(config) -> int:
    """The estimated peak host bytes of one cpu proof of ``config`` (a ``WhirConfig`` or a ``P3WhirConfig``: the same
    codeword and tree sizes)."""
    log_domain = config.num_variables + config.starting_log_inv_rate
    log_rows = log_domain - config.fold(0)
    return (BYTES_PER_LEAF << log_rows) + (BYTES_PER_CODEWORD_WORD << log_domain) + FIXED_BYTES


def _meminfo_available(path: Path = Path("/proc/meminfo")) -> int | None:
    try:
        for line in path.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    try:
        limit = (root / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(0, int(limit) - int((root / "memory.current").read_text().strip()))
    except (OSError, ValueError):
        return None


def available_bytes() -> int | None:
    """Host memory a new allocation can still get, in bytes; None when the host does not say."""
    known = [b for b in (_meminfo_available(), _cgroup_room()) if b is not None]
    if not known:
        try:
            known = [os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")]
        except (ValueError, OSError, AttributeError):
            return None
    return min(known)


def check_cpu_proof(config, available: int | None = None) -> None:
    """Raise ``DeviceOutOfMemory`` when ``cpu_proof_bytes(config)`` exceeds ``available`` (None: measured now)."""
    available = available_bytes() if available is None else available
    needed = cpu_proof_bytes(config)
    if available is not None and needed > available:
        from .memory import sized  # noqa: PLC0415 - only an error needs the formatting

        params = config.params
        raise DeviceOutOfMemory(
            f"a cpu proof of n={params.num_variables} fold={params.folding_factor} "
            f"rate={params.starting_log_inv_rate} needs about {sized(needed)} of host memory; "
            f"{sized(available)} is available")
