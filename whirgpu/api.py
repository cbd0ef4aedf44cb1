"""The public Python API, re-exported: proving (``whirgpu.proving``: ``Prover``, the random instances) and verifying
(``whirgpu.verifying``: ``verify``, ``is_valid``, ``claimed_values``), the documents (``load``: a whir-p3-metal
``ProofFile``; ``dump``: the bytes of a document of either profile), and the
canonical tables the provers take (``canonical_table``, ``points_to_monty``). Every value crossing it is a
canonical field element."""

from __future__ import annotations

from .backends import select_backend
from .canonical import canonical_table
from .errors import ProofFormatError, VerificationError
from .profiles.documents import dump
from .profiles.whir_p3_metal.serialize import ProofFile, load
from .proving import (MAX_RANDOM_VARIABLES, Prover, points_to_monty, random_canonical_instance, random_instance,
                      random_points)
from .verifying import claimed_values, is_valid, verify

__all__ = ["MAX_RANDOM_VARIABLES", "Prover", "ProofFile", "dump", "load", "verify", "is_valid", "random_instance", "random_points",
           "random_canonical_instance",
           "points_to_monty", "canonical_table", "claimed_values",
           "ProofFormatError", "VerificationError", "select_backend"]
