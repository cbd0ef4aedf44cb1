"""Device limits the user lowers, and the byte-count syntax they are given in.

- ``parse_bytes``: the syntax of ``WHIRGPU_MAX_GPU_BYTES`` (``max_gpu_bytes_from_env``) and
  ``WHIRGPU_MAX_BINDING_BYTES`` (``1073741824``, ``512M``, ``8G``, ``1.5GiB``: suffixes are powers of 1024).
- ``WHIRGPU_MAX_BINDING_BYTES`` / ``--max-binding``: the storage-binding limit every GPU runtime (wgpu, dawn, metal,
  msl-cpu) uses, lowered to reproduce a small-binding device (128 MiB: WebGPU's default
  ``maxStorageBufferBindingSize``, Chrome's and many integrated GPUs') on a large one. ``resolve_binding`` gives a
  runtime its limit: a constructor's ``max_binding_bytes`` wins over ``--max-binding`` (``binding_option``, set
  by the CLI for one command), which wins over the environment; never above the device's own limit. A value from
  the option or the environment must be a multiple of 4 bytes (WebGPU binding sizes are) and at least
  ``MIN_BINDING_BYTES``; a constructor argument is taken as given (tests go down to a few hundred bytes).

Imports nothing of whirgpu but its errors: the runtimes, the planner and the CLI all use it.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Callable, Iterator

from ..errors import ConfigError

MAX_GPU_BYTES_ENV = "WHIRGPU_MAX_GPU_BYTES"
MAX_BINDING_ENV = "WHIRGPU_MAX_BINDING_BYTES"
MAX_BINDING_OPTION = "--max-binding"
MAX_BINDING_ARGUMENT = "max_binding_bytes"  # a runtime constructor's argument, as binding_lowered_by names it
# 4 KiB: a window of 256 extension-field elements, aligned to any WebGPU offset alignment (at most 256 bytes).
# Smaller limits are a test device's, set through the constructor.
MIN_BINDING_BYTES = 4096

_UNITS = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}
_option: tuple[int, str] | None = None  # (bytes, text as given) while the CLI's --max-binding is in force


def max_gpu_bytes_from_env() -> int | None:
    """``WHIRGPU_MAX_GPU_BYTES`` parsed (``parse_bytes``), or None when unset or empty."""
    text = os.environ.get(MAX_GPU_BYTES_ENV, "").strip()
    return parse_bytes(text) if text else None


def parse_bytes(text: str, what: str = MAX_GPU_BYTES_ENV) -> int:
    """A positive byte count: an integer or decimal with an optional K, M, G or T suffix (powers of 1024;
    ``B``, ``iB`` accepted, case ignored): ``1073741824``, ``512M``, ``8G``, ``1.5GiB``. ConfigError naming
    ``what`` and the text otherwise."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?)(i?b)?\s*", str(text), re.IGNORECASE)
    if match is None or (match.group(3) and match.group(3).lower() == "ib" and not match.group(2)):
        raise ConfigError(f"{what}={text!r} is not a byte count: give an integer with an optional K, M, G or T "
                          "suffix (powers of 1024), e.g. 536870912, 512M or 1.5GiB")
    value = int(float(match.group(1)) * (1 << _UNITS[match.group(2).lower()]))
    if value <= 0:
        raise ConfigError(f"{what}={text!r} must be at least 1 byte")
    return value


def parse_binding_bytes(text: str, what: str = MAX_BINDING_ENV) -> int:
    """A storage-binding limit in ``parse_bytes`` syntax: a multiple of 4 bytes, at least ``MIN_BINDING_BYTES``.
    ConfigError naming ``what``, the text and the rule otherwise."""
    value = parse_bytes(text, what)
    if value % 4 or value < MIN_BINDING_BYTES:
        raise ConfigError(f"{what}={text!r} is {value} bytes: a storage-binding limit must be a multiple of 4 bytes "
                          f"and at least MIN_BINDING_BYTES = {MIN_BINDING_BYTES} bytes")
    return value


@contextmanager
def binding_option(text: str | None) -> Iterator[None]:
    """``--max-binding TEXT`` in force for the body (None: nothing changes); parsed before the body runs, so a bad
    value is a ConfigError naming the option."""
    global _option
    saved = _option
    if text is not None:
        _option = (parse_binding_bytes(text, MAX_BINDING_OPTION), text)
    try:
        yield
    finally:
        _option = saved


def binding_override() -> tuple[int, str] | None:
    """(bytes, what set them: ``--max-binding`` or ``WHIRGPU_MAX_BINDING_BYTES``) the user asks the runtimes to
    lower their storage-binding limit to, or None. A bad environment value is a ConfigError."""
    if _option is not None:
        return _option[0], MAX_BINDING_OPTION
    text = os.environ.get(MAX_BINDING_ENV, "").strip()
    return (parse_binding_bytes(text), MAX_BINDING_ENV) if text else None


@dataclass(frozen=True)
class BindingLimit:
    """The storage-binding limit a runtime uses (``size`` bytes), the device's own (``device`` bytes) and what
    lowered it (``lowered_by``: ``max_binding_bytes``, ``--max-binding`` or ``WHIRGPU_MAX_BINDING_BYTES``; ""
    when ``size`` is the device's)."""

    size: int
    device: int
    lowered_by: str = ""

    def apply(self, limits):
        """``limits`` (a DeviceLimits carrying the device's own binding limit) as the runtime reports them."""
        return replace(limits, max_storage_binding_size=self.size, binding_lowered_by=self.lowered_by,
                       device_storage_binding_size=self.device if self.lowered_by else 0)


def resolve_binding(device_limit: int, explicit: int | None = None) -> BindingLimit:
    """The binding limit of a runtime on a device whose own limit is ``device_limit`` bytes: ``explicit`` (the
    constructor's ``max_binding_bytes``; None or 0: not given), else ``binding_override()``, never above the
    device's limit (a larger request leaves the device's)."""
    device_limit = int(device_limit)
    wanted = (int(explicit), MAX_BINDING_ARGUMENT) if explicit else binding_override()
    if wanted is None or wanted[0] >= device_limit:
        return BindingLimit(device_limit, device_limit)
    return BindingLimit(wanted[0], device_limit, wanted[1])


def lowered_note(lowered_by: str, device: int, fmt: Callable[[int], str]) -> str:
    """`` (lowered by WHAT; device: SIZE)`` after a lowered binding limit, sizes written by ``fmt``; "" when
    ``lowered_by`` is empty."""
    return f" (lowered by {lowered_by}; device: {fmt(device)})" if lowered_by else ""


def binding_text(limits, fmt: Callable[[int], str]) -> str:
    """``limits.max_storage_binding_size`` (a DeviceLimits) written by ``fmt``, with ``lowered_note`` when it was
    lowered: ``128 MiB (lowered by WHIRGPU_MAX_BINDING_BYTES; device: 2 GiB)``."""
    return fmt(limits.max_storage_binding_size) + lowered_note(limits.binding_lowered_by,
                                                               limits.device_storage_binding_size, fmt)
