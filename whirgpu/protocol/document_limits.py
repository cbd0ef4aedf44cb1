"""How many bytes a reader takes from anyone: the largest proof document, statement file or other JSON input.

Contract: ``MAX_PROOF_DOCUMENT_BYTES`` caps a proof document of any format or profile (the format is known only
once it is read); ``MAX_INPUT_JSON_BYTES`` caps a statement file (``verify --statement``) and the other small
JSON a user hands over (``bench --load``); ``prove --from`` files, which hold the 2^n evaluations of a
polynomial, are read under ``MAX_PROOF_DOCUMENT_BYTES``. A reader takes at most cap + 1 bytes and refuses the
input past the cap (``whirgpu.files.read_capped``). ``largest_proof_words()`` and ``json_document_bound()`` are the
derivation below, which a test checks against the constants.

Derivation (every figure a field word, 4 bytes in the binary format):
- queries per phase: at most ``SoundnessType.UniqueDecoding.queries(MAX_SECURITY_LEVEL, 1)`` = 369 (the
  largest security level a configuration derives, 153 bits, under the weakest regime at the lowest rate; the
  p3-whir profile's own levels are lower);
- Merkle depth: at most ``TWO_ADICITY`` = 27 (a folded domain is a subgroup of the base field), 8 words a
  sibling;
- opened row: 2^k elements of 4 words, k <= ``MAX_ROW_LOG`` = 10. The protocol itself bounds k only by n (a
  fold of k opens rows of 2^k elements), so this is the cap's one assumption: 4 to 64 times the widest fold
  of any configuration in the project's grids, benchmarks and examples (k <= 6), and round 0 of the largest
  polynomial below needs only k >= n + 1 - 27 = 7;
- phases: at most n / k + 1, n <= ``MAX_PROVED_VARIABLES`` = 33 (2^33 values: past any configuration a device or
  the host proves, ``proving.MAX_RANDOM_VARIABLES``);
- statement: at most ``MAX_CLAIMS`` = 65536 points of n x 4 words and their values (the binary header's limit;
  p3-whir documents hold at most 256 openings).
The largest proof is then max over k of (n/k + 1) x 369 x (2^k x 4 + 27 x 8) words (6.36 M, at k = 10) plus
the statement (65536 x 34 x 4 = 8.91 M): 15.28 M words, 61 MB in the binary format. A JSON document spends at
most ``JSON_BYTES_PER_WORD`` = 24 bytes a word (10 digits, a separator, an extension element's
``{"_phantom":null,"value":[...]}`` or p3-whir's one-space indentation) and may carry the openings
``JSON_PROOF_COPIES`` = 3 times (``proof``, ``proof_canonical``, p3-whir's postcard hex): 3 x 24 x 6.36 M +
24 x 8.91 M = 0.67 GB. ``MAX_PROOF_DOCUMENT_BYTES`` = 1 GiB keeps 1.6x headroom over that.
"""

from __future__ import annotations

from whirgpu.field import TWO_ADICITY
from whirgpu.protocol.schedule import MAX_SECURITY_LEVEL
from whirgpu.protocol.soundness import SoundnessType

MAX_PROVED_VARIABLES = 33
MAX_ROW_LOG = 10
MAX_CLAIMS = 1 << 16
DIGEST_WORDS = 8
EF_WORDS = 4
JSON_BYTES_PER_WORD = 24
JSON_PROOF_COPIES = 3


def largest_proof_words(n: int = MAX_PROVED_VARIABLES, max_row_log: int = MAX_ROW_LOG) -> int:
    """The field words of the largest proof and statement the limits in the module contract allow."""
    queries = SoundnessType.UniqueDecoding.queries(MAX_SECURITY_LEVEL, 1)
    openings = max((n // k + 1) * queries * ((1 << k) * EF_WORDS + TWO_ADICITY * DIGEST_WORDS)
                   for k in range(1, max_row_log + 1))
    statement = MAX_CLAIMS * (n + 1) * EF_WORDS
    return openings + statement


def json_document_bound(n: int = MAX_PROVED_VARIABLES, max_row_log: int = MAX_ROW_LOG) -> int:
    """Bytes of the largest JSON proof document the limits allow (see the module contract)."""
    statement = MAX_CLAIMS * (n + 1) * EF_WORDS
    openings = largest_proof_words(n, max_row_log) - statement
    return JSON_BYTES_PER_WORD * (JSON_PROOF_COPIES * openings + statement)


MAX_PROOF_DOCUMENT_BYTES = 1 << 30
"""1 GiB: 1.6x the largest JSON document the limits allow (0.67 GB, ``json_document_bound()``), 17x the largest
binary one (61 MB). A JSON document's tree is at most ``bounded_json.MAX_TREE_FACTOR`` x its size in memory."""

MAX_INPUT_JSON_BYTES = 1 << 27
"""128 MiB: a statement file holds at most ``MAX_CLAIMS`` points of n <= 33 coordinates of 4 canonical
integers and their values, 65536 x 34 x 4 x 12 bytes (10 digits, a separator, a space) = 107 MB."""

PROOF_CAP_REASON = (f"the largest proof the limits allow is {json_document_bound()} bytes as JSON, "
                    f"{4 * largest_proof_words()} in the binary format: MAX_PROOF_DOCUMENT_BYTES")
"""Why the cap is where it is, as a refusal says it."""
