"""Proof documents of either profile, told apart by their own bytes.

Contract: ``read_document(source, fmt="auto", profile=None)`` reads one proof document and returns a
``ProofFile`` (the whir-p3-metal profile: ``whir-p3-json/v1`` JSON or whirgpu's binary format), a
``P3Document`` (the p3-whir profile: ``p3-whir-oracle/v1`` JSON, one column) or a ``P3TablesDocument`` (the p3-whir
profile: ``p3-whir-oracle/v2`` JSON, stacked tables; ``profiles.p3_whir.tables.document``) or a ``P3ZkDocument`` (a
``p3-whir-oracle/v2`` document with ``zk: true``, the hiding PCS; ``profiles.p3_whir.zk.hiding_document``; also what
``P3ZkTables.prove`` returns, a ``P3ZkProofDocument``, read as its bytes). ``source`` is either kind of document already
read (returned as it is), what ``P3Prover.prove`` returns (a ``P3ProofDocument``) or ``P3TablesCommitment.open``
(a ``P3TablesProofDocument``): read back from its own JSON bytes, so every check its bytes get runs and nothing
it states is trusted), the bytes of a document, a path
(``str`` or ``os.PathLike``) or JSON text (a ``str`` starting with ``{``), as
``whir_p3_metal.serialize.read_source`` defines. The profile is the document's own: the binary
magic, else the JSON object's ``format``. ``profile`` (``"whir-p3-metal"`` / ``"p3-whir"``), when given, is an
assertion the document must meet; ``fmt`` (``binary`` / ``whir-p3-json``) names the default profile's encoding
and refuses any other document. Anything that is no proof document of any profile, and every failure to read
one, is a ``ProofFormatError`` of one line.

``dump(source, fmt=None)`` gives the bytes of the document ``source`` names (anything ``read_document`` takes but a
``P3Document``, which keeps no encoding of its own): in ``fmt`` for a whir-p3-metal document (``binary``, the
default, or ``whir-p3-json``), and for a p3-whir document its one encoding, the ``p3-whir-oracle/v1`` or ``/v2``
JSON (a ``P3ProofDocument``'s or ``P3TablesProofDocument``'s ``dumps()``, or the bytes read, as they were). A document whose copies disagree with what
they copy (``inconsistency``) is refused rather than written without them.
"""

from __future__ import annotations

from ..errors import ConfigError, ProofFormatError
from ..expectations import mismatch
from ..protocol.bounded_json import json_type, loads_bounded
from ..profiles.whir_p3_metal.config import WhirConfig
from ..protocol.parameters import ProtocolParameters
from .p3_whir.config import P3WhirConfig
from .p3_whir.api import P3ProofDocument
from .p3_whir.document import FORMAT as P3_FORMAT
from .p3_whir.document import P3Document, read_p3_document
from .p3_whir.expectations import P3Expected
from .p3_whir.tables.document import FORMAT as P3_TABLES_FORMAT
from .p3_whir.tables.api import P3TablesProofDocument
from .p3_whir.tables.document import P3TablesDocument, read_p3_tables_document
from .p3_whir.zk.api import P3ZkProofDocument
from .p3_whir.zk.hiding_document import P3ZkDocument, is_zk_document, read_p3_zk_document
from .whir_p3_metal.serialize import BINARY_MAGIC, FORMATS, JSON_FORMAT, ProofFile, dump as dump_proof_file, \
    from_binary, from_whir_p3_tree, read_source

DEFAULT_PROFILE = "whir-p3-metal"
P3_PROFILE = "p3-whir"
PROFILES = (DEFAULT_PROFILE, P3_PROFILE)
_FORMAT_PROFILES = {JSON_FORMAT: DEFAULT_PROFILE, P3_FORMAT: P3_PROFILE, P3_TABLES_FORMAT: P3_PROFILE}
P3_DOCUMENTS = (P3Document, P3TablesDocument, P3ZkDocument)  # the p3-whir profile's documents, read
PROVED_DOCUMENTS = (P3ProofDocument, P3TablesProofDocument, P3ZkProofDocument)  # the p3-whir provers' documents


def profile_of(document: ProofFile | P3Document | P3TablesDocument) -> str:
    """The profile a document read by ``read_document`` belongs to."""
    return P3_PROFILE if isinstance(document, P3_DOCUMENTS) else DEFAULT_PROFILE


def _assert_profile(found: str, profile: str | None, what: str) -> None:
    if profile is not None and profile != found:
        raise ProofFormatError(f"profile: {profile} was asserted, but this is a {found} proof document ({what})")


def _parse_json(data: bytes | str):
    try:
        return loads_bounded(data, "proof document")
    except ProofFormatError as exc:
        reason = str(exc).removeprefix("proof document: ")
        raise ProofFormatError(f"not a proof document of any profile: {reason} (and not the binary format)") from None


def read_document(source, fmt: str = "auto", profile: str | None = None) -> ProofFile | P3Document:
    """The proof document ``source`` names, of the profile it declares (see the module contract)."""
    if profile is not None and profile not in PROFILES:
        raise ProofFormatError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    if fmt != "auto" and fmt not in FORMATS:
        raise ProofFormatError(f"unknown proof format {fmt!r}; choose one of auto, {', '.join(FORMATS)}")
    if isinstance(source, PROVED_DOCUMENTS):
        source = p3_proof_bytes(source)
    if isinstance(source, (ProofFile,) + P3_DOCUMENTS):
        _assert_profile(profile_of(source), profile, "a document already read")
        return source
    data = read_source(source)
    magic = not isinstance(data, str) and bytes(data[:len(BINARY_MAGIC)]) == BINARY_MAGIC
    if fmt == "binary" or (fmt == "auto" and magic):
        _assert_profile(DEFAULT_PROFILE, profile, "binary format")
        return from_binary(data if not isinstance(data, str) else data.encode())
    doc = _parse_json(data)
    declared = doc.get("format") if isinstance(doc, dict) else None
    found = _FORMAT_PROFILES.get(declared) if isinstance(declared, str) else None
    if found is None:
        what = f"format {declared!r:.60}" if isinstance(doc, dict) and "format" in doc else \
            ("no 'format' key" if isinstance(doc, dict) else f"a JSON {json_type(doc)}")
        raise ProofFormatError(f"not a proof document of any profile: {what} (expected a JSON object with format "
                               f"{JSON_FORMAT!r}, {P3_FORMAT!r} or {P3_TABLES_FORMAT!r}, or the binary format)")
    _assert_profile(found, profile, f"format {declared!r}")
    if found == P3_PROFILE:
        if fmt != "auto":
            raise ProofFormatError(f"--format {fmt} names a whir-p3-metal encoding; this is a p3-whir document")
        if declared == P3_TABLES_FORMAT:
            return read_p3_zk_document(doc) if is_zk_document(doc) else read_p3_tables_document(doc)
        return read_p3_document(doc)
    return from_whir_p3_tree(doc)


def check_profile(document: ProofFile | P3Document, params) -> None:
    """Expected ``params`` of one profile and a document of the other: a rejection (``check="profile"``), before
    anything else is checked. ``params`` None, or of the document's profile, passes; ``params`` of no profile are
    left to that profile's own check (a ``ConfigError``)."""
    expects = P3_PROFILE if isinstance(params, (P3WhirConfig, P3Expected)) else \
        DEFAULT_PROFILE if isinstance(params, (ProtocolParameters, WhirConfig)) else None
    found = profile_of(document)
    if expects is not None and expects != found:
        raise mismatch("profile", f"a {expects} proof expected, got a {found} proof document")


def p3_proof_bytes(document: P3ProofDocument | P3TablesProofDocument) -> bytes:
    """The JSON bytes ``document.write`` writes; a ``ProofFormatError`` when its parts do not serialise (a
    ``P3ProofDocument`` or ``P3TablesProofDocument`` built or changed by hand)."""
    try:
        return document.dumps().encode()
    except (ConfigError, AttributeError, TypeError, ValueError, IndexError, KeyError, OverflowError) as exc:
        raise ProofFormatError(f"cannot serialise this {type(document).__name__}: {type(exc).__name__}: "
                               f"{exc}"[:300]) from None


def portable(source):
    """``source`` as it can travel to another process, read there as ``read_document`` reads it here: a
    ``P3ProofDocument`` or ``P3TablesProofDocument`` (which hold their prover's values) as its JSON bytes, anything
    else as it is. A ``ProofFormatError`` when one does not serialise."""
    return p3_proof_bytes(source) if isinstance(source, PROVED_DOCUMENTS) else source


def dump(source, fmt: str | None = None) -> bytes:
    """The bytes of the document ``source`` names, in ``fmt`` (see the module contract)."""
    if fmt is not None and fmt not in FORMATS:
        raise ProofFormatError(f"unknown proof format {fmt!r:.40}; choose one of {', '.join(FORMATS)} (or leave it "
                               f"out: the profile's own)")
    if isinstance(source, P3_DOCUMENTS):
        raise ProofFormatError(f"a {type(source).__name__} keeps no encoding of its own: dump the bytes or path it "
                               "was read from")
    # read once: the bytes returned are the bytes checked
    data = source if isinstance(source, ProofFile) else \
        p3_proof_bytes(source) if isinstance(source, PROVED_DOCUMENTS) else read_source(source)
    document = read_document(data)
    if isinstance(document, P3_DOCUMENTS):
        if fmt is not None:
            raise ProofFormatError(f"{fmt} is a whir-p3-metal encoding; a p3-whir document has one, its "
                                   f"{P3_FORMAT} JSON: leave the format out")
        return data.encode() if isinstance(data, str) else data
    if document.inconsistency:
        raise ProofFormatError(document.inconsistency)
    return dump_proof_file(document, "binary" if fmt is None else fmt)
