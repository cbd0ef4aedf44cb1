"""``whirgpu verify FILE... [--profile P] [--expect N:F:R [--security S --pow-bits B --soundness T
--initial-reduction M --field F --openings E]] [--min-security S [--assume capacity]] [--statement FILE.json]
[--format F]
[--backend B] [--processes K]``: verify proof documents of either profile against what the verifier expects.

The profile is each document's own (whir-p3-metal: ``whir-p3-json/v1`` or the binary format; p3-whir:
``p3-whir-oracle/v1``, one column, or ``p3-whir-oracle/v2``, stacked tables); ``--profile`` is an assertion every
document must meet. A table document's accept line adds what it proved (``tables=.. layout=.. open=..
points_from=..``: upstream's transcript does not bind them); ``--tables``, ``--layout``, ``--open``, ``--points``
(``prove``'s syntax and defaults) refine ``--expect`` (N the stacked arity) to pin them, and ``--expect`` without
``--tables`` expects a single-column document. ``--expect`` builds the parameters
``whirgpu prove`` would use in the document's profile (or the asserted one), with the refinements given; in the
p3-whir profile it also pins the field (``--field``, default the profile's), the number of openings
(``--openings``, default 1) and, unless ``--statement`` names the points, points drawn from the transcript.

Output contract, the same in both profiles: ``accept n=N fold=K rate=R security=S regime=G [conjectural=C]
soundness=T pow_bits=B points=M profile=P field=F (...)`` on one line, exit 0. ``security`` is the provable bits
and ``regime`` the provable regime that gives them; ``conjectural`` the capacity bound's figure of a configuration
derived under it; with ``--assume capacity``: ``security=C regime=capacity(assumed) provable=S``. ``accept`` stays
the first word; the parenthesis says which expectations were checked, or that none were. ``reject: <reason>`` on
one line, exit 1. A proof file that cannot be read (``-``: standard input) is a ``FileError`` on stderr, exit 2.
With several files each line starts ``FILE: ``, every readable file gets its verdict, an unreadable one the line
``FILE: error: <why>``, and the exit status is the worst (2 unreadable, 1 rejected, 0 all accepted). A bad option
or statement file is an ``error: ...`` line on stderr (exit 1), raised as ``ConfigError`` before any proof is read.
``--backend`` hashes the whir-p3-metal documents' Merkle openings there; every p3-whir document of the batch still
gets its verdict, its openings checked on the host.

The statement file (``--statement``) is one JSON object with canonical field elements (integers in [0, p)):
``{"points": [[[a0, a1, a2, a3], ...n coordinates], ...m points], "values": [[a0, a1, a2, a3], ...m values]}``;
a point may list base coordinates instead (``[x_0, ..., x_n-1]``), a value a base element; ``values`` is
optional (then only the points are checked). Any other key is refused.
"""

from __future__ import annotations

from ..backends import BACKEND_NAMES
from .options import read_bytes, read_json_file
from .prove_tables import TABLE_FLAGS
from ..errors import ConfigError, FileError, ProofFormatError, VerificationError
from ..field import FIELDS
from ..protocol.parameters import DEFAULT_MAX_POW, DEFAULT_SECURITY_LEVEL, ProtocolParameters
from ..protocol.soundness import SoundnessType

PROFILES = ("whir-p3-metal", "p3-whir")
STATEMENT_KEYS = ("points", "values")
# The flags that refine --expect (the protocol parameters `prove -n -k -r` also takes), and their dests.
EXPECT_REFINEMENTS = {"security": "--security", "pow_bits": "--pow-bits", "soundness": "--soundness",
                      "initial_reduction": "--initial-reduction", "field": "--field", "openings": "--openings",
                      "tables": "--tables", "layout": "--layout", "open": "--open", "points": "--points"}
P3_ONLY = {"field": "--field", "openings": "--openings", "tables": "--tables", "layout": "--layout",
           "open": "--open", "points": "--points"}


def add_verify_parser(sub) -> None:
    p = sub.add_parser(
        "verify", help="verify proof documents of either profile (against the parameters, security and statement "
                       "you expect)",
        description="Verify proof documents of either profile (each recognised from the document itself). Prints "
                    "'accept n=.. fold=.. rate=.. security=.. soundness=.. pow_bits=.. points=.. profile=.. "
                    "field=..' (exit 0) or 'reject: <reason>' (exit 1); a file that cannot be read is an error on "
                    "stderr (exit 2). Without --expect or --min-security the proof chooses its own parameters, "
                    "however weak: when you verify someone else's proof, say what you expect.")
    p.add_argument("file", metavar="FILE", nargs="+",
                   help="the proof file; - reads it from standard input. Several files are verified as one batch "
                        "(their Merkle openings hashed together) and each gets one line, 'FILE: accept ...' or "
                        "'FILE: reject: <reason>'; the exit status is 0 only when every one is accepted")
    p.add_argument("--format", default="auto", choices=("auto", "binary", "whir-p3-json"),
                   help="the whir-p3-metal profile's encoding (default: detect); a p3-whir document is refused "
                        "with any but auto")
    p.add_argument("--profile", default=None, choices=PROFILES,
                   help="assert the documents' profile (default: each document's own, recognised from it: "
                        "whir-p3-json/v1 or binary is whir-p3-metal, p3-whir-oracle/v1 and /v2 are p3-whir); a "
                        "document "
                        "of another profile is rejected")
    p.add_argument("--backend", default=None, choices=BACKEND_NAMES,
                   help="where to hash the whir-p3-metal proofs' Merkle openings (default: on the host, numpy and "
                        "the compiled permutation); wgpu, dawn, metal, msl-cpu: the GPU kernels on that backend, "
                        "as one batch; auto: a GPU worth using, else the host; the verdicts are the same. A p3-whir "
                        "document's openings are checked on the host where the verifier meets them")
    p.add_argument("--processes", type=int, default=None, metavar="K",
                   help="with several files: verify them in K worker processes, each hashing its share on the host "
                        "(not with --backend); the verdicts are the same")
    g = p.add_argument_group("what the verifier expects (a proof that differs is rejected, naming the field)")
    g.add_argument("--expect", metavar="N:F:R",
                   help="the proof's parameters must be exactly those `whirgpu prove -n N -k F -r R` uses in the "
                        "document's profile (or --profile's), with the refinements below (same defaults as prove)")
    g.add_argument("--security", type=int, default=None, metavar="BITS",
                   help=f"with --expect: the security level (default {DEFAULT_SECURITY_LEVEL}; p3-whir: the "
                        f"profile's default)")
    g.add_argument("--pow-bits", type=int, default=None, metavar="BITS",
                   help=f"with --expect: the proof-of-work budget (default {DEFAULT_MAX_POW}; p3-whir: the "
                        f"profile's default)")
    g.add_argument("--soundness", default=None, metavar="TYPE",
                   help="with --expect: capacity | johnson | unique (default capacity)")
    g.add_argument("--initial-reduction", type=int, default=None, metavar="M",
                   help="with --expect, whir-p3-metal: RS domain reduction of the first round (default min(F, 3))")
    g.add_argument("--field", default=None, choices=sorted(FIELDS),
                   help="with --expect, p3-whir: the field (default the profile's)")
    g.add_argument("--openings", type=int, default=None, metavar="E",
                   help="with --expect, p3-whir: the number of opening points (default 1)")
    from .prove_tables import add_table_flags  # noqa: PLC0415

    add_table_flags(p.add_argument_group(
        "what the verifier expects of a p3-whir table document (refine --expect N:F:R, N the stacked arity; the "
        "oracle's syntax; a proof of other tables, layout, schedule or point choice is rejected)"), verify=True)
    g.add_argument("--min-security", type=int, default=None, metavar="BITS",
                   help="the proof's configuration must reach at least BITS provable bits of security (unique "
                        "decoding or the Johnson bound, PoW included; docs/SECURITY.md), whatever regime it was "
                        "derived under")
    g.add_argument("--assume", default=None, choices=("capacity",),
                   help="opt into the capacity-bound conjecture: --min-security and the accept line count the "
                        "capacity bound's figure too, and the accept line says it was assumed")
    g.add_argument("--zk", action="store_true",
                   help="the proof must be a zero-knowledge (hiding) p3-whir document whose masks came from the OS "
                        "CSPRNG: a plain document, or a seeded one (--mask-seed: not hiding), is rejected")
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


def _check_refinements(args) -> None:
    given = [flag for dest, flag in EXPECT_REFINEMENTS.items() if getattr(args, dest) is not None]
    if args.expect is None and given:
        raise ConfigError(f"{given[0]} refines --expect N:F:R; give --expect too")
    if args.profile == "whir-p3-metal":
        for dest, flag in P3_ONLY.items():
            if getattr(args, dest) is not None:
                raise ConfigError(f"{flag} refines a p3-whir expectation; --profile whir-p3-metal was given")
    if args.profile == "p3-whir" and args.format != "auto":
        raise ConfigError(f"--format {args.format} names a whir-p3-metal encoding; --profile p3-whir was given")
    if args.profile == "p3-whir" and args.initial_reduction is not None:
        raise ConfigError("--initial-reduction refines a whir-p3-metal expectation; --profile p3-whir was given")
    if args.openings is not None and args.openings < 1:
        raise ConfigError(f"--openings must be >= 1, got {args.openings}")
    table_flags = [flag for dest, flag in TABLE_FLAGS.items() if getattr(args, dest) is not None]
    if table_flags and args.tables is None:
        raise ConfigError(f"{table_flags[0]} refines --tables; give --tables too")
    if args.tables is not None and args.openings is not None:
        raise ConfigError("--openings counts a single-column document's points; with --tables the schedule is --open")
    if args.tables is not None and args.statement is not None:
        raise ConfigError("--statement names a single-column statement; a table document's is its schedule (--open)")


def expected_params(args) -> ProtocolParameters | None:
    """The whir-p3-metal ProtocolParameters --expect names, built as `prove -n -k -r` builds them; None without
    --expect."""
    if args.expect is None:
        return None
    n, k, r = parse_expect(args.expect)
    return ProtocolParameters.default(
        num_variables=n, folding_factor=k, starting_log_inv_rate=r,
        security_level=DEFAULT_SECURITY_LEVEL if args.security is None else args.security,
        pow_bits=DEFAULT_MAX_POW if args.pow_bits is None else args.pow_bits,
        soundness_type=SoundnessType.CapacityBound if args.soundness is None else SoundnessType.parse(args.soundness),
        rs_domain_initial_reduction_factor=args.initial_reduction,
    )


def expected_p3(args, statement: dict):
    """The p3-whir ``P3Expected`` --expect names, built as `prove --profile p3-whir -n -k -r` builds it; None
    without --expect. Points drawn from the transcript are expected unless the statement names the points."""
    if args.expect is None:
        return None
    from ..profiles.p3_whir.expectations import P3Expected, p3_expected_config  # noqa: PLC0415

    n, k, r = parse_expect(args.expect)
    config = p3_expected_config(n, k, r, field=args.field, security_level=args.security, pow_bits=args.pow_bits,
                                soundness=None if args.soundness is None else SoundnessType.parse(args.soundness))
    if args.tables is not None:
        from ..profiles.p3_whir.tables.document_checks import stacked_arity  # noqa: PLC0415
        from .prove_tables import table_spec  # noqa: PLC0415

        spec = table_spec(args)
        stacked = stacked_arity(spec.protocol.shapes, k)
        if stacked != n:
            raise ConfigError(f"--tables {spec.canonical()['tables']} with fold {k} stack to n = {stacked}, but "
                              f"--expect says n = {n}")
        return P3Expected(config, tables=spec)
    prescribed = None if statement.get("points") is not None else False
    return P3Expected(config, num_openings=1 if args.openings is None else args.openings, prescribed=prescribed)


def read_statement(path: str) -> dict:
    """The --statement file as keyword arguments of ``whirgpu.verify`` (points, values)."""
    doc = read_json_file(path)
    if not isinstance(doc, dict) or "points" not in doc:
        raise ConfigError(f'{path}: expected a JSON object {{"points": [...], "values": [...]}} with "points"')
    unknown = sorted(set(doc) - set(STATEMENT_KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r} (a statement file holds {', '.join(STATEMENT_KEYS)})")
    return {"points": doc["points"], "values": doc.get("values")}


def accept_line(document, checked: list[str], assume: str | None = None) -> str:
    """The one line of an acceptance, the same in both profiles: what the proof is (parameters, the security they
    reach as the verifier counts it and under which regime, its points, profile and field) and which of the
    verifier's expectations it met (``checked``)."""
    from ..profiles.documents import profile_of  # noqa: PLC0415
    from ..profiles.security import security_report  # noqa: PLC0415
    from ..protocol.security_policy import accept_figure  # noqa: PLC0415

    what = f"as expected: {', '.join(checked)}" if checked else \
        "no expectations given: the proof chose its own parameters"
    if profile_of(document) == "p3-whir":
        config, p = document.config, document.config.params
        facts = (config.num_variables, p.folding.k, p.starting_log_inv_rate, config, p.soundness_type.cli_name,
                 p.pow_bits, document.num_openings, "p3-whir", document.field.name)
        proved = getattr(document, "spec", None)  # a table document: what it proved, in the flags' words
    else:
        from ..profiles.whir_p3_metal.config import WhirConfig  # noqa: PLC0415

        proved = None
        params = document.params
        fold = params.folding_factor.to_serde()
        fold_text = str(fold["Constant"]) if "Constant" in fold else \
            ",".join(map(str, fold["ConstantFromSecondRound"]))
        facts = (params.num_variables, fold_text, params.starting_log_inv_rate, WhirConfig.from_params(params),
                 params.soundness_type.cli_name, params.pow_bits, document.statement.num_claims, "whir-p3-metal",
                 "babybear")
    n, fold, rate, config, soundness, pow_bits, points, profile, field = facts
    security = accept_figure(security_report(config), assume)
    tables = ""
    if profile == "p3-whir" and proved is not None:
        c = proved.canonical()
        tables = f" tables={c['tables']} layout={c['layout']} open={c['open'] or '-'} points_from={c['points']}"
        if hasattr(document, "hiding"):  # a zero-knowledge document: say whether its masks hide anything
            tables += " zk=hiding" if document.hiding else \
                f" zk=seeded(mask_seed={document.mask_seed}: NOT hiding against anyone who knows it)"
    return (f"accept n={n} fold={fold} rate={rate} {security} soundness={soundness} pow_bits={pow_bits} "
            f"points={points} profile={profile} field={field}{tables} ({what})")


class _Expectations:
    """The verifier's own options, checked before any proof is read (an expectation no proof can meet is the
    caller's error: ConfigError), and the expected parameters of each profile, built when first needed."""

    def __init__(self, args):
        _check_refinements(args)
        if args.min_security is not None and args.min_security < 0:
            raise ConfigError(f"--min-security must be >= 0, got {args.min_security}")
        self.args = args
        self.statement = read_statement(args.statement) if args.statement else {}
        self._params = {}
        if args.expect is not None and args.profile is not None:  # an expectation no proof can meet: now
            self.params(args.profile)

    def params(self, profile: str):
        """The expected parameters in ``profile`` (None without --expect); ConfigError when they derive no
        configuration."""
        if profile not in self._params:
            try:
                found = expected_params(self.args) if profile == "whir-p3-metal" else \
                    expected_p3(self.args, self.statement)
                if profile == "whir-p3-metal" and found is not None:
                    from ..profiles.whir_p3_metal.config import WhirConfig  # noqa: PLC0415

                    WhirConfig.from_params(found)
            except ConfigError as exc:
                raise ConfigError(f"--expect {self.args.expect} in the {profile} profile: {exc}") from None
            self._params[profile] = found
        return self._params[profile]

    def refinements_for(self, profile: str) -> None:
        args = self.args
        wrong, other = (P3_ONLY, "p3-whir") if profile == "whir-p3-metal" else \
            ({"initial_reduction": "--initial-reduction"}, "whir-p3-metal")
        for dest, flag in wrong.items():
            if getattr(args, dest) is not None:
                raise VerificationError(f"not what the verifier expects (profile): {flag} refines a {other} "
                                        f"expectation; this is a {profile} proof document",
                                        round="expectations", check="profile")

    def checked(self) -> list[str]:
        args = self.args
        return (["parameters"] if args.expect is not None else []) + \
            (["tables, layout, schedule, points"] if args.tables is not None else []) + \
            ([f"security >= {args.min_security} bits" + (" (capacity assumed)" if args.assume else " provable")]
             if args.min_security is not None else []) + \
            (["statement"] if self.statement else []) + \
            (["zero knowledge (hiding)"] if getattr(args, "zk", False) else [])


def run_verify(args) -> int:
    from ..many.batch_verify import Verdict, verify_many  # noqa: PLC0415
    from ..profiles.documents import profile_of, read_document  # noqa: PLC0415

    files = args.file if isinstance(args.file, list) else [args.file]
    processes = getattr(args, "processes", None)
    if processes is not None and (processes < 1 or args.backend is not None):
        raise ConfigError(f"--processes needs a positive count and no --backend, got {processes}"
                          + (f" with --backend {args.backend}" if args.backend else ""))
    if files.count("-") > 1:
        raise ConfigError("standard input (-) can be read once")
    expect = _Expectations(args)
    documents, verdicts = [], {}
    unreadable = {}
    for i, path in enumerate(files):
        try:
            data = read_bytes(path)  # a file that cannot be read is no reject: FileError, exit 2
        except FileError as exc:
            if len(files) == 1:
                raise
            unreadable[i] = exc  # the others still get their verdicts
            continue
        except ProofFormatError as exc:  # larger than any proof the limits allow: a reject, read no further
            verdicts[i] = Verdict(False, exc)
            continue
        try:
            document = read_document(data, args.format, args.profile)
            profile = profile_of(document)
            expect.refinements_for(profile)
            documents.append((i, document, expect.params(profile)))
        except (ProofFormatError, VerificationError) as exc:
            verdicts[i] = Verdict(False, exc)
    # one batch per profile: each with its own expected parameters; --backend hashes the whir-p3-metal openings,
    # a p3-whir document's are checked on the host where its verifier meets them
    for profile in PROFILES:
        mine = [(i, doc, params) for i, doc, params in documents if profile_of(doc) == profile]
        if not mine:
            continue
        found = verify_many([doc for _, doc, _ in mine], params=mine[0][2], min_security=args.min_security,
                            backend=args.backend if profile == "whir-p3-metal" else None, processes=processes,
                            assume=args.assume, **expect.statement)
        verdicts.update({i: verdict for (i, _, _), verdict in zip(mine, found)})
    if getattr(args, "zk", False):  # --zk: a hiding document, masks from the OS CSPRNG
        for i, document, _ in documents:
            if verdicts[i].ok and not getattr(document, "hiding", False):
                what = "a seeded zk document (--mask-seed: not hiding)" if hasattr(document, "hiding") else \
                    "a document without zero knowledge"
                verdicts[i] = Verdict(False, VerificationError(
                    f"not what the verifier expects (zk): a hiding proof expected, got {what}",
                    round="expectations", check="zk"))
    by_index = {i: doc for i, doc, _ in documents}
    status = 0
    for i, path in enumerate(files):
        if i in unreadable:
            print(f"{path}: error: {unreadable[i]}")
            status = max(status, 2)
            continue
        verdict = verdicts[i]
        line = accept_line(by_index[i], expect.checked(), args.assume) if verdict.ok else \
            f"reject: {verdict.error}"
        print(f"{path}: {line}" if len(files) > 1 else line)
        status = max(status, 0 if verdict.ok else 1)
    return status
