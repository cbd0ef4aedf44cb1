"""A hiding proof's host inputs for its one device session (``DeviceInputs``): everything the session writes that
differs from proof to proof, computed before it from the generator, the polynomial and the points, and named, so
that a recording of the session can be replayed with another proof's inputs (``device_opening``).

Contract: ``DeviceInputs.draw(config, field, polynomial, points, rng)`` consumes ``rng`` as the hiding prover does
(the commitment fork, then the opening fork); every draw of the opening fork (``draws.draw_opening``, the mask
oracles they fix committed in place) is made on first use of ``draws`` or an input that needs them. ``words(source)`` gives the words of a named input, ``source`` one of:
("table", start, stop) the polynomial's words; ("points",) every point flattened, ("points", start, stop) a run
of them; ("host", name, *indices) a derived array: "randomness" (base, oracle_randomness[0] << k0),
"randomness_ef" (the same as EF), per batch b "batch_matrix" (its mask oracle's coefficients, ``mask_matrix``
before the DFT: domain rows of next_pow2(k) EF entries, column c mask c ‖ its randomness ‖ zeros, the padding
columns zero, rows in bit-reversed order: what ``Commitments.commit_matrix`` takes), "mu" (4,), "template_head"
/ "template_tail" (round j's template's first entry / the others), "mask" and "mask_randomness" (round j's); per
switch r "fresh", "pad", "switch_randomness"; the base case's "base_coefficients" (next_pow2(message +
randomness) rows of message ‖ randomness ‖ zeros), "base_message", "base_randomness", per group g
"group_matrix" (as "batch_matrix", the group's fresh masks), "group_message" and "group_randomness" (mask i of the
group). ``mu``: each batch's mu tilde. No mask oracle is committed on the host: the device commits them all.
"""

from __future__ import annotations

import numpy as np

from ....field import Field
from ....ref.field_np import field_ops
from ....ref.ntt import bit_reverse_permutation
from ....ref.rng import random_base
from .config import ZkWhirConfig
from .draws import draw_opening
from .sumcheck import endpoints, round_plan


def pow2_at_least(n: int) -> int:
    return 1 << (int(n) - 1).bit_length() if n > 1 else 1


def coefficient_matrix(messages: np.ndarray, randomness: np.ndarray, domain_size: int) -> np.ndarray:
    """(domain, next_pow2(w), 4): column c = messages[c] ‖ randomness[c] ‖ zeros (w columns, the rest zero), rows
    in bit-reversed order (``Commitments.commit_matrix``'s input; ``oracles.mask_matrix`` before its DFT)."""
    width, m = messages.shape[:2]
    t = randomness.shape[1]
    coeffs = np.zeros((domain_size, pow2_at_least(width), 4), np.uint32)
    coeffs[:m, :width] = np.swapaxes(messages, 0, 1)
    coeffs[m:m + t, :width] = np.swapaxes(randomness, 0, 1)
    return coeffs[bit_reverse_permutation(domain_size.bit_length() - 1)]


class _NoOracles:
    """A ``draws.OracleBuilder`` that commits nothing (the device commits the mask oracles)."""

    def submit(self, messages, randomness, domain_size):
        return None


class DeviceInputs:
    def __init__(self, config: ZkWhirConfig, field: Field, polynomial: np.ndarray, points: np.ndarray,
                 randomness: np.ndarray, fork):
        self.config, self.field = config, field
        self.polynomial = polynomial
        self.points = np.ascontiguousarray(points, np.uint32).reshape(-1)
        self.randomness = randomness
        self.randomness_ef = field_ops(field).ef_from_base(randomness)
        self._fork = fork
        self._drawn = False

    @classmethod
    def draw(cls, config: ZkWhirConfig, field: Field, polynomial: np.ndarray, points: np.ndarray, rng) \
            -> DeviceInputs:
        """Fork ``rng`` as the prover does (the commitment's randomness, then the opening's fork); the opening's
        draws are made from that fork on first use (``draws``): a replay writes the commitment's inputs and sets
        the device on it before the mask oracles are built."""
        randomness = random_base(rng.fork(), config.oracle_randomness[0] << config.fold(0), field)
        return cls(config, field, polynomial, points, randomness, rng.fork())

    @property
    def draws(self):
        if not self._drawn:
            self._draw()
        return self._draws

    def _draw(self) -> None:
        config, field = self.config, self.field
        ops = field_ops(field)
        draws = self._draws = draw_opening(config, field, self._fork, _NoOracles())
        self._drawn = True
        zero = ops.ef_from_base(ops.ZERO)
        self.mu, self.templates = [], []
        for draw in draws.batches:
            masks, k = draw.masks, draw.masks.shape[0]
            future = ops.ef_sum(np.stack([endpoints(ops, m) for m in masks]))
            self.mu.append(ops.ef_mul(ops.ef_from_base(ops.constant(pow(2, k - 1, ops.P))), future))
            # the templates without their eps * aux terms (the device adds those)
            self.templates.append(round_plan(ops, k, 0, zero, future, zero, masks, max(masks.shape[1], 3)).templates)
        self.batch_matrices = [coefficient_matrix(draw.masks, draw.randomness, config.sumcheck_mask.domain_size)
                               for draw in draws.batches]
        self.group_matrices = [coefficient_matrix(messages, randomness, group.shape.domain_size)
                               for (messages, randomness, _), group in zip(draws.base.groups, config.mask_groups())]
        message_len, randomness_len, _ = config.source_code()
        coefficients = np.zeros((pow2_at_least(message_len + randomness_len), 4), np.uint32)
        coefficients[:message_len] = draws.base.message
        coefficients[message_len:message_len + randomness_len] = draws.base.randomness
        self.base_coefficients = coefficients

    def words(self, source: tuple) -> np.ndarray:
        kind = source[0]
        if kind == "table":
            return self.polynomial[source[1]:source[2]]
        if kind == "points":
            return self.points if len(source) == 1 else self.points[source[1]:source[2]]
        if kind != "host":
            raise KeyError(f"no input {source!r}")
        name, at = source[1], source[2:]
        if name == "randomness":
            return self.randomness
        if name == "randomness_ef":
            return self.randomness_ef
        draws = self.draws
        if name == "batch_matrix":
            return self.batch_matrices[at[0]]
        if name == "mu":
            return self.mu[at[0]]
        if name == "template_head":
            return self.templates[at[0]][at[1]][0]
        if name == "template_tail":
            return self.templates[at[0]][at[1]][1:]
        if name == "mask":
            return draws.batches[at[0]].masks[at[1]]
        if name == "mask_randomness":
            return draws.batches[at[0]].randomness[at[1]]
        if name == "fresh":
            return draws.switches[at[0]].fresh
        if name == "pad":
            return draws.switches[at[0]].pad
        if name == "switch_randomness":
            return draws.switches[at[0]].mask_randomness
        if name == "base_coefficients":
            return self.base_coefficients
        if name == "base_message":
            return draws.base.message
        if name == "base_randomness":
            return draws.base.randomness
        if name == "group_matrix":
            return self.group_matrices[at[0]]
        if name == "group_message":
            return draws.base.groups[at[0]][0][at[1]]
        if name == "group_randomness":
            return draws.base.groups[at[0]][1][at[1]]
        raise KeyError(f"no input {source!r}")
