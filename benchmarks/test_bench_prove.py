"""End-to-end proofs side by side: one table per (num_variables, fold, rate), one row per backend.

    pytest benchmarks/test_bench_prove.py --benchmark-only [--bench-sizes 20,22,24] [--bench-folds 2,4]
        [--bench-rates 1,2] [--msl-cpu]

Each round is one ``Prover(config, backend).prove_monty(poly, statement)`` on the reference sweep's instance
(``random_instance(n, 1)``) and configuration (security 100, pow 16, capacity bound): commitment, every round,
grinding and openings, on one prover whose pipelines and buffer pool are warm. The canonical-to-Montgomery
conversion and the claimed value's evaluation, which ``Prover.prove`` does on the host before proving, are left
outside the timing: they cost the same for every backend. After timing, the proof must be byte-identical to the
cpu backend's, and the cpu backend's proof must verify.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

from whirgpu.api import Prover, random_instance, verify
from whirgpu.backends import fit_problem
from whirgpu.backends.cpu import CpuBackend
from whirgpu.errors import ConfigError
from whirgpu.protocol.params import ProtocolParameters, WhirConfig
from whirgpu.protocol.serialize import dump

INSTANCE_SEED = 1


@lru_cache(maxsize=2)
def _instance(n: int):
    return random_instance(n, INSTANCE_SEED)


def test_prove(backend, size, fold, rate, measure, references):
    n = size
    where = f"n={n} fold={fold} rate={rate}"
    try:
        config = WhirConfig.from_params(ProtocolParameters.default(num_variables=n, folding_factor=fold,
                                                                   starting_log_inv_rate=rate))
    except ConfigError as exc:
        pytest.skip(f"{where}: {exc}")
    if not backend.is_reference:
        problem = fit_problem(backend.backend.limits(), config, budget=False)
        if problem:
            pytest.skip(f"{backend.id}: {where}: {problem}")
    poly, statement = _instance(n)
    prover = Prover(config, backend=backend.backend)
    proof = measure(backend, f"prove {where}", lambda: prover.prove_monty(poly, statement),
                    extra={"num_variables": n, "folding_factor": fold, "log_inv_rate": rate})
    measure.benchmark.extra_info["phase_seconds"] = {k: round(v, 6) for k, v in prover.last_phase_seconds.items()}
    got = dump(proof, "binary")
    references.check(backend, ("prove", n, fold, rate), (got,),
                     lambda: (dump(Prover(config, backend=CpuBackend()).prove_monty(poly, statement), "binary"),))
    if backend.is_reference and references.enabled:
        verify(proof)
