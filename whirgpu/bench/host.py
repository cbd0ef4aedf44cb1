"""The machine a benchmark ran on, as recorded in its JSON: CPU model, cores, OS, Python, numpy, whirgpu."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import numpy as np


def cpu_model() -> str:
    """The CPU's marketing name where the OS tells it (Linux /proc/cpuinfo, macOS sysctl), else platform's guess."""
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/cpuinfo") as fh:
                for line in fh:
                    if line.startswith(("model name", "Hardware", "Model")):
                        return line.split(":", 1)[1].strip()
        except OSError:
            pass
    elif sys.platform == "darwin":
        try:
            out = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True,
                                 timeout=5, check=False).stdout.strip()
            if out:
                return out
        except (OSError, subprocess.SubprocessError):
            pass
    return platform.processor() or platform.machine() or "unknown"


def host_info() -> dict:
    from .. import __version__  # noqa: PLC0415 - the package imports its submodules first

    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "whirgpu": __version__,
    }
