"""whirgpu: WHIR polynomial commitments over BabyBear, byte-compatible with Plonky3's p3-whir.

Public API (canonical field elements in and out; see ``whirgpu.api``):
``ProtocolParameters``, ``WhirConfig``, ``Prover``, ``verify``, ``is_valid``, ``verify_many``, ``dump``, ``load``,
``read_document``, ``claimed_values``, ``random_instance``, ``select_backend``, the p3-whir profile's ``P3Prover``
(one column), ``P3Tables`` (a STARK's tables: commit once, open in batches; ``OpeningBatch``, ``TablesSpec``),
``P3ZkTables`` and ``ZkOptions`` (zero-knowledge: upstream's hiding PCS over stacked tables, cpu backend),
``P3Parameters``, ``P3WhirConfig`` and ``P3Expected``, ``security_report`` (a configuration's bits under every
security regime, the provable figure beside a conjectural one), and the error tree under ``WhirGpuError``. ``verify``,
``is_valid`` and ``verify_many`` take proof documents of either profile.
"""

from .api import Prover, ProofFile, claimed_values, dump, is_valid, load, random_instance, verify
from .backends import BACKEND_NAMES, select_backend
from .many.batch_verify import Verdict, verify_many
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
from .profiles.whir_p3_metal.config import WhirConfig
from .protocol.folding import ConstantFromSecondRound, Constant
from .protocol.parameters import ProtocolParameters
from .protocol.soundness import SoundnessType
from .protocol.proof import Statement, WhirProof
from .profiles.documents import read_document
from .profiles.p3_whir.api import P3Prover
from .profiles.p3_whir.config import P3Parameters, P3WhirConfig
from .profiles.p3_whir.expectations import P3Expected
from .profiles.p3_whir.tables.api import P3Tables, P3TablesCommitment, P3TablesProofDocument
from .profiles.p3_whir.tables.shapes import OpeningBatch, TableShape
from .profiles.p3_whir.tables.spec import TablesSpec
from .profiles.p3_whir.zk.api import P3ZkProofDocument, P3ZkTables, ZkOptions
from .profiles.security import security_report

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
    "OpeningBatch",
    "P",
    "P3Expected",
    "P3Parameters",
    "P3Prover",
    "P3Tables",
    "P3TablesCommitment",
    "P3TablesProofDocument",
    "P3WhirConfig",
    "P3ZkProofDocument",
    "P3ZkTables",
    "ProofFile",
    "ProofFormatError",
    "ProtocolParameters",
    "Prover",
    "ShaderCompileError",
    "SoundnessType",
    "Statement",
    "TableShape",
    "TablesSpec",
    "VerificationError",
    "WhirConfig",
    "WhirGpuError",
    "WhirProof",
    "ZkOptions",
    "claimed_values",
    "dump",
    "is_valid",
    "load",
    "random_instance",
    "read_document",
    "security_report",
    "select_backend",
    "Verdict",
    "verify",
    "verify_many",
]
