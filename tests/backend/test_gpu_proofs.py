"""Whole proofs on the GPU backend: byte-identical to the CPU backend's over the configuration matrix (the
round-trip suite's SUBSET by default, all 1314 configurations with --runslow), verified, and the golden
reproductions, on every runtime (``gpu_runtime``: wgpu-native with both multiplies, Dawn, and the MSL twins on msl-cpu), with
the 2-D grid threshold lowered, and a windowed (split-binding) slice."""

from __future__ import annotations

import json

import numpy as np
import pytest

from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.device_transcript import MAX_OPS
from whirgpu.backends.gpu import SUMCHECK_TAIL_MAX, GpuBackend
from whirgpu.protocol.params import WhirConfig
from whirgpu.profiles.whir_p3_metal.prover import MetalWhirProver
from whirgpu.protocol.prover import PolynomialSource
from whirgpu.profiles.whir_p3_metal.serialize import params_and_statement_from_json, proof_to_json_tree
from whirgpu.profiles.whir_p3_metal.verifier import MetalWhirVerifier
from whirgpu.ref import field_np as F

from ..conftest import GOLDEN_PROOFS, load_golden
from ..protocol.test_roundtrip import FULL_MATRIX, SUBSET, Case, _instance

_cpu_proofs: dict[str, str] = {}


def _proof_text(proof) -> str:
    return json.dumps(proof_to_json_tree(proof), sort_keys=True, separators=(",", ":"))


def _cpu_proof(case: Case) -> str:
    if case.id not in _cpu_proofs:
        poly, statement = _instance(case)
        _cpu_proofs[case.id] = _proof_text(MetalWhirProver(case.config(), CpuBackend()).prove(poly, statement))
    return _cpu_proofs[case.id]


@pytest.fixture(scope="module")
def gpu(gpu_runtime):
    return GpuBackend(gpu_runtime)


def _check_case(backend, case: Case) -> None:
    """The user's path (canonical words converted on the device, claims evaluated there) against the CPU's proof
    of the Montgomery table and host-evaluated claims."""
    poly, statement = _instance(case)
    config = case.config()
    proof, proved = MetalWhirProver(config, backend).prove_points(PolynomialSource(F.from_monty(poly)),
                                                                  statement.points)
    assert _proof_text(proof) == _cpu_proof(case)
    assert np.array_equal(proved.values, statement.values)
    MetalWhirVerifier(config).verify(proof, statement)


@pytest.mark.parametrize("case", SUBSET, ids=lambda c: c.id)
def test_proof_identical_to_cpu(gpu, case):
    _check_case(gpu, case)


@pytest.mark.slow
@pytest.mark.parametrize("case", FULL_MATRIX, ids=lambda c: c.id)
def test_full_matrix_identical_to_cpu(gpu, case):
    _check_case(gpu, case)


@pytest.mark.parametrize("case", [c for c in SUBSET if c.n >= 11], ids=lambda c: c.id)
def test_proof_identical_with_split_bindings(gpu_runtime, case):
    backend = GpuBackend(gpu_runtime)
    # 64 EF entries per binding: tables, weights and folds of n >= 7 are windowed, and so are codewords (NTT stages
    # across windows) and Merkle levels of more than 32 digests
    backend.binding_limit = 1024
    _check_case(backend, case)


@pytest.mark.parametrize("case", [c for c in SUBSET if c.n >= 11][::3], ids=lambda c: c.id)
def test_proof_identical_with_split_buffers(gpu_runtime, case):
    """Codewords, Merkle levels and tables (the polynomial, weights, folded tables) over 4 KiB in several buffers
    (every tree's lower levels, round 0's codeword, the early rounds' tables), bound in 1 KiB windows."""
    backend = GpuBackend(gpu_runtime)
    backend.binding_limit, backend.buffer_limit = 1024, 4096
    _check_case(backend, case)
    table = backend.upload(np.zeros(1 << 12, np.uint32))
    assert len(table.handle.buffers) == 4  # the polynomial itself is split, and committed from its buffers
    codeword, levels = backend.commit(table, 2, 11).handle
    assert len(codeword.buffers) > 1 and len(levels[0].buffers) > 1


def _held_bytes(backend) -> int:
    """What the backend holds between proofs: its pool, and the region sets its recorded shapes keep (replay)."""
    pooled = sum(b.nbytes for free in backend.state.pool.free_lists.values() for b in free)
    kept = sum(b.nbytes for program in backend.replay.programs.values() for s in program.sets for b in s.buffers)
    return pooled + kept


def test_repeated_proofs_reuse_buffers(gpu_runtime):
    """The pool hands released buffers (codewords and trees included) back out: later proofs on the same backend
    are still identical, recorded (the second) and replayed (the third, fourth), and the backend stops growing
    once it holds one proof's working set."""
    backend = GpuBackend(gpu_runtime)
    case = next(c for c in SUBSET if c.n >= 12)
    _check_case(backend, case)
    after_one = _held_bytes(backend)
    assert after_one > 0
    for _ in range(3):
        _check_case(backend, case)
    assert _held_bytes(backend) == after_one and backend.replays == 2


def _golden_instance(name):
    doc = load_golden(name)
    params, statement = params_and_statement_from_json(doc)
    poly = F.to_monty(np.asarray(doc["polynomial_evals_canonical"], dtype=np.uint64))
    return doc, WhirConfig.from_params(params), poly, statement


@pytest.mark.parametrize("name", GOLDEN_PROOFS)
def test_golden_on_every_runtime(gpu, name):
    """PoW-free golden proofs are reproduced byte for byte; with PoW, ours (smallest nonces) equal the CPU
    backend's and verify."""
    doc, config, poly, statement = _golden_instance(name)
    proof = MetalWhirProver(config, gpu).prove(poly, statement)
    if doc["derived"]["all_pow_zero"]:
        assert _proof_text(proof) == json.dumps(doc["proof"], sort_keys=True, separators=(",", ":"))
    else:
        cpu_proof = MetalWhirProver(config, CpuBackend()).prove(poly, statement)
        assert _proof_text(proof) == _proof_text(cpu_proof)
    MetalWhirVerifier(config).verify(proof, statement)


def _pow_case() -> Case:
    return next(c for c in SUBSET if c.pow_bits > 0 and c.n >= 10)


def test_a_search_past_its_range_proves_again_over_every_nonce(gpu_runtime, monkeypatch):
    """Searches encoded over no nonces find none: the proof reads back NOT_FOUND in a witness slot and is proved
    again with searches over the full range, giving the same bytes (the smallest nonces)."""
    from whirgpu.backends import device_transcript

    real_launches = device_transcript.pow_launches
    monkeypatch.setattr(device_transcript, "pow_launches",
                        lambda bits, full_range=False: real_launches(bits, True) if full_range else [])
    backend = GpuBackend(gpu_runtime)
    attempts = []
    end_proof = backend.end_proof

    def counting_end_proof(resolve):
        attempts.append(backend.pow_full_range)
        return end_proof(resolve)

    backend.end_proof = counting_end_proof
    _check_case(backend, _pow_case())
    assert attempts == [False, True] and backend.pow_full_range is False


def test_one_readback_and_a_submission_per_round(gpu_runtime, monkeypatch):
    """The host encodes the whole proof without waiting: one read of the device (the proof region, at the end)
    and at most n_rounds + 2 submissions (one per commitment, one at the end); uploads only at the start."""
    backend = GpuBackend(gpu_runtime)
    case = _pow_case()
    _check_case(backend, case)  # warm: twiddles and round constants are uploaded on first use
    events = []
    runtime = backend.rt
    for name in ("read", "write"):
        real = getattr(runtime, name)
        monkeypatch.setattr(runtime, name, lambda *a, _real=real, _name=name, **k: (events.append(_name),
                                                                                   _real(*a, **k))[1])
    real_batch = runtime.batch

    def counting_batch():
        batch = real_batch()
        real_submit = batch.submit
        batch.submit = lambda: (events.append("submit"), real_submit())[1]
        return batch

    monkeypatch.setattr(runtime, "batch", counting_batch)
    _check_case(backend, case)
    config = case.config()
    assert events.count("read") == 1 and events[-1] == "read"
    assert events.count("submit") <= config.n_rounds + 2
    first_submit = events.index("submit")
    assert "write" not in events[first_submit:], f"an upload after the first submission: {events}"


def test_folds_sum_the_next_round(gpu_runtime, monkeypatch):
    """In a proof, each fold followed by another round of its sumcheck is one fused launch that sums that round:
    plain ``sumcheck`` launches only for each phase's first round, ``fold`` launches only for each phase's last
    fold, and no second reduction stage; a phase of pow-free rounds on a small EF table is one ``sumcheck_tail``
    launch; the proof is still the CPU's."""
    backend = GpuBackend(gpu_runtime)
    case = next(c for c in SUBSET if c.n >= 11 and c.config().fold(0) > 1)
    stems = []
    real_kernel = backend.state.drivers.kernel

    def kernel(stem, entry=None, constants=None, field="babybear"):
        stems.append(stem)
        return real_kernel(stem, entry, constants, field)

    monkeypatch.setattr(backend.state.drivers, "kernel", kernel)
    _check_case(backend, case)
    config = case.config()
    rounds = [config.fold(i) for i in range(config.n_rounds + 1)] + [config.final_sumcheck_rounds]
    pow_bits = ([config.starting_folding_pow_bits] + [rc.folding_pow_bits for rc in config.rounds]
                + [config.final_folding_pow_bits])
    phases, nv = [], config.num_variables
    for i, (k, bits) in enumerate(zip(rounds, pow_bits)):
        # GpuBackend.sumcheck_rounds: the pow-free rounds of a small EF table are one sumcheck_tail launch
        phases.append((k, i > 0 and bits == 0 and 1 <= k and 1 << nv <= SUMCHECK_TAIL_MAX and 2 * k <= MAX_OPS))
        nv -= k
    assert stems.count("sumcheck_tail") == sum(1 for k, tail in phases if k and tail)
    assert stems.count("sumcheck_fold") == sum(k - 1 for k, tail in phases if k and not tail)
    assert stems.count("sumcheck") == stems.count("fold") == sum(1 for k, tail in phases if k and not tail)
