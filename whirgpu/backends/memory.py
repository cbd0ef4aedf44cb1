"""The device memory a proof needs, buffer by buffer, before anything is allocated.

``plan_buffers(config)`` lists every buffer the GPU backend holds at its peak (the first round, when the initial
table, its codeword and tree, the weights and the first folded table coexist), with the size of its largest
single binding. The device planner compares these against ``DeviceLimits``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..protocol.params import WhirConfig

DIGEST_BYTES = 32
EF_BYTES = 16
BASE_BYTES = 4


@dataclass(frozen=True)
class BufferNeed:
    """One buffer: ``nbytes`` allocated, of which at most ``binding_bytes`` are bound at once."""

    name: str
    nbytes: int
    binding_bytes: int


def _tree_bytes(height: int) -> int:
    return (2 * height - 1) * DIGEST_BYTES


def plan_buffers(config: WhirConfig) -> list[BufferNeed]:
    """The buffers alive at the proof's peak (commit of round 0 through the first fold)."""
    n = config.num_variables
    k0 = config.fold(0)
    log_height = n + config.starting_log_inv_rate - k0
    entries = 1 << n
    codeword = (1 << log_height) * (1 << k0) * BASE_BYTES
    needs = [
        BufferNeed("table (base)", entries * BASE_BYTES, entries * BASE_BYTES),
        BufferNeed("codeword 0", codeword, codeword),
        BufferNeed("merkle tree 0", _tree_bytes(1 << log_height), (1 << log_height) * DIGEST_BYTES),
        BufferNeed("weights", entries * EF_BYTES, entries * EF_BYTES),
        BufferNeed("folded table", entries // 2 * EF_BYTES, entries // 2 * EF_BYTES),
        BufferNeed("folded weights", entries // 2 * EF_BYTES, entries // 2 * EF_BYTES),
    ]
    return needs


def peak_bytes(config: WhirConfig) -> int:
    """Total device memory at the proof's peak."""
    return sum(need.nbytes for need in plan_buffers(config))
