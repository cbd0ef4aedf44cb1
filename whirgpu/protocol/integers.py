"""Integer parameter values as a caller or a document gives them.

Contract: ``as_int`` reads an integer parameter (anything ``operator.index`` accepts except bools; floats and
strings refused) or raises ``ConfigError`` naming the parameter; ``short`` prints an integer of any size in a
bounded one-line message. Ranges are for the modules that know them (``folding``, ``config``).
"""

from __future__ import annotations

import operator
from typing import Any

from whirgpu.errors import ConfigError


def as_int(name: str, value: Any) -> int:
    """An integer parameter (bools and floats refused), or ConfigError."""
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ConfigError(f"{name} must be an integer, got {value!r}") from None


def short(x: int) -> str:
    """An integer for a one-line message: a hostile document may declare one of thousands of digits."""
    text = str(x)
    return text if len(text) <= 24 else f"{text[:12]}...({len(text)} digits)"
