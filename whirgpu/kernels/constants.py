"""Generated shader pseudo-libraries: constant tables rendered from Python, never typed into a shader.

A shader names one in its header like a library file (``// requires: poseidon2_constants``); ``compose`` asks
``render(name, lang)`` for its text instead of reading a file. Contracts of the tables:

- ``poseidon2_constants``: the counts ``P2_WIDTH``, ``P2_RATE``, ``P2_EXTERNAL_HALF_ROUNDS``,
  ``P2_INTERNAL_ROUNDS`` and the round-constant table layout ``P2_RC_INTERNAL_AT``, ``P2_RC_VEC4S``. The
  round constants themselves are not in the source: kernels read them from a binding holding
  ``poseidon2_rc_table()`` (WGSL: a read-only storage buffer, because a ``var<private>`` copy, or a ``const``
  array that naga copies to function memory at each dynamic index, kept Poseidon2 in local memory; MSL: a
  ``constant`` address-space buffer at the same slot). All constants are the whir-p3
  ``Poseidon2Constants.smallrng(1)`` values as Montgomery words in [0, P).
- ``poseidon2_rc_table()`` (vec4<u32> rows): rows [0, 4 * P2_EXTERNAL_HALF_ROUNDS) are the initial external
  rounds, the next as many the terminal ones (round r, counting terminal rounds after the initial ones, lanes
  4q..4q+3 at row 4r + q), then row ``P2_RC_INTERNAL_AT + r`` holds internal round r's constant in lane 0 (other
  lanes 0); rows ``P2_RC_DIAG_AT`` .. + 4 hold the internal diagonal V (Montgomery form, lanes 4q..4q+3 in row
  q); ``P2_RC_VEC4S`` rows in all.
- ``poseidon2_24_constants``: the same for the width-24 permutation (p3-whir's leaf sponge), named ``P24_WIDTH``,
  ``P24_RATE`` (16), ``P24_EXTERNAL_HALF_ROUNDS``, ``P24_INTERNAL_ROUNDS``, ``P24_SBOX_DEGREE``,
  ``P24_RC_INTERNAL_AT``, ``P24_RC_DIAG_AT``, ``P24_RC_VEC4S``; kernels bind ``poseidon2_rc_table(field, 24)``
  (constants: ``Poseidon2Constants.smallrng_16_24(field)[1]``) as ``p24_rc``. The S-box degree is the field's
  and equals the width-16 one (the shared ``p2_sbox`` reads ``P2_SBOX_DEGREE``; rendering checks the two agree).
- ``poseidon2_rc_table(field, width)`` in general: ``width // 4`` vec4 rows per external round (initial rounds,
  then terminal ones: round r, lanes 4q..4q+3 at row ``(width // 4) r + q``), then one row per internal round
  (constant in lane 0), then ``width // 4`` rows of the diagonal; ``rc_layout(field, width)`` gives the offsets.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..ref import field_np as fnp
from ..ref import poseidon2 as ref_p2

P2_RC_INTERNAL_AT = 8 * ref_p2.N_EXTERNAL_HALF  # rows of the external rounds (4 vec4 rows per round)
P2_RC_DIAG_AT = P2_RC_INTERNAL_AT + ref_p2.N_INTERNAL
P2_RC_VEC4S = P2_RC_DIAG_AT + ref_p2.WIDTH // 4


WIDTHS = (16, 24)


def _instance(field_name: str, width: int = 16):
    """(params, constants) of the width-``width`` permutation the kernels use for ``field_name``: p3-whir's
    ``smallrng_16_24`` pair (its width-16 BabyBear constants are whir-p3's SmallRng(1) ones)."""
    from ..field import field_by_name
    from ..ref.poseidon2_constants import Poseidon2Constants

    if width not in WIDTHS:
        raise ValueError(f"no Poseidon2 kernels of width {width}; widths: {WIDTHS}")
    consts = Poseidon2Constants.smallrng_16_24(field_by_name(field_name))[WIDTHS.index(width)]
    return consts.params, consts


def rc_layout(field_name: str = "babybear", width: int = 16) -> tuple[int, int, int]:
    """(internal rounds' first row, diagonal's first row, rows in all) of ``field_name``'s width-``width`` table:
    (P2_RC_INTERNAL_AT, P2_RC_DIAG_AT, P2_RC_VEC4S) at width 16, the P24_ names at 24."""
    params, _ = _instance(field_name, width)
    internal_at = params.rounds_full * (params.width // 4)  # width / 4 vec4 rows per external round, both halves
    return internal_at, internal_at + params.rounds_partial, internal_at + params.rounds_partial + params.width // 4


def poseidon2_rc_table(field_name: str = "babybear", width: int = 16) -> np.ndarray:
    """The round-constant table of ``field_name``'s width-``width`` permutation: (rows * 4,) uint32 Montgomery
    words (layout in the module doc)."""
    params, consts = _instance(field_name, width)
    ops = fnp.field_ops(params.field)
    internal = np.zeros((params.rounds_partial, 4), np.uint32)
    internal[:, 0] = consts.internal
    diagonal = ops.to_monty(np.asarray(params.diagonal, np.uint64)).astype(np.uint32)
    return np.concatenate([np.asarray(consts.external_initial, np.uint32).reshape(-1),
                           np.asarray(consts.external_terminal, np.uint32).reshape(-1), internal.reshape(-1),
                           diagonal])


def _scalar(lang: str, name: str, value: int) -> str:
    if lang == "wgsl":
        return f"const {name}: u32 = {int(value)}u;"
    return f"constant constexpr uint {name} = {int(value)}u;"


def render_poseidon2_constants(lang: str, field_name: str = "babybear") -> str:
    """``field_name``'s width-16 Poseidon2 counts and table layout for ``lang`` ('wgsl' or 'msl'), one declaration
    per line. ``P2_HALVING_DIAGONAL`` 1: BabyBear's internal layer as adds and exact halvings; 0: products by the
    diagonal the table holds (any field)."""
    if lang not in ("wgsl", "msl"):
        raise ValueError(f"unknown shader language {lang!r}")
    params, _ = _instance(field_name)
    internal_at, diag_at, vec4s = rc_layout(field_name)
    lines = [
        f"// generated by whirgpu.kernels.constants: {params.name} (Montgomery words)",
        _scalar(lang, "P2_WIDTH", params.width),
        _scalar(lang, "P2_RATE", ref_p2.RATE),
        _scalar(lang, "P2_EXTERNAL_HALF_ROUNDS", params.rounds_full // 2),
        _scalar(lang, "P2_INTERNAL_ROUNDS", params.rounds_partial),
        _scalar(lang, "P2_SBOX_DEGREE", params.sbox_degree),
        _scalar(lang, "P2_HALVING_DIAGONAL", int(field_name == "babybear")),
        _scalar(lang, "P2_RC_INTERNAL_AT", internal_at),
        _scalar(lang, "P2_RC_DIAG_AT", diag_at),
        _scalar(lang, "P2_RC_VEC4S", vec4s),
    ]
    return "\n".join(lines) + "\n"


def render_poseidon2_24_constants(lang: str, field_name: str = "babybear") -> str:
    """``field_name``'s width-24 Poseidon2 counts and table layout (the P24_ names) for ``lang``. Its internal
    layer is always the product by the table's diagonal."""
    if lang not in ("wgsl", "msl"):
        raise ValueError(f"unknown shader language {lang!r}")
    params, _ = _instance(field_name, 24)
    if params.sbox_degree != _instance(field_name, 16)[0].sbox_degree:
        raise ValueError(f"{field_name}: the width-24 S-box differs from the width-16 one (p2_sbox serves both)")
    internal_at, diag_at, vec4s = rc_layout(field_name, 24)
    lines = [
        f"// generated by whirgpu.kernels.constants: {params.name} (Montgomery words)",
        _scalar(lang, "P24_WIDTH", params.width),
        _scalar(lang, "P24_RATE", ref_p2.WIDE_RATE),
        _scalar(lang, "P24_EXTERNAL_HALF_ROUNDS", params.rounds_full // 2),
        _scalar(lang, "P24_INTERNAL_ROUNDS", params.rounds_partial),
        _scalar(lang, "P24_SBOX_DEGREE", params.sbox_degree),
        _scalar(lang, "P24_RC_INTERNAL_AT", internal_at),
        _scalar(lang, "P24_RC_DIAG_AT", diag_at),
        _scalar(lang, "P24_RC_VEC4S", vec4s),
    ]
    return "\n".join(lines) + "\n"


GENERATED: dict[str, Callable[[str, str], str]] = {
    "poseidon2_constants": render_poseidon2_constants,
    "poseidon2_24_constants": render_poseidon2_24_constants,
}


def render(name: str, lang: str, field_name: str = "babybear") -> str:
    """The text of generated pseudo-library ``name`` for ``lang`` and ``field_name``."""
    return GENERATED[name](lang, field_name)
