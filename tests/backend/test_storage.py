"""Storage policies (hybrid, shared, private) on every GPU runtime: byte-identical proofs, buffer modes that
follow the policy, per-proof transfer counters; bad policy names; wgpu's host-mapped SHARED buffers and their
fallback."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.api import Prover
from whirgpu.backends import STORAGE_POLICIES, select_backend
from whirgpu.backends.base import StorageMode, TransferStats, resolve_storage
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.errors import BackendUnavailable, ConfigError
from whirgpu.profiles.whir_p3_metal.prover import MetalWhirProver
from whirgpu.profiles.whir_p3_metal.verifier import MetalWhirVerifier
from whirgpu.runtime.base import RtBuffer

from ..protocol.test_roundtrip import SUBSET, _instance
from .conftest import open_runtime
from .test_gpu_proofs import _cpu_proof, _proof_text

SHARED, PRIVATE = StorageMode.SHARED, StorageMode.PRIVATE
# One intermediate round, OOD samples, two EF claims and 10-bit grinding: every kind of buffer a proof has.
CASE = next(c for c in SUBSET if c.id == "c4-n11-red3-capacity-pow10-ef+ef")
DIGEST_BYTES = 32
EF_BYTES = 16


@pytest.fixture(autouse=True)
def _no_storage_env(monkeypatch):
    monkeypatch.delenv("WHIRGPU_STORAGE", raising=False)


class Recorder:
    """A runtime that records every buffer it allocates, writes and reads (forwards everything else)."""

    def __init__(self, runtime):
        self._runtime = runtime
        self.allocated: list[RtBuffer] = []
        self.written: list[RtBuffer] = []
        self.read_from: list[RtBuffer] = []

    def alloc(self, nbytes, mode=StorageMode.PRIVATE):
        buffer = self._runtime.alloc(nbytes, mode)
        self.allocated.append(buffer)
        return buffer

    def write(self, buffer, data, offset=0):
        self.written.append(buffer)
        self._runtime.write(buffer, data, offset)

    def read(self, buffer, nbytes=None, offset=0):
        self.read_from.append(buffer)
        return self._runtime.read(buffer, nbytes, offset)

    def __getattr__(self, name):
        return getattr(self._runtime, name)


class Run:
    """One proof of CASE on a fresh backend with ``policy`` over a recording runtime, and what it touched."""

    def __init__(self, runtime, policy: str):
        self.runtime = runtime
        self.recorder = Recorder(runtime)
        self.backend = GpuBackend(self.recorder, storage=policy)
        self.commitments, self.downloaded, self.device_tables = [], [], []
        backend = self.backend
        commit, download, fold, eq_weights = backend.commit, backend.download, backend.fold, backend.eq_weights

        def _commit(*args):
            commitment = commit(*args)
            self.commitments.append(commitment.handle)
            return commitment

        def _download(buffer):
            self.downloaded.append(buffer.handle)
            return download(buffer)

        def _fold(*args):
            out = fold(*args)
            self.device_tables.extend(out)
            return out

        def _eq_weights(*args):
            out = eq_weights(*args)
            self.device_tables.append(out)
            return out

        backend.commit, backend.download, backend.fold, backend.eq_weights = _commit, _download, _fold, _eq_weights
        self.poly, self.statement = _instance(CASE)
        self.config = CASE.config()
        prover = MetalWhirProver(self.config, backend)
        self.proof = prover.prove(self.poly, self.statement)
        self.stats = prover.stats


_runs: dict[tuple[int, str], Run] = {}


def proved(runtime, policy: str) -> Run:
    key = (id(runtime), policy)
    if key not in _runs:
        _runs[key] = Run(runtime, policy)
    return _runs[key]


# ---- proofs ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("policy", STORAGE_POLICIES)
def test_every_policy_gives_the_cpu_proof(gpu_runtime, policy):
    run = proved(gpu_runtime, policy)
    assert run.backend.storage == policy
    assert _proof_text(run.proof) == _cpu_proof(CASE)
    MetalWhirVerifier(run.config).verify(run.proof, run.statement)


# ---- buffer modes ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("policy", ["shared", "private"])
def test_uniform_policies_put_every_buffer_in_one_mode(gpu_runtime, policy):
    run = proved(gpu_runtime, policy)
    want = SHARED if policy == "shared" else PRIVATE
    assert run.recorder.allocated, "the proof allocated nothing"
    assert {b.mode for b in run.recorder.allocated} == {want}
    assert all(key[1] is want for key in run.backend.state.pool.free_lists)


def test_hybrid_shares_what_the_host_touches_and_keeps_intermediates_private(gpu_runtime):
    run = proved(gpu_runtime, "hybrid")
    rec = run.recorder
    assert {b.mode for b in rec.allocated} == {SHARED, PRIVATE}
    # Everything the host uploads (the polynomial, the challenger and points, constant tables) is SHARED.
    assert rec.written and all(b.mode is SHARED for b in rec.written)
    assert any(b.nbytes == run.poly.nbytes for b in rec.written)
    # The host reads back one buffer, once: the proof region, SHARED. Nothing is downloaded table by table.
    assert run.downloaded == []
    assert len(rec.read_from) == 1 and rec.read_from[0].mode is SHARED
    # Codewords and every Merkle level, the root's included, are PRIVATE (the root reaches the proof on the device).
    assert len(run.commitments) == run.config.n_rounds + 1
    for codeword, levels in run.commitments:
        assert codeword.mode is PRIVATE
        assert [level.mode for level in levels] == [PRIVATE] * len(levels)
    # Folded tables and weights are PRIVATE, and each DeviceBuffer reports its buffer's real mode.
    assert run.device_tables
    for table in run.device_tables:
        assert table.mode is PRIVATE and table.handle.mode is PRIVATE


def test_every_rt_buffer_records_its_mode(gpu_runtime):
    for mode in (SHARED, PRIVATE):
        buffer = gpu_runtime.alloc(64, mode)
        assert buffer.mode is mode
        gpu_runtime.write(buffer, np.arange(16, dtype=np.uint32))
        assert gpu_runtime.read(buffer).tolist() == list(range(16))


# ---- transfer counters -------------------------------------------------------------------------------------------

def _opened_bytes(run: Run) -> int:
    """Bytes of the rows and sibling paths the proof opens: row widths and tree depths from the config, the number
    of (distinct) openings from the proof."""
    config, n = run.config, run.config.num_variables
    commitments = []  # (row bytes, depth) per commitment: the initial one, then one per round
    k0 = config.fold(0)
    commitments.append((4 << k0, n + config.starting_log_inv_rate - k0))
    for i, round_config in enumerate(config.rounds):
        k_next = config.fold(i + 1)
        commitments.append((EF_BYTES << k_next, round_config.num_variables - k_next + config.round_log_inv_rate(i)))
    opened = [len(r.queries) for r in run.proof.rounds] + [len(run.proof.final_queries)]
    assert all(0 < count <= limit for count, limit in
               zip(opened, [r.num_queries for r in config.rounds] + [config.final_queries]))
    total = 0
    for count, (row_bytes, depth) in zip(opened, commitments, strict=True):
        total += count * (row_bytes + depth * DIGEST_BYTES)
    return total


def test_counters_are_plausible(gpu_runtime):
    run = proved(gpu_runtime, "hybrid")
    stats, config, n = run.stats, run.config, run.config.num_variables
    assert stats is run.backend.stats
    assert min(stats.uploaded, stats.downloaded, stats.copied) > 0
    # Uploaded: at least the polynomial and the points of the initial constraint (claims + commitment OOD).
    n_points = len(run.statement.points) + config.commitment_ood_samples
    assert stats.uploaded >= run.poly.nbytes + n_points * n * EF_BYTES
    # Downloaded: at least every commitment's root, the openings and the final polynomial ...
    final_bytes = run.proof.final_poly.size * 4
    assert stats.downloaded >= (config.n_rounds + 1) * DIGEST_BYTES + _opened_bytes(run) + final_bytes
    # ... but far less than the data that stays on the device (the first codeword alone).
    codeword_bytes = 4 << (n + config.starting_log_inv_rate)
    assert stats.downloaded < codeword_bytes


def test_counters_across_policies(gpu_runtime):
    runs = {policy: proved(gpu_runtime, policy) for policy in STORAGE_POLICIES}
    stats = {policy: run.stats for policy, run in runs.items()}
    # What crosses the host/device boundary does not depend on where buffers live ...
    assert len({(s.uploaded, s.downloaded) for s in stats.values()}) == 1
    # ... but the staging copies do: a private buffer costs one more copy for every read (and every write where
    # shared buffers are written in place), a zero-copy shared one none.
    assert stats["private"].copied >= stats["hybrid"].copied >= stats["shared"].copied > 0
    rt = gpu_runtime
    probe = RtBuffer(None, EF_BYTES, SHARED)
    if rt.host_memory or not rt.zero_copy_shared:
        assert stats["private"].copied == stats["shared"].copied
    else:
        staged_writes = 0 if rt.write_staged(probe) else stats["shared"].uploaded
        assert stats["private"].copied - stats["shared"].copied == stats["shared"].downloaded + staged_writes


def test_counters_restart_with_every_proof(gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    poly, statement = _instance(CASE)
    prover = MetalWhirProver(CASE.config(), backend)
    prover.prove(poly, statement)
    first = prover.stats
    prover.prove(poly, statement)
    second = prover.stats
    assert second is not first and second is backend.stats
    # The constant tables (twiddles, round constants) are uploaded once per backend: the second proof sends less.
    assert poly.nbytes <= second.uploaded < first.uploaded
    assert second.downloaded == first.downloaded


def test_prover_api_exposes_storage_and_transfers():
    from whirgpu.runtime.wgpu_rt import WgpuRuntime

    try:
        runtime = WgpuRuntime()
    except BackendUnavailable as exc:
        pytest.skip(f"wgpu unavailable: {exc}")
    poly, statement = _instance(CASE)
    prover = Prover(CASE.config(), backend=GpuBackend(runtime, storage="private"), storage="private")
    assert prover.storage == "private" and prover.last_transfers == TransferStats()
    prover.prove_monty(poly, statement)
    assert prover.last_transfers.uploaded >= poly.nbytes and prover.last_transfers.downloaded > 0
    with pytest.raises(ConfigError, match="uses 'private'"):
        Prover(CASE.config(), backend=prover.backend, storage="shared")


# ---- names -------------------------------------------------------------------------------------------------------

def _names_every_choice(message: str) -> bool:
    return all(policy in message for policy in STORAGE_POLICIES)


@pytest.mark.parametrize("bad", ["fast", "", "hybrid ", "SHARED-ish"])
def test_bad_policy_names_are_rejected_with_the_choices(bad, monkeypatch):
    for make in (lambda: resolve_storage(bad), lambda: CpuBackend(storage=bad),
                 lambda: select_backend("cpu", None, storage=bad), lambda: Prover(CASE.config(), "cpu", storage=bad)):
        with pytest.raises(ConfigError) as info:
            make()
        assert _names_every_choice(str(info.value)) and repr(bad) in str(info.value)
    monkeypatch.setenv("WHIRGPU_STORAGE", bad or "none")
    with pytest.raises(ConfigError, match="WHIRGPU_STORAGE") as info:
        select_backend("cpu")
    assert _names_every_choice(str(info.value))


def test_policy_defaults_to_hybrid_and_reads_the_environment(monkeypatch):
    assert resolve_storage() == "hybrid"
    monkeypatch.setenv("WHIRGPU_STORAGE", "private")
    assert resolve_storage() == "private" and resolve_storage("shared") == "shared"


def test_cpu_backend_accepts_and_ignores_a_policy(monkeypatch):
    choice = select_backend("cpu", None, storage="private")
    assert choice.backend.storage is None and "storage policy private ignored" in choice.reason
    assert select_backend("cpu").reason == "requested"  # nothing asked, nothing said
    monkeypatch.setenv("WHIRGPU_STORAGE", "shared")
    assert "storage policy shared ignored" in select_backend("cpu").reason
    prover = Prover(CASE.config(), "cpu", storage="shared")
    poly, statement = _instance(CASE)
    assert _proof_text(prover.prove_monty(poly, statement).proof) == _cpu_proof(CASE)
    assert prover.storage is None and prover.last_transfers == TransferStats()


def test_gpu_backend_policy_from_the_environment(gpu_runtime, monkeypatch):
    monkeypatch.setenv("WHIRGPU_STORAGE", "shared")
    assert GpuBackend(gpu_runtime).storage == "shared"
    assert GpuBackend(gpu_runtime, storage="private").storage == "private"
    with pytest.raises(ConfigError):
        GpuBackend(gpu_runtime, storage="unified")


# ---- wgpu: host-mapped SHARED buffers, or the reported fallback --------------------------------------------------

@pytest.fixture(scope="module")
def wgpu_adapter():
    from whirgpu.runtime.wgpu_rt import choose_adapter

    open_runtime("wgpu", "emulated")  # skips (or fails, when required) without wgpu
    return choose_adapter()


def _has_map_read(runtime, buffer) -> bool:
    return bool(buffer.handle.usage & runtime.wgpu.BufferUsage.MAP_READ)


@pytest.mark.parametrize("impl", ["wgpu", "dawn"])
def test_wgpu_zero_copy_is_used_where_the_adapter_offers_it(impl):
    from whirgpu.runtime.wgpu_rt import ZERO_COPY_FEATURE, choose_adapter, storage_summary, zero_copy_support

    make = type(open_runtime(impl, "emulated"))  # skips (or fails, when required) without the implementation
    adapter = choose_adapter(impl)
    available, why = zero_copy_support(adapter)
    unified = adapter.info.get("adapter_type") in ("IntegratedGPU", "CPU")
    assert available == (ZERO_COPY_FEATURE in adapter.features and unified)
    runtime = make(mul="emulated")
    assert runtime.zero_copy_shared == available == runtime.limits().zero_copy_shared
    assert (ZERO_COPY_FEATURE in runtime.device.features) == available
    shared, private = runtime.alloc(64, SHARED), runtime.alloc(64, PRIVATE)
    assert _has_map_read(runtime, shared) == available and not _has_map_read(runtime, private)
    assert runtime.read_staged(shared) != available and runtime.read_staged(private)
    summary = storage_summary(adapter)
    assert ("zero-copy" in summary) == available and why in summary
    if not available:
        with pytest.raises(BackendUnavailable, match=ZERO_COPY_FEATURE):
            make(mul="emulated", zero_copy=True)


def test_wgpu_mapped_reads_need_no_staging_buffer(wgpu_adapter):
    from whirgpu.runtime.wgpu_rt import WgpuRuntime, zero_copy_support

    if not zero_copy_support(wgpu_adapter)[0]:
        pytest.skip(f"{wgpu_adapter.summary}: no zero-copy shared buffers ({zero_copy_support(wgpu_adapter)[1]})")
    runtime = WgpuRuntime(mul="emulated", zero_copy=True)
    words = np.arange(1000, 1064, dtype=np.uint32)
    buffer = runtime.alloc(words.nbytes, SHARED)
    runtime.write(buffer, words)
    assert runtime.read(buffer).tolist() == words.tolist()
    for offset, nbytes in ((4, 4), (12, 20), (8, 248), (252, 4), (100, 0)):  # offsets off wgpu's 8-byte alignment
        assert runtime.read(buffer, nbytes, offset).tolist() == words[offset // 4:(offset + nbytes) // 4].tolist()
    # after a kernel wrote it: mapping waits for the submission
    batch = runtime.batch()
    other = runtime.alloc(words.nbytes, SHARED)
    batch.copy(buffer, 0, other, 0, words.nbytes)
    batch.submit()
    assert runtime.read(other).tolist() == words.tolist()
    assert runtime._staging is None  # no readback went through a staging buffer
    runtime.read(runtime.alloc(16, PRIVATE))
    assert runtime._staging is not None
    with pytest.raises(ValueError):
        runtime.read(buffer, 8, words.nbytes - 4)


@pytest.mark.parametrize("policy", STORAGE_POLICIES)
def test_wgpu_fallback_without_zero_copy(wgpu_adapter, policy):
    """zero_copy=False: SHARED buffers are plain storage (as on a discrete GPU); proofs are unchanged and every
    read is a staged copy."""
    runtime = _fallback_runtime()
    assert not runtime.zero_copy_shared and not runtime.limits().zero_copy_shared
    assert "mappable-primary-buffers" not in runtime.device.features
    shared = runtime.alloc(16, SHARED)
    assert shared.mode is SHARED and not _has_map_read(runtime, shared) and runtime.read_staged(shared)
    run = proved(runtime, policy)
    assert _proof_text(run.proof) == _cpu_proof(CASE)
    assert run.stats.copied >= run.stats.uploaded + run.stats.downloaded


_fallback: list = []


def _fallback_runtime():
    from whirgpu.runtime.wgpu_rt import WgpuRuntime

    if not _fallback:
        _fallback.append(WgpuRuntime(zero_copy=False))  # the multiply --backend wgpu picks: pipelines compiled anyway
    return _fallback[0]
