"""End-to-end proofs side by side: one table per (num_variables, fold, rate), one row per backend and input.

    pytest benchmarks/test_bench_prove.py --benchmark-only [--bench-sizes 20,22,24] [--bench-folds 2,4]
        [--bench-rates 1,2] [--msl-cpu] [-k uint32]

Each round is one proof on the reference sweep's instance (seed 1) and configuration (security 100, pow 16,
capacity bound): commitment, every round, grinding and openings, on one prover whose pipelines and buffer pool
are warm. The instance is drawn outside the timing; what is timed is the call a user makes, per ``input``:

- ``uint32``: ``Prover.prove(words, points)`` on the canonical table as a C-contiguous uint32 array, the
  headline row: the range check, the Montgomery conversion and the claimed value's evaluation are part of it
  (on the device for a GPU backend);
- ``int64``: the same on an int64 array (the host narrows it first);
- ``device``: the same on a ``wgpu.GPUBuffer`` on the prover's device holding the canonical words (wgpu and
  dawn rows only): no upload at all;
- ``monty``: the lower-level ``Prover.prove_monty(poly, statement)``, the Montgomery table and claimed value
  computed beforehand (what the proof costs when the caller has done that work).

After timing, the proof must be byte-identical to the cpu backend's, and the cpu backend's proof must verify.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from whirgpu.api import Prover, random_canonical_instance, random_instance, verify
from whirgpu.backends import fit_problem
from whirgpu.backends.cpu import CpuBackend
from whirgpu.errors import ConfigError
from whirgpu.protocol.params import ProtocolParameters, WhirConfig
from whirgpu.profiles.whir_p3_metal.serialize import dump

INSTANCE_SEED = 1
INPUTS = ("uint32", "int64", "device", "monty")


@lru_cache(maxsize=2)
def _instance(n: int):
    return random_canonical_instance(n, INSTANCE_SEED)


@lru_cache(maxsize=1)
def _monty_instance(n: int):
    return random_instance(n, INSTANCE_SEED)


def _call(prover: Prover, entry: str, n: int):
    """The timed call for ``entry`` (its inputs prepared here, untimed)."""
    words, points = _instance(n)
    if entry == "uint32":
        return lambda: prover.prove(words, points)
    if entry == "int64":
        wide = words.astype(np.int64)
        return lambda: prover.prove(wide, points)
    if entry == "monty":
        poly, statement = _monty_instance(n)
        return lambda: prover.prove_monty(poly, statement)
    if prover.device is None:
        pytest.skip(f"{prover.backend.name}: device-buffer input needs a wgpu or dawn backend")
    usage = prover.backend.rt.wgpu.BufferUsage
    buffer = prover.device.create_buffer_with_data(data=words, usage=usage.STORAGE)
    return lambda: prover.prove(buffer, points)


@pytest.mark.parametrize("entry", INPUTS)
def test_prove(backend, size, fold, rate, entry, measure, references):
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
    prover = Prover(config, backend=backend.backend)
    call = _call(prover, entry, n)
    measure.warm_proofs(backend, call)  # untimed: caches and pool filled, the shape's launches recorded
    proof = measure(backend, f"prove {where}", call,
                    extra={"num_variables": n, "folding_factor": fold, "log_inv_rate": rate, "input": entry})
    measure.benchmark.extra_info["phase_seconds"] = {k: round(v, 6) for k, v in prover.last_phase_seconds.items()}
    got = dump(proof, "binary")
    references.check(backend, ("prove", n, fold, rate), (got,),
                     lambda: (dump(Prover(config, backend=CpuBackend()).prove(*_instance(n)), "binary"),))
    if backend.is_reference and references.enabled:
        verify(proof)
