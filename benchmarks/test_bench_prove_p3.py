"""End-to-end proofs in the p3-whir profile (upstream Plonky3 p3-whir), one row per backend and field:

    pytest benchmarks/test_bench_prove_p3.py --benchmark-only [--bench-sizes 20,22] [--bench-folds 5]
        [--bench-rates 1] [--msl-cpu] [-k koalabear]

Each round is one ``P3Prover.prove(words)`` on the canonical uint32 table of the sweep's instance (seed 1) with
upstream's example parameters (security 90, pow 16, capacity bound; one opening drawn from the transcript), on one
prover whose pipelines and pool are warm: what a user of the profile calls (the range check and conversion on
the device for a GPU backend). A configuration upstream refuses (its derived PoW above the 16-bit budget, as fold
5 at rate 1 from n = 22) is skipped with upstream's reason. After timing, the postcard bytes must equal the cpu
backend's and the cpu backend's proof must verify.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

from whirgpu.api import random_canonical_instance
from whirgpu.backends.cpu import CpuBackend
from whirgpu.errors import ConfigError
from whirgpu.profiles.p3_whir.api import P3Prover
from whirgpu.protocol.folding import Constant
from whirgpu.profiles.p3_whir.config import P3Parameters
from whirgpu.profiles.p3_whir.format import pcs_proof_to_postcard
from whirgpu.profiles.p3_whir.verifier import verify_p3
from whirgpu.protocol.soundness import SoundnessType

INSTANCE_SEED = 1


@lru_cache(maxsize=2)
def _words(n: int):
    return random_canonical_instance(n, INSTANCE_SEED)[0]


@pytest.mark.parametrize("field", ["koalabear", "babybear"])
def test_prove_p3(backend, size, fold, rate, field, measure, references):
    n = size
    where = f"n={n} fold={fold} rate={rate} {field}"
    params = P3Parameters(90, 16, Constant(fold), SoundnessType.CapacityBound, rate)
    try:
        prover = P3Prover(n, params, field, backend=backend.backend)
    except ConfigError as exc:
        pytest.skip(f"{where}: {exc}")
    words = _words(n)

    def call():
        return prover.prove(words)

    measure.warm_proofs(backend, call)  # untimed: caches and pool filled, the shape's launches recorded
    document = measure(backend, f"prove p3-whir {where}", call,
                       extra={"num_variables": n, "folding_factor": fold, "log_inv_rate": rate, "field": field,
                              "profile": "p3-whir"})
    measure.benchmark.extra_info["phase_seconds"] = {k: round(v, 6) for k, v in prover.last_phase_seconds.items()}
    got = pcs_proof_to_postcard(document.proved.proof)

    def cpu_proof():
        return (pcs_proof_to_postcard(P3Prover(n, params, field, backend=CpuBackend()).prove(words).proved.proof),)

    references.check(backend, ("prove-p3", n, fold, rate, field), (got,), cpu_proof)
    if backend.is_reference and references.enabled:
        verify_p3(prover.config, document.proved.commitment, document.proved.proof, prover.field)
