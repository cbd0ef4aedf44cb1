"""whirgpu: WHIR polynomial commitments over BabyBear, byte-compatible with Plonky3's p3-whir.

Public API (canonical field elements in and out; see ``whirgpu.api``):
``ProtocolParameters``, ``WhirConfig``, ``Prover``, ``verify``, ``is_valid``, ``dump``, ``load``,
``claimed_values``, ``random_instance``, ``select_backend``, and the error tree under ``WhirGpuError``.
"""

from .api import Prover, ProofFile, claimed_values, dump, is_valid, load, random_instance, verify
from .backends import BACKEND_NAMES, select_backend
from .errors import (
    BackendUnavailable,
    ConfigError,
    DeviceLimitError,
    DeviceOutOfMemory,
    FileError,
    ProofFormatError,
    ShaderCompileError,
    VerificationError,
    WhirGpuError,
)
from .field import P
from .protocol.config import WhirConfig
from .protocol.folding import ConstantFromSecondRound, Constant
from .protocol.parameters import ProtocolParameters
from .protocol.soundness import SoundnessType
from .protocol.proof import Statement, WhirProof

__version__ = "0.1.0"

__all__ = [
    "BACKEND_NAMES",
    "BackendUnavailable",
    "ConfigError",
    "Constant",
    "ConstantFromSecondRound",
    "DeviceLimitError",
    "DeviceOutOfMemory",
    "FileError",
    "P",
    "ProofFile",
    "ProofFormatError",
    "ProtocolParameters",
    "Prover",
    "ShaderCompileError",
    "SoundnessType",
    "Statement",
    "VerificationError",
    "WhirConfig",
    "WhirGpuError",
    "WhirProof",
    "claimed_values",
    "dump",
    "is_valid",
    "load",
    "random_instance",
    "select_backend",
    "verify",
]
