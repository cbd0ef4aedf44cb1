"""The protocol-parameter flags (``-n``, ``-k``, ``-r``, ``--security``, ``--pow-bits``, ``--soundness``,
``--initial-reduction``) that ``params``, ``prove`` and ``bench`` share, and the configurations they name:
``params_from_args`` (whir-p3-metal) and ``p3_config_from_args`` (p3-whir, upstream's example with each given flag
in its place)."""

from __future__ import annotations

import argparse
import sys

from ..errors import ConfigError
from ..profiles.p3_whir.config import P3WhirConfig
from ..profiles.p3_whir.defaults import EXAMPLE_FIELD, EXAMPLE_PARAMETERS, example_parameters, max_grind_bits, resolve
from ..protocol.parameters import DEFAULT_MAX_POW, DEFAULT_SECURITY_LEVEL, ProtocolParameters
from ..protocol.soundness import SoundnessType

# The dests of the protocol-parameter flags; `prove --from` refuses every one of them (the file decides).
PARAM_FLAGS = ("num_variables", "folding_factor", "rate", "security", "pow_bits", "soundness", "initial_reduction")


def add_param_flags(p: argparse.ArgumentParser, required: bool = True) -> None:
    """The protocol-parameter flags; ``required``: -n must be given (-k and -r are checked by the command: the
    p3-whir profile has defaults for them, whir-p3-metal has none)."""
    example = EXAMPLE_PARAMETERS
    g = p.add_argument_group("protocol parameters (defaults: the reference's sweep; with --profile p3-whir, "
                             "upstream's example)")
    g.add_argument("--num-variables", "-n", type=int, required=required, metavar="N",
                   help="the polynomial has 2^N evaluations")
    g.add_argument("--folding-factor", "-k", type=int, default=None, metavar="K",
                   help="variables folded per round (the same K in every round; required for whir-p3-metal, "
                        f"default {example.folding.k} with --profile p3-whir)")
    g.add_argument("--rate", "-r", type=int, default=None, metavar="R",
                   help="starting log2 of the inverse code rate (required for whir-p3-metal, default "
                        f"{example.starting_log_inv_rate} with --profile p3-whir)")
    # Defaults are filled in by params_from_args, so that `prove --from` can tell a given flag from a default.
    g.add_argument("--security", type=int, default=None, metavar="BITS",
                   help=f"security level in bits (default {DEFAULT_SECURITY_LEVEL}; {example.security_level} with "
                        "--profile p3-whir)")
    g.add_argument("--pow-bits", type=int, default=None, metavar="BITS",
                   help=f"proof-of-work budget the query counts assume (default {DEFAULT_MAX_POW}; with --profile "
                        f"p3-whir the example's {example.pow_bits}, raised where upstream refuses it to the smallest "
                        "budget it accepts, which a note on stderr says, while a given budget upstream refuses is an "
                        "error naming one that works; a derived PoW can be at most "
                        f"{max_grind_bits(EXAMPLE_FIELD)} bits, what the transcript can grind)")
    soundness = "capacity" if example.soundness_type is SoundnessType.CapacityBound else \
        f"capacity; {example.soundness_type.cli_name} with --profile p3-whir"
    g.add_argument("--soundness", default=None, metavar="TYPE",
                   help=f"capacity | johnson | unique (default {soundness})")
    g.add_argument("--initial-reduction", type=int, default=None, metavar="M",
                   help="RS domain reduction of the first round (default min(K, 3); not a p3-whir parameter)")


def params_from_args(args) -> ProtocolParameters:
    missing = [f for f in ("folding_factor", "rate") if getattr(args, f) is None]
    if missing:
        raise ConfigError(f"{args.command} needs --{missing[0].replace('_', '-')} (the whir-p3-metal profile has no "
                          "default for it)")
    return ProtocolParameters.default(
        num_variables=args.num_variables,
        folding_factor=args.folding_factor,
        starting_log_inv_rate=args.rate,
        security_level=DEFAULT_SECURITY_LEVEL if args.security is None else args.security,
        pow_bits=DEFAULT_MAX_POW if args.pow_bits is None else args.pow_bits,
        soundness_type=SoundnessType.CapacityBound if args.soundness is None else SoundnessType.parse(args.soundness),
        rs_domain_initial_reduction_factor=args.initial_reduction,
    )


def p3_config_from_args(args) -> P3WhirConfig:
    """The p3-whir configuration the flags name: upstream's example (``defaults.EXAMPLE_PARAMETERS``) with each
    given flag in its place; without --pow-bits the example's budget, raised where upstream refuses it (one
    ``note:`` line on stderr says so), with --pow-bits exactly that budget (``defaults.resolve``)."""
    if args.initial_reduction is not None:
        raise ConfigError("--initial-reduction is not a p3-whir parameter (upstream sets each round's rate instead)")
    params = example_parameters(args.folding_factor, args.rate, args.security, args.soundness, args.pow_bits)
    resolved = resolve(args.num_variables, params, args.field or EXAMPLE_FIELD, explicit=args.pow_bits is not None)
    if resolved.note:
        print(f"note: {resolved.note}", file=sys.stderr)
    return resolved.config
