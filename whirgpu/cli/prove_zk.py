"""``whirgpu prove --profile p3-whir --zk --tables 10x3,8x2 [--open SPEC | --evaluations E] [--mask-seed N]
[--ell-zk 4] [--mask-log-inv-rate 1] [--seed S] ...``: a zero-knowledge (hiding) proof, as the oracle's
``prove-tables --zk`` makes it with the same flags, written as a hiding ``p3-whir-oracle/v2`` document.

The flags are the oracle's (``oracle-p3 prove-tables --zk``): the tables are stacked in the prefix layout (the only
one HidingWhirPcs has: ``--layout prefix`` is implied, ``suffix`` refused), the points are prescribed (drawn from
SmallRng(S) after the tables, as the oracle draws them; ``--points transcript`` refused), ``--open`` takes current
columns only (a next-row opening is refused with one line), ``--evaluations E`` (also spelled ``--openings E``)
opens every column of every table at E points instead; ``-n N`` without ``--tables`` is one polynomial, ``--tables
Nx1``. The masks come from the operating system's CSPRNG; ``--mask-seed N`` makes them
``StdRng::seed_from_u64(N)`` — the oracle's bytes, for tests and reproduction only, and every output says so.
``--backend auto`` (and ``cpu``) prove with the numpy reference, and say why; a GPU backend's name proves the same
bytes with ``ZkBackendProver`` (its size-2^n work on the device, host-driven). ``--witness`` also writes the columns (then the document hides
nothing; the oracle's files carry them). The instance seed is recorded (``params.seed``) only in a seeded or
``--witness`` document: it names the columns.
"""

from __future__ import annotations

import json
import sys
import time

from ..errors import ConfigError

ZK_FLAGS = {"mask_seed": "--mask-seed", "ell_zk": "--ell-zk", "mask_log_inv_rate": "--mask-log-inv-rate",
            "evaluations": "--evaluations"}
CPU_REASON = "--zk: the cpu backend unless --backend names a GPU one, whose hiding prover does its size-2^n work " \
             "on the device but is not yet one launch program (issue 40)"
RATE_HINT = " (upstream's zk tests use a starting rate of 2: try -r 2)"


def add_zk_flags(group) -> None:
    """``--zk`` and its refinements (the oracle's flags) on ``prove``'s argument group ``group``."""
    group.add_argument("--zk", action="store_true",
                       help="--profile p3-whir: a zero-knowledge (hiding) proof with upstream's HidingWhirPcs, as the "
                            "oracle's prove-tables --zk (prefix layout, prescribed points, current columns only; "
                            "masks from the OS CSPRNG; the numpy reference on --backend auto or cpu, the same bytes on a "
                            "named GPU --backend)")
    group.add_argument("--mask-seed", dest="mask_seed", type=int, default=None, metavar="N",
                       help="with --zk: masks from StdRng::seed_from_u64(N) instead of the OS CSPRNG: reproducible "
                            "(the oracle's bytes), for tests only, NOT hiding against anyone who knows N")
    group.add_argument("--ell-zk", dest="ell_zk", type=int, default=None, metavar="L",
                       help="with --zk: the sumcheck mask length (upstream's ZkParameters.ell_zk, default 4, >= 3)")
    group.add_argument("--mask-log-inv-rate", dest="mask_log_inv_rate", type=int, default=None, metavar="R",
                       help="with --zk: log2 inverse rate of the mask codes (default 1, >= 1)")
    group.add_argument("--evaluations", type=int, default=None, metavar="E",
                       help="with --zk: E batches per table, each opening all its columns (default 1; instead of "
                            "--open; --openings E says the same)")


def check_zk_flags(args) -> None:
    """The refinements of ``--zk`` without it: a ConfigError naming the first."""
    if getattr(args, "zk", False):
        return
    for dest, flag in ZK_FLAGS.items():
        if getattr(args, dest, None) is not None:
            raise ConfigError(f"{flag} needs --zk (it refines a zero-knowledge proof)")


def _zk_spec(args):
    from ..profiles.p3_whir.tables.spec import TablesSpec, parse_tables  # noqa: PLC0415

    if args.layout not in (None, "prefix"):
        raise ConfigError(f"--layout {args.layout}: --zk stacks the tables in the prefix layout, the only variable "
                          "order HidingWhirPcs has (leave --layout out, or give prefix)")
    if args.points not in (None, "prescribed"):
        raise ConfigError(f"--points {args.points}: --zk opens at prescribed points only (HidingWhirPcs has no "
                          "transcript-drawn points); leave --points out")
    count = args.evaluations if args.evaluations is not None else args.openings
    if args.evaluations is not None and args.openings is not None and args.evaluations != args.openings:
        raise ConfigError("--evaluations and --openings both count the points under --zk: give one")
    if args.open is not None and count is not None:
        raise ConfigError("--zk: give --open or --evaluations, not both")
    if count is not None and count < 1:
        raise ConfigError(f"--evaluations {count}: at least 1")
    tables = args.tables
    if tables is None:
        if args.num_variables is None:
            raise ConfigError("--zk needs --tables LOGROWSxCOLS[,...] (or -n N for one polynomial, --tables Nx1)")
        tables = f"{args.num_variables}x1"
    shapes = parse_tables(tables)
    open_text = args.open
    if open_text is None:
        open_text = "/".join(f"{t}:{','.join(map(str, range(s.columns)))}" for t, s in enumerate(shapes)
                             for _ in range(1 if count is None else count))
    spec = TablesSpec.parse(tables, open_text, "prefix", "prescribed")
    for batch in spec.protocol.batches:
        if batch.next:
            raise ConfigError(f"--open {args.open}: --zk opens current columns only; the next-row opening of table "
                              f"{batch.table} is refused (HidingWhirPcs opens point evaluations of one polynomial)")
    return spec


def _backend_line(args) -> tuple[str, str]:
    """(the backend's name, the line that says why it proves)."""
    if args.backend == "auto":
        return "cpu", f"backend: cpu ({CPU_REASON})"
    if args.backend == "cpu":
        return "cpu", "backend: cpu (--backend cpu)"
    return args.backend, f"backend: {args.backend} (--backend {args.backend}: the hiding prover's size-2^n work " \
                         "on the device, host-driven)"


def run_prove_zk(args) -> int:
    from ..files import write_atomic  # noqa: PLC0415
    from ..profiles.p3_whir.tables.instance import draw_instance  # noqa: PLC0415
    from ..profiles.p3_whir.zk.api import ZkOptions, prove_zk_statement, zk_backend  # noqa: PLC0415
    from ..profiles.p3_whir.zk.config import ZkWhirConfig  # noqa: PLC0415
    from ..profiles.p3_whir.zk.hiding_document import read_p3_zk_document, verify_p3_zk_document  # noqa: PLC0415
    from ..profiles.p3_whir.zk.randomness import seeded_note  # noqa: PLC0415
    from .options import check_writable, output_path, phases_ms  # noqa: PLC0415
    from .progress import progress_line, wanted  # noqa: PLC0415
    from .prove_tables import table_config  # noqa: PLC0415

    if args.profile != "p3-whir":
        raise ConfigError("--zk needs --profile p3-whir (the hiding PCS is upstream Plonky3 p3-whir's)")
    if args.from_file:
        raise ConfigError("--zk proves a random instance: use --seed S (not --from)")
    if args.format is not None:
        raise ConfigError(f"--format {args.format} does not apply to --zk (the proof is a p3-whir-oracle/v2 JSON "
                          "document)")
    if args.statement_out is not None:
        raise ConfigError("--statement-out does not apply to --zk (the statement is in the document's openings)")
    if args.seed < 0 or args.seed >> 64:
        raise ConfigError(f"--seed {args.seed}: a u64 is expected (SmallRng::seed_from_u64)")
    backend_name, backend_line = _backend_line(args)
    spec = _zk_spec(args)
    try:
        options = ZkOptions(4 if args.ell_zk is None else args.ell_zk,
                            1 if args.mask_log_inv_rate is None else args.mask_log_inv_rate, args.mask_seed)
    except ConfigError as exc:
        raise ConfigError(f"--zk: {str(exc).replace('mask_seed', '--mask-seed')}") from None
    out = output_path(args.out, "proof.json", "--out")
    check_writable(out, "--out")
    if args.tables is None:
        args.num_variables = None  # -n named the one table (--tables Nx1); with --tables, -n must be the stacked n
    config = table_config(args, spec)
    field, fold = config.field, config.folding_schedule[0]
    try:
        zk_config = ZkWhirConfig.derive(config.num_variables, config.params, field, options.ell_zk,
                                        options.mask_log_inv_rate)
    except ConfigError as exc:
        hint = RATE_HINT if "RandomnessExceedsSlack" in str(exc) and config.params.starting_log_inv_rate < 2 else ""
        raise ConfigError(f"--zk: {exc}{hint}") from None
    seeded = options.mask_seed is not None
    if not args.json:
        print(backend_line)
        if seeded:
            print(seeded_note(options.mask_seed))
        if args.witness:
            print("--witness: the document carries every column, so it hides nothing (for tests and the oracle's "
                  "full check)")
        elif not seeded:
            print(f"note: the columns are SmallRng({args.seed})'s draw, which anyone who knows --seed can repeat; "
                  "the document records no seed (to hide columns of your own, prove them with whirgpu.P3ZkTables)")
    elif seeded:
        print(seeded_note(options.mask_seed), file=sys.stderr)
    start = time.perf_counter()
    columns, points = draw_instance(spec.protocol, args.seed, field, fold, True)
    drawn = time.perf_counter()
    label = f"proving p3-whir zk tables {spec.canonical()['tables']} n={config.num_variables}"
    with progress_line(label, wanted(args.json)):
        # the instance seed names the columns (anyone can draw them again): recorded only where nothing is hidden
        recorded = args.seed if seeded or args.witness else None
        backend, owned = zk_backend(backend_name, zk_config)
        try:
            document = prove_zk_statement(zk_config, spec, columns, points, options.mask_seed, recorded, args.witness,
                                          backend=backend)
        finally:
            if owned:
                backend.close()
    seconds = time.perf_counter() - start
    data = document.dumps().encode()
    verify_p3_zk_document(read_p3_zk_document(json.loads(data)))  # what is written verifies, as it is written
    write_atomic(out, data)
    p = config.params
    masks = seeded_note(options.mask_seed) if seeded else "the operating system's CSPRNG (StdRng keyed by secrets)"
    summary = {"profile": "p3-whir", "format": "p3-whir-oracle/v2", "zk": True, "hiding": not seeded,
               "masks": masks, "field": field.name, "backend": backend_name,
               "backend_reason": backend_line[len(f"backend: {backend_name} ("):-1],
               **spec.canonical(), "num_variables": config.num_variables, "folding_factor": p.folding.k,
               "rate": p.starting_log_inv_rate, "security": p.security_level, "pow_bits": p.pow_bits,
               "soundness": p.soundness_type.cli_name, "ell_zk": options.ell_zk,
               "mask_log_inv_rate": options.mask_log_inv_rate, "seed": args.seed,
               "prove_ms": round(seconds * 1e3, 3),
               "phases_ms": phases_ms({"instance": drawn - start, **document.phase_seconds}, seconds),
               "proof_postcard_bytes": document.tree["proof_postcard_len"], "out": str(out)}
    if seeded:
        summary["mask_seed"] = options.mask_seed
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        how = "seeded masks, NOT hiding" if seeded else "hiding, masks from the OS CSPRNG"
        print(f"proved p3-whir zk ({how}) {field.name} --tables {spec.canonical()['tables']} --open "
              f"{spec.canonical()['open']} n={config.num_variables} fold={p.folding.k} rate={p.starting_log_inv_rate} "
              f"security={p.security_level} pow_bits={p.pow_bits} ell_zk={options.ell_zk} "
              f"mask_log_inv_rate={options.mask_log_inv_rate} (SmallRng({args.seed})) in {seconds * 1e3:.0f} ms; "
              f"postcard proof {document.tree['proof_postcard_len']} bytes")
        print(f"wrote {out} ({len(data)} bytes, p3-whir-oracle/v2, zk)")
    return 0
