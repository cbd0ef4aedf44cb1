"""``plan_memory``: one proof's steps, in the order ``Prover.prove`` runs them on a fresh ``GpuBackend`` (commit,
OOD answers, weights, sumcheck, rounds, final round), through the walk; and its two summaries."""

from __future__ import annotations

from dataclasses import dataclass

from ...protocol.config import WhirConfig
from ...protocol.proof_shape import layout_of, proof_shape
from ..base import DeviceLimits, resolve_storage
from ..device_values import region_bytes
from ..gpu.geometry import EF_BYTES
from .needs import BufferNeed, MemoryPlan
from .walk import BASE_BYTES, REGION_ALIGN, _Rows, _Tree, _Walk


@dataclass
class _State:
    table: _Rows
    weights: _Rows
    n: int  # entries
    is_ext: bool
    tree: _Tree


def _sumcheck(walk: _Walk, state: _State, stage: str, rounds: int, pow_bits: int) -> None:
    if pow_bits == 0 and walk.tail_fusable(state, rounds):  # GpuBackend.sumcheck_rounds: one sumcheck_tail launch
        name = f"{stage} folded table and weights"
        table, weights = walk.table(name, state.n // 2, EF_BYTES), walk.table(name, state.n // 2, EF_BYTES)
        walk.defer(points=False, ops=2 * rounds)
        walk.release(*state.table.buffers, *state.weights.buffers)
        state.table, state.weights, state.n = table, weights, state.n >> rounds
        return
    summed = False
    for k in range(rounds):
        walk.sumcheck_round(stage, state.n, summed)
        walk.grind(stage, pow_bits)
        summed = k + 1 < rounds and walk.fusable(state.n)  # GpuBackend.fold: another round of this table follows
        table, weights = walk.fold(stage, state.n, summed)
        walk.release(*state.table.buffers, *state.weights.buffers)
        state.table, state.weights, state.n, state.is_ext = table, weights, state.n // 2, True


def plan_memory(config: WhirConfig, limits: DeviceLimits | None = None, policy: str | None = None,
                statement_points: int = 1) -> MemoryPlan:
    """The buffers of one proof of ``config`` (a ``WhirConfig``, or a ``P3WhirConfig``: the p3-whir profile's
    layout, its openings drawn from the transcript) with ``statement_points`` evaluation claims, on a device with
    ``limits`` (its binding limit decides the windows, its runtime the runtime-held buffers; None: no binding
    limit and no runtime buffers) under storage ``policy`` (None: ``WHIRGPU_STORAGE``, else hybrid)."""
    policy = resolve_storage(policy)
    layout = layout_of(config)
    drawn = layout.draws_points  # the p3-whir statement (either order): points drawn, claims observed after OOD
    walk = _Walk(policy, limits, layout)
    n, k0 = config.num_variables, config.fold(0)
    # GpuBackend._dummy, bound where a factor table is unused, and _work, the reductions' work words
    walk.upload("backend placeholder", EF_BYTES)
    # GpuBackend.begin_proof: the proof, scratch and points regions; the challenger and the statement uploaded
    proof_bytes, scratch_bytes, points_bytes = region_bytes(proof_shape(config, statement_points, layout),
                                                             max(EF_BYTES, limits.offset_alignment) if limits else REGION_ALIGN)
    proof = walk.upload("proof buffer", proof_bytes, True, elem=EF_BYTES, written=0)  # bound in windows
    regions = [proof, walk.upload("transcript scratch", scratch_bytes, True, written=104),
               walk.upload("points", points_bytes, True,
                           written=0 if drawn else EF_BYTES * statement_points * config.num_variables)]

    # WhirProver._commit, as Prover.prove runs it: canonical words converted on the device (one launch per
    # window, after the range check's word is written), then the statement's claims evaluated on the table
    stage = "round 0"
    table = walk.table(f"{stage} polynomial", 1 << n, BASE_BYTES, host_facing=True, upload=True)
    walk.transfer(4, proof.mode, read=False)
    walk.launch((1 << n) // table.window_rows)
    for _ in range(0 if drawn else statement_points):
        walk.evaluate(stage, n, False, sampled=False)
    tree = walk.commit(stage, table, n, False, k0, n + config.starting_log_inv_rate - k0)
    walk.op()  # the root observed
    for _ in range(config.commitment_ood_samples + (statement_points if drawn else 0)):
        walk.evaluate(stage, n, False)  # an OOD answer, or (p3-whir) an opening's point and claim
    weights = walk.table(f"{stage} weights", 1 << n, EF_BYTES)
    if drawn:  # P3WhirProver._initial_weights: the openings' batch, then the OOD points'
        walk.accumulate(stage, n, statement_points, 0, challenge=True)
        if config.commitment_ood_samples:
            walk.accumulate(stage, n, config.commitment_ood_samples, 0)
    else:
        walk.accumulate(stage, n, statement_points + config.commitment_ood_samples, 0, challenge=True)
    state = _State(table, weights, 1 << n, False, tree)
    _sumcheck(walk, state, stage, k0, config.starting_folding_pow_bits)

    # WhirProver._round
    for i, rc in enumerate(config.rounds):
        stage = f"round {i + 1}"
        nv, k_next = rc.num_variables, config.fold(i + 1)
        tree = walk.commit(stage, state.table, nv, state.is_ext, k_next, nv - k_next + config.round_log_inv_rate(i))
        walk.op()  # the root observed
        for _ in range(rc.ood_samples):
            walk.evaluate(stage, nv, state.is_ext)
        walk.grind(stage, rc.pow_bits)
        queries = min(rc.num_queries, rc.domain_size >> rc.folding_factor)
        walk.open_rows(stage, state.tree, queries, combine=True)
        walk.accumulate(stage, nv, rc.ood_samples, queries)
        walk.release(*state.tree.buffers())
        state.tree = tree
        _sumcheck(walk, state, stage, k_next, rc.folding_pow_bits)

    # WhirProver._final_round
    stage = "final"
    walk.launch(len(state.table.buffers))  # the final polynomial's copies into the proof region, one per buffer
    walk.op()  # the final polynomial observed
    walk.grind(stage, config.final_pow_bits)
    queries = min(config.final_queries, config.final_domain_size >> config.fold(config.n_rounds))
    walk.open_rows(stage, state.tree, queries, combine=False)
    _sumcheck(walk, state, stage, config.final_sumcheck_rounds, config.final_folding_pow_bits)
    walk.submit()
    walk.read(proof, proof_bytes)  # GpuBackend.end_proof: the one readback
    walk.release(*regions)

    return MemoryPlan(list(walk.groups.values()) + walk.runtime_needs(), policy, statement_points, walk.problems,
                      walk.commands)


def plan_buffers(config: WhirConfig, limits: DeviceLimits | None = None, policy: str | None = None) -> list[BufferNeed]:
    """``plan_memory(...).needs``."""
    return plan_memory(config, limits, policy).needs


def peak_bytes(config: WhirConfig, limits: DeviceLimits | None = None, policy: str | None = None) -> int:
    """Device memory at the proof's peak (``plan_memory(...).peak_bytes``)."""
    return plan_memory(config, limits, policy).peak_bytes
