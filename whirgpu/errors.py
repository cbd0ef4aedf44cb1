"""The whirgpu error tree.

Every error a user can provoke with bad input is a ``WhirGpuError``; the CLI maps them to exit code 1 with a
one-line reason. Messages carry numbers: what was asked, the limit's name and its value.
"""


class WhirGpuError(Exception):
    """Base of every error whirgpu raises on purpose."""


class ConfigError(WhirGpuError, ValueError):
    """Protocol parameters that the reference would reject (or that this implementation cannot honour)."""


class ProofFormatError(WhirGpuError, ValueError):
    """Bytes or JSON that do not decode to a well-formed proof (truncated, wrong lengths, values >= p, ...)."""


class VerificationError(WhirGpuError):
    """A well-formed proof that is false. ``round`` and ``check`` name what failed."""

    def __init__(self, message: str, *, round: str | None = None, check: str | None = None):
        super().__init__(message)
        self.round = round
        self.check = check

    def __reduce__(self):  # pickled with its round and check (verdicts come back from worker processes)
        return _verification_error, (str(self), self.round, self.check)


def _verification_error(message: str, round: str | None, check: str | None) -> VerificationError:
    return VerificationError(message, round=round, check=check)


class FileError(WhirGpuError, OSError):
    """A file that cannot be read or written (missing, unreadable, a folder, no such parent folder). The CLI
    prints it on stderr and exits 2, so a script can tell it from a false proof (``reject``, exit 1)."""


class BackendUnavailable(WhirGpuError):
    """A requested backend cannot run here (missing package, no adapter, not macOS, ...)."""


class DeviceLimitError(WhirGpuError):
    """A configuration that does not fit a device limit; names the limit and both numbers."""


class DeviceOutOfMemory(WhirGpuError, MemoryError):
    """The device could not allocate what the proof needs."""


class ShaderCompileError(WhirGpuError):
    """A kernel failed to compile; the message names the kernel and the original file:line."""


class ProverBusy(WhirGpuError, RuntimeError):
    """A backend asked to start a proof while another is being built on it (``Backend.begin_proof`` called
    directly from two threads). ``Prover`` and ``P3Prover`` never raise it: they queue their proofs on the
    backend's ``proof_lock``."""


class KernelFault(WhirGpuError):
    """A kernel failed while running: a command buffer that ended in error (Metal), or barriers that not every
    thread of a threadgroup reached (msl-cpu). The message names the kernel."""
