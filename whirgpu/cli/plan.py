"""``whirgpu devices --plan N:F:R``: the device planner's plan (``planner.plan_device``) on every device this
machine could run on, then what ``auto`` would pick. A command, so it sits above backend selection; the planner
itself sits below it."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from ..backends.base import DeviceLimits, resolve_storage
from ..backends.memory import human_bytes, sized
from ..errors import BackendUnavailable, WhirGpuError
from ..devices.overrides import MAX_GPU_BYTES_ENV, binding_override, binding_text
from ..devices.planner import GPU_MIN_VARIABLES, DevicePlan, max_gpu_bytes_from_env, plan_device
from ..profiles.p3_whir import prover as _p3_prover  # noqa: F401 - registers the planned proof plan_device builds
from ..profiles.whir_p3_metal import prover as _metal_prover  # noqa: F401 - the same
from ..profiles.whir_p3_metal.config import WhirConfig
from ..profiles.security import security_report
from ..protocol.regimes import describe


@dataclass
class PlanTarget:
    """A device ``whirgpu devices --plan`` plans for: the backend name that runs on it, its limits (None when
    it cannot be opened, with ``note`` saying why) and whether ``--backend <backend>`` would open it."""

    backend: str
    limits: DeviceLimits | None
    note: str = ""
    selected: bool = False


def _webgpu_targets(impl: str) -> list[PlanTarget]:
    """Every adapter the ``impl`` backend (wgpu or dawn) could open, best first, or one entry saying why none."""
    from ..runtime.wgpu_rt import adapters as webgpu  # noqa: PLC0415

    try:
        adapters = webgpu.list_adapters(impl)
        try:
            chosen = webgpu.choose_adapter(impl)
            chosen_key = (chosen.summary, chosen.info.get("backend_type"))
        except BackendUnavailable:
            chosen_key = None
        if not adapters:
            return [PlanTarget(impl, None, f"{webgpu.IMPLS[impl].label} found no Vulkan, Metal or D3D12 adapter")]
        return [PlanTarget(impl, webgpu.adapter_limits(adapter, impl), "",
                           (adapter.summary, adapter.info.get("backend_type")) == chosen_key) for adapter in adapters]
    except BackendUnavailable as exc:
        return [PlanTarget(impl, None, str(exc))]


def plan_targets() -> list[PlanTarget]:
    """Every adapter the wgpu backend could open (best first), then every one the dawn backend could, the Metal
    device on macOS, and msl-cpu; read without opening any device where possible."""
    targets = _webgpu_targets("wgpu") + _webgpu_targets("dawn")
    if sys.platform == "darwin":
        from ..runtime.metal_rt import metal_device_summary  # noqa: PLC0415

        summary, why = metal_device_summary()
        if summary is None:
            targets.append(PlanTarget("metal", None, why or "unavailable"))
        else:
            fields = dict(summary["limits"])
            fields["features"] = tuple(fields.get("features", ()))
            targets.append(PlanTarget("metal", DeviceLimits(**fields)))
    try:
        from ..runtime.msl_cpu_rt import MslCpuRuntime  # noqa: PLC0415

        targets.append(PlanTarget("msl-cpu", MslCpuRuntime().limits()))
    except BackendUnavailable as exc:
        targets.append(PlanTarget("msl-cpu", None, str(exc)))
    return targets


def _describe_config(config: WhirConfig) -> str:
    folds = sorted({config.fold(i) for i in range(config.n_rounds + 1)})
    field = getattr(config, "field", None)
    profile = f"p3-whir profile ({field.name}), " if field is not None else ""
    return (f"{profile}2^{config.num_variables} values, fold {'/'.join(map(str, folds))}, rate "
            f"{config.starting_log_inv_rate}: {config.n_rounds} round{'s' * (config.n_rounds != 1)} after the "
            f"first, {config.final_sumcheck_rounds} final sumcheck rounds")


def _plan_lines(plan: DevicePlan) -> list[str]:
    memory, limits = plan.memory, plan.limits
    rows = [("buffer", "bytes", "buffers", "largest binding", "role", "mode")]
    for need in memory.needs:
        binding = "-" if need.runtime else human_bytes(need.binding_bytes) + ("" if need.whole else " (window)")
        rows.append((need.name, human_bytes(need.nbytes) if need.count else "reused", str(need.count), binding,
                     need.role, need.mode.value))
    rows.append(("total at the peak", human_bytes(plan.peak_bytes), str(sum(n.count for n in memory.needs)),
                 "", "", ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["    " + "  ".join(cell.ljust(w) if i in (0, 4, 5) else cell.rjust(w)
                                for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows]
    biggest, widest = memory.largest_buffer, memory.largest_binding
    budget = (f"{human_bytes(plan.budget)} ({plan.budget_source}): peak {human_bytes(plan.peak_bytes)}"
              if plan.budget else plan.budget_source)
    facts = [
        ("largest buffer", f"{human_bytes(biggest.buffer_bytes)} ({biggest.name}) of max_buffer_size "
                           f"{human_bytes(limits.max_buffer_size)}"),
        ("largest whole binding", f"{human_bytes(widest.binding_bytes)} ({widest.name}) of max_storage_binding_size "
                                  f"{binding_text(limits, human_bytes)}"),
        ("budget", budget),
    ]
    facts += [("problem", p.message) for p in plan.problems]
    facts.append(("decision", f"{plan.decision}: {plan.reason}"))
    width = max(len(name) for name, _ in facts)
    return lines + [f"    {name:<{width}}  {value}" for name, value in facts]


def _auto_choice(config: WhirConfig, storage: str | None) -> dict:
    from ..backends import select_backend  # noqa: PLC0415 - the planner sits below backend selection

    try:
        choice = select_backend("auto", config, storage)
    except WhirGpuError as exc:
        return {"backend": None, "reason": str(exc)}
    return {"backend": choice.backend.name, "reason": choice.reason}


def run_plan_command(point: str, storage: str | None, as_json: bool, profile: str = "whir-p3-metal",
                     field: str | None = None) -> int:
    """``whirgpu devices --plan N:F:R [--profile P [--field F]] [--storage P] [--json]``: the plan on every device
    (``plan_targets``) and what ``--backend auto`` would do. Bad input raises ConfigError (the CLI prints it on one
    line, exit 1). A p3-whir point's grinding budget follows ``GridPoint`` (the example's, raised where upstream
    refuses it: one ``note:`` line on stderr says so)."""
    from ..bench.grid import parse_point  # noqa: PLC0415

    grid_point = parse_point(point)
    if profile != "whir-p3-metal" or field is not None:
        grid_point = grid_point.with_profile(profile, field, grid_point.pow_bits)
    config = grid_point.config()
    note = grid_point.note()  # a p3-whir point's budget raised to the smallest upstream accepts
    if note:
        print(f"note: {note}", file=sys.stderr)
    policy = resolve_storage(storage)
    cap = max_gpu_bytes_from_env()
    binding = binding_override()
    entries = []
    for target in plan_targets():
        plan = plan_device(config, target.limits, policy) if target.limits is not None else None
        entries.append((target, plan))
    auto = _auto_choice(config, storage)
    if as_json:
        devices = []
        for target, plan in entries:
            entry = {"backend": target.backend, "available": plan is not None, "note": target.note,
                     "selected": target.selected}
            devices.append({**entry, **plan.to_dict()} if plan is not None else entry)
        print(json.dumps({
            "point": str(grid_point), "num_variables": config.num_variables, "folding_factor": grid_point.fold,
            "rate": config.starting_log_inv_rate, "n_rounds": config.n_rounds,
            "final_sumcheck_rounds": config.final_sumcheck_rounds, "storage": policy, "max_gpu_bytes": cap,
            "max_binding_bytes": binding and {"bytes": binding[0], "source": binding[1]},
            "thresholds": {cls: {"min_variables": t.min_variables, "source": t.source}
                           for cls, t in GPU_MIN_VARIABLES.items()},
            "devices": devices, "auto": auto, "security": security_report(config).to_json_dict(),
        }, indent=2))
        return 0
    lines = [f"plan {grid_point} ({_describe_config(config)}); storage policy {policy}; one evaluation claim; "
             f"{MAX_GPU_BYTES_ENV} {sized(cap) if cap else 'unset'}"
             + (f"; max storage binding lowered to {sized(binding[0])} by {binding[1]}" if binding else ""),
             describe(security_report(config))]
    for target, plan in entries:
        if plan is None:
            lines.append(f"[{target.backend}] unavailable: {target.note}")
            continue
        head = f"[{target.backend}] {plan.limits.name}  [class {plan.device_class}]"
        if target.selected:
            head += f"  [--backend {target.backend} opens this one]"
        lines.append(head)
        lines.extend(_plan_lines(plan))
    lines.append(f"auto would pick: {auto['backend']} — {auto['reason']}" if auto["backend"]
                 else f"auto would fail: {auto['reason']}")
    print("\n".join(lines))
    return 0
