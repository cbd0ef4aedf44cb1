"""The p3-whir profile's defaults in one place: upstream's example (``whir/examples/whir.rs`` at 5dc50e51) and the
rule for its grinding budget. Every command (prove, bench, devices --plan, params), the Python API (``P3Prover``)
and every help text read them from here.

Contract:
- ``EXAMPLE_PARAMETERS`` (security 90, pow_bits 16, Constant fold 5, starting rate 1, CapacityBound) over
  ``EXAMPLE_FIELD`` (koalabear); ``describe_example()`` says them in words for help texts.
- ``example_parameters(folding_factor=None, rate=None, security_level=None, soundness_type=None, pow_bits=None)``:
  the example with each given choice replacing the example's.
- ``smallest_accepted_budget(num_variables, params, field)``: the smallest grinding budget B >= ``params.pow_bits``
  with ``P3WhirConfig.derive`` (upstream's ``WhirConfig::new``) accepting ``params`` at budget B, B at most
  ``max_grind_bits(field)``; a ``ConfigError`` saying why when there is none. Any other refusal of ``derive``
  (a variant other than ``PowBitsExceedBudget``) is raised unchanged.
- ``resolve(num_variables, params, field, explicit, flag="--pow-bits") -> Resolved``: the configuration to prove.
  ``explicit=False`` (the user gave no budget): ``params``' budget raised to ``smallest_accepted_budget`` where
  upstream refuses it, with ``Resolved.note`` the one line that says so (None when nothing was raised).
  ``explicit=True``: exactly ``params``; where upstream refuses the budget the ``ConfigError`` keeps upstream's
  message and names the budget that would work (as ``flag B``). Either way a derived PoW above what the transcript
  can grind is refused.
- ``check_openings(count, what)``: ``count`` opening points are provable (1 <= count <= ``MAX_OPENINGS``), else a
  ``ConfigError`` naming ``what`` and the bound. ``MAX_OPENINGS`` is also the bound for a document's reader.
- ``field`` arguments are a ``whirgpu.field.Field`` or its name (``as_field``).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, replace

from ...errors import ConfigError
from ...field import Field, field_by_name
from ...protocol.folding import Constant
from ...protocol.soundness import SoundnessType
from ...protocol.transcript import MAX_SAMPLE_BITS
from .config import USIZE_BITS, P3Parameters, P3WhirConfig

PLONKY3_COMMIT = "5dc50e51436a811c62443e336f766015fecc9217"  # the upstream this profile speaks
EXAMPLE_PARAMETERS = P3Parameters(security_level=90, pow_bits=16, folding=Constant(5),
                                  soundness_type=SoundnessType.CapacityBound, starting_log_inv_rate=1)
EXAMPLE_FIELD = "koalabear"

# At most this many opening points per proof. Each opening costs the prover two passes over the 2^n table (its
# claim, then its eq weights added into the batched weights), while the rest of a proof (the first DFT, the leaf
# hashes, the sumchecks and folds) is a few dozen such passes: measured on the numpy reference at n = 14 and 16,
# one opening is about 3% of the rest (PoW aside), so 256 openings keep the statement within about 8x the rest of
# the proof. Memory does not grow with the count past the points themselves (E x n x 16 bytes: one weights table
# takes every opening). A protocol opens a committed table at a handful of points (a STARK's out-of-domain point
# and its shifts), far below this.
MAX_OPENINGS = 256

_BUDGET_VARIANT = "PowBitsExceedBudget"


def max_grind_bits(field: Field | str) -> int:
    """The largest PoW the transcript can grind over ``field``: sample_bits(b) needs 2^b < p (30 for both fields)."""
    field = as_field(field)
    return min(MAX_SAMPLE_BITS, (field.P - 1).bit_length() - 1)


def example_parameters(folding_factor: int | None = None, rate: int | None = None,
                       security_level: int | None = None, soundness_type: SoundnessType | str | None = None,
                       pow_bits: int | None = None) -> P3Parameters:
    """``EXAMPLE_PARAMETERS`` with each given choice in place of the example's."""
    p = EXAMPLE_PARAMETERS
    return P3Parameters(
        security_level=p.security_level if security_level is None else security_level,
        pow_bits=p.pow_bits if pow_bits is None else pow_bits,
        folding=p.folding if folding_factor is None else Constant(folding_factor),
        soundness_type=p.soundness_type if soundness_type is None else SoundnessType.parse(soundness_type),
        starting_log_inv_rate=p.starting_log_inv_rate if rate is None else rate,
    )


def describe_example() -> str:
    """The example in words, for help texts: "security 90, pow 16, fold 5, rate 1, capacity bound, koalabear"."""
    p = EXAMPLE_PARAMETERS
    return (f"security {p.security_level}, pow {p.pow_bits}, fold {p.folding.k}, rate {p.starting_log_inv_rate}, "
            f"{p.soundness_type.cli_name} bound, {EXAMPLE_FIELD}")


def as_field(field: Field | str) -> Field:
    """``field`` or the field of that name; a ConfigError naming the choices for any other name."""
    if isinstance(field, Field):
        return field
    try:
        return field_by_name(field)
    except (KeyError, TypeError):
        raise ConfigError(f"field {field!r}: choose babybear or koalabear") from None


def _where(num_variables: int, params: P3Parameters) -> str:
    fold = params.folding.k if isinstance(params.folding, Constant) else params.folding
    return (f"n={num_variables} fold={fold} rate={params.starting_log_inv_rate} "
            f"security={params.security_level}")


def _derive(num_variables: int, params: P3Parameters, field: Field) -> tuple[P3WhirConfig | None, str]:
    """(the configuration, "") or, where upstream refuses this budget, (None, upstream's message); other refusals
    raise."""
    try:
        return P3WhirConfig.derive(num_variables, params, field), ""
    except ConfigError as exc:
        if str(exc).startswith(_BUDGET_VARIANT):
            return None, str(exc)
        raise


def smallest_accepted_budget(num_variables: int, params: P3Parameters, field: Field | str) -> int:
    field = as_field(field)
    _check_budget(params.pow_bits, "pow_bits")
    ceiling = max_grind_bits(field)
    for budget in range(params.pow_bits, max(ceiling, params.pow_bits) + 1):
        config = _derive(num_variables, replace(params, pow_bits=budget), field)[0]
        if config is not None and config.max_pow_bits <= ceiling:
            return budget
    # None within what can be ground: say how far off upstream's smallest budget is (derive is a few float
    # formulas; a PoW is a usize upstream, so 63 bits is as far as a budget can mean anything).
    last = min(params.security_level, USIZE_BITS - 1)
    beyond = next((b for b in range(max(params.pow_bits, ceiling + 1), last + 1)
                   if _derive(num_variables, replace(params, pow_bits=b), field)[0] is not None), None)
    needs = (f"upstream accepts {beyond} bits at the least" if beyond is not None
             else f"upstream accepts no budget up to {last} bits")
    tried = f"from {params.pow_bits} up to {ceiling} bits" if params.pow_bits <= ceiling else \
        f"of {params.pow_bits} bits or more"
    raise ConfigError(f"{_BUDGET_VARIANT}: no grinding budget {tried} keeps the derived proof-of-work within the "
                      f"{ceiling} bits the transcript can grind over {field.name} (2^bits < p) at "
                      f"{_where(num_variables, params)}; {needs}; {_nearest(num_variables, params, field, ceiling)}")


def _nearest(num_variables: int, params: P3Parameters, field: Field, ceiling: int) -> str:
    """The nearest setting that derives within what can be ground: the largest security level at this point, in
    terms of the field (its degree-4 extension's size bounds every step's error term, so past a level only PoW
    beyond grinding would close the gap)."""
    for level in range(params.security_level - 1, 0, -1):
        found = _derive(num_variables, replace(params, security_level=level, pow_bits=ceiling), field)[0]
        if found is not None and found.max_pow_bits <= ceiling:
            return (f"the largest security level that derives here is {level} bits (at a {ceiling}-bit budget): "
                    f"the {field.name} degree-4 extension (~2^{found.field_bits} elements) leaves every step's "
                    f"error term too large to close the rest by grinding; lower the security level, the fold or "
                    f"the rate")
    return "lower the security level, the fold or the rate"


def _check_budget(pow_bits, what: str) -> None:
    if isinstance(pow_bits, bool) or not isinstance(pow_bits, int) or pow_bits < 0:
        raise ConfigError(f"{what} must be an integer >= 0, got {pow_bits!r:.40}")


@dataclass(frozen=True)
class Resolved:
    """The configuration ``resolve`` chose: ``config`` (its ``params`` carry the budget), ``raised_from`` the budget
    asked for when it was raised (else None) and ``note``, the one line saying so (else None)."""

    config: P3WhirConfig
    raised_from: int | None = None
    note: str | None = None

    @property
    def params(self) -> P3Parameters:
        return self.config.params


def resolve(num_variables: int, params: P3Parameters, field: Field | str, explicit: bool,
            flag: str = "--pow-bits") -> Resolved:
    field = as_field(field)
    _check_budget(params.pow_bits, flag)
    ceiling = max_grind_bits(field)
    config, refusal = _derive(num_variables, params, field)
    if config is None:
        if explicit:
            try:
                budget = smallest_accepted_budget(num_variables, params, field)
            except ConfigError as exc:
                raise ConfigError(f"{refusal}; and {str(exc).removeprefix(_BUDGET_VARIANT + ': ')}") from None
            raise ConfigError(f"{refusal}; {flag} {budget} is the smallest budget upstream accepts at "
                              f"{_where(num_variables, params)}")
        budget = smallest_accepted_budget(num_variables, params, field)
        config = P3WhirConfig.derive(num_variables, replace(params, pow_bits=budget), field)
        note = (f"pow budget raised from {params.pow_bits} to {budget} bits, the smallest upstream accepts at "
                f"{_where(num_variables, params)}")
        return Resolved(config, params.pow_bits, note)
    if config.max_pow_bits > ceiling:  # only an explicit budget above the ceiling gets here
        raise ConfigError(f"the derived proof-of-work of {config.max_pow_bits} bits is more than the transcript can "
                          f"grind over {field.name} ({ceiling} bits: 2^bits < p) at {_where(num_variables, params)}; "
                          "lower the security level, the fold or the rate")
    return Resolved(config)


def check_openings(count, what: str = "num_openings") -> int:
    try:
        if isinstance(count, bool):
            raise TypeError
        count = operator.index(count)
    except TypeError:
        raise ConfigError(f"{what} must be an integer, got {count!r:.40}") from None
    if not 1 <= count <= MAX_OPENINGS:
        raise ConfigError(f"{what} {count}: a proof opens at 1 to {MAX_OPENINGS} points (MAX_OPENINGS)")
    return count
