"""The whir-p3-metal profile's derived schedule as a plain-text table, for people (``whirgpu params``).

Contract: ``format_schedule(config)`` renders a ``WhirConfig`` it does not change: the initial commitment, each
round, the final round, then whether the largest PoW is within the ``pow_bits`` budget. It is for reading:
``whirgpu params --json`` and the documents carry ``to_json_dict``.
"""

from __future__ import annotations

from whirgpu.profiles.whir_p3_metal.config import WhirConfig
from whirgpu.protocol.regimes import describe, security_report
from whirgpu.protocol.schedule_text import pow2, table


def format_schedule(config: WhirConfig) -> str:
    """A plain-text table of the derived schedule: the initial commitment, each round, the final round."""
    p = config.params
    lines = [
        f"WHIR schedule: n = {p.num_variables}, folding {p.folding_factor}, rate 2^-{p.starting_log_inv_rate}, "
        f"pow_bits budget {p.pow_bits}, initial domain reduction {p.rs_domain_initial_reduction_factor}",
        describe(security_report(config)) + " (docs/SECURITY.md)",
        f"{config.n_rounds} intermediate round(s), {config.final_sumcheck_rounds} final sumcheck round(s), "
        f"largest NTT 2^{config.max_fft_size_log2}",
        "",
    ]
    header = ("round", "variables", "fold", "domain", "rate", "queries", "OOD", "PoW", "fold PoW")
    rows: list[tuple[str, ...]] = [
        (
            "initial",
            str(config.num_variables),
            str(config.fold(0)),
            pow2(config.starting_domain_size),
            f"2^-{config.starting_log_inv_rate}",
            "-",
            str(config.commitment_ood_samples),
            "-",
            str(config.starting_folding_pow_bits),
        )
    ]
    for i, rc in enumerate(config.rounds):
        rows.append(
            (
                str(i),
                str(rc.num_variables),
                str(config.fold(i + 1)),
                pow2(rc.domain_size >> rc.rs_reduction_factor),
                f"2^-{rc.next_log_inv_rate}",
                str(rc.num_queries),
                str(rc.ood_samples),
                str(rc.pow_bits),
                str(rc.folding_pow_bits),
            )
        )
    fr = config.final_round_config()
    rows.append(
        (
            "final",
            str(fr.num_variables),
            str(fr.num_variables),
            "-",
            "-",
            str(fr.num_queries),
            "-",
            str(fr.pow_bits),
            str(fr.folding_pow_bits),
        )
    )
    lines += table(header, rows)
    lines.append("")
    lines.append("Each row is one committed polynomial (its variables, domain and rate) and the sumcheck that")
    lines.append("folds 'fold' of its variables ('fold PoW' bits per sumcheck round); 'queries' and 'PoW' open")
    lines.append("the previous commitment. The final row sends its polynomial in the clear and queries the last")
    lines.append("commitment.")
    top = config.max_derived_pow_bits
    if config.check_pow_bits():
        lines.append(f"Largest PoW: {top} bits, within the pow_bits budget of {p.pow_bits}.")
    else:
        lines.append(
            f"Warning: largest PoW is {top} bits, above the pow_bits budget of {p.pow_bits} "
            f"(the reference only warns; grinding takes about 2^{top} hashes)."
        )
    return "\n".join(lines) + "\n"
