"""Where the hiding PCS's masks come from: the generator upstream uses (rand's ``StdRng``), keyed by the operating
system's CSPRNG in normal use, by a u64 only when the caller asks for reproducible (NOT hiding) proofs.

Contract:
- ``mask_rng(mask_seed=None)`` -> ``StdRng`` (a ``native.chacha.CompiledStdRng``: the same words, its keystream
  compiled where a C compiler is): ``mask_seed`` None (normal use) keys it with 32 bytes of
  ``secrets.token_bytes`` (the OS CSPRNG; upstream's ``StdRng::from_rng(OsRng)``-like construction), so that two
  proofs of one statement differ and nothing in a document can reproduce the masks; an integer in [0, 2^64) gives
  ``StdRng.seed_from_u64(mask_seed)``, the oracle's ``--mask-seed`` (its proofs byte for byte), for tests and
  reproduction only. Anything else is a ``ConfigError`` naming it.
- ``seeded_note(mask_seed)``: the line every output of a seeded proof carries.
- ``mask_draws(mask_seed)``: the two 32-byte draws the PCS makes from the seeded generator (commit, open), as the
  oracle's ``mask_rng.draws`` lists them; only ever written for a seeded proof (the draws key every mask).
"""

from __future__ import annotations

import secrets

from ....errors import ConfigError
from ....native.chacha import CompiledStdRng
from ....ref.chacha_rng import StdRng

DRAWS_PER_PROOF = 2  # StdRng::from_rng(&mut R) once in commit, once in open: 32 bytes each


def check_mask_seed(mask_seed, what: str = "mask_seed") -> int | None:
    if mask_seed is None:
        return None
    if isinstance(mask_seed, bool) or not isinstance(mask_seed, int) or not 0 <= mask_seed < 1 << 64:
        raise ConfigError(f"{what} {mask_seed!r:.40}: a u64 is expected (StdRng::seed_from_u64), or none for masks "
                          "from the operating system's CSPRNG")
    return mask_seed


def mask_rng(mask_seed: int | None = None) -> StdRng:
    """The mask generator (see the module contract)."""
    if check_mask_seed(mask_seed) is None:
        return CompiledStdRng.from_seed(secrets.token_bytes(32))
    return CompiledStdRng.seed_from_u64(mask_seed)


def seeded_note(mask_seed: int) -> str:
    return (f"seeded masks (--mask-seed {mask_seed}): for tests and reproduction only, NOT hiding against anyone who "
            "knows the seed")


def mask_draws(mask_seed: int) -> list[dict]:
    """The oracle's ``mask_rng.draws`` of a seeded proof."""
    rng = StdRng.seed_from_u64(check_mask_seed(mask_seed))
    return [{"hex": rng.fill_bytes(32).hex(), "len": 32, "op": "fill_bytes"} for _ in range(DRAWS_PER_PROOF)]


__all__ = ["check_mask_seed", "mask_draws", "mask_rng", "seeded_note"]
