"""A schedule as plain text, for people: the table layout every profile's schedule text uses.

Contract: ``table(header, rows)`` aligns columns (the first left, the rest right); ``pow2(x)`` names a power of two
as ``2^k``. Each profile renders its own schedule with them (``profiles/whir_p3_metal/schedule_text``,
``profiles/p3_whir/schedule_text``).
"""

from __future__ import annotations


def pow2(x: int) -> str:
    return f"2^{x.bit_length() - 1}"


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(header[c]), *(len(row[c]) for row in rows)) for c in range(len(header))]
    fmt = "  ".join("{:<%d}" % widths[0] if c == 0 else "{:>%d}" % widths[c] for c in range(len(header)))
    return [fmt.format(*header), "  ".join("-" * w for w in widths), *(fmt.format(*row) for row in rows)]
