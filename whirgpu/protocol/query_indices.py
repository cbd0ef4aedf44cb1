"""STIR query indices drawn from the transcript (whir-spec.md §6.3; [M] ``src/whir/utils.rs``).

Contract: ``sample_query_indices(challenger, domain_size, folding_factor, num_queries)`` returns the sorted,
de-duplicated indices into the folded domain of size D >> k (so possibly fewer than ``num_queries``), drawing
them exactly as the reference does. With L = log2(D >> k) and B = 20 bits per call
(min(F::bits() - 1, 20), F = BabyBear):

- q·L <= B: one ``sample_bits(q·L)``, cut LSB-first into q chunks of L bits;
- else if ⌊B/L⌋ >= 2: batches of ⌊B/L⌋ queries (the last one smaller), one ``sample_bits(batch·L)`` each,
  cut the same way;
- else: one ``sample_bits(L)`` per query.

L = 0 (a folded domain of one point) falls in the first case: one ``sample_bits(0)`` call that still consumes
a challenger element, and every index is 0. So does q = 0. The challenger needs only ``sample_bits(bits) -> int``.

``distinct_query_indices`` is the p3-whir profile's sampler (upstream Plonky3 ``get_challenge_stir_queries``):
one ``sample_uniform_bits(L)`` per draw, a draw equal to an earlier one dropped, until min(q, D >> k) distinct
indices exist, then sorted. L = 0 takes no sample at all (``sample_uniform_bits(0)`` is 0 without one).
"""

from __future__ import annotations

from typing import Protocol

from whirgpu.errors import ConfigError

MAX_BITS_PER_CALL = 20  # min(BabyBear::bits() - 1 = 30, 20)


class BitSampler(Protocol):
    def sample_bits(self, bits: int) -> int: ...


class UniformBitSampler(Protocol):
    def sample_uniform_bits(self, bits: int) -> int: ...


def _unpack(bits_value: int, count: int, log_size: int, size: int) -> list[int]:
    mask = (1 << log_size) - 1
    out = []
    for _ in range(count):
        out.append((bits_value & mask) % size)
        bits_value >>= log_size
    return out


def sample_query_indices(
    challenger: BitSampler, domain_size: int, folding_factor: int, num_queries: int
) -> list[int]:
    """Sorted unique indices in [0, domain_size >> folding_factor)."""
    folded_size = folded_domain_size(domain_size, folding_factor, num_queries)
    log_size = folded_size.bit_length() - 1

    total_bits = num_queries * log_size
    queries: list[int] = []
    if total_bits <= MAX_BITS_PER_CALL:
        queries = _unpack(challenger.sample_bits(total_bits), num_queries, log_size, folded_size)
    else:
        per_batch = MAX_BITS_PER_CALL // log_size  # log_size >= 1 here, as total_bits > 0
        if per_batch >= 2:
            remaining = num_queries
            while remaining > 0:
                batch = min(remaining, per_batch)
                queries.extend(_unpack(challenger.sample_bits(batch * log_size), batch, log_size, folded_size))
                remaining -= batch
        else:
            # Not masked or reduced again: sample_bits(L) is already below 2^L.
            queries = [challenger.sample_bits(log_size) for _ in range(num_queries)]
    return sorted(set(queries))


def distinct_query_indices(
    challenger: UniformBitSampler, domain_size: int, folding_factor: int, num_queries: int
) -> list[int]:
    """min(num_queries, domain_size >> folding_factor) distinct indices into the folded domain, ascending."""
    folded_size = folded_domain_size(domain_size, folding_factor, num_queries)
    log_size = folded_size.bit_length() - 1
    target = min(num_queries, folded_size)
    distinct = getattr(challenger, "distinct_uniform_bits", None)
    if distinct is not None:  # the host challenger's: the same draws, compiled where it can
        return sorted(distinct(log_size, target))
    seen: set[int] = set()
    while len(seen) < target:
        seen.add(challenger.sample_uniform_bits(log_size))
    return sorted(seen)


def folded_domain_size(domain_size: int, folding_factor: int, num_queries: int) -> int:
    """``domain_size >> folding_factor``, the size of the domain query indices are drawn from, once the three
    arguments are checked (a ``ConfigError`` naming the bad one: sizes positive ints, the folded size a power of
    two; a GPU's query sampler checks with it as the host's does)."""
    if isinstance(domain_size, bool) or not isinstance(domain_size, int) or domain_size < 1:
        raise ConfigError(f"domain_size must be a positive power of two, got {domain_size!r}")
    if isinstance(folding_factor, bool) or not isinstance(folding_factor, int) or folding_factor < 0:
        raise ConfigError(f"folding_factor must be a non-negative integer, got {folding_factor!r}")
    if isinstance(num_queries, bool) or not isinstance(num_queries, int) or num_queries < 0:
        raise ConfigError(f"num_queries must be a non-negative integer, got {num_queries!r}")
    folded_size = domain_size >> folding_factor
    if folded_size < 1 or folded_size & (folded_size - 1):
        raise ConfigError(
            f"the folded domain {domain_size} >> {folding_factor} = {folded_size} is not a positive power of two"
        )
    return folded_size
