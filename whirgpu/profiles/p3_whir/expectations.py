"""What a verifier expects of a p3-whir proof document, checked with the names ``whirgpu.expectations`` uses.

Contract: ``P3Expected(config, num_openings=None, prescribed=None)`` is what the verifier expects: the document's
derived configuration must equal ``config`` (number of variables, field, folding factor, starting rate, every
round's rate, security level, PoW budget, soundness type); ``num_openings``, when given, the number of opening
points; ``prescribed``, when given, whether the points are the caller's (True) or drawn from the transcript
(False). As ``whirgpu.verify``'s ``params``, an expectation must pin the whole statement's shape: a
``P3Expected`` with both ``num_openings`` and ``prescribed``, or, with the expected ``points`` given (which pin
both), any ``P3Expected`` or a bare ``P3WhirConfig`` (``P3Expected(config)``); otherwise ``ConfigError``
(``as_p3_expected``): a configuration alone would let a proof of another number of openings, or of points the
prover chose instead of the transcript, pass.

Tables (``p3-whir-oracle/v2`` documents, ``tables/document.py``): ``P3Expected(config, tables=spec)`` with ``spec``
a ``tables.spec.TablesSpec`` pins the table shapes, the layout, the opening schedule (every batch's table, current
and next columns, in protocol order) and who chose the points (``spec.points``) — what upstream's transcript does
not bind (its domain separator binds the stacked arity and the WHIR parameters only), so a table document verified
without them proves whatever shapes and schedule it states. ``config`` is then the configuration of the stacked
arity. ``num_openings`` and ``prescribed``, when also given, must agree with ``spec`` (``ConfigError``). A table
document against an expectation without ``tables``, or a single-column document against one with ``tables``, is
rejected with ``check="statement.tables"``; a table document whose shapes, layout or schedule differ with
``statement.table_shapes``, ``statement.layout``, ``statement.schedule`` (who chose the points:
``statement.points``). The statement of a table document, when given: ``points`` one point per batch in protocol
order (each (m_b, 4) canonical, or m_b base coordinates), ``values`` every claim in ``claimed_values`` order (each
batch's current values, then its next values), checked after the proof as ``statement.num_points``,
``statement.points`` (naming the batch) and ``statement.values``.

``check_p3_configuration(document, expected, min_security)`` runs before the proof is verified,
``check_p3_statement(verified, points, values)`` after it, on what the proof proved. A document that differs
raises ``VerificationError(round="expectations", check=...)`` with ``check`` one of ``params.num_variables``,
``params.field``, ``params.folding_factor``, ``params.starting_log_inv_rate``, ``params.round_log_inv_rates``,
``params.security_level``, ``params.pow_bits``, ``params.soundness_type``, ``min_security``,
``statement.num_points``, ``statement.points``, ``statement.values``. Malformed expectations are ``ConfigError``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ConfigError, VerificationError
from ...expectations import check_security, check_statement, mismatch
from .config import P3WhirConfig
from .security import security_report
from .tables.spec import TablesSpec


@dataclass(frozen=True)
class P3Expected:
    config: P3WhirConfig
    num_openings: int | None = None
    prescribed: bool | None = None
    tables: TablesSpec | None = None  # shapes, layout, schedule, who chose the points

    def __post_init__(self) -> None:
        if self.tables is None:
            return
        if not isinstance(self.tables, TablesSpec):
            raise ConfigError(f"P3Expected.tables: expected a TablesSpec, got {type(self.tables).__name__}")
        batches = len(self.tables.protocol.batches)
        if self.num_openings is not None and self.num_openings != batches:
            raise ConfigError(f"P3Expected: num_openings {self.num_openings}, but the tables' schedule has {batches} "
                              f"batches")
        if self.prescribed is not None and self.prescribed != self.tables.prescribed:
            raise ConfigError(f"P3Expected: prescribed={self.prescribed}, but the tables say points "
                              f"{self.tables.points}")
        object.__setattr__(self, "num_openings", batches)
        object.__setattr__(self, "prescribed", self.tables.prescribed)


def as_p3_expected(expected, points=None) -> P3Expected:
    """``expected`` as a ``P3Expected`` that pins the whole statement's shape: the number of openings and who
    chose the points, unless ``points`` (the expected points themselves) pin both. A ``P3WhirConfig`` pins
    neither, so it is taken only with ``points``; anything else is a ``ConfigError`` naming what is missing."""
    if isinstance(expected, P3WhirConfig):
        expected = P3Expected(expected)
    if not isinstance(expected, P3Expected) or not isinstance(expected.config, P3WhirConfig):
        raise ConfigError(f"params for a p3-whir document: expected a P3Expected (or a P3WhirConfig with points=), "
                          f"got {type(expected).__name__}")
    missing = [name for name, value in (("num_openings", expected.num_openings), ("prescribed", expected.prescribed))
               if value is None]
    if missing and points is None:
        raise ConfigError(f"params for a p3-whir document pin its configuration but not {' nor '.join(missing)}: "
                          f"a proof of another statement shape would pass; give P3Expected(config, "
                          f"num_openings=E, prescribed=True or False), or the expected points=")
    return expected


def _description(config: P3WhirConfig) -> dict:
    p = config.params
    return {"num_variables": config.num_variables, "field": config.field.name, "folding_factor": p.folding.k,
            "starting_log_inv_rate": p.starting_log_inv_rate,
            "round_log_inv_rates": [r.log_inv_rate for r in config.round_parameters],
            "security_level": p.security_level, "pow_bits": p.pow_bits, "soundness_type": p.soundness_type.name}


def check_p3_configuration(document, expected=None, min_security=None, assume=None, points=None) -> None:
    """The document's configuration against ``expected`` and ``min_security`` (see the module contract);
    ``points``: the statement's expected points, if any (``as_p3_expected``)."""
    if expected is not None:
        want = as_p3_expected(expected, points)
        _check_tables(document, want)
        have, need = _description(document.config), _description(want.config)
        for name, value in need.items():
            if have[name] != value:
                raise mismatch(f"params.{name}", f"{name} expected {value}, got {have[name]}")
        if want.num_openings is not None and want.num_openings != document.num_openings:
            raise mismatch("statement.num_points", f"{want.num_openings} opening point(s) expected, got "
                                                   f"{document.num_openings}")
        prescribed = document.points is not None
        if want.prescribed is not None and want.prescribed != prescribed:
            said = {True: "prescribed by the caller", False: "drawn from the transcript"}
            raise mismatch("statement.points", f"points {said[want.prescribed]} expected, the document's are "
                                               f"{said[prescribed]}")
    if min_security is not None:
        check_security(security_report(document.config), min_security, assume)


def _is_tables(document) -> bool:
    """A document with a tables spec: a table document, or a hiding one (tables stacked prefix)."""
    from .tables.document import P3TablesDocument  # noqa: PLC0415

    return isinstance(document, P3TablesDocument) or _is_zk(document)


def _is_zk(document) -> bool:
    from .zk.hiding_document import P3ZkDocument  # noqa: PLC0415

    return isinstance(document, P3ZkDocument)


def check_zk_statement(verified, points=None, values=None) -> None:
    """A hiding document's statement against the canonical one expected: ``points`` one (m_b, 4) local point per
    batch (as for a table document), ``values`` every claim in ``claimed_values`` order."""
    if points is not None:
        if isinstance(points, (str, bytes)) or not hasattr(points, "__len__"):
            raise ConfigError(f"points for a hiding document: one point per batch, got {type(points).__name__}")
        if len(points) != len(verified.local_points):
            raise mismatch("statement.num_points", f"{len(points)} point(s) expected, the schedule has "
                                                   f"{len(verified.local_points)} batch(es)")
        for b, (want, got) in enumerate(zip(points, verified.local_points)):
            try:
                check_statement(np.asarray(got)[None], np.zeros((1, 4), np.uint32), [want], None, field=verified.field)
            except VerificationError as exc:
                detail = str(exc).split("): ", 1)[-1].replace("point 0 ", "")
                raise mismatch(exc.check, f"batch {b}: {detail}") from None
    if values is not None:
        got = np.asarray(verified.proof.evals, np.uint32).reshape(-1, 4)
        if hasattr(values, "__len__") and len(values) != len(got):
            raise mismatch("statement.values", f"{len(values)} claimed value(s) expected, the schedule opens "
                                               f"{len(got)}")
        check_statement(np.zeros((len(got), 1, 4), np.uint32), got, None, values, field=verified.field)


def _check_tables(document, want: P3Expected) -> None:
    """The table pins of ``want`` against ``document`` (see the module contract)."""
    tables = _is_tables(document)
    if (want.tables is not None) != tables:
        said = {True: "a table document (p3-whir-oracle/v2)", False: "a single-column document (p3-whir-oracle/v1)"}
        raise mismatch("statement.tables", f"{said[want.tables is not None]} expected, got {said[tables]}")
    if not tables:
        return
    have, need = document.spec, want.tables
    c_have, c_need = have.canonical(), need.canonical()
    for check, key, flag in (("statement.table_shapes", "tables", "--tables"), ("statement.layout", "layout",
                                                                                 "--layout"),
                             ("statement.schedule", "open", "--open"), ("statement.points", "points", "--points")):
        if c_have[key] != c_need[key]:
            raise mismatch(check, f"{flag} {c_need[key] or '(nothing opened)'} expected, the document proves "
                                  f"{c_have[key] or '(nothing opened)'}")


def check_tables_statement(verified, points=None, values=None) -> None:
    """What a table proof proved (``verified``: a ``P3TablesVerified``) against the canonical statement expected:
    one point per batch, every claim in ``claimed_values`` order (see the module contract)."""
    if points is not None:
        if isinstance(points, (str, bytes)) or not hasattr(points, "__len__"):
            raise ConfigError(f"points for a table document: one point per batch, got {type(points).__name__}")
        if len(points) != len(verified.points):
            raise mismatch("statement.num_points", f"{len(points)} point(s) expected, the schedule has "
                                                   f"{len(verified.points)} batch(es)")
        for b, (want, got) in enumerate(zip(points, verified.points)):
            try:
                check_statement(np.asarray(got)[None], np.zeros((1, 4), np.uint32), [want], None, field=verified.field)
            except VerificationError as exc:
                detail = str(exc).split("): ", 1)[-1].replace("point 0 ", "")
                raise mismatch(exc.check, f"batch {b}: {detail}") from None
    if values is not None:
        claims = [v for c, f in zip(verified.current, verified.next) for v in (*c, *f)]
        got = np.array(claims, dtype=np.uint32).reshape(-1, 4)
        if hasattr(values, "__len__") and len(values) != len(got):
            raise mismatch("statement.values", f"{len(values)} claimed value(s) expected, the schedule opens "
                                               f"{len(got)}")
        check_statement(np.zeros((len(got), 1, 4), np.uint32), got, None, values, field=verified.field)


def check_p3_statement(verified, points=None, values=None) -> None:
    """What the proof proved (``verified.points`` (E, n, 4), ``verified.values`` (E, 4), Montgomery words of
    ``verified.field``) against the canonical statement the verifier expects."""
    if points is not None or values is not None:
        check_statement(verified.points, verified.values, points, values, field=verified.field)


def verify_p3_expected(document, params=None, min_security=None, points=None, values=None, assume=None):
    """Verify a p3-whir document against what the verifier expects: its configuration first, then the proof,
    then the statement it proved. Returns the ``P3Verified``; raises as ``whirgpu.verify`` does."""
    from .document import verify_p3_document

    if _is_zk(document):
        from .zk.hiding_document import verify_p3_zk_document  # noqa: PLC0415

        check_p3_configuration(document, params, min_security, assume, points)
        verified = verify_p3_zk_document(document)
        check_zk_statement(verified, points, values)
        return verified
    if _is_tables(document):
        from .tables.document import verify_p3_tables_document  # noqa: PLC0415

        check_p3_configuration(document, params, min_security, assume, points)
        verified = verify_p3_tables_document(document)
        check_tables_statement(verified, points, values)
        return verified
    check_p3_configuration(document, params, min_security, assume, points)
    verified = verify_p3_document(document)
    check_p3_statement(verified, points, values)
    return verified


def p3_expected_config(n: int, k: int | None = None, r: int | None = None, field=None, security_level=None,
                       pow_bits=None, soundness=None) -> P3WhirConfig:
    """The configuration ``prove --profile p3-whir -n n -k k -r r`` proves under, with the refinements given
    (None: the profile's default, ``defaults.EXAMPLE_PARAMETERS``, and its budget raised as ``prove`` raises it
    where upstream would refuse it); a ``ConfigError`` when upstream derives none."""
    from .defaults import EXAMPLE_FIELD, example_parameters, resolve

    params = example_parameters(folding_factor=k, rate=r, security_level=security_level, soundness_type=soundness,
                                pow_bits=pow_bits)
    return resolve(n, params, field or EXAMPLE_FIELD, explicit=pow_bits is not None).config
