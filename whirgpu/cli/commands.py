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

from ..backends import BACKEND_NAMES
from ..errors import ConfigError, FileError, WhirGpuError
from .options import add_max_binding_flag, add_storage_flag
from .parameter_flags import add_param_flags, p3_config_from_args, params_from_args
from ..devices.overrides import binding_option, lowered_note
from ..field import FIELDS
from ..profiles.p3_whir.defaults import EXAMPLE_FIELD, EXAMPLE_PARAMETERS, MAX_OPENINGS, PLONKY3_COMMIT, \
    describe_example
from ..protocol.parameters import DEFAULT_MAX_POW, DEFAULT_SECURITY_LEVEL
from ..profiles.whir_p3_metal.reachability import derive_explained
from ..profiles.whir_p3_metal.schedule_text import format_schedule
from ..profiles.security import security_report
from ..profiles.p3_whir.schedule_text import format_p3_schedule

PROFILE_NAMES = ("whir-p3-metal", "p3-whir")


def _build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line (``command`` None), or one whose subcommand ``command`` alone is built in full (the
    others are names only), so that a command imports what its own flags need and no other command's."""
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
    for name, add in _SUBPARSERS.items():
        if command is None or name == command:
            add(sub)
        else:  # never parsed: `command` is the one typed
            sub.add_parser(name, add_help=False)
    return parser


def _add_params_parser(sub) -> None:
    p = sub.add_parser("params", help="show the derived round schedule for a configuration",
                       description="Derive every WHIR parameter (rounds, queries, OOD samples, PoW bits) exactly "
                                   "as the reference does (with --profile p3-whir: as upstream Plonky3's p3-whir "
                                   "does), and print the schedule.")
    add_param_flags(p)
    p.add_argument("--profile", default="whir-p3-metal", choices=PROFILE_NAMES,
                   help="protocol profile: whir-p3-metal (default; the Rust reference whir-p3-metal) or p3-whir "
                        f"(upstream Plonky3's p3-whir at {PLONKY3_COMMIT[:8]}, derived as its WhirConfig::new does, "
                        "as `prove --profile p3-whir` proves and `verify --profile p3-whir` checks it; defaults: "
                        f"upstream's example, {describe_example()})")
    p.add_argument("--field", default=None, choices=sorted(FIELDS),
                   help=f"base field (default babybear; {EXAMPLE_FIELD} with --profile p3-whir)")
    p.add_argument("--json", action="store_true", help="print the derived configuration as JSON")


def _add_prove_parser(sub) -> None:
    p = sub.add_parser("prove", help="commit to a polynomial and prove an evaluation",
                       description="Prove an evaluation claim. The instance is either random from --seed (2^N "
                                   "values and one extension point drawn from SmallRng(S), as the reference's "
                                   "sweep) or read from a golden-format JSON file with --from. With --profile "
                                   "p3-whir: 2^N values from SmallRng(S) as upstream's example draws them, opened "
                                   "at --openings points drawn from the transcript.")
    add_param_flags(p, required=False)
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


def _add_devices_parser(sub) -> None:
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


def _add_bench_parser(sub) -> None:
    from ..bench.cli import add_bench_parser  # noqa: PLC0415 - the bench command lives with the bench package

    add_bench_parser(sub)


def _add_verify_parser(sub) -> None:
    from .verify import add_verify_parser  # noqa: PLC0415 - the verify command lives in its own module

    add_verify_parser(sub)


def _add_warmup_parser(sub) -> None:
    from .warmup import add_warmup_parser  # noqa: PLC0415 - the warmup command lives in its own module

    add_warmup_parser(sub)


# Each subcommand's parser, in the order `whirgpu --help` lists them.
_SUBPARSERS = {"params": _add_params_parser, "prove": _add_prove_parser, "devices": _add_devices_parser,
               "bench": _add_bench_parser, "verify": _add_verify_parser, "warmup": _add_warmup_parser}


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
    config = derive_explained(params_from_args(args))
    if args.json:
        print(json.dumps({**config.to_json_dict(), "security": security_report(config).to_json_dict()}, indent=2,
                         sort_keys=True))
    else:
        print(format_schedule(config), end="")  # the table ends with its own newline
    return 0


def _cmd_params_p3(args) -> int:
    config = p3_config_from_args(args)
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


def _cmd_prove(args) -> int:
    from .prove import run_prove  # noqa: PLC0415 - the prove command's modules, only when it runs

    return run_prove(args)


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
    argv = sys.argv[1:] if argv is None else list(argv)
    typed = argv[0] if argv and argv[0] in _SUBPARSERS else None  # else the whole parser: its help, its errors
    parser = _build_parser(typed)
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
