"""``whirgpu verify FILE [--expect N:F:R [--security S --pow-bits B --soundness T --initial-reduction M]]
[--min-security S] [--statement FILE.json] [--format F] [--backend B]``: verify a proof file against what the
verifier expects. ``--backend`` hashes the Merkle openings on that backend (``batch_verify.verify_many``'s
``backend``), the rest of the walk stays on the host; the verdict is the same.

Output contract: ``accept n=N fold=K rate=R security=S soundness=T pow_bits=B points=M (...)`` on one line, exit 0
(``accept`` stays the first word, so scripts that test it keep working; the parenthesis says which expectations
were checked, or that none were); ``reject: <reason>`` on one line, exit 1; a proof file that cannot be read
(``-``: standard input) is a ``FileError`` on stderr, exit 2. A bad option or statement file is an
``error: ...`` line on stderr (exit 1), raised as ``ConfigError`` before the proof is read.

The statement file (``--statement``) is one JSON object with canonical field elements (integers in [0, p)):
``{"points": [[[a0, a1, a2, a3], ...n coordinates], ...m points], "values": [[a0, a1, a2, a3], ...m values]}``;
a point may list base coordinates instead (``[x_0, ..., x_n-1]``), a value a base element; ``values`` is
optional (then only the points are checked). Any other key is refused.
"""

from __future__ import annotations

from .backends import BACKEND_NAMES
from .cli_options import read_bytes, read_json_file
from .errors import ConfigError, ProofFormatError, VerificationError
from .protocol.parameters import DEFAULT_MAX_POW, DEFAULT_SECURITY_LEVEL, ProtocolParameters
from .protocol.soundness import SoundnessType

STATEMENT_KEYS = ("points", "values")
# The flags that refine --expect (the protocol parameters `prove -n -k -r` also takes), and their dests.
EXPECT_REFINEMENTS = {"security": "--security", "pow_bits": "--pow-bits", "soundness": "--soundness",
                      "initial_reduction": "--initial-reduction"}


def add_verify_parser(sub) -> None:
    p = sub.add_parser(
        "verify", help="verify a proof file (against the parameters, security and statement you expect)",
        description="Verify a proof file. Prints 'accept n=.. fold=.. rate=.. security=.. soundness=.. pow_bits=.. "
                    "points=..' (exit 0) or 'reject: <reason>' (exit 1); a file that cannot be read is an error on "
                    "stderr (exit 2). Without --expect or --min-security the proof chooses its own parameters, "
                    "however weak: when you verify someone else's proof, say what you expect.")
    p.add_argument("file", metavar="FILE", nargs="+",
                   help="the proof file; - reads it from standard input. Several files are verified as one batch "
                        "(their Merkle openings hashed together) and each gets one line, 'FILE: accept ...' or "
                        "'FILE: reject: <reason>'; the exit status is 0 only when every one is accepted")
    p.add_argument("--format", default="auto", choices=("auto", "binary", "whir-p3-json"),
                   help="proof file format (default: detect)")
    p.add_argument("--profile", default="whir-p3-metal", choices=("whir-p3-metal", "p3-whir"),
                   help="protocol profile (default whir-p3-metal); p3-whir reads an upstream Plonky3 p3-whir proof "
                        "document (p3-whir-oracle/v1 JSON: params, field, commitment and the serde proof)")
    p.add_argument("--backend", default=None, choices=BACKEND_NAMES,
                   help="where to hash the proofs' Merkle openings (default: on the host, numpy and the compiled "
                        "permutation); wgpu, dawn, metal, msl-cpu: the GPU kernels on that backend, as one batch; "
                        "auto: a GPU worth using, else the host; the verdicts are the same")
    p.add_argument("--processes", type=int, default=None, metavar="K",
                   help="with several files: verify them in K worker processes, each hashing its share on the host "
                        "(not with --backend); the verdicts are the same")
    g = p.add_argument_group("what the verifier expects (a proof that differs is rejected, naming the field)")
    g.add_argument("--expect", metavar="N:F:R",
                   help="the proof's parameters must be exactly those `whirgpu prove -n N -k F -r R` uses, with "
                        "the refinements below (same defaults as prove)")
    g.add_argument("--security", type=int, default=None, metavar="BITS",
                   help=f"with --expect: the security level (default {DEFAULT_SECURITY_LEVEL})")
    g.add_argument("--pow-bits", type=int, default=None, metavar="BITS",
                   help=f"with --expect: the proof-of-work budget (default {DEFAULT_MAX_POW})")
    g.add_argument("--soundness", default=None, metavar="TYPE",
                   help="with --expect: capacity | johnson | unique (default capacity)")
    g.add_argument("--initial-reduction", type=int, default=None, metavar="M",
                   help="with --expect: RS domain reduction of the first round (default min(F, 3))")
    g.add_argument("--min-security", type=int, default=None, metavar="BITS",
                   help="the proof's configuration must reach at least BITS bits of security, as its own "
                        "soundness formulas derive them (PoW included)")
    g.add_argument("--statement", metavar="FILE.json",
                   help='the points (and optionally values) the proof must be about: {"points": [...], '
                        '"values": [...]}, canonical integers')


def parse_expect(text: str) -> tuple[int, int, int]:
    parts = text.strip().split(":")
    try:
        n, k, r = (int(part) for part in parts)
    except ValueError:
        raise ConfigError(f"--expect {text!r} is not N:F:R (three integers, e.g. 20:4:1)") from None
    return n, k, r


def expected_params(args) -> ProtocolParameters | None:
    """The ProtocolParameters --expect names, built as `prove -n -k -r` builds them; None without --expect."""
    given = [flag for dest, flag in EXPECT_REFINEMENTS.items() if getattr(args, dest) is not None]
    if args.expect is None:
        if given:
            raise ConfigError(f"{given[0]} refines --expect N:F:R; give --expect too")
        return None
    n, k, r = parse_expect(args.expect)
    return ProtocolParameters.default(
        num_variables=n, folding_factor=k, starting_log_inv_rate=r,
        security_level=DEFAULT_SECURITY_LEVEL if args.security is None else args.security,
        pow_bits=DEFAULT_MAX_POW if args.pow_bits is None else args.pow_bits,
        soundness_type=SoundnessType.CapacityBound if args.soundness is None else SoundnessType.parse(args.soundness),
        rs_domain_initial_reduction_factor=args.initial_reduction,
    )


def read_statement(path: str) -> dict:
    """The --statement file as keyword arguments of ``whirgpu.verify`` (points, values)."""
    doc = read_json_file(path)
    if not isinstance(doc, dict) or "points" not in doc:
        raise ConfigError(f'{path}: expected a JSON object {{"points": [...], "values": [...]}} with "points"')
    unknown = sorted(set(doc) - set(STATEMENT_KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r} (a statement file holds {', '.join(STATEMENT_KEYS)})")
    return {"points": doc["points"], "values": doc.get("values")}


def accept_line(proof_file, checked: list[str]) -> str:
    """The one line of an acceptance: what the proof is (parameters, the security they reach, its points) and
    which of the verifier's expectations it met (``checked``)."""
    from .protocol.config import WhirConfig
    from .protocol.security import security_bits

    params = proof_file.params
    fold = params.folding_factor.to_serde()
    fold_text = str(fold["Constant"]) if "Constant" in fold else ",".join(map(str, fold["ConstantFromSecondRound"]))
    what = f"as expected: {', '.join(checked)}" if checked else \
        "no expectations given: the proof chose its own parameters"
    return (f"accept n={params.num_variables} fold={fold_text} rate={params.starting_log_inv_rate} "
            f"security={security_bits(WhirConfig.from_params(params))} soundness={params.soundness_type.cli_name} "
            f"pow_bits={params.pow_bits} points={proof_file.statement.num_claims} ({what})")


def run_verify_p3(args) -> int:
    """``verify --profile p3-whir``: the document's own parameters, or exactly those --expect names."""
    from .profiles.p3_whir.document import read_p3_document
    from .profiles.p3_whir.verifier import verify_p3

    for flag, value in (("--initial-reduction", args.initial_reduction), ("--min-security", args.min_security),
                        ("--statement", args.statement)):
        if value is not None:
            raise ConfigError(f"{flag} is not available with --profile p3-whir yet")
    if args.format != "auto":
        raise ConfigError("--format does not apply to --profile p3-whir (its documents are JSON)")
    given = [flag for dest, flag in EXPECT_REFINEMENTS.items() if getattr(args, dest) is not None]
    if args.expect is None and given:
        raise ConfigError(f"{given[0]} refines --expect N:F:R; give --expect too")
    expected = None
    if args.expect is not None:
        n, k, r = parse_expect(args.expect)
        expected = {"num_variables": n, "folding_factor": k, "starting_log_inv_rate": r,
                    "security_level": DEFAULT_SECURITY_LEVEL if args.security is None else args.security,
                    "pow_bits": DEFAULT_MAX_POW if args.pow_bits is None else args.pow_bits,
                    "soundness_type": SoundnessType.CapacityBound if args.soundness is None
                    else SoundnessType.parse(args.soundness)}
    data = read_bytes(args.file)
    try:
        import json

        try:
            doc = json.loads(data)
        except ValueError as exc:
            raise ProofFormatError(f"not a JSON document: {exc}") from None
        document = read_p3_document(doc)
        p = document.config.params
        if expected is not None:
            got = {"num_variables": document.config.num_variables, "folding_factor": p.folding.k,
                   "starting_log_inv_rate": p.starting_log_inv_rate, "security_level": p.security_level,
                   "pow_bits": p.pow_bits, "soundness_type": p.soundness_type}
            for key, want in expected.items():
                if got[key] != want:
                    raise VerificationError(f"parameters: {key} is {got[key]}, expected {want}", round="parameters",
                                            check="expectations")
        verify_p3(document.config, document.commitment, document.proof, document.field, document.points,
                  document.num_openings)
    except (VerificationError, ProofFormatError) as exc:
        print(f"reject: {exc}")
        return 1
    what = "as expected: parameters" if expected is not None else \
        "no expectations given: the proof chose its own parameters"
    print(f"accept profile=p3-whir field={document.field.name} n={document.config.num_variables} fold={p.folding.k} "
          f"rate={p.starting_log_inv_rate} security={p.security_level} soundness={p.soundness_type.cli_name} "
          f"pow_bits={p.pow_bits} openings={document.num_openings} ({what})")
    return 0


def _expectations(args) -> tuple:
    """(expected parameters or None, statement keyword arguments, the names of what is checked), from the
    verifier's own options, checked before any proof is read (an expectation no proof can meet is the caller's
    error: ConfigError)."""
    expected = expected_params(args)
    if expected is not None:
        from .protocol.config import WhirConfig

        WhirConfig.from_params(expected)
    if args.min_security is not None and args.min_security < 0:
        raise ConfigError(f"--min-security must be >= 0, got {args.min_security}")
    statement = read_statement(args.statement) if args.statement else {}
    checked = (["parameters"] if expected is not None else []) + \
        ([f"security >= {args.min_security} bits"] if args.min_security is not None else []) + \
        (["statement"] if statement else [])
    return expected, statement, checked


def run_verify(args) -> int:
    if args.profile == "p3-whir" and args.backend is not None:
        raise ConfigError("--backend is not available with --profile p3-whir (its openings are checked where the "
                          "verifier meets them)")
    files = args.file if isinstance(args.file, list) else [args.file]
    processes = getattr(args, "processes", None)
    if processes is not None and (processes < 1 or args.backend is not None or args.profile == "p3-whir"):
        raise ConfigError(f"--processes needs a positive count and neither --backend nor --profile p3-whir, got "
                          f"{processes}" + (f" with --backend {args.backend}" if args.backend else "")
                          + (" with --profile p3-whir" if args.profile == "p3-whir" else ""))
    if len(files) > 1:
        return _run_verify_many(args, files)
    args.file = files[0]
    if args.profile == "p3-whir":
        return run_verify_p3(args)
    from .api import verify
    from .profiles.whir_p3_metal.serialize import load

    expected, statement, checked = _expectations(args)
    data = read_bytes(args.file)  # a file that cannot be read is no reject: FileError, exit 2
    try:
        proof_file = load(data, args.format)
        if args.backend is None:
            verify(proof_file, params=expected, min_security=args.min_security, **statement)
        else:  # a batch of one, its openings hashed on the backend: the same verdict
            from .batch_verify import verify_many

            (verdict,) = verify_many([proof_file], params=expected, min_security=args.min_security,
                                     backend=args.backend, **statement)
            if not verdict.ok:
                raise verdict.error
    except (VerificationError, ProofFormatError) as exc:
        print(f"reject: {exc}")
        return 1
    print(accept_line(proof_file, checked))
    return 0



def _run_verify_many(args, files: list[str]) -> int:
    """``verify A B C ...``: one batch (``batch_verify.verify_many``), one line per file in order."""
    import argparse

    if args.profile == "p3-whir":  # one document at a time: each line as the single command prints it
        worst = 0
        for path in files:
            single = argparse.Namespace(**{**vars(args), "file": path})
            print(f"{path}: ", end="")
            worst = max(worst, run_verify_p3(single))
        return worst
    from .batch_verify import Verdict, verify_many
    from .profiles.whir_p3_metal.serialize import load

    expected, statement, checked = _expectations(args)
    if files.count("-") > 1:
        raise ConfigError("standard input (-) can be read once")
    loaded, unreadable = [], {}
    for i, path in enumerate(files):
        data = read_bytes(path)  # a file that cannot be read is no reject: FileError, exit 2
        try:
            loaded.append(load(data, args.format))
        except ProofFormatError as exc:
            unreadable[i] = exc
            loaded.append(None)
    verdicts = iter(verify_many([pf for pf in loaded if pf is not None], params=expected,
                                min_security=args.min_security, backend=args.backend,
                                processes=getattr(args, "processes", None), **statement))
    status = 0
    for i, (path, proof_file) in enumerate(zip(files, loaded)):
        verdict = Verdict(False, unreadable[i]) if proof_file is None else next(verdicts)
        if verdict.ok:
            print(f"{path}: {accept_line(proof_file, checked)}")
        else:
            print(f"{path}: reject: {verdict.error}")
            status = 1
    return status
