"""Verification: one table per (num_variables, fold, rate) with a single row, since the verifier runs on the host
(numpy and Python ints: ``whirgpu.ref``) whichever backend made the proof.

    pytest benchmarks/test_bench_verify.py --benchmark-only [--bench-sizes 20,24] [--bench-folds 2,4]
        [--bench-rates 1,2]

Each round is one ``whirgpu.verify(proof_file)`` of a proof already in memory (decoding the file is not timed):
the reference sweep's instance (``random_instance(n, 1)``) and configuration (security 100, pow 16, capacity
bound), proved once, untimed, on the cpu backend (a minute or two at n = 24). As in every suite the first call is
not timed; here it fills the verifier's per-configuration cache (the transcript state after the domain
separator). After timing, the proof must still verify from its bytes, and a copy with one changed value of the
final polynomial must be rejected.
"""

from __future__ import annotations

import copy
from functools import lru_cache

import pytest

from whirgpu.api import Prover, random_instance, verify
from whirgpu.backends.cpu import CpuBackend
from whirgpu.errors import ConfigError, VerificationError
from whirgpu.field import P
from whirgpu.protocol.params import ProtocolParameters, WhirConfig
from whirgpu.profiles.whir_p3_metal.serialize import dump

from .conftest import open_bench_backend

INSTANCE_SEED = 1


@lru_cache(maxsize=2)
def _proof_file(n: int, fold: int, rate: int):
    config = WhirConfig.from_params(ProtocolParameters.default(num_variables=n, folding_factor=fold,
                                                               starting_log_inv_rate=rate))
    poly, statement = random_instance(n, INSTANCE_SEED)
    return Prover(config, backend=CpuBackend()).prove_monty(poly, statement)


def test_verify(size, fold, rate, measure, request):
    n = size
    where = f"n={n} fold={fold} rate={rate}"
    try:
        proof_file = _proof_file(n, fold, rate)
    except ConfigError as exc:
        pytest.skip(f"{where}: {exc}")
    host = open_bench_backend("cpu", request.config)  # the verifier's arithmetic is the numpy reference's
    data = dump(proof_file, "binary")
    config = proof_file.config
    measure(host, f"verify {where}", lambda: verify(proof_file),
            extra={"num_variables": n, "folding_factor": fold, "log_inv_rate": rate, "proof_bytes": len(data),
                   "rounds": config.n_rounds,
                   "queries": [len(r.queries) for r in proof_file.proof.rounds] + [len(proof_file.proof.final_queries)]})
    verify(data)
    tampered = copy.deepcopy(proof_file)
    tampered.proof.final_poly[0, 0] = (int(tampered.proof.final_poly[0, 0]) + 1) % P
    with pytest.raises(VerificationError):
        verify(tampered)
