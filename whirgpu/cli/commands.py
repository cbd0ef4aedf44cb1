"""The ``whirgpu`` command line: devices, params, prove, verify, bench, warmup.

Exit codes: 0 success / accept; 1 reject or a whirgpu error (bad input, bad proof, device limit), printed as
one line; 2 usage errors (argparse) and files that cannot be read or written (``FileError``, one line on
stderr); 3 an unexpected failure. Set WHIRGPU_DEBUG=1 to see a traceback for unexpected failures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from ..backends import BACKEND_NAMES
from ..errors import ConfigError, FileError, ProofFormatError, WhirGpuError
from ..files import write_atomic
from ..protocol.document_limits import MAX_PROOF_DOCUMENT_BYTES
from .options import add_max_binding_flag, add_storage_flag, check_writable, output_path, phases_ms, \
    read_json_file, write_statement
from ..devices.overrides import binding_option, lowered_note
from ..field import FIELDS
from ..profiles.p3_whir.config import P3WhirConfig
from ..profiles.p3_whir.defaults import EXAMPLE_FIELD, EXAMPLE_PARAMETERS, MAX_OPENINGS, PLONKY3_COMMIT, \
    check_openings, describe_example, example_parameters, max_grind_bits, resolve
from ..protocol.parameters import DEFAULT_MAX_POW, DEFAULT_SECURITY_LEVEL, ProtocolParameters
from ..profiles.whir_p3_metal.reachability import derive_explained
from ..profiles.whir_p3_metal.schedule_text import format_schedule
from ..profiles.security import security_report
from ..profiles.p3_whir.schedule_text import format_p3_schedule
from ..protocol.soundness import SoundnessType

DEFAULT_OUT = {"binary": "proof.whir", "whir-p3-json": "proof.json"}
PROFILE_NAMES = ("whir-p3-metal", "p3-whir")
# The dests of the protocol-parameter flags; `prove --from` refuses every one of them (the file decides).
PARAM_FLAGS = ("num_variables", "folding_factor", "rate", "security", "pow_bits", "soundness", "initial_reduction")


def _add_param_flags(p: argparse.ArgumentParser, required: bool = True) -> None:
    """The protocol-parameter flags; ``required``: -n must be given (-k and -r are checked by the command: the
    p3-whir profile has defaults for them, whir-p3-metal has none)."""
    example = EXAMPLE_PARAMETERS
    g = p.add_argument_group("protocol parameters (defaults: the reference's sweep; with --profile p3-whir, "
                             "upstream's example)")
    g.add_argument("--num-variables", "-n", type=int, required=required, metavar="N",
                   help="the polynomial has 2^N evaluations")
    g.add_argument("--folding-factor", "-k", type=int, default=None, metavar="K",
                   help="variables folded per round (the same K in every round; required for whir-p3-metal, "
                        f"default {example.folding.k} with --profile p3-whir)")
    g.add_argument("--rate", "-r", type=int, default=None, metavar="R",
                   help="starting log2 of the inverse code rate (required for whir-p3-metal, default "
                        f"{example.starting_log_inv_rate} with --profile p3-whir)")
    # Defaults are filled in by _params_from_args, so that `prove --from` can tell a given flag from a default.
    g.add_argument("--security", type=int, default=None, metavar="BITS",
                   help=f"security level in bits (default {DEFAULT_SECURITY_LEVEL}; {example.security_level} with "
                        "--profile p3-whir)")
    g.add_argument("--pow-bits", type=int, default=None, metavar="BITS",
                   help=f"proof-of-work budget the query counts assume (default {DEFAULT_MAX_POW}; with --profile "
                        f"p3-whir the example's {example.pow_bits}, raised where upstream refuses it to the smallest "
                        "budget it accepts, which a note on stderr says, while a given budget upstream refuses is an "
                        "error naming one that works; a derived PoW can be at most "
                        f"{max_grind_bits(EXAMPLE_FIELD)} bits, what the transcript can grind)")
    soundness = "capacity" if example.soundness_type is SoundnessType.CapacityBound else \
        f"capacity; {example.soundness_type.cli_name} with --profile p3-whir"
    g.add_argument("--soundness", default=None, metavar="TYPE",
                   help=f"capacity | johnson | unique (default {soundness})")
    g.add_argument("--initial-reduction", type=int, default=None, metavar="M",
                   help="RS domain reduction of the first round (default min(K, 3); not a p3-whir parameter)")


def _params_from_args(args) -> ProtocolParameters:
    missing = [f for f in ("folding_factor", "rate") if getattr(args, f) is None]
    if missing:
        raise ConfigError(f"{args.command} needs --{missing[0].replace('_', '-')} (the whir-p3-metal profile has no "
                          "default for it)")
    return ProtocolParameters.default(
        num_variables=args.num_variables,
        folding_factor=args.folding_factor,
        starting_log_inv_rate=args.rate,
        security_level=DEFAULT_SECURITY_LEVEL if args.security is None else args.security,
        pow_bits=DEFAULT_MAX_POW if args.pow_bits is None else args.pow_bits,
        soundness_type=SoundnessType.CapacityBound if args.soundness is None else SoundnessType.parse(args.soundness),
        rs_domain_initial_reduction_factor=args.initial_reduction,
    )


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="whirgpu",
        description="WHIR polynomial commitments over BabyBear and KoalaBear: prove on the best available device, "
                    "verify, inspect parameters. Two protocol profiles: whir-p3-metal (the default; proofs are "
                    "byte-compatible with the Rust reference whir-p3-metal) and p3-whir (upstream Plonky3's p3-whir "
                    f"at {PLONKY3_COMMIT[:8]}; proofs are byte-compatible with upstream's).",
    )
    from .. import __version__  # noqa: PLC0415 - the package is initialised by the time the CLI runs

    parser.add_argument("--version", action="version", version=f"whirgpu {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("params", help="show the derived round schedule for a configuration",
                       description="Derive every WHIR parameter (rounds, queries, OOD samples, PoW bits) exactly "
                                   "as the reference does (with --profile p3-whir: as upstream Plonky3's p3-whir "
                                   "does), and print the schedule.")
    _add_param_flags(p)
    p.add_argument("--profile", default="whir-p3-metal", choices=PROFILE_NAMES,
                   help="protocol profile: whir-p3-metal (default; the Rust reference whir-p3-metal) or p3-whir "
                        f"(upstream Plonky3's p3-whir at {PLONKY3_COMMIT[:8]}, derived as its WhirConfig::new does, "
                        "as `prove --profile p3-whir` proves and `verify --profile p3-whir` checks it; defaults: "
                        f"upstream's example, {describe_example()})")
    p.add_argument("--field", default=None, choices=sorted(FIELDS),
                   help=f"base field (default babybear; {EXAMPLE_FIELD} with --profile p3-whir)")
    p.add_argument("--json", action="store_true", help="print the derived configuration as JSON")

    p = sub.add_parser("prove", help="commit to a polynomial and prove an evaluation",
                       description="Prove an evaluation claim. The instance is either random from --seed (2^N "
                                   "values and one extension point drawn from SmallRng(S), as the reference's "
                                   "sweep) or read from a golden-format JSON file with --from. With --profile "
                                   "p3-whir: 2^N values from SmallRng(S) as upstream's example draws them, opened "
                                   "at --openings points drawn from the transcript.")
    _add_param_flags(p, required=False)
    source = p.add_mutually_exclusive_group()  # one of them: _cmd_prove says so (with --tables, --seed 0 is implied)
    source.add_argument("--seed", type=int, metavar="S", help="random polynomial and point from SmallRng(S) "
                        "(with --tables or --zk: default 0, as the oracle's)")
    source.add_argument("--from", dest="from_file", metavar="FILE.json",
                        help="parameters, polynomial and points from a file in the golden format")
    p.add_argument("--backend", default="auto", choices=BACKEND_NAMES,
                   help="compute backend (default auto: the GPU when the proof fits it and it is expected to beat "
                        "the numpy reference at this size (whirgpu devices --plan shows why), else the numpy "
                        "reference; wgpu forces the WGSL kernels through wgpu-native, even on a software adapter; "
                        "dawn runs them through Dawn (pip install 'wgpudawn>=0.32,<0.33'; emulated multiply); metal runs "
                        "the hand-written MSL kernels (macOS); msl-cpu runs them on the CPU, for verification)")
    add_storage_flag(p)
    add_max_binding_flag(p)
    # default None, so that --profile p3-whir can refuse a given --format (its proof has one format)
    p.add_argument("--format", default=None, choices=("binary", "whir-p3-json"),
                   help="proof file format (default binary; whir-p3-json is what the Rust verifier reads; not with "
                        "--profile p3-whir, whose proof is a p3-whir-oracle/v1 JSON document)")
    p.add_argument("--out", "-o", metavar="FILE", help="where to write the proof (default proof.whir / proof.json)")
    p.add_argument("--statement-out", metavar="FILE.json",
                   help="also write the statement the proof proves (its points and claimed values, canonical), "
                        "the file `whirgpu verify --statement` reads")
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    g = p.add_argument_group("protocol profile")
    g.add_argument("--profile", default="whir-p3-metal", choices=PROFILE_NAMES,
                   help="whir-p3-metal (default: the Rust reference whir-p3-metal, verified by its verifier) or "
                        f"p3-whir (upstream Plonky3 p3-whir at {PLONKY3_COMMIT[:8]}, verified by its PCS; defaults: "
                        f"upstream's example, {describe_example()}): the proof is then a p3-whir-oracle/v1 JSON "
                        "document (with --seed; --format does not apply)")
    g.add_argument("--field", default=None, choices=sorted(FIELDS),
                   help=f"base field of --profile p3-whir (default {EXAMPLE_FIELD}, as upstream's example)")
    g.add_argument("--openings", type=int, default=None, metavar="E",
                   help="--profile p3-whir: opening points drawn from the transcript (default 1, at most "
                        f"{MAX_OPENINGS}; whir-p3-metal proves the points of its instance)")
    from .prove_tables import add_table_flags  # noqa: PLC0415
    from .prove_zk import add_zk_flags  # noqa: PLC0415

    add_table_flags(p.add_argument_group("tables (--profile p3-whir; the oracle's prove-tables flags)"))
    add_zk_flags(p.add_argument_group("zero knowledge (--profile p3-whir; the oracle's prove-tables --zk flags)"))

    p = sub.add_parser("devices", help="list the compute devices and what --backend auto would pick",
                       description="List every adapter wgpu-native enumerates, then every one Dawn enumerates "
                                   "(API, type, limits, features, the multiply variant WHIRGPU_MUL=auto chooses), "
                                   "the numpy reference, and what --backend auto would pick and why.")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plan", metavar="N:F:R",
                   help=f"plan a configuration (2^N values, fold F, rate R; security {DEFAULT_SECURITY_LEVEL}, pow "
                        f"{DEFAULT_MAX_POW}, capacity bound) on each device: the memory of every buffer with its "
                        "storage mode against the limits, and whether --backend auto would use the GPU, with the "
                        "reason")
    p.add_argument("--profile", default="whir-p3-metal", choices=PROFILE_NAMES,
                   help="--plan in this protocol profile (p3-whir: upstream's example parameters at fold F and rate "
                        f"R, {_p3_budget_words()}; also written N:F:R@p3-whir/FIELD, or N:F:R@p3-whir/FIELD/powB for "
                        "a given budget)")
    p.add_argument("--field", default=None, choices=sorted(FIELDS),
                   help=f"--plan's field under --profile p3-whir (default {EXAMPLE_FIELD})")
    add_storage_flag(p)
    add_max_binding_flag(p)

    from ..bench.cli import add_bench_parser  # noqa: PLC0415 - the bench command lives with the bench package

    add_bench_parser(sub)

    from .verify import add_verify_parser  # noqa: PLC0415 - the verify command lives in its own module

    add_verify_parser(sub)

    from .warmup import add_warmup_parser  # noqa: PLC0415 - the warmup command lives in its own module

    add_warmup_parser(sub)
    return parser


# ---- commands --------------------------------------------------------------------------------------------------

def _p3_budget_words() -> str:
    p = EXAMPLE_PARAMETERS
    return (f"security {p.security_level}, {p.soundness_type.cli_name} bound, pow {p.pow_bits} raised to the smallest "
            "budget upstream accepts where it refuses that one, with a note on stderr")


def _cmd_params(args) -> int:
    if args.profile == "p3-whir":
        return _cmd_params_p3(args)
    if args.field not in (None, "babybear"):
        raise ConfigError(f"--field {args.field} needs --profile p3-whir (whir-p3-metal is BabyBear only)")
    config = derive_explained(_params_from_args(args))
    if args.json:
        print(json.dumps({**config.to_json_dict(), "security": security_report(config).to_json_dict()}, indent=2,
                         sort_keys=True))
    else:
        print(format_schedule(config), end="")  # the table ends with its own newline
    return 0


def _p3_config_from_args(args) -> P3WhirConfig:
    """The p3-whir configuration the flags name: upstream's example (``defaults.EXAMPLE_PARAMETERS``) with each
    given flag in its place; without --pow-bits the example's budget, raised where upstream refuses it (one
    ``note:`` line on stderr says so), with --pow-bits exactly that budget (``defaults.resolve``)."""
    if args.initial_reduction is not None:
        raise ConfigError("--initial-reduction is not a p3-whir parameter (upstream sets each round's rate instead)")
    params = example_parameters(args.folding_factor, args.rate, args.security, args.soundness, args.pow_bits)
    resolved = resolve(args.num_variables, params, args.field or EXAMPLE_FIELD, explicit=args.pow_bits is not None)
    if resolved.note:
        print(f"note: {resolved.note}", file=sys.stderr)
    return resolved.config


def _cmd_params_p3(args) -> int:
    config = _p3_config_from_args(args)
    if args.json:
        print(json.dumps({**config.to_json_dict(), "security": security_report(config).to_json_dict()}, indent=2,
                         sort_keys=True))
    else:
        print(format_p3_schedule(config, config.field.name), end="")
    return 0


def _format_size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n} ({n / (1 << shift):.4g} {unit})"
    return str(n)


IMPLEMENTATIONS = {"wgpu": "wgpu-native", "dawn": "Dawn"}  # the WebGPU implementations, by backend name
LIMIT_LABELS = {
    "max_buffer_size": "max buffer",
    "max_storage_binding_size": "max storage binding",
    "max_workgroup_storage": "workgroup storage",
    "max_invocations_per_workgroup": "invocations/workgroup",
    "max_workgroups_per_dimension": "workgroups/dimension",
}


def _format_device(label: str, entry: dict) -> list[str]:
    head = f"{label} {entry['name']}"
    if entry["note"]:
        head += f"  [{entry['note']}]"
    if entry["selected"]:
        head += f"  [--backend {entry['runtime']} opens this one]"
    rows = [("api", entry["api"]), ("type", entry["device_type"])]
    if entry["runtime"] in IMPLEMENTATIONS:
        rows.insert(0, ("implementation", f"{IMPLEMENTATIONS[entry['runtime']]} (--backend {entry['runtime']})"))
    for key, name in LIMIT_LABELS.items():
        value = entry["limits"][key]
        rows.append((name, ("no limit" if value >= 1 << 62 else "-" if value == 0 else
                            _format_size(value) if "size" in key or "storage" in key else str(value))
                     + _lowered_text(entry, key)))
    if entry["features"]:
        rows.append(("features", " ".join(("" if has else "no ") + name for name, has in entry["features"].items())))
    rows.append(("multiply (auto)", entry["mul"]))
    if entry.get("storage"):
        rows.append(("storage", entry["storage"]))
    width = max(len(name) for name, _ in rows)
    return [head, *(f"    {name:<{width}}  {value}" for name, value in rows)]


def _lowered_text(entry: dict, key: str) -> str:
    """`` (lowered by WHAT; device: SIZE)`` when ``entry``'s limit ``key`` was lowered, else ""."""
    lowered = entry.get("lowered", {}).get(key)
    return lowered_note(lowered["by"], lowered["device"], _format_size) if lowered else ""


def _cmd_devices(args) -> int:
    from ..devices.report import gather

    if args.plan is not None:
        from .plan import run_plan_command  # noqa: PLC0415

        return run_plan_command(args.plan, args.storage, args.json, args.profile, args.field)

    report = gather()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    lines = []
    if report["max_binding_bytes"]:
        asked = report["max_binding_bytes"]
        lines.append(f"max storage binding lowered to {_format_size(asked['bytes'])} by {asked['source']} (a "
                     "device with a smaller limit keeps its own)")
    for runtime in IMPLEMENTATIONS:  # each implementation's problem (or lack of adapters) heads its own rows
        if report[f"{runtime}_error"]:
            lines.append(f"{runtime}: {report[f'{runtime}_error']}")
        elif not any(entry["runtime"] == runtime for entry in report["adapters"]):
            lines.append(f"{runtime}: no adapters")
        for i, entry in enumerate(report["adapters"]):
            if entry["runtime"] == runtime:
                lines.extend(_format_device(f"[{i}]", entry))
    for i, entry in enumerate(report["adapters"]):
        if entry["runtime"] not in IMPLEMENTATIONS:
            lines.extend(_format_device(f"[{i}]", entry))
    lines.extend(_format_device("[cpu]", report["cpu"]))
    msl_cpu = report["msl_cpu"]
    if msl_cpu["available"]:
        lines.append(f"[msl-cpu] {msl_cpu['name']}  [verification backend: --backend msl-cpu]")
        if msl_cpu["lowered"]:
            lines.append(f"    max storage binding  {_format_size(msl_cpu['max_storage_binding_size'])}"
                         + _lowered_text(msl_cpu, "max_storage_binding_size"))
    else:
        lines.append(f"[msl-cpu] unavailable: {msl_cpu['note']}")
    auto = report["auto"]
    lines.append(f"auto would pick: {auto['backend']} — {auto['reason']}" if auto["backend"]
                 else f"auto would fail: {auto['reason']}")
    print("\n".join(lines))
    return 0


def _load_instance(args):
    """(params, prove, description, instance seed or None) for `prove`. ``prove(prover)`` proves the instance and
    returns the proof file; the claimed values are computed by the prover where the table is (a file's own claims
    must agree with them). A random instance is drawn only then, so a refused configuration costs no 2^n draws."""
    from ..api import canonical_table, claimed_values, random_points
    from ..profiles.whir_p3_metal.serialize import params_and_statement_from_json
    from ..ref import field_np as F

    if args.from_file:
        path = Path(args.from_file)
        doc = read_json_file(path, cap=MAX_PROOF_DOCUMENT_BYTES)  # 2^n evaluations: as large as a proof may be
        flags = [f for f in PARAM_FLAGS if getattr(args, f) is not None]
        if flags:
            raise ConfigError(f"--from takes its parameters from the file; drop --{flags[0].replace('_', '-')}")
        try:
            params, statement = params_and_statement_from_json(doc)
        except ProofFormatError as exc:
            raise ConfigError(f"{path}: {exc}") from None
        evals = doc.get("polynomial_evals_canonical")
        n = params.num_variables
        if not isinstance(evals, list) or len(evals) != 1 << n:
            raise ConfigError(f"{path}: polynomial_evals_canonical must list 2^{n} = {1 << n} values")
        if any(isinstance(v, bool) or not isinstance(v, int) for v in evals):
            raise ConfigError(f"{path}: polynomial_evals_canonical must hold integers")
        claims = F.from_monty(statement.values).astype(np.int64).tolist()

        def prove_file(prover):
            try:  # the values' range is checked where the prover converts them (on the device for a GPU)
                proof_file = prover.prove(canonical_table(np.asarray(evals, dtype=object), n),
                                          F.from_monty(statement.points).astype(np.int64))
            except ConfigError as exc:
                raise ConfigError(f"{path}: polynomial_evals_canonical: {exc}") from None
            for i, (computed, declared) in enumerate(zip(claimed_values(proof_file), claims)):
                if computed != declared:  # the file's claim is false: proving it would write a false proof
                    raise ConfigError(f"{path}: claimed_values_canonical[{i}] = {declared}, but the polynomial's "
                                      f"value at points_canonical[{i}] is {computed}")
            return proof_file

        seed = doc["params"].get("seed")
        return params, prove_file, f"from {path}", seed if isinstance(seed, int) else None
    missing = [f for f in ("num_variables", "folding_factor", "rate") if getattr(args, f) is None]
    if missing:
        raise ConfigError(f"--seed needs --{missing[0].replace('_', '-')} (or use --from FILE.json)")
    if not 0 <= args.seed < 1 << 64:
        raise ConfigError(f"--seed {args.seed} is not a u64 seed (must be in [0, 2^64))")
    params = _params_from_args(args)
    derive_explained(params)  # validate before drawing 2^n values

    def prove_random(prover):
        return prover.prove_monty(*random_points(params.num_variables, args.seed))

    return params, prove_random, f"random instance, seed {args.seed}", args.seed


def _cmd_prove(args) -> int:
    from ..api import Prover
    from ..profiles.whir_p3_metal.serialize import dump

    from .prove_tables import check_table_flags, run_prove_tables  # noqa: PLC0415
    from .prove_zk import check_zk_flags, run_prove_zk  # noqa: PLC0415

    check_zk_flags(args)
    if args.zk:
        return run_prove_zk(args)
    check_table_flags(args, args.profile == "p3-whir", "needs --profile p3-whir (tables are its stacked commitment)")
    if args.profile == "p3-whir" and args.tables is not None:
        return run_prove_tables(args)
    if args.profile == "p3-whir":
        return _cmd_prove_p3(args)
    if args.field not in (None, "babybear"):
        raise ConfigError(f"--field {args.field} needs --profile p3-whir (whir-p3-metal is BabyBear only)")
    if args.openings is not None:
        raise ConfigError(f"--openings {args.openings} needs --profile p3-whir (whir-p3-metal proves the points of "
                          "its instance: one from --seed, or those of --from's file)")
    args.format = args.format or "binary"
    out = output_path(args.out, DEFAULT_OUT[args.format], "--out")
    check_writable(out, "--out")  # before seconds of proving, not after
    check_writable(args.statement_out, "--statement-out")
    params, prove_instance, description, seed = _load_instance(args)
    prover = Prover(params, backend=args.backend, storage=args.storage)  # refuses before 2^n values are drawn
    if not args.json:
        print(f"backend: {prover.backend.name} ({prover.backend_reason})")
    from .progress import progress_line, wanted  # noqa: PLC0415

    label = f"proving n={params.num_variables} fold={params.folding_factor} on {prover.backend.name}"
    start = time.perf_counter()
    with progress_line(label, wanted(args.json)):  # appears only past 2 s, only on a terminal
        proof_file = prove_instance(prover)
    proof_file.seed = seed
    seconds = time.perf_counter() - start
    data = dump(proof_file, args.format)
    write_atomic(out, data)  # a failed write leaves what was at --out as it was
    if args.statement_out:
        from ..ref import field_np  # noqa: PLC0415

        write_statement(args.statement_out, field_np.from_monty(proof_file.statement.points),
                        field_np.from_monty(proof_file.statement.values))
    summary = {
        "backend": prover.backend.name,
        "backend_reason": prover.backend_reason,
        "instance": description,
        "num_variables": params.num_variables,
        "folding_factor": params.folding_factor.to_serde(),  # as params --json and the proof documents
        "rate": params.starting_log_inv_rate,
        "prove_ms": round(seconds * 1e3, 3),
        "phases_ms": phases_ms(prover.last_phase_seconds, seconds),
        "proof_bytes": len(data),
        "storage": prover.storage,
        "bytes_uploaded": prover.last_transfers.uploaded,
        "bytes_downloaded": prover.last_transfers.downloaded,
        "bytes_copied": prover.last_transfers.copied,
        "format": args.format,
        "out": str(out),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        phases = ", ".join(f"{k} {v:.0f}" for k, v in summary["phases_ms"].items())
        print(f"proved n={params.num_variables} fold={params.folding_factor} rate={params.starting_log_inv_rate} "
              f"({description}) in {seconds * 1e3:.0f} ms [{phases} ms]")
        if prover.storage is not None:  # the cpu backend has no device memory: its counters are always 0
            print(f"transfers: {summary['bytes_uploaded']} bytes uploaded, {summary['bytes_downloaded']} downloaded, "
                  f"{summary['bytes_copied']} copied on the device (storage {prover.storage})")
        print(f"wrote {out} ({len(data)} bytes, {args.format})" + (f"; statement {args.statement_out}"
                                                                      if args.statement_out else ""))
    return 0


def _cmd_prove_p3(args) -> int:
    """`prove --profile p3-whir`: a random instance from SmallRng(seed) as upstream's example draws it, proved and
    written as a p3-whir-oracle/v1 document."""
    from ..profiles.p3_whir.api import P3Prover  # noqa: PLC0415
    from ..ref.field_np import field_ops  # noqa: PLC0415
    from ..ref.rng import Xoshiro256PlusPlus, random_base  # noqa: PLC0415

    if args.from_file:
        raise ConfigError("--profile p3-whir proves a random instance: use --seed S (not --from)")
    if args.num_variables is None:
        raise ConfigError("--profile p3-whir needs --num-variables")
    if args.format is not None:
        raise ConfigError(f"--format {args.format} does not apply to --profile p3-whir (its proof is a "
                          "p3-whir-oracle/v1 JSON document)")
    args.openings = 1 if args.openings is None else args.openings
    check_openings(args.openings, "--openings")
    out = output_path(args.out, "proof.json", "--out")
    check_writable(out, "--out")
    check_writable(args.statement_out, "--statement-out")
    config = _p3_config_from_args(args)
    prover = P3Prover(args.num_variables, config.params, config.field, backend=args.backend, storage=args.storage)
    if not args.json:
        print(f"backend: {prover.backend.name} ({prover.backend_reason})")
    field = prover.field
    evaluations = field_ops(field).from_monty(random_base(Xoshiro256PlusPlus(args.seed), 1 << args.num_variables,
                                                          field))
    from .progress import progress_line, wanted  # noqa: PLC0415

    label = (f"proving p3-whir {field.name} n={args.num_variables} fold={config.params.folding.k} on "
             f"{prover.backend.name}")
    start = time.perf_counter()
    with progress_line(label, wanted(args.json)):  # as the default profile's: past 2 s, on a terminal
        document = prover.prove(evaluations, args.openings, seed=args.seed)
    seconds = time.perf_counter() - start
    size = document.write(out)
    if args.statement_out:
        stated = document.to_json()
        write_statement(args.statement_out, stated["points_canonical"], stated["claimed_values_canonical"])
    p = config.params
    summary = {"profile": "p3-whir", "field": field.name, "backend": prover.backend.name,
               "backend_reason": prover.backend_reason, "num_variables": args.num_variables,
               "folding_factor": p.folding.k, "rate": p.starting_log_inv_rate, "security": p.security_level,
               "pow_bits": p.pow_bits, "soundness": p.soundness_type.cli_name, "seed": args.seed,
               "openings": args.openings, "prove_ms": round(seconds * 1e3, 3),
               "phases_ms": phases_ms(prover.last_phase_seconds, seconds),
               "proof_postcard_bytes": document.to_json()["proof_postcard_len"], "out": str(out)}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"proved p3-whir {field.name} n={args.num_variables} fold={p.folding.k} rate={p.starting_log_inv_rate} "
              f"security={p.security_level} pow_bits={p.pow_bits} (SmallRng({args.seed})) in {seconds * 1e3:.0f} ms; "
              "postcard proof "
              f"{summary['proof_postcard_bytes']} bytes")
        print(f"wrote {out} ({size} bytes, p3-whir-oracle/v1)" + (f"; statement {args.statement_out}"
                                                                    if args.statement_out else ""))
    return 0


def _cmd_verify(args) -> int:
    from .verify import run_verify  # noqa: PLC0415

    return run_verify(args)


def _cmd_bench(args) -> int:
    from ..bench.cli import run_bench  # noqa: PLC0415

    return run_bench(args)


def _cmd_warmup(args) -> int:
    from .warmup import run_warmup  # noqa: PLC0415

    return run_warmup(args)


COMMANDS = {"bench": _cmd_bench, "devices": _cmd_devices, "params": _cmd_params, "prove": _cmd_prove,
            "verify": _cmd_verify, "warmup": _cmd_warmup}


DEBUG_ENV = "WHIRGPU_DEBUG"
DEBUG_VALUES = {"1": True, "true": True, "yes": True, "on": True, "": False, "0": False, "false": False,
                "no": False, "off": False}


def debug_from_env() -> bool:
    """``WHIRGPU_DEBUG`` as a switch (1/true/yes/on, or 0/false/no/off/unset); a ConfigError naming it otherwise."""
    value = os.environ.get(DEBUG_ENV, "").strip()
    if value.lower() not in DEBUG_VALUES:
        raise ConfigError(f"{DEBUG_ENV}={value!r} is not a switch: give 1 (show tracebacks) or 0")
    return DEBUG_VALUES[value.lower()]


def main(argv: list[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command == "prove" and args.seed is None and args.from_file is None:
        if args.tables is None and not args.zk:  # a usage error (exit 2), as argparse's own
            parser.error("prove: one of the arguments --seed --from is required (with --tables or --zk, --seed "
                         "defaults to 0, the oracle's prove-tables default)")
        args.seed = 0  # the oracle's prove-tables default: the same command line proves the same instance
    try:
        debug = debug_from_env()  # read first: it decides how every later failure is shown
        from ..environment import check_environment  # noqa: PLC0415

        check_environment()  # every WHIRGPU_* variable, whatever backend the command uses
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        with binding_option(getattr(args, "max_binding", None)):
            return COMMANDS[args.command](args)
    except FileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except WhirGpuError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except MemoryError as exc:  # past the cpu backend's estimate: numpy names the allocation's size
        print(f"error: out of memory: {exc or 'an allocation failed'}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`whirgpu params ... | head`): stop quietly, and keep the interpreter's final flush
        # of stdout from raising again (Python's documented recipe).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:  # noqa: BLE001 - the CLI never shows a traceback unless asked
        if debug:
            raise
        print(f"internal error: {type(exc).__name__}: {exc} (set WHIRGPU_DEBUG=1 for a traceback)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
