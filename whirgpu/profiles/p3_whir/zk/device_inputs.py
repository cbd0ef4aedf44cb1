"""A hiding proof's host inputs for its device sessions (``DeviceInputs``): everything the sessions write that
differs from proof to proof, named, so that a recording of the sessions can be replayed with another proof's
inputs (``device_opening``).

Contract: ``DeviceInputs.draw(config, field, polynomial, points, rng)`` forks ``rng`` as the hiding prover does
(the commitment fork, then the opening fork) and keeps the two forks' keys: every mask is drawn from them on the
device (``device_draws``). ``words(source)`` gives the words of a named input, ``source`` one of: ("table",
start, stop) the polynomial's words; ("points",) every point flattened, ("points", start, stop) a run of them;
("key", "commitment") / ("key", "opening") a fork's 8 key words (``StdRng.key``).
"""

from __future__ import annotations

import numpy as np

from ....field import Field
from .config import ZkWhirConfig


class DeviceInputs:
    def __init__(self, config: ZkWhirConfig, field: Field, polynomial: np.ndarray, points: np.ndarray, keys: dict):
        self.config, self.field = config, field
        self.polynomial = polynomial
        self.points = np.ascontiguousarray(points, np.uint32).reshape(-1)
        self.keys = keys

    @classmethod
    def draw(cls, config: ZkWhirConfig, field: Field, polynomial: np.ndarray, points: np.ndarray, rng) \
            -> DeviceInputs:
        """Fork ``rng`` as the prover does (the commitment's fork, then the opening's) and keep their keys."""
        commitment = np.array(rng.fork().key, np.uint32)
        return cls(config, field, polynomial, points, {"commitment": commitment,
                                                       "opening": np.array(rng.fork().key, np.uint32)})

    def words(self, source: tuple) -> np.ndarray:
        kind = source[0]
        if kind == "table":
            return self.polynomial[source[1]:source[2]]
        if kind == "points":
            return self.points if len(source) == 1 else self.points[source[1]:source[2]]
        if kind == "key" and len(source) == 2 and source[1] in self.keys:
            return self.keys[source[1]]
        raise KeyError(f"no input {source!r}")
