"""Backend primitives side by side: one table per (primitive, size), one row per backend.

    pytest benchmarks/test_bench_primitives.py --benchmark-only [--bench-sizes 20,22,24] [--msl-cpu]

Inputs are the shapes of a proof's first (largest) round: a base table of 2^n entries with EF weights, committed
as 2^4 columns at rate 1/2, opened at 100 rows; eq weights of 2 points (the statement's and an OOD sample's).
``grind``'s size is its proof-of-work bits (``--bench-grind-bits``), not 2^n. Every timed call includes the
wait for the device; each result is then compared once with the cpu backend's (see conftest.py).
"""

from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

import numpy as np
import pytest

from whirgpu.backends.cpu import CpuBackend
from whirgpu.field import P
from whirgpu.protocol.transcript import DuplexChallenger

CPU = CpuBackend()
LOG_FOLDING = 4
LOG_INV_RATE = 1
N_QUERIES = 100
N_EQ_POINTS = 2
GRIND_ABSORBED = 5  # words observed before grinding, so the PoW base state is not the all-zero one


def _words(rng: np.random.Generator, shape) -> np.ndarray:
    """Uniform field elements as Montgomery words (every value in [0, p) is one)."""
    return rng.integers(0, P, size=shape, dtype=np.uint64).astype(np.uint32)


@lru_cache(maxsize=2)
def _inputs(size: int) -> SimpleNamespace:
    """The same inputs for every backend at one size (deterministic)."""
    rng = np.random.default_rng(1000 + size)
    log_folding = min(LOG_FOLDING, size)
    log_height = size - log_folding + LOG_INV_RATE
    return SimpleNamespace(
        table=_words(rng, (1 << size,)),
        weights=_words(rng, (1 << size, 4)),
        point=_words(rng, (size, 4)),
        r=_words(rng, (4,)),
        eq_points=_words(rng, (N_EQ_POINTS, size, 4)),
        eq_coefficients=_words(rng, (N_EQ_POINTS, 4)),
        log_folding=log_folding,
        log_height=log_height,
        indices=sorted(rng.integers(0, 1 << log_height, size=N_QUERIES).tolist()),
    )


def _info(primitive: str, size: int, **more) -> dict:
    return {"primitive": primitive, "log_size": size, **more}


def test_commit(backend, size, measure, references):
    """Reed-Solomon encode (NTT) and Merkle-commit a base table; the root is read back."""
    be, x = backend.backend, _inputs(size)
    table = be.upload(x.table)
    commitment = measure(backend, f"commit 2^{size}", lambda: be.commit(table, x.log_folding, x.log_height),
                         release=be.release,
                         extra=_info("commit", size, log_folding=x.log_folding, log_height=x.log_height))
    references.check(backend, ("commit", size), (commitment.root,),
                     lambda: (CPU.commit(CPU.upload(x.table), x.log_folding, x.log_height).root,))
    be.release(commitment, table)


def test_open_rows(backend, size, measure, references):
    """Gather N_QUERIES codeword rows and their Merkle paths of a committed table (committed untimed)."""
    be, x = backend.backend, _inputs(size)
    table = be.upload(x.table)
    commitment = be.commit(table, x.log_folding, x.log_height)
    rows, paths = measure(backend, f"open_rows 2^{size}", lambda: be.open_rows(commitment, x.indices),
                          extra=_info("open_rows", size, queries=N_QUERIES, log_height=x.log_height))

    def reference():
        return CPU.open_rows(CPU.commit(CPU.upload(x.table), x.log_folding, x.log_height), x.indices)

    references.check(backend, ("open_rows", size), (rows, paths), reference)
    be.release(commitment, table)


def test_sumcheck_round(backend, size, measure, references):
    """(h(0), h(2)) of one sumcheck round over a base table and EF weights; read back."""
    be, x = backend.backend, _inputs(size)
    table, weights = be.upload(x.table), be.upload(x.weights)
    h0, h2 = measure(backend, f"sumcheck_round 2^{size}", lambda: be.sumcheck_round(table, weights),
                     extra=_info("sumcheck_round", size))
    references.check(backend, ("sumcheck_round", size), (np.stack([h0, h2]),),
                     lambda: (np.stack(CPU.sumcheck_round(CPU.upload(x.table), CPU.upload(x.weights))),))
    be.release(table, weights)


def test_fold(backend, size, measure, references):
    """Bind x_0 := r in a base table and its EF weights (two new EF tables of half the size); waits."""
    be, x = backend.backend, _inputs(size)
    table, weights = be.upload(x.table), be.upload(x.weights)
    new_table, new_weights = measure(backend, f"fold 2^{size}", lambda: be.fold(table, weights, x.r),
                                     release=lambda out: be.release(*out), extra=_info("fold", size))

    def reference():
        folded = CPU.fold(CPU.upload(x.table), CPU.upload(x.weights), x.r)
        return tuple(CPU.download(b) for b in folded)

    references.check(backend, ("fold", size), (be.download(new_table), be.download(new_weights)), reference)
    be.release(new_table, new_weights, table, weights)


def test_evaluate(backend, size, measure, references):
    """The multilinear extension of a base table at an EF point; read back."""
    be, x = backend.backend, _inputs(size)
    table = be.upload(x.table)
    value = measure(backend, f"evaluate 2^{size}", lambda: be.evaluate(table, x.point),
                    extra=_info("evaluate", size))
    references.check(backend, ("evaluate", size), (value,), lambda: (CPU.evaluate(CPU.upload(x.table), x.point),))
    be.release(table)


def test_eq_weights(backend, size, measure, references):
    """A new EF weights table Σ_i c_i eq(b, z_i) over N_EQ_POINTS points; waits."""
    be, x = backend.backend, _inputs(size)
    weights = measure(backend, f"eq_weights 2^{size}", lambda: be.eq_weights(x.eq_points, x.eq_coefficients),
                      release=be.release, extra=_info("eq_weights", size, points=N_EQ_POINTS))
    references.check(backend, ("eq_weights", size), (be.download(weights),),
                     lambda: (CPU.download(CPU.eq_weights(x.eq_points, x.eq_coefficients)),))
    be.release(weights)


@pytest.mark.grind_bits
def test_grind(backend, size, measure, references):
    """Proof of work: the smallest valid nonce for a fixed transcript state (a fresh clone each round); ``size``
    is the number of bits (about 2^bits nonces searched)."""
    be, bits = backend.backend, size
    start = DuplexChallenger()
    start.observe_many(np.arange(GRIND_ABSORBED, dtype=np.uint32) * 7919 + 3)
    witness = measure(backend, f"grind {bits} bits", lambda challenger: be.grind(challenger, bits),
                      make_args=lambda: (start.clone(),), extra={"primitive": "grind", "bits": bits})
    references.check(backend, ("grind", bits), (np.array([witness], np.uint32),),
                     lambda: (np.array([CPU.grind(start.clone(), bits)], np.uint32),))

