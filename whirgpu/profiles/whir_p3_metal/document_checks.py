"""Strict checks of a proof document's header: every key is one the format defines, and every value that restates
what the parameters derive must equal it (as the Rust reference's full check of a golden file does).

Contract: each function raises ``ProofFormatError`` naming the key and, for a derived value, the first place
where it differs; nothing else. They run on decoded JSON (dicts, lists, ints, strs) of any shape: a key of the
wrong type is a difference like any other.

What is checked, key by key (golden/README.md defines them):
- ``params``: the seven protocol parameters (checked by ``ProtocolParameters``), ``soundness_type_discriminant``,
  ``poseidon2_seed`` (1), ``merkle_cap_height`` (0), ``sumcheck_strategy`` (``"Svo"`` or ``"Classic"``: the proof
  does not depend on it), ``num_points`` (counts the statement's points; checked by the decoder), ``seed`` (the
  instance's u64 seed). No other key.
- ``derived``: exactly ``WhirConfig.to_derived_dict()``; ``domain_separator_canonical``: exactly the domain
  separator the configuration absorbs.
- ``field``: BabyBear's name, p, W = 11 and the extension's description; ``crypto``: the challenger, hash,
  compression and permutation this implementation (and the reference) use; its descriptive keys (``mmcs``,
  ``fiat_shamir_prefix``, ``rng``) and ``source``'s values, like ``proof_field_encoding_note``, are text.
- ``polynomial_evals_canonical``: 2^n canonical field elements.
"""

from __future__ import annotations

from ...errors import ProofFormatError
from ...field import P
from ...protocol.json_tree import first_difference, json_type
from .config import WhirConfig

PARAM_KEYS = frozenset({
    "num_variables", "folding_factor", "starting_log_inv_rate", "security_level", "pow_bits", "soundness_type",
    "rs_domain_initial_reduction_factor", "soundness_type_discriminant", "poseidon2_seed", "merkle_cap_height",
    "sumcheck_strategy", "num_points", "seed",
})
SUMCHECK_STRATEGIES = ("Svo", "Classic")
REQUIRED_KEYS = ("format", "params", "points_canonical", "claimed_values_canonical", "proof")
OPTIONAL_KEYS = ("proof_field_encoding", "derived", "domain_separator_canonical", "proof_canonical",
                 "polynomial_evals_canonical", "field", "crypto", "source", "proof_field_encoding_note")
FIELD = {
    "extension": "BinomialExtensionField<BabyBear, 4>: a0 + a1*X + a2*X^2 + a3*X^3, X^4 = W",
    "extension_w": 11,
    "name": "BabyBear",
    "p": P,
}
CRYPTO = {
    "challenger": "DuplexChallenger<BabyBear, Perm, 16, 8>",
    "compress": "TruncatedPermutation<Perm, 2, 8, 16>",
    "hash": "PaddingFreeSponge<Perm, 16, 8, 8>",
    "permutation": "Poseidon2BabyBear<16>::new_from_rng_128(SmallRng::seed_from_u64(1))",
}
CRYPTO_TEXT = ("mmcs", "fiat_shamir_prefix", "rng")  # descriptive: any text


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_keys(value: dict, where: str, allowed) -> None:
    unknown = sorted(k for k in value if k not in allowed)
    if unknown:
        raise ProofFormatError(f"{where}: unknown key {unknown[0]!r:.60} (the format defines "
                               f"{', '.join(sorted(allowed))})")


def check_params_block(block: dict, where: str) -> None:
    """The keys of a ``params`` block, and the values ``ProtocolParameters`` does not read."""
    check_keys(block, where, PARAM_KEYS)
    if "sumcheck_strategy" in block and block["sumcheck_strategy"] not in SUMCHECK_STRATEGIES:
        raise ProofFormatError(f"{where}.sumcheck_strategy: expected one of {', '.join(SUMCHECK_STRATEGIES)}, "
                               f"got {block['sumcheck_strategy']!r:.40}")
    if "seed" in block and not (_is_int(block["seed"]) and 0 <= block["seed"] < 1 << 64):
        raise ProofFormatError(f"{where}.seed: expected a u64 integer, got {block['seed']!r:.40}")


def _text(value, where: str) -> None:
    if not isinstance(value, str):
        raise ProofFormatError(f"{where}: expected text, got {json_type(value)}")


def _equal(got, want, where: str) -> None:
    try:
        difference = first_difference(got, want, where)
    except RecursionError:
        raise ProofFormatError(f"{where}: nested too deeply") from None
    if difference is not None:
        raise ProofFormatError(f"{where} disagrees with what the parameters derive at {difference}")


def check_document(doc: dict, config: WhirConfig) -> None:
    """Every top-level key of a whir-p3-json document, the optional ones against ``config``."""
    from .domain_separator import domain_separator  # noqa: PLC0415 - only documents that carry one need it

    check_keys(doc, "document", REQUIRED_KEYS + OPTIONAL_KEYS)
    if "derived" in doc:
        _equal(doc["derived"], config.to_derived_dict(), "derived")
    if "domain_separator_canonical" in doc:
        _equal(doc["domain_separator_canonical"], [int(x) for x in domain_separator(config)],
               "domain_separator_canonical")
    if "field" in doc:
        block = doc["field"]
        if not isinstance(block, dict):
            raise ProofFormatError(f"field: expected an object, got {json_type(block)}")
        check_keys(block, "field", FIELD)
        for key, value in block.items():
            _equal(value, FIELD[key], f"field.{key}")
    if "crypto" in doc:
        block = doc["crypto"]
        if not isinstance(block, dict):
            raise ProofFormatError(f"crypto: expected an object, got {json_type(block)}")
        check_keys(block, "crypto", (*CRYPTO, *CRYPTO_TEXT))
        for key, value in block.items():
            _text(value, f"crypto.{key}") if key in CRYPTO_TEXT else _equal(value, CRYPTO[key], f"crypto.{key}")
    if "source" in doc:
        if not isinstance(doc["source"], dict):
            raise ProofFormatError(f"source: expected an object, got {json_type(doc['source'])}")
        for key, value in doc["source"].items():
            _text(value, f"source.{key}")
    if "proof_field_encoding_note" in doc:
        _text(doc["proof_field_encoding_note"], "proof_field_encoding_note")
    if "polynomial_evals_canonical" in doc:
        evals, size = doc["polynomial_evals_canonical"], 1 << config.num_variables
        if not isinstance(evals, list) or len(evals) != size:
            got = len(evals) if isinstance(evals, list) else json_type(evals)
            raise ProofFormatError(f"polynomial_evals_canonical: expected 2^{config.num_variables} = {size} "
                                   f"values, got {got}")
        bad = next((i for i, v in enumerate(evals) if not (_is_int(v) and 0 <= v < P)), None)
        if bad is not None:
            raise ProofFormatError(f"polynomial_evals_canonical[{bad}]: {evals[bad]!r:.40} is not a canonical "
                                   f"field element in [0, {P})")
