"""The ``whirgpu bench`` command: parser (``add_bench_parser``) and driver (``run_bench(args) -> exit code``).

Exit codes: 0 all proofs identical and verified; 1 a bad option (one line, ConfigError), a backend listed with
--backends that cannot open, or any row with an error (mismatched, rejected or failed proof; shown in the
table); 2 a file that cannot be read or written (--load, --json, --plot: checked before anything runs); 130 Ctrl-C during the grid (the rows finished so far are still reported and saved).
"""

from __future__ import annotations

import json
import shlex
import sys
from datetime import datetime, timezone

from ..cli.options import add_max_binding_flag, add_storage_flag, check_writable
from ..errors import ConfigError
from ..files import write_atomic
from ..profiles.p3_whir.defaults import EXAMPLE_FIELD, EXAMPLE_PARAMETERS
from ..protocol.parameters import DEFAULT_MAX_POW, DEFAULT_SECURITY_LEVEL
from .backends import default_specs, describe, open_specs, parse_specs
from .grid import GRIDS, parse_grid
from .summary import BASELINES

KERNELS_DEFAULT_GRID = "20:4:1"
# run options that --load (which runs nothing) refuses, as (dest, flag)
RUN_OPTIONS = (("grid", "--grid"), ("backends", "--backends"), ("runs", "--runs"), ("warmup", "--warmup"),
               ("seed", "--seed"), ("storage", "--storage"))


def _p3_example() -> str:
    p = EXAMPLE_PARAMETERS
    return f"security {p.security_level}, pow {p.pow_bits}, {p.soundness_type.cli_name} bound, {EXAMPLE_FIELD}"


def print_notes(points) -> None:
    """One line on stderr per p3-whir point whose grinding budget was raised (``GridPoint.note``)."""
    for point in points:
        note = point.note()
        if note:
            print(f"note: {point}: {note}", file=sys.stderr)


def add_bench_parser(sub) -> None:
    # whirgpu.cli builds its parser by calling this

    p = sub.add_parser(
        "bench", help="time proofs over a grid of configurations on several backends and compare them",
        description="Prove every grid point on every backend (untimed warm-ups, then timed runs; the median "
                    "is reported: the steady state, as a long-lived process proves a shape it has proved before; "
                    "the first proof's time is shown beside it), check that all backends prove the same bytes "
                    "and that the proof verifies, and print one row per point with each backend's time and the "
                    "speedup of the fastest kernel backend over the baseline. --load renders saved --json results instead of running.")
    run = p.add_argument_group("what to run")
    run.add_argument("--grid", metavar="GRID",
                     help=f"a named grid ({', '.join(f'{k}: {len(v)} points' for k, v in GRIDS.items())}; default is "
                          "the published WHIR-on-Metal grid, n = 20-24) or N:F:R,... (2^N values, fold F, log2 "
                          "inverse rate R). Default: default")
    run.add_argument("--backends", metavar="LIST",
                     help="comma-separated NAME[:MUL] specs: cpu, wgpu, wgpu:u64, wgpu:emulated, dawn (Dawn: "
                          "emulated multiply only), metal[:MUL], msl-cpu[:MUL] (MUL: mulhi, u64, emulated). Default: "
                          f"{','.join(str(s) for s in default_specs())}, skipping any that cannot run here; "
                          "a listed backend that cannot run is an error")
    run.add_argument("--profile", default="whir-p3-metal", choices=("whir-p3-metal", "p3-whir"),
                     help="protocol profile of every point: whir-p3-metal (default: the reference sweep's security "
                          f"{DEFAULT_SECURITY_LEVEL}, pow {DEFAULT_MAX_POW}, BabyBear) or p3-whir (upstream Plonky3's "
                          f"example configuration at each point's N, F and R: {_p3_example()}; one opening drawn "
                          "from the transcript)")
    run.add_argument("--field", default=None, choices=("babybear", "koalabear"),
                     help=f"base field of --profile p3-whir (default {EXAMPLE_FIELD})")
    run.add_argument("--pow-bits", type=int, default=None, metavar="B",
                     help=f"grinding budget of every --profile p3-whir point (default {EXAMPLE_PARAMETERS.pow_bits}, "
                          "the example's, raised at a point where upstream refuses it to the smallest budget it "
                          "accepts, with a note on stderr; a given budget upstream refuses is an error naming the "
                          "one that works)")
    run.add_argument("--throughput", type=int, metavar="COUNT",
                     help="proofs per second instead: COUNT proofs one by one, then COUNT through Prover.prove_many "
                          "(proofs in flight), per point and backend (whir-p3-metal profile)")
    run.add_argument("--devices", choices=("all",), default=None,
                     help="with --throughput: also prove the COUNT on every adapter at once (prove_many devices=all)")
    run.add_argument("--processes", type=int, default=None, metavar="K",
                     help="with --throughput: also prove the COUNT in K worker processes per device "
                          "(prove_many processes=K)")
    run.add_argument("--window", type=float, default=None, metavar="SECONDS",
                     help="with --throughput: time each run in windows of SECONDS (the COUNT instances proved round "
                          "and round), after one untimed window that brings the device's clocks up")
    run.add_argument("--windows", type=int, default=3, metavar="N",
                     help="with --window: how many timed windows each run reports (default 3)")
    run.add_argument("--runs", type=int, metavar="N", help="timed runs per point and backend (default 3)")
    run.add_argument("--warmup", type=int, metavar="N",
                     help="untimed runs before them (default 1), after those a GPU backend needs to reach its "
                          "steady state: its proofs until one of the shape is replayed from its recorded launches "
                          "(the 3rd; none on cpu or with replay off)")
    run.add_argument("--seed", type=int, metavar="S", help="seed of each point's random instance (default 1)")
    add_storage_flag(run)
    add_max_binding_flag(run)
    tables = p.add_argument_group("stacked tables (p3-whir): the stacked proof beside the single-column one")
    tables.add_argument("--tables", metavar="LOGROWSxCOLS[,...]",
                        help="time a stacked commitment + opening of these tables (the oracle's syntax, e.g. "
                             "10x3,8x2) beside a single-column p3-whir proof of the same stacked n, per backend that "
                             "proves tables, with their ratio")
    tables.add_argument("--layout", metavar="suffix|prefix", help="with --tables: the stacking (default suffix)")
    tables.add_argument("--open", metavar="SPEC",
                        help="with --tables: the opening batches, TABLE:CURRENT[:NEXT][/...] (default: every column "
                             "of every table at one point)")
    tables.add_argument("--points", metavar="transcript|prescribed",
                        help="with --tables: the batches' points drawn from the transcript (default) or prescribed")
    tables.add_argument("--zk", action="store_true",
                        help="with --tables: time the zero-knowledge proof (HidingWhirPcs, prefix layout, prescribed "
                             "points, masks from the OS CSPRNG) beside the same proof without zk, alternated, on each "
                             "backend of --backends (default as without --zk: "
                             f"{','.join(str(s) for s in default_specs())}, skipping any that cannot run here; the "
                             "cpu one is the numpy reference, slow at large n: --backends wgpu leaves it out); every "
                             "backend's plain proof must be the same bytes")
    tables.add_argument("--fold", type=int, metavar="F",
                        help=f"with --tables: the folding factor (default {EXAMPLE_PARAMETERS.folding.k}, the "
                             "example's)")
    tables.add_argument("--rate", type=int, metavar="R",
                        help=f"with --tables: log2 inverse rate (default {EXAMPLE_PARAMETERS.starting_log_inv_rate})")
    run.add_argument("--phases", action="store_true",
                     help="also print the time per proof phase (kernel backends: one extra profiled run that waits "
                          "for the device at each phase; cpu: the median run)")
    run.add_argument("--kernels", action="store_true",
                     help="calibrate each GPU backend (copy bandwidth, Montgomery products/s, dispatch and "
                          "readback overhead) and time each kernel of a proof as a fraction of it; uses --grid "
                          f"points (default {KERNELS_DEFAULT_GRID} with --kernels)")
    out = p.add_argument_group("output")
    out.add_argument("--baseline", choices=BASELINES, default=None,
                     help="what speedup divides: cpu (default: the numpy reference in this run), or the Rust "
                          "reference's figures on the default grid: rust-16core (CPU, 16-core Xeon), rust-m1 (CPU, "
                          "Apple M1, published), rust-m1-metal (Metal GPU, M1, published)")
    out.add_argument("--reference", action="store_true", help="add the three Rust reference columns")
    out.add_argument("--markdown", action="store_true", help="print GitHub markdown instead of the rich table")
    out.add_argument("--json", metavar="FILE", help="write every setting, run and proof hash to FILE")
    out.add_argument("--plot", metavar="FILE.png",
                     help="write a speedup heatmap per n (needs matplotlib: pip install 'matplotlib>=3.7')")
    out.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    out.add_argument("--load", nargs="+", metavar="FILE.json",
                     help="run nothing: merge saved --json files (a later file's row replaces the same point and "
                          "backend of an earlier one) and render them")


def _counts(args) -> tuple[int, int, int]:
    runs = 3 if args.runs is None else args.runs
    warmup = 1 if args.warmup is None else args.warmup
    seed = 1 if args.seed is None else args.seed
    if runs < 1:
        raise ConfigError(f"--runs {runs}: need at least 1 timed run")
    if warmup < 0:
        raise ConfigError(f"--warmup {warmup}: cannot be negative")
    if not 0 <= seed < 1 << 64:
        raise ConfigError(f"--seed {seed} is not a u64 seed (must be in [0, 2^64))")
    return runs, warmup, seed


def _command_line(args, grid: str, specs: list[str], runs: int, warmup: int, seed: int) -> str:
    """The command with every run setting spelled out, so it can be re-run as is."""
    words = ["whirgpu", "bench", "--grid", grid, "--backends", ",".join(specs), "--runs", str(runs),
             "--warmup", str(warmup), "--seed", str(seed)]
    words += ["--storage", args.storage] if args.storage else []
    words += ["--max-binding", args.max_binding] if getattr(args, "max_binding", None) else []
    words += ["--phases"] if args.phases else []
    if getattr(args, "profile", "whir-p3-metal") != "whir-p3-metal":
        words += ["--profile", args.profile] + (["--field", args.field] if args.field else [])
        words += ["--pow-bits", str(args.pow_bits)] if args.pow_bits is not None else []
    return shlex.join(words)


def _write_json(path: str, doc: dict) -> None:
    write_atomic(path, json.dumps(doc, indent=2) + "\n")


def _run_throughput(args) -> int:
    from .throughput import run_throughput  # noqa: PLC0415

    if args.throughput < 1:
        raise ConfigError(f"--throughput needs a positive proof count, got {args.throughput}")
    if args.profile != "whir-p3-metal":
        raise ConfigError("--throughput measures whir-p3-metal proofs (Prover.prove_many); drop --profile")
    if args.processes is not None and args.processes < 1:
        raise ConfigError(f"--processes needs a positive count of worker processes, got {args.processes}")
    windows = None
    if args.window is not None:
        if not args.window > 0 or args.windows < 1:
            raise ConfigError(f"--window needs a positive number of seconds and --windows a positive count, got "
                              f"{args.window:g} and {args.windows}")
        from .throughput import Windows  # noqa: PLC0415

        windows = Windows(args.window, args.windows)
    points = parse_grid(args.grid or "20:4:1")
    specs = parse_specs(args.backends) if args.backends else default_specs()
    backends, skipped = open_specs(specs, args.storage, explicit=args.backends is not None)
    for spec, reason in skipped.items():
        print(f"skipping {spec}: {reason}", file=sys.stderr)
    check_writable(args.json, "--json")
    return run_throughput(points, backends, args.throughput, args.seed if args.seed is not None else 1, args.json,
                          args.markdown, args.devices == "all", args.processes, windows)


def _run_kernels(args) -> int:
    given = [flag for dest, flag in (("load", "--load"), ("plot", "--plot"), ("phases", "--phases"),
                                     ("reference", "--reference"), ("baseline", "--baseline"),
                                     ("warmup", "--warmup"), ("seed", "--seed")) if getattr(args, dest)]
    if given:
        raise ConfigError(f"--kernels does not take {given[0]}")
    try:
        from .kernels import run_kernels  # noqa: PLC0415 - built separately; absent until then
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.kernels":
            raise ConfigError(f"--kernels is not available: {exc}") from None
        raise ConfigError("--kernels is not available yet") from None
    except ImportError as exc:
        raise ConfigError(f"--kernels is not available: {exc}") from None
    points = parse_grid(args.grid or KERNELS_DEFAULT_GRID, args.profile, args.field, args.pow_bits)
    specs = parse_specs(args.backends) if args.backends else default_specs()
    runs, _, _ = _counts(args)
    print_notes(points)
    check_writable(args.json, "--json")
    return run_kernels(points, specs, runs, args.storage, args.json, args.markdown, args.quiet)


def _load(args, baseline: str):
    from .check import compare_proofs  # noqa: PLC0415
    from .results import load_file, merge  # noqa: PLC0415

    given = [flag for dest, flag in RUN_OPTIONS if getattr(args, dest) is not None]
    if given:
        raise ConfigError(f"--load renders saved results and runs nothing; drop {given[0]}")
    loaded = [(path, load_file(path)) for path in args.load]
    results = merge(loaded)
    if len({r.settings.get("seed") for _, r in loaded}) == 1:  # same instances: proofs must agree across files
        for point in results.points:
            compare_proofs(results.point_rows(point))
    results.date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    results.command = shlex.join(["whirgpu", "bench", "--load", *args.load, "--baseline", baseline])
    return results


def _run(args):
    from .host import host_info  # noqa: PLC0415
    from .progress import progress_bar  # noqa: PLC0415
    from .results import BenchResults  # noqa: PLC0415
    from .runner import Plan, run_grid  # noqa: PLC0415
    from .report import console  # noqa: PLC0415

    grid = args.grid or "default"
    points = parse_grid(grid, args.profile, args.field, args.pow_bits)
    specs = parse_specs(args.backends) if args.backends else default_specs()
    runs, warmup, seed = _counts(args)
    backends, skipped = open_specs(specs, args.storage, explicit=args.backends is not None)
    err = console(stderr=True)
    for spec, reason in skipped.items():
        err.print(f"skipping {spec}: {reason}", markup=False)
    print_notes(points)
    devices = {spec: describe(backend) for spec, backend in backends.items()}
    results = BenchResults(
        date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        command=_command_line(args, grid, list(backends), runs, warmup, seed),
        host=host_info(),
        settings={"grid": grid, "points": [str(p) for p in points], "backends": list(backends), "runs": runs,
                  "warmup": warmup, "warmup_until_replayed": True, "seed": seed, "storage": args.storage,
                  "phases": args.phases},
        backends={spec: {"device": devices[spec], "storage": backend.storage} for spec, backend in backends.items()},
        skipped=skipped,
    )
    plan = Plan(points, backends, runs, warmup, seed, args.phases)
    width = len(plan.label(points[0], next(iter(backends)), "")) + len("profiled run")
    with progress_bar(plan.total_steps(), args.quiet, width) as on_step:
        run_grid(plan, results, devices, on_step)
    return results


def _load_kernel_reports(args, docs: list[tuple[str, dict]]) -> int:
    """``--load`` of ``--kernels`` reports: print their tables again (``--markdown``), merged; ``--json`` writes
    the merged report."""
    from .kernel_report import print_kernel_report  # noqa: PLC0415
    from .kernels import is_report, merge_reports  # noqa: PLC0415

    grids = [path for path, doc in docs if not is_report(doc)]
    if grids:
        raise ConfigError(f"--load: {grids[0]} is not a --kernels report like the others; load grid results "
                          "and --kernels reports separately")
    given = [flag for dest, flag in (("plot", "--plot"), ("baseline", "--baseline"), ("reference", "--reference"),
                                     ("phases", "--phases")) if getattr(args, dest)]
    if given:
        raise ConfigError(f"--load of --kernels reports renders their tables only (--markdown, --json); drop "
                          f"{given[0]}")
    merged = merge_reports(docs)
    print_kernel_report(merged, args.markdown)
    if args.json:
        _write_json(args.json, merged)
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


TABLE_ONLY = (("layout", "--layout"), ("open", "--open"), ("points", "--points"), ("fold", "--fold"),
              ("rate", "--rate"))
NOT_WITH_TABLES = (("grid", "--grid"), ("throughput", "--throughput"), ("kernels", "--kernels"), ("load", "--load"),
                   ("plot", "--plot"), ("baseline", "--baseline"), ("reference", "--reference"),
                   ("phases", "--phases"), ("devices", "--devices"), ("processes", "--processes"),
                   ("window", "--window"))


def _run_tables(args) -> int:
    """``--tables``: the stacked proof beside the single-column one (``bench.tables``)."""
    from ..profiles.p3_whir.defaults import example_parameters, resolve  # noqa: PLC0415
    from ..profiles.p3_whir.tables.document_checks import stacked_arity  # noqa: PLC0415
    from ..profiles.p3_whir.tables.spec import TablesSpec  # noqa: PLC0415
    from .host import host_info  # noqa: PLC0415
    from .report import console  # noqa: PLC0415
    from .tables import render_tables_bench, run_tables_bench  # noqa: PLC0415

    given = [flag for dest, flag in NOT_WITH_TABLES if getattr(args, dest, None) not in (None, False)]
    if given:
        raise ConfigError(f"--tables times one stacked shape beside its single column; it does not take {given[0]}")
    if args.zk:
        return _run_zk(args)
    spec = TablesSpec.parse(args.tables, args.open, args.layout, args.points)
    params = example_parameters(args.fold, args.rate, pow_bits=args.pow_bits)
    resolved = resolve(stacked_arity(spec.protocol.shapes, params.folding.k), params, args.field or EXAMPLE_FIELD,
                       explicit=args.pow_bits is not None)
    if resolved.note:
        print(f"note: {resolved.note}", file=sys.stderr)
    config = resolved.config
    runs, warmup, seed = _counts(args)
    specs = parse_specs(args.backends) if args.backends else default_specs()
    backends, skipped = open_specs(specs, args.storage, explicit=args.backends is not None)
    err = console(stderr=True)
    for name, reason in skipped.items():
        err.print(f"skipping {name}: {reason}", markup=False)
    check_writable(args.json, "--json")
    words = ["whirgpu", "bench", "--tables", spec.canonical()["tables"], "--layout", spec.layout, "--open",
             spec.canonical()["open"], "--points", spec.points, "--fold", str(config.params.folding.k), "--rate",
             str(config.params.starting_log_inv_rate), "--field", config.field.name, "--pow-bits",
             str(config.params.pow_bits), "--backends", ",".join(backends), "--runs", str(runs), "--warmup",
             str(warmup), "--seed", str(seed)]
    devices = {name: describe(backend) for name, backend in backends.items()}

    def on_step(description: str) -> None:
        if not args.quiet:
            err.print(f"  {description}", markup=False)

    bench = run_tables_bench(spec, config, backends, runs, warmup, seed, on_step, devices)
    bench.date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    bench.command, bench.host = shlex.join(words), host_info()
    render_tables_bench(bench, args.markdown)
    if args.json:
        _write_json(args.json, bench.to_json())
        print(f"wrote {args.json}", file=sys.stderr)
    return 1 if bench.has_errors else 0


def _run_zk(args) -> int:
    """``--tables --zk``: the hiding proof beside the plain one, per backend (``bench.zk``)."""
    from ..profiles.p3_whir.defaults import example_parameters, resolve  # noqa: PLC0415
    from ..profiles.p3_whir.tables.document_checks import stacked_arity  # noqa: PLC0415
    from ..profiles.p3_whir.tables.spec import TablesSpec  # noqa: PLC0415
    from ..profiles.p3_whir.zk.config import ZkWhirConfig  # noqa: PLC0415
    from .host import host_info  # noqa: PLC0415
    from .report import console  # noqa: PLC0415
    from .zk import render_zk_bench, run_zk_bench  # noqa: PLC0415

    if args.layout not in (None, "prefix") or args.points not in (None, "prescribed"):
        raise ConfigError("--zk: HidingWhirPcs has the prefix layout and prescribed points only; leave --layout and "
                          "--points out")
    spec = TablesSpec.parse(args.tables, args.open, "prefix", "prescribed")
    if any(b.next for b in spec.protocol.batches):
        raise ConfigError(f"--open {args.open}: --zk opens current columns only; next-row openings are refused")
    params = example_parameters(args.fold, args.rate, pow_bits=args.pow_bits)
    resolved = resolve(stacked_arity(spec.protocol.shapes, params.folding.k), params, args.field or EXAMPLE_FIELD,
                       explicit=args.pow_bits is not None)
    if resolved.note:
        print(f"note: {resolved.note}", file=sys.stderr)
    config = resolved.config
    try:
        zk_config = ZkWhirConfig.derive(config.num_variables, config.params, config.field)
    except ConfigError as exc:
        raise ConfigError(f"--zk: {exc}") from None
    runs, warmup, seed = _counts(args)
    specs = parse_specs(args.backends) if args.backends else default_specs()
    check_writable(args.json, "--json")
    backends, skipped = open_specs(specs, args.storage, explicit=args.backends is not None)
    err = console(stderr=True)
    for name, reason in skipped.items():
        err.print(f"skipping {name}: {reason}", markup=False)
    c = spec.canonical()
    words = ["whirgpu", "bench", "--tables", c["tables"], "--zk"] + (["--open", c["open"]] if c["open"] else [])
    words += ["--fold", str(config.params.folding.k), "--rate", str(config.params.starting_log_inv_rate), "--field",
              config.field.name, "--pow-bits", str(config.params.pow_bits), "--backends", ",".join(backends),
              "--runs", str(runs), "--warmup", str(warmup), "--seed", str(seed)]
    words += ["--storage", args.storage] if args.storage else []
    devices = {name: describe(backend) for name, backend in backends.items()}

    def on_step(description: str) -> None:
        if not args.quiet:
            err.print(f"  {description}", markup=False)

    try:
        bench = run_zk_bench(spec, config, zk_config, backends, runs, warmup, seed, on_step, devices)
    finally:
        for backend in backends.values():
            backend.close()
    bench.date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    bench.command, bench.host = shlex.join(words), host_info()
    print("\n".join(render_zk_bench(bench)))
    if args.json:
        _write_json(args.json, bench.to_json())
        print(f"wrote {args.json}", file=sys.stderr)
    return 1 if bench.has_errors else 0


def run_bench(args) -> int:
    if args.tables is not None:
        return _run_tables(args)
    given = [flag for dest, flag in TABLE_ONLY if getattr(args, dest, None) is not None]
    given += ["--zk"] if getattr(args, "zk", False) else []
    if given:
        raise ConfigError(f"{given[0]} refines --tables; give --tables too")
    if args.window is not None and args.throughput is None:
        raise ConfigError("--window times the runs of --throughput; add --throughput COUNT")
    if args.kernels:
        return _run_kernels(args)
    if args.throughput is not None:
        return _run_throughput(args)
    if args.load:
        from ..cli.options import read_json_file  # noqa: PLC0415
        from .kernels import is_report  # noqa: PLC0415

        given = [flag for dest, flag in RUN_OPTIONS if getattr(args, dest) is not None]
        if given:
            raise ConfigError(f"--load renders saved results and runs nothing; drop {given[0]}")
        check_writable(args.json, "--json")
        docs = [(path, read_json_file(path)) for path in args.load]
        if any(is_report(doc) for _, doc in docs):
            return _load_kernel_reports(args, docs)
    baseline = args.baseline or "cpu"
    check_writable(args.json, "--json")
    check_writable(args.plot, "--plot")
    if args.plot:
        from .plot import require_matplotlib  # noqa: PLC0415

        require_matplotlib()
    results = _load(args, baseline) if args.load else _run(args)

    from .report import print_report  # noqa: PLC0415
    from .results import to_json  # noqa: PLC0415
    from .summary import summarize  # noqa: PLC0415

    print_report(results, baseline, args.reference, args.phases, args.markdown)
    summaries = summarize(results, baseline)
    if args.json:
        _write_json(args.json, to_json(results, [s.to_json() for s in summaries]))
        print(f"wrote {args.json}", file=sys.stderr)
    if args.plot:
        from .plot import write_heatmap  # noqa: PLC0415

        write_heatmap(args.plot, summaries, results.devices(), baseline)
        print(f"wrote {args.plot}", file=sys.stderr)
    if results.interrupted and not args.load:
        return 130
    return 1 if results.has_errors else 0
