"""What a verifier expects of a proof, checked before the proof itself: its parameters, the security they reach,
and its statement. A prover chooses what it writes in a proof file; the verifier decides what it accepts.

Contract of ``check_expectations``: every argument left ``None`` checks nothing. A proof that differs raises
``VerificationError`` with ``round="expectations"`` and ``check`` naming the field:
``params.<name>`` (``num_variables``, ``folding_factor``, ``starting_log_inv_rate``, ``security_level``,
``pow_bits``, ``soundness_type``, ``rs_domain_initial_reduction_factor``), ``min_security``,
``statement.num_points``, ``statement.points`` or ``statement.values``; the message says what was expected and
what the proof holds. Expectations that are themselves malformed (a wrong type, a value that is not a canonical
field element, a negative security) raise ``ConfigError``: the caller's mistake, not the proof's.

Points and values are canonical, in the shapes ``Prover.prove`` takes and ``claimed_values`` returns: points
``(m, n, 4)`` (extension coordinates) or ``(m, n)`` (base coordinates), values ``(m, 4)`` or ``(m,)`` (base).
"""

from __future__ import annotations

import numbers

import numpy as np

from .canonical import canonical_array
from .errors import ConfigError, VerificationError
from .protocol.parameters import ProtocolParameters
from .protocol.regimes import SecurityReport, security_report
from .protocol.schedule import Schedule
from .protocol.security_policy import shortfall
from .field import BABYBEAR, Field
from .ref.field_np import field_ops

PARAM_FIELDS = ("num_variables", "folding_factor", "starting_log_inv_rate", "security_level", "pow_bits",
                "soundness_type", "rs_domain_initial_reduction_factor")


def mismatch(check: str, message: str) -> VerificationError:
    return VerificationError(f"not what the verifier expects ({check}): {message}", round="expectations",
                             check=check)


def _show(value) -> str:
    return value.name if hasattr(value, "name") and not isinstance(value, type) else str(value)


def check_params(got: ProtocolParameters, expected) -> None:
    if isinstance(getattr(expected, "params", None), ProtocolParameters):  # a configuration derived from them
        expected = expected.params
    if not isinstance(expected, ProtocolParameters):
        raise ConfigError(f"params: expected ProtocolParameters, got {type(expected).__name__}")
    for name in PARAM_FIELDS:
        want, have = getattr(expected, name), getattr(got, name)
        if want != have:
            raise mismatch(f"params.{name}", f"{name} expected {_show(want)}, got {_show(have)}")


def check_security(report: SecurityReport, min_security, assume=None) -> None:
    """The configuration whose ``report`` this is (either profile's) reaches ``min_security`` bits as a verifier
    counts them: provable bits, or the capacity-bound conjecture's figure too when ``assume == "capacity"``
    (``protocol.security_policy``)."""
    if isinstance(min_security, bool) or not isinstance(min_security, numbers.Real) or not min_security >= 0:
        raise ConfigError(f"min_security must be a number of bits >= 0, got {min_security!r}")
    why = shortfall(report, min_security, assume)
    if why is not None:
        raise mismatch("min_security", why)


def _canonical(values, what: str, prime: int) -> np.ndarray:
    return canonical_array(values, what, prime).astype(np.int64)


def _as_extension(array: np.ndarray, base_ndim: int) -> np.ndarray:
    """Base elements (one axis fewer) embedded as [a, 0, 0, 0]."""
    if array.ndim == base_ndim:
        return np.concatenate([array[..., None], np.zeros(array.shape + (3,), np.int64)], axis=-1)
    return array


def check_statement(got_points: np.ndarray, got_values: np.ndarray, points=None, values=None,
                    field: Field = BABYBEAR) -> None:
    """``got_*``: the proof's statement (Montgomery words of ``field``, already checked by the verifier: run this
    after it); ``points`` / ``values``: what the verifier expects, canonical elements of ``field``."""
    m, n = got_points.shape[0], got_points.shape[1]
    ops = field_ops(field)
    have_points = ops.from_monty(got_points).astype(np.int64)
    have_values = ops.from_monty(got_values).astype(np.int64)
    for what, expected, have, base_ndim in (("points", points, have_points, 2), ("values", values, have_values, 1)):
        if expected is None:
            continue
        array = _canonical(expected, what, field.P)
        if array.size == 0 and array.shape[:1] == (0,):  # no claims, in any of the accepted shapes
            array = np.zeros((0,) + have.shape[1:], np.int64)
        array = _as_extension(array, base_ndim)
        tail = (n, 4) if what == "points" else (4,)
        if array.ndim != len(tail) + 1 or array.shape[1:-1] != tail[:-1] or array.shape[-1] != 4:
            if what == "points" and array.ndim == 3 and array.shape[-1] == 4:  # well-formed, another n
                raise mismatch("statement.points", f"points of {array.shape[1]} coordinates expected, "
                                                    f"the proof's have {n}")
            shape = f"(m, {n}, 4) or (m, {n})" if what == "points" else "(m, 4) or (m,)"
            raise ConfigError(f"{what}: expected shape {shape}, got {np.asarray(expected).shape}")
        if len(array) != m:
            raise mismatch("statement.num_points", f"{len(array)} point(s) expected, got {m}")
        differ = np.flatnonzero(np.any((array != have).reshape(m, -1), axis=1))
        if differ.size:
            i = int(differ[0])
            want, got, where = array[i], have[i], f"{what[:-1]} {i}"
            if what == "points":  # name the first coordinate that differs, not all n of them
                t = int(np.flatnonzero(np.any(want != got, axis=1))[0])
                want, got, where = want[t], got[t], f"{where} coordinate {t}"
            raise mismatch(f"statement.{what}", f"{where} expected {want.tolist()}, got {got.tolist()}")


def check_configuration(params: ProtocolParameters, config: Schedule, *, expected_params=None,
                        min_security=None, assume=None) -> None:
    """The parameters and the security they reach: checked before the proof, so that a verifier spends no work
    on a proof made under parameters it would refuse."""
    if expected_params is not None:
        check_params(params, expected_params)
    if min_security is not None:
        check_security(security_report(config), min_security, assume)

