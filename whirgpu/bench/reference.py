"""The Rust reference's proving times on the default grid, for ``--baseline`` and ``--reference``.

Source: the project's own measurements and the WHIR-on-Metal write-up, quoted with their provenance in
docs/PERFORMANCE.md ("The reference figures compared with"). Every figure is the median of 3 commit+prove runs
after one warm-up, in milliseconds, of whir-p3-metal's ``sweep N F R`` with the same parameters as ``GridPoint``
(BabyBear, security 100, pow_bits 16, capacity bound, initial reduction min(fold, 3)). Three columns:

- ``rust-16core``: the Rust CPU path measured by this project on 2026-11-21 on the host CPU of the GPU machine
  (16 cores of an Intel Xeon with AVX-512, built for x86-64-v4);
- ``rust-m1``: the Rust CPU path on an Apple M1 (8 cores, NEON), as published by the WHIR-on-Metal write-up;
- ``rust-m1-metal``: that write-up's Rust + Metal GPU path on the same M1, as published.

Proof-of-work grinding makes single figures noisy; they are anchors for ratios, not exact targets. Points
outside the default grid have no reference figures.
"""

from __future__ import annotations

from .grid import GridPoint

# --baseline / --reference column name -> what it measured, for notes and plot titles
COLUMNS = {
    "rust-16core": "Rust CPU on a 16-core Xeon (AVX-512, measured 2026-11-21)",
    "rust-m1": "Rust CPU on an Apple M1 (published)",
    "rust-m1-metal": "Rust + Metal GPU on an Apple M1 (published)",
}

# (n, fold, rate) -> (rust-16core, rust-m1, rust-m1-metal) in ms
_FIGURES = {
    (20, 1, 1): (325, 267, 171),
    (20, 1, 2): (1349, 453, 290),
    (20, 1, 3): (1087, 897, 483),
    (20, 2, 1): (318, 127, 75),
    (20, 2, 2): (265, 217, 122),
    (20, 2, 3): (1108, 414, 210),
    (20, 4, 1): (115, 49, 35),
    (20, 4, 2): (90, 89, 53),
    (20, 4, 3): (473, 200, 120),
    (22, 1, 1): (1329, 1174, 579),
    (22, 1, 2): (5074, 1938, 1092),
    (22, 1, 3): (9930, 3459, 1934),
    (22, 2, 1): (1067, 441, 287),
    (22, 2, 2): (976, 805, 484),
    (22, 2, 3): (4358, 1676, 897),
    (22, 3, 1): (327, 206, 138),
    (22, 3, 2): (1321, 381, 248),
    (22, 3, 3): (996, 897, 611),
    (22, 4, 1): (473, 166, 128),
    (22, 4, 2): (391, 322, 215),
    (22, 4, 3): (1772, 661, 530),
    (22, 6, 1): (210, 141, 98),
    (22, 6, 2): (284, 410, 327),
    (22, 6, 3): (1051, 1763, 1320),
    (24, 1, 1): (11064, 4153, 2463),
    (24, 2, 1): (4425, 1814, 1049),
    (24, 3, 1): (1117, 890, 531),
    (24, 4, 1): (1956, 978, 694),
    (24, 6, 1): (865, 588, 405),
}


def reference_ms(point: GridPoint, column: str) -> float | None:
    """The figure of ``column`` (a key of ``COLUMNS``) at ``point`` in ms; None off the default grid."""
    figures = _FIGURES.get((point.n, point.fold, point.rate))
    return None if figures is None else float(figures[list(COLUMNS).index(column)])
