"""The p3-whir profile's derived schedule as a plain-text table (``whirgpu params --profile p3-whir``).

Contract: ``format_p3_schedule(config, field_name)`` renders a ``P3WhirConfig`` it does not change, in the same
table shape as the whir-p3-metal profile's ``schedule_text.format_schedule``.
"""

from __future__ import annotations

from ...protocol.regimes import describe
from ...protocol.schedule_text import pow2, table
from .config import P3WhirConfig
from .security import security_report


def format_p3_schedule(config: P3WhirConfig, field_name: str) -> str:
    """The p3-whir profile's schedule (``P3WhirConfig``) as a table of the same shape; each round row gives the
    codeword committed after it, its queries and PoW open the one before."""
    p = config.params
    lines = [
        f"WHIR schedule (p3-whir profile, {field_name}): n = {config.num_variables}, folding {p.folding}, rate "
        f"2^-{p.starting_log_inv_rate}, pow_bits budget {p.pow_bits}",
        describe(security_report(config)) + " (docs/SECURITY.md)",
        f"{config.n_rounds} intermediate round(s), {config.final_sumcheck_rounds} final sumcheck round(s), "
        f"largest DFT 2^{config.max_fft_size}",
        "",
    ]
    header = ("round", "variables", "fold", "domain", "rate", "queries", "OOD", "PoW", "fold PoW")
    rows = [("initial", str(config.num_variables), str(config.folding_schedule[0]),
             pow2(config.starting_domain_size), f"2^-{p.starting_log_inv_rate}", "-",
             str(config.commitment_ood_samples), "-", str(config.starting_folding_pow_bits))]
    for i, r in enumerate(config.round_parameters):
        rows.append((str(i), str(r.num_variables), str(config.folding_schedule[i + 1]),
                     pow2(r.domain_size >> config.rs_reduction_factor(i)), f"2^-{r.log_inv_rate}",
                     str(r.num_queries), str(r.ood_samples), str(r.pow_bits), str(r.folding_pow_bits)))
    fr = config.final_round_config()
    rows.append(("final", str(fr.num_variables), str(config.final_sumcheck_rounds), "-", "-", str(fr.num_queries),
                 "-", str(fr.pow_bits), str(fr.folding_pow_bits)))
    lines += table(header, rows)
    lines.append("")
    lines.append(f"Largest PoW: {config.max_pow_bits} bits, within the pow_bits budget of {p.pow_bits} (upstream "
                 "refuses a configuration past it).")
    return "\n".join(lines) + "\n"
