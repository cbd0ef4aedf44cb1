"""``whirgpu bench``: the benchmark grid, calibration and per-kernel fractions (see ``grid``, ``cli``)."""
