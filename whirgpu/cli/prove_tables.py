"""``whirgpu prove --profile p3-whir --tables 10x3,8x2 [--layout suffix|prefix] [--open SPEC] [--points
transcript|prescribed] [--witness] [--seed S] ...``: commit stacked tables and open them in batches, as the oracle's
``prove-tables`` does with the same flags, and write a ``p3-whir-oracle/v2`` document.

The table flags have the oracle's syntax and meaning (``profiles.p3_whir.tables.spec``): a command line means the
same in both tools. The instance is the oracle's: SmallRng(S) ``Table::rand`` per table (column 0's values
first), then with ``--points prescribed`` one ``Point::rand`` per batch (``tables.instance``). The stacked arity
is derived from the tables and the folding factor, so ``-n`` is refused; ``-k``, ``-r``, ``--security``,
``--pow-bits``, ``--soundness``, ``--field`` are the p3-whir profile's flags with its defaults (upstream's example).
``--witness`` also writes the keys ``tables`` and ``stacking`` (every column and the stacked polynomial, as the
oracle writes them; bulky, and refused above the size a verifier re-commits to check them). Without ``--profile
p3-whir`` or without ``--tables`` these flags are refused, and ``prove --profile p3-whir`` without ``--tables``
keeps proving v1's single-column document.
"""

from __future__ import annotations

import json
import sys
import time

from ..errors import ConfigError
from .options import check_writable, output_path, phases_ms

TABLE_FLAGS = {"tables": "--tables", "layout": "--layout", "open": "--open", "points": "--points"}


def add_table_flags(group, verify: bool = False) -> None:
    """``--tables``, ``--layout``, ``--open``, ``--points`` (and ``--witness`` for prove) on ``group``."""
    what = "the tables the proof must commit" if verify else "commit stacked tables (p3-whir-oracle/v2)"
    group.add_argument("--tables", default=None, metavar="LOGROWSxCOLS[,...]",
                       help=f"--profile p3-whir: {what}, e.g. 10x3,8x2 (log2 rows 0..26, columns >= 1; the "
                            "oracle's syntax)")
    group.add_argument("--layout", default=None, metavar="suffix|prefix",
                       help="with --tables: SuffixProver (default, the example's) or PrefixProver stacking")
    group.add_argument("--open", default=None, metavar="SPEC",
                       help="with --tables: the opening batches, BATCH[/BATCH...] with BATCH = TABLE:CURRENT[:NEXT] "
                            "(comma-separated columns; ';' for '/', '|' for the second ':'; default one batch per "
                            "table opening all its columns)")
    group.add_argument("--points", default=None, metavar="transcript|prescribed",
                       help="with --tables: each batch's point drawn from the transcript (default) or prescribed "
                            + ("by the prover" if verify else "(drawn from SmallRng(S) after the tables)"))
    if not verify:
        group.add_argument("--witness", action="store_true",
                           help="with --tables: also write every column and the stacked polynomial (the oracle's "
                                "tables and stacking keys)")


def check_table_flags(args, tables_allowed: bool, why: str) -> None:
    """Table flags where they do not apply: a ConfigError naming the first one."""
    given = [flag for dest, flag in TABLE_FLAGS.items() if getattr(args, dest, None) is not None]
    if getattr(args, "witness", False):
        given.append("--witness")
    if not given:
        return
    if not tables_allowed:
        raise ConfigError(f"{given[0]} {why}")
    if getattr(args, "tables", None) is None:
        raise ConfigError(f"{given[0]} refines --tables; give --tables too")


def table_spec(args):
    from ..profiles.p3_whir.tables.spec import TablesSpec  # noqa: PLC0415

    return TablesSpec.parse(args.tables, args.open, args.layout, args.points)


def table_config(args, spec):
    """The configuration of the stacked arity the tables derive, with the p3-whir flags' values (their defaults:
    upstream's example, its budget raised where upstream refuses it)."""
    from ..profiles.p3_whir.defaults import EXAMPLE_FIELD, example_parameters, resolve  # noqa: PLC0415
    from ..profiles.p3_whir.tables.document_checks import stacked_arity  # noqa: PLC0415
    from ..protocol.soundness import SoundnessType  # noqa: PLC0415

    if args.initial_reduction is not None:
        raise ConfigError("--initial-reduction is not a p3-whir parameter (upstream sets each round's rate instead)")
    soundness = None if args.soundness is None else SoundnessType.parse(args.soundness)
    params = example_parameters(args.folding_factor, args.rate, args.security, soundness, args.pow_bits)
    n = stacked_arity(spec.protocol.shapes, params.folding.k)
    if args.num_variables is not None and args.num_variables != n:
        raise ConfigError(f"-n {args.num_variables}: --tables {spec.canonical()['tables']} with fold "
                          f"{params.folding.k} stack to n = {n}; leave -n out (the tables decide it)")
    resolved = resolve(n, params, args.field or EXAMPLE_FIELD, explicit=args.pow_bits is not None)
    if resolved.note:
        print(f"note: {resolved.note}", file=sys.stderr)
    return resolved.config


def run_prove_tables(args) -> int:
    from ..backends import select_backend  # noqa: PLC0415
    from ..files import write_atomic  # noqa: PLC0415
    from ..profiles.p3_whir.tables.document_write import dumps_tables_document, tables_document_tree  # noqa: PLC0415
    from ..profiles.p3_whir.tables.instance import draw_instance  # noqa: PLC0415
    from ..profiles.p3_whir.tables.prover import prove_tables  # noqa: PLC0415
    from ..profiles.p3_whir.tables.verifier import verify_tables  # noqa: PLC0415
    from .progress import progress_line, wanted  # noqa: PLC0415

    if args.from_file:
        raise ConfigError("--tables proves a random instance: use --seed S (not --from)")
    if args.format is not None:
        raise ConfigError(f"--format {args.format} does not apply to --tables (the proof is a p3-whir-oracle/v2 "
                          "JSON document)")
    for dest, flag in (("openings", "--openings"), ("statement_out", "--statement-out")):
        if getattr(args, dest, None) is not None:
            raise ConfigError(f"{flag} does not apply to --tables (the schedule is --open; the statement is in the "
                              "document's openings)")
    if args.seed < 0 or args.seed >> 64:
        raise ConfigError(f"--seed {args.seed}: a u64 is expected (SmallRng::seed_from_u64)")
    spec = table_spec(args)
    out = output_path(args.out, "proof.json", "--out")
    check_writable(out, "--out")
    config = table_config(args, spec)
    field, fold = config.field, config.folding_schedule[0]
    if args.witness:
        from ..profiles.p3_whir.tables.document_checks import recommit_bound  # noqa: PLC0415
        from ..errors import ProofFormatError  # noqa: PLC0415

        try:
            recommit_bound(config, "--witness")
        except ProofFormatError as exc:
            raise ConfigError(str(exc).replace("leave the key out", "leave --witness out")) from None
    choice = select_backend(args.backend, config, args.storage)
    backend, reason = choice.backend, choice.reason
    if args.backend == "auto" and not backend.proves_tables:  # auto: a backend that proves tables (else the cpu one)
        reason = f"auto: {backend.name} does not prove stacked tables yet, so the cpu backend"
        backend = select_backend("cpu", config, args.storage).backend
    if not args.json:
        print(f"backend: {backend.name} ({reason})")
    start = time.perf_counter()
    columns, points = draw_instance(spec.protocol, args.seed, field, fold, spec.prescribed)
    drawn = time.perf_counter()
    label = f"proving p3-whir tables {spec.canonical()['tables']} ({spec.layout}) n={config.num_variables}"
    with progress_line(label, wanted(args.json)):
        proved = prove_tables(config, field, backend, columns, spec.protocol, spec.layout, points)
    seconds = time.perf_counter() - start
    # the verifier replays the transcript: the document's initial OOD points, and a check of the proof written
    opened = verify_tables(config, field, proved.commitment, proved.proof, spec.protocol, spec.layout,
                           proved.points if spec.prescribed else None)
    tree = tables_document_tree(field, config, spec, proved.commitment, proved.proof, proved.points,
                                opened.ood_points, args.seed, columns if args.witness else None)
    data = dumps_tables_document(tree).encode()
    write_atomic(out, data)
    p = config.params
    summary = {"profile": "p3-whir", "format": "p3-whir-oracle/v2", "field": field.name, "backend": backend.name,
               **spec.canonical(), "num_variables": config.num_variables, "folding_factor": p.folding.k,
               "rate": p.starting_log_inv_rate, "security": p.security_level, "pow_bits": p.pow_bits,
               "soundness": p.soundness_type.cli_name, "seed": args.seed, "prove_ms": round(seconds * 1e3, 3),
               "phases_ms": phases_ms({"instance": drawn - start}, seconds),
               "proof_postcard_bytes": tree["proof_postcard_len"], "out": str(out)}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"proved p3-whir {field.name} {spec} n={config.num_variables} fold={p.folding.k} "
              f"rate={p.starting_log_inv_rate} security={p.security_level} pow_bits={p.pow_bits} "
              f"(SmallRng({args.seed})) in {seconds * 1e3:.0f} ms; postcard proof {tree['proof_postcard_len']} bytes")
        print(f"wrote {out} ({len(data)} bytes, p3-whir-oracle/v2)")
    return 0
