"""Why a WebGPU implementation lists no adapter, in one clause, and Dawn's own lines kept off stderr.

Dawn (wgpudawn) writes its messages from C++ to file descriptor 2, below ``sys.stderr``: two harmless limit
warnings at every adapter creation (``... artificially reduced ...``), and, when it finds no adapter, why
(``Warning: Couldn't load Vulkan: ...``, ``Warning: Vulkan shaderUniform*ArrayDynamicIndexing required.``, each
followed by indented lines naming Dawn's source). wgpu-native says nothing.

- ``captured_fd2(into)``: a context manager; while its body runs, file descriptor 2 goes to a temporary file,
  restored after the body (also when it raises); the bytes written meanwhile are appended to the list ``into``.
- ``split_messages(raw)``: the messages in ``raw`` (bytes), each a ``Message``: its first line (``Warning: ``
  dropped) and its whole text; lines before the first ``Warning:``/``Error:`` line are a message of their own.
- ``is_noise(message)``: a harmless limit warning (dropped). ``is_absence(message)``: a message ``reason``
  turns into words (dropped too: the reason says it).
- ``reason(messages, drivers=())``: one clause for "no adapter (CLAUSE)": the Vulkan loader that did not load,
  a driver without shaderUniform*ArrayDynamicIndexing (named from ``drivers``, the descriptions wgpu-native gives
  its Vulkan adapters, e.g. ``Mesa 22.3.6 (LLVM 15.0.6)``, when there is exactly one), Dawn's own first line for
  anything else, the loader's failure to load found by trying it (Linux), or that no driver was found.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Sequence

NOISE = (b"artificially reduced",)  # Dawn's two limit warnings at adapter creation
LOADER = "Couldn't load Vulkan"
DYNAMIC_INDEXING = "ArrayDynamicIndexing"
DAWN_MESA = 25  # the first Mesa whose lavapipe offers what Dawn requires (README, Install)
NO_DRIVER = "no Vulkan, Metal or D3D12 driver found"
_HEAD = re.compile(rb"^(Warning|Error): ")


@dataclass(frozen=True)
class Message:
    """One message of Dawn's: ``first`` (its first line, without ``Warning: ``) and ``raw`` (all its bytes)."""

    first: str
    raw: bytes


@contextmanager
def captured_fd2(into: list) -> Iterator[None]:
    """File descriptor 2 in a temporary file while the body runs (module docstring)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            into.append(tmp.read())


def split_messages(raw: bytes) -> list[Message]:
    """The messages in ``raw`` (module docstring), in order."""
    groups: list[list[bytes]] = []
    for line in raw.splitlines(keepends=True):
        if not groups or _HEAD.match(line):
            groups.append([])
        groups[-1].append(line)
    return [Message(_HEAD.sub(b"", group[0]).decode(errors="replace").strip(), b"".join(group))
            for group in groups if b"".join(group).strip()]


def is_noise(message: Message) -> bool:
    return any(word in message.raw for word in NOISE)


def is_absence(message: Message) -> bool:
    return LOADER in message.first or DYNAMIC_INDEXING in message.first


def _driver(drivers: Sequence[str]) -> str:
    """The one Vulkan driver ``drivers`` describes, in words ("Mesa 22.3.6 lavapipe"), or "the Vulkan driver"."""
    if len(drivers) != 1:
        return "the Vulkan driver"
    mesa = re.search(r"Mesa (\d+(?:\.\d+)*)", drivers[0])
    if mesa is None:
        return drivers[0].strip() or "the Vulkan driver"
    return f"Mesa {mesa.group(1)} {'lavapipe' if 'llvmpipe' in drivers[0] else 'Vulkan driver'}"


def loader_failure() -> str:
    """Why the Vulkan loader does not load here ("" when it does, and off Linux, where Vulkan is not the API)."""
    if not sys.platform.startswith("linux"):
        return ""
    try:
        ctypes.CDLL("libvulkan.so.1")
    except OSError as exc:
        return str(exc)
    return ""


def reason(messages: Sequence[Message], drivers: Sequence[str] = ()) -> str:
    """Why no adapter was listed, one clause (module docstring)."""
    for message in messages:
        if LOADER in message.first:
            detail = message.first.split(":", 1)[1].strip() if ":" in message.first else ""
            return f"the Vulkan loader did not load{': ' + detail if detail else ''}"
    for message in messages:
        if DYNAMIC_INDEXING in message.first:
            return (f"{_driver(drivers)} lacks shaderUniform*ArrayDynamicIndexing, which Dawn requires; lavapipe "
                    f"has it from Mesa {DAWN_MESA}")
    other = [message for message in messages if not is_noise(message)]
    if other:
        return f"Dawn: {other[0].first}"
    failure = loader_failure()
    if failure:
        return f"the Vulkan loader did not load: {failure}"
    return NO_DRIVER
