"""Verifying: ``verify`` and ``is_valid`` take a proof document of either profile and what the verifier expects;
``claimed_values`` reads the claims of a proof document of either profile (canonical). Each takes every object the
API returns (``Prover.prove``'s and ``prove_many``'s ``ProofFile``, ``P3Prover.prove``'s ``P3ProofDocument``,
``P3TablesCommitment.open``'s ``P3TablesProofDocument``), the
bytes ``dump`` and ``write`` give, paths and JSON text: ``profiles.documents.read_document`` turns each into a
document."""

from __future__ import annotations

import numpy as np

from .errors import ConfigError, ProofFormatError, VerificationError
from .expectations import check_configuration, check_statement
from .profiles.documents import P3_DOCUMENTS, check_profile, read_document
from .profiles.p3_whir.expectations import verify_p3_expected
from .profiles.p3_whir.tables.document import P3TablesDocument
from .profiles.p3_whir.zk.hiding_document import P3ZkDocument
from .profiles.whir_p3_metal.config import WhirConfig
from .profiles.whir_p3_metal.serialize import check_proof_file
from .profiles.whir_p3_metal.verifier import MetalWhirVerifier
from .protocol.parameters import ProtocolParameters
from .protocol.security_policy import check_assume
from .ref import field_np as F
from .ref.field_np import field_ops


def verify(proof_file, *, params=None, min_security: float | None = None, points=None, values=None,
           assume: str | None = None) -> None:
    """Raise ``VerificationError`` / ``ProofFormatError`` unless the proof is valid AND is what the verifier
    expects; return None on acceptance.

    ``proof_file``: a proof document of either profile (``profiles.documents.read_document``): a ``ProofFile`` (what
    ``Prover.prove`` and ``prove_many`` return) or a ``P3Document``, what ``P3Prover.prove`` returns (a
    ``P3ProofDocument``: verified as its JSON bytes are, nothing it states trusted), the bytes of one (whir-p3-metal's
    binary or whir-p3-json, p3-whir's ``p3-whir-oracle/v1`` JSON; the profile is the document's own), a path
    (``os.PathLike``, or a ``str`` naming a file), or JSON text (a ``str`` whose first character other than
    whitespace is ``{``). Anything else, a file that cannot be read, a document larger than
    ``MAX_PROOF_DOCUMENT_BYTES`` (a file is read no further), a document whose parameters derive no
    configuration, or a true proof in a document that contradicts itself is a ``ProofFormatError``.

    What the verifier expects (each None checks nothing; see ``whirgpu.expectations``): ``params``, the
    parameters the proof must have been made under, field for field (``ProtocolParameters`` or ``WhirConfig`` for
    a whir-p3-metal proof; for a p3-whir one a ``P3Expected`` that pins the number of openings and who chose the
    points, or a ``P3WhirConfig`` together with ``points``: anything that pins less is a ``ConfigError``,
    ``profiles.p3_whir.expectations.as_p3_expected``; a document of the other profile is rejected with
    ``check="profile"``); ``min_security``, the bits of security its configuration must reach,
    counted as provable bits (unique decoding or the Johnson bound) unless ``assume="capacity"`` opts into the
    capacity-bound conjecture (``protocol.security_policy``);
    ``points`` / ``values``, the canonical statement it must prove, in the shapes ``Prover.prove`` takes and
    ``claimed_values`` returns. A proof that differs raises ``VerificationError`` with ``check`` naming the field
    (``params.num_variables``, ``min_security``, ``statement.points``, ...). Parameters and security are checked
    before the proof, the statement after it. Without ``params`` or ``min_security`` the proof chooses its own
    parameters: a 1-bit proof is accepted."""
    check_assume(assume)
    document = read_document(proof_file)
    check_profile(document, params)
    if isinstance(document, P3_DOCUMENTS):
        verify_p3_expected(document, params, min_security, points, values, assume)
        return
    proof_file = document
    if not isinstance(proof_file.params, ProtocolParameters):
        raise ProofFormatError(f"proof file params: expected ProtocolParameters, got "
                               f"{type(proof_file.params).__name__}")
    try:
        config = WhirConfig.from_params(proof_file.params)
    except (ConfigError, OverflowError) as exc:  # as the decoders do: parameters the reference would reject
        raise ProofFormatError(f"proof file params: {exc}") from None
    check_configuration(proof_file.params, config, expected_params=params, min_security=min_security,
                        assume=assume)
    MetalWhirVerifier(config).verify(proof_file.proof, proof_file.statement)
    if proof_file.inconsistency:  # a true proof in a document that contradicts itself
        raise ProofFormatError(proof_file.inconsistency)
    if points is not None or values is not None:
        check_statement(proof_file.statement.points, proof_file.statement.values, points, values)


def is_valid(proof_file, *, params=None, min_security: float | None = None, points=None, values=None,
             assume: str | None = None) -> bool:
    """True iff ``verify`` accepts (same arguments). Malformed expectations still raise ``ConfigError``: they are
    the caller's mistake, not a proof to reject."""
    try:
        verify(proof_file, params=params, min_security=min_security, points=points, values=values, assume=assume)
    except (ProofFormatError, VerificationError):
        return False
    return True


def claimed_values(proof_file) -> list[list[int]]:
    """The values a proof document claims, canonical [a0, a1, a2, a3] per point in the document's field, in the
    order of its points: a whir-p3-metal statement's values, a p3-whir proof's opening evaluations (each opening's
    ``current`` value, which ``verify`` checks the document's ``claimed_values_canonical`` against); for a p3-whir
    table document every batch's claims in protocol order, its current values then its next values. Claims, not
    verdicts: nothing is verified here; pass them to ``verify(..., values=...)``. ``proof_file``: anything
    ``verify`` takes; anything else, or a document with parts of the wrong shape, is a ``ProofFormatError``."""
    document = read_document(proof_file)
    if isinstance(document, P3ZkDocument):  # every claim, in the order of the lifted points
        values = np.asarray(document.proof.evals, dtype=np.uint32).reshape(-1, 4)
        return field_ops(document.field).from_monty(values).astype(np.int64).tolist()
    if isinstance(document, P3TablesDocument):  # every claim
        values = [v for evals in document.proof.evals for v in (*evals.current, *evals.next)]
        values = np.array(values, dtype=np.uint32).reshape(-1, 4)
        return field_ops(document.field).from_monty(values).astype(np.int64).tolist()
    if isinstance(document, P3_DOCUMENTS):
        currents = [np.asarray(evals.current) for evals in document.proof.evals]
        if len(currents) != document.num_openings or any(c.shape != (1, 4) for c in currents):
            raise ProofFormatError(f"proof evals: expected {document.num_openings} opening(s) of one value each")
        values = np.concatenate(currents).astype(np.uint32) if currents else np.zeros((0, 4), np.uint32)
        return field_ops(document.field).from_monty(values).astype(np.int64).tolist()
    check_proof_file(document)
    try:
        values = np.asarray(document.statement.values, dtype=np.uint32).reshape(-1, 4)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ProofFormatError(f"proof file statement values: not (m, 4) field words ({exc})") from None
    return F.from_monty(values).astype(np.int64).tolist()
