"""``whirgpu prove`` (``run_prove``): the instance (whir-p3-metal: ``--seed`` or ``--from``; p3-whir: upstream's
example draw), the prover, the proof file and the summary. Imported when the command runs, so that the other
commands do not load a prover."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from ..errors import ConfigError, ProofFormatError
from ..files import write_atomic
from ..profiles.p3_whir.defaults import check_openings
from ..profiles.whir_p3_metal.reachability import derive_explained
from ..protocol.document_limits import MAX_PROOF_DOCUMENT_BYTES
from .options import check_writable, output_path, phases_ms, read_json_file, write_statement
from .parameter_flags import PARAM_FLAGS, p3_config_from_args, params_from_args

DEFAULT_OUT = {"binary": "proof.whir", "whir-p3-json": "proof.json"}


def _load_instance(args):
    """(params, prove, description, instance seed or None) for `prove`. ``prove(prover)`` proves the instance and
    returns the proof file; the claimed values are computed by the prover where the table is (a file's own claims
    must agree with them). A random instance is drawn only then, so a refused configuration costs no 2^n draws."""
    from ..canonical import canonical_table  # noqa: PLC0415
    from ..proving import random_points  # noqa: PLC0415
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
            from ..verifying import claimed_values  # noqa: PLC0415 - every profile's documents: only here

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
    params = params_from_args(args)
    derive_explained(params)  # validate before drawing 2^n values

    def prove_random(prover):
        return prover.prove_monty(*random_points(params.num_variables, args.seed))

    return params, prove_random, f"random instance, seed {args.seed}", args.seed


def run_prove(args) -> int:
    """`whirgpu prove`: the zk and tables forms handed to their modules, then the p3-whir profile's random
    instance or whir-p3-metal's (--seed or --from), proved, written and summarised."""
    from ..proving import Prover  # noqa: PLC0415 - what this command needs, not the whole API
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
        return _prove_p3(args)
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


def _prove_p3(args) -> int:
    """`prove --profile p3-whir`: a random instance from SmallRng(seed) as upstream's example draws it, proved and
    written as a p3-whir-oracle/v1 document."""
    from ..profiles.p3_whir.api import P3Prover  # noqa: PLC0415
    from ..ref.field_np import field_ops  # noqa: PLC0415
    from ..native.xoshiro import sample_monty  # noqa: PLC0415
    from ..ref.rng import Xoshiro256PlusPlus  # noqa: PLC0415

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
    config = p3_config_from_args(args)
    prover = P3Prover(args.num_variables, config.params, config.field, backend=args.backend, storage=args.storage)
    if not args.json:
        print(f"backend: {prover.backend.name} ({prover.backend_reason})")
    field = prover.field
    evaluations = field_ops(field).from_monty(sample_monty(Xoshiro256PlusPlus(args.seed), 1 << args.num_variables,
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
