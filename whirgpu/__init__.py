"""whirgpu: WHIR polynomial commitments over BabyBear, byte-compatible with Plonky3's p3-whir.

Public API (canonical field elements in and out; see ``whirgpu.api``):
``ProtocolParameters``, ``WhirConfig``, ``Prover``, ``verify``, ``is_valid``, ``verify_many``, ``dump``, ``load``,
``read_document``, ``claimed_values``, ``random_instance``, ``select_backend``, the p3-whir profile's ``P3Prover``
(one column), ``P3Tables`` (a STARK's tables: commit once, open in batches; ``OpeningBatch``, ``TablesSpec``),
``P3ZkTables`` and ``ZkOptions`` (zero-knowledge: upstream's hiding PCS over stacked tables, cpu backend),
``P3Parameters``, ``P3WhirConfig`` and ``P3Expected``, ``security_report`` (a configuration's bits under every
security regime, the provable figure beside a conjectural one), and the error tree under ``WhirGpuError``. ``verify``,
``is_valid`` and ``verify_many`` take proof documents of either profile.

Names load on first use (PEP 562): ``import whirgpu`` costs the error tree alone, and ``whirgpu.Prover`` imports
the prover, not the other profile's documents or a GPU runtime. ``_EXPORTS`` says where each name lives; the
``TYPE_CHECKING`` imports say the same to type checkers (a test holds the two equal).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from .api import select_backend
    from .backends import BACKEND_NAMES
    from .field import P
    from .many.batch_verify import Verdict, verify_many
    from .profiles.documents import dump, read_document
    from .profiles.p3_whir.api import P3Prover
    from .profiles.p3_whir.config import P3Parameters, P3WhirConfig
    from .profiles.p3_whir.expectations import P3Expected
    from .profiles.p3_whir.tables.api import P3Tables, P3TablesCommitment, P3TablesProofDocument
    from .profiles.p3_whir.tables.shapes import OpeningBatch, TableShape
    from .profiles.p3_whir.tables.spec import TablesSpec
    from .profiles.p3_whir.zk.api import P3ZkProofDocument, P3ZkTables, ZkOptions
    from .profiles.security import security_report
    from .profiles.whir_p3_metal.config import WhirConfig
    from .profiles.whir_p3_metal.serialize import ProofFile, load
    from .protocol.folding import Constant, ConstantFromSecondRound
    from .protocol.parameters import ProtocolParameters
    from .protocol.proof import Statement, WhirProof
    from .protocol.soundness import SoundnessType
    from .proving import Prover, random_instance
    from .verifying import claimed_values, is_valid, verify

# Each lazily loaded name: the module (relative to this package) it is imported from.
_EXPORTS = {
    "BACKEND_NAMES": ".backends",
    "select_backend": ".api",  # with both profiles' provers, which register how it plans their configurations
    "P": ".field",
    **dict.fromkeys(("Verdict", "verify_many"), ".many.batch_verify"),
    **dict.fromkeys(("dump", "read_document"), ".profiles.documents"),
    "P3Prover": ".profiles.p3_whir.api",
    **dict.fromkeys(("P3Parameters", "P3WhirConfig"), ".profiles.p3_whir.config"),
    "P3Expected": ".profiles.p3_whir.expectations",
    **dict.fromkeys(("P3Tables", "P3TablesCommitment", "P3TablesProofDocument"), ".profiles.p3_whir.tables.api"),
    **dict.fromkeys(("OpeningBatch", "TableShape"), ".profiles.p3_whir.tables.shapes"),
    "TablesSpec": ".profiles.p3_whir.tables.spec",
    **dict.fromkeys(("P3ZkProofDocument", "P3ZkTables", "ZkOptions"), ".profiles.p3_whir.zk.api"),
    "security_report": ".profiles.security",
    "WhirConfig": ".profiles.whir_p3_metal.config",
    **dict.fromkeys(("ProofFile", "load"), ".profiles.whir_p3_metal.serialize"),
    **dict.fromkeys(("Constant", "ConstantFromSecondRound"), ".protocol.folding"),
    "ProtocolParameters": ".protocol.parameters",
    **dict.fromkeys(("Statement", "WhirProof"), ".protocol.proof"),
    "SoundnessType": ".protocol.soundness",
    **dict.fromkeys(("Prover", "random_instance"), ".proving"),
    **dict.fromkeys(("claimed_values", "is_valid", "verify"), ".verifying"),
}

__version__ = "0.1.0"


def __getattr__(name: str):
    """A public name's object, imported from its module on first use and kept in the package's namespace."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'whirgpu' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))

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
