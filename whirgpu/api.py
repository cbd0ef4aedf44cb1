"""The public Python API: prove evaluation claims about a polynomial given as a numpy array, and verify them.

All values crossing this API are **canonical** field elements (integers in [0, p), p = 2013265921); the
Montgomery form used inside is not visible here. A polynomial is its multilinear evaluation table of 2^n values,
indexed by b = Σ_t x_t 2^(n-1-t) (x_0 is the most significant bit). A point has n coordinates, each an
extension element [a0, a1, a2, a3] (a0 + a1 X + a2 X^2 + a3 X^3, X^4 = 11) or a base element.
"""

from __future__ import annotations

import numpy as np

from .backends import Backend, TransferStats, select_backend
from .errors import ConfigError, ProofFormatError, VerificationError
from .expectations import check_configuration, check_statement
from .field import P
from .protocol.params import ProtocolParameters, WhirConfig
from .protocol.proof import Statement
from .protocol.prover import WhirProver
from .protocol.serialize import ProofFile, dump, load
from .protocol.verifier import WhirVerifier
from .ref import field_np as F
from .ref.multilinear import evaluate
from .ref.rng import Xoshiro256PlusPlus, random_base, random_ef


def _canonical_array(values, what: str, shape_tail: tuple[int, ...] = ()) -> np.ndarray:
    try:
        array = np.asarray(values)
        if array.dtype.kind == "O":
            array = np.asarray(values, dtype=np.int64)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ConfigError(f"{what}: not an integer array ({exc})") from None
    if array.size and array.dtype.kind not in "ui":
        raise ConfigError(f"{what}: expected integers, got dtype {array.dtype}")
    if array.size and (array.min() < 0 or array.max() >= P):
        raise ConfigError(f"{what}: values must be canonical field elements in [0, {P})")
    return array


def points_to_monty(points, num_variables: int) -> np.ndarray:
    """Canonical points -> Montgomery (m, n, 4). Accepts (m, n, 4) extension points or (m, n) base-field points
    (embedded as a0 = value); wrap a single point in a list."""
    array = _canonical_array(points, "points")
    if array.size == 0 and array.shape[:1] == (0,):  # no claims: [], (0, n) or (0, n, 4)
        return np.zeros((0, num_variables, 4), np.uint32)
    if array.ndim == 2:
        array = np.concatenate([array[..., None], np.zeros(array.shape + (3,), array.dtype)], axis=-1)
    if array.ndim != 3 or array.shape[1:] != (num_variables, 4):
        raise ConfigError(f"points must have shape (m, {num_variables}, 4) or (m, {num_variables}); "
                          f"got {np.asarray(points).shape}")
    return F.to_monty(array.astype(np.uint64))


class Prover:
    """Commits to polynomials and proves evaluation claims, on the backend ``select_backend`` resolves.

    ``storage``: the GPU storage policy, one of ``STORAGE_POLICIES`` (hybrid: inputs and outputs in host-visible
    memory, intermediates device-only; shared; private); None reads ``WHIRGPU_STORAGE``, else hybrid. The cpu
    backend accepts and ignores it. After each proof, ``last_phase_seconds`` holds the wall time per phase and
    ``last_transfers`` the bytes uploaded, downloaded and copied on the device (all 0 on the cpu backend)."""

    def __init__(self, params: ProtocolParameters | WhirConfig, backend: str | Backend = "auto",
                 storage: str | None = None):
        self.config = params if isinstance(params, WhirConfig) else WhirConfig.from_params(params)
        choice = select_backend(backend, self.config, storage)  # auto checks that the proof fits the device
        self.backend = choice.backend
        self.backend_reason = choice.reason
        self.last_phase_seconds: dict[str, float] = {}
        self.last_transfers = TransferStats()

    @property
    def storage(self) -> str | None:
        """The storage policy the backend uses (None on the cpu backend, which has no device memory)."""
        return self.backend.storage

    @property
    def params(self) -> ProtocolParameters:
        return self.config.params

    def prove(self, evaluations, points) -> ProofFile:
        """Prove the polynomial's values at ``points``; the claimed values are computed here.

        evaluations: 2^n canonical integers. points: see ``points_to_monty``; an empty (0, n) list proves nothing
        but the commitment's own consistency."""
        n = self.config.num_variables
        table = _canonical_array(evaluations, "evaluations")
        if table.shape != (1 << n,):
            raise ConfigError(f"evaluations must have 2^{n} = {1 << n} entries, got shape {table.shape}")
        poly = F.to_monty(table.astype(np.uint64))
        point_array = points_to_monty(points, n)
        values = np.array([evaluate(poly, z) for z in point_array], np.uint32).reshape(-1, 4)
        return self.prove_monty(poly, Statement(point_array, values))

    def prove_monty(self, poly: np.ndarray, statement: Statement) -> ProofFile:
        """Lower level: Montgomery table and statement in, proof file out."""
        prover = WhirProver(self.config, self.backend)
        proof = prover.prove(poly, statement)
        self.last_phase_seconds = dict(prover.timer.seconds)
        self.last_transfers = prover.stats
        return ProofFile(self.config.params, statement, proof)


def verify(proof_file, *, params: ProtocolParameters | WhirConfig | None = None, min_security: float | None = None,
           points=None, values=None) -> None:
    """Raise ``VerificationError`` / ``ProofFormatError`` unless the proof is valid AND is what the verifier
    expects; return None on acceptance.

    ``proof_file``: a ``ProofFile``, the bytes of one (binary or whir-p3-json, told apart automatically), a path
    (``os.PathLike``, or a ``str`` naming a file), or whir-p3-json text (a ``str`` whose first character other than
    whitespace is ``{``). Anything else, a file that cannot be read, a ``ProofFile`` whose parameters derive no
    configuration, or a true proof in a document that contradicts itself (``ProofFile.inconsistency``) is a
    ``ProofFormatError``.

    What the verifier expects (each None checks nothing; see ``whirgpu.expectations``): ``params``, the
    parameters the proof must have been made under, field for field; ``min_security``, the bits of security its
    configuration must reach (``whirgpu.protocol.security``); ``points`` / ``values``, the canonical statement it
    must prove, in the shapes ``Prover.prove`` takes and ``claimed_values`` returns. A proof that differs raises
    ``VerificationError`` with ``check`` naming the field (``params.num_variables``, ``min_security``,
    ``statement.points``, ...). Parameters and security are checked before the proof, the statement after it.
    Without ``params`` or ``min_security`` the proof chooses its own parameters: a 1-bit proof is accepted."""
    if not isinstance(proof_file, ProofFile):
        proof_file = load(proof_file)
    if not isinstance(proof_file.params, ProtocolParameters):
        raise ProofFormatError(f"proof file params: expected ProtocolParameters, got "
                               f"{type(proof_file.params).__name__}")
    try:
        config = WhirConfig.from_params(proof_file.params)
    except (ConfigError, OverflowError) as exc:  # as the decoders do: parameters the reference would reject
        raise ProofFormatError(f"proof file params: {exc}") from None
    check_configuration(proof_file.params, config, expected_params=params, min_security=min_security)
    WhirVerifier(config).verify(proof_file.proof, proof_file.statement)
    if proof_file.inconsistency:  # a true proof in a document that contradicts itself
        raise ProofFormatError(proof_file.inconsistency)
    if points is not None or values is not None:
        check_statement(proof_file.statement.points, proof_file.statement.values, points, values)


def is_valid(proof_file, *, params: ProtocolParameters | WhirConfig | None = None,
             min_security: float | None = None, points=None, values=None) -> bool:
    """True iff ``verify`` accepts (same arguments). Malformed expectations still raise ``ConfigError``: they are
    the caller's mistake, not a proof to reject."""
    try:
        verify(proof_file, params=params, min_security=min_security, points=points, values=values)
    except (ProofFormatError, VerificationError):
        return False
    return True


def random_instance(num_variables: int, seed: int) -> tuple[np.ndarray, Statement]:
    """The reference sweep's instance: SmallRng(seed) draws 2^n base values, then one EF point of n coordinates.

    Returns the Montgomery table and the statement with its claimed value (as the sweep's benchmarks do)."""
    rng = Xoshiro256PlusPlus(seed)
    poly = random_base(rng, 1 << num_variables)
    point = random_ef(rng, num_variables).reshape(1, num_variables, 4)
    value = evaluate(poly, point[0]).reshape(1, 4)
    return poly, Statement(point, value)


__all__ = ["Prover", "ProofFile", "dump", "load", "verify", "is_valid", "random_instance", "points_to_monty", "claimed_values",
           "ProofFormatError", "VerificationError"]


def claimed_values(proof_file: ProofFile) -> list[list[int]]:
    """The statement's claimed values as canonical [a0, a1, a2, a3] per point."""
    return F.from_monty(proof_file.statement.values).astype(np.int64).tolist()
