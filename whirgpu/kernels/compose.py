"""Compose a shader from its kernel file, the library files it requires, and a generated constants prelude.

Shader languages here have no imports. A file states its dependencies on its first lines:

    // requires: bb_field bb_ext4

and ``compose`` concatenates the prelude, every required library file (depth first, each once) and the kernel
file, keeping a line map so a compiler diagnostic at composed line L can be reported as ``file:line``.
Library stems may have variants: ``bb_mul`` resolves to ``lib/bb_mul_<variant>.wgsl`` when such files exist
(the multiply variant is picked per device). Constants come only from ``whirgpu.field`` (the field a kernel is
composed for: BabyBear unless asked); a stem listed in
``constants.GENERATED`` (e.g. ``poseidon2_constants``) is a generated pseudo-library rendered from Python, mapped
as ``<stem>:line``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .. import field
from . import constants

_REQUIRES = re.compile(r"^\s*//\s*requires:\s*(.*)$")
_EXTENSIONS = {"wgsl": "wgsl", "msl": "metal"}


def shader_root(lang: str) -> Path:
    """The folder holding ``lib/`` and ``kernels/`` for ``lang`` ('wgsl' or 'msl'), installed or in a checkout."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / lang, here.parent / lang):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"no {lang}/ shader folder next to the whirgpu package ({here})")


@dataclass(frozen=True)
class ComposedSource:
    """The composed text and, per composed line (0-based), the (file, 1-based line) it came from."""

    text: str
    line_map: tuple[tuple[str, int], ...]

    def origin(self, composed_line: int) -> str:
        """'file:line' for a 1-based composed line number (as compilers report)."""
        if 1 <= composed_line <= len(self.line_map):
            name, line = self.line_map[composed_line - 1]
            return f"{name}:{line}"
        return f"<composed>:{composed_line}"


def prelude(lang: str, field_name: str = "babybear") -> str:
    """The constants of field ``field_name`` rendered for ``lang``; the only source of numbers in shaders. The
    names keep their BB_ prefix for every field (the field library is written once)."""
    f = field.field_by_name(field_name)
    if f.P & 0xFFFF != 1 or f.P >> 16 >= 1 << 15:
        raise ValueError(f"{field_name}: the emulated multiply needs P = H * 2^16 + 1 with H < 2^15")
    consts = {
        "BB_P": f.P,
        "BB_P_HI16": f.P >> 16,  # P = BB_P_HI16 * 2^16 + 1 (the emulated multiply's high word of t * P)
        "BB_MU": f.MU,
        "BB_R": f.R,  # Montgomery form of 1
        "BB_R2": f.R2,
        "BB_W_MONTY": f.to_monty_int(f.W),
    }
    if lang == "wgsl":
        return "".join(f"const {name}: u32 = {value}u;\n" for name, value in consts.items())
    if lang == "msl":
        return "#include <metal_stdlib>\nusing namespace metal;\n" + "".join(
            f"constant constexpr uint {name} = {value}u;\n" for name, value in consts.items())
    raise ValueError(f"unknown shader language {lang!r}")


def _resolve(root: Path, stem: str, ext: str, variants: dict[str, str]) -> Path:
    variant = variants.get(stem)
    if variant is not None:
        path = root / "lib" / f"{stem}_{variant}.{ext}"
        if not path.is_file():
            raise FileNotFoundError(f"no variant {variant!r} of {stem}: {path} is missing")
        return path
    for path in (root / "lib" / f"{stem}.{ext}", root / "kernels" / f"{stem}.{ext}"):
        if path.is_file():
            return path
    raise FileNotFoundError(f"shader file for {stem!r} not found under {root}")


def _requirements(text: str) -> list[str]:
    stems: list[str] = []
    for line in text.splitlines():
        match = _REQUIRES.match(line)
        if match:
            stems.extend(match.group(1).split())
        elif line.strip() and not line.lstrip().startswith("//"):
            break  # requirements sit in the header comment
    return stems


@lru_cache(maxsize=256)
def compose(lang: str, kernel: str, variants: tuple[tuple[str, str], ...] = (),
            field_name: str = "babybear") -> ComposedSource:
    """The full source of ``kernels/<kernel>`` in ``lang`` with its requirements; ``variants`` maps library
    stems to variant suffixes, e.g. (("bb_mul", "u64"),); ``field_name`` the field whose constants it gets."""
    root = shader_root(lang)
    ext = _EXTENSIONS[lang]
    chosen = dict(variants)
    lines: list[str] = []
    origins: list[tuple[str, int]] = []
    for i, line in enumerate(prelude(lang, field_name).splitlines(), 1):
        lines.append(line)
        origins.append(("<prelude>", i))
    seen: set[Path] = set()
    generated_seen: set[str] = set()

    def include_generated(stem: str) -> None:
        if stem in generated_seen:
            return
        generated_seen.add(stem)
        for number, line in enumerate(constants.render(stem, lang, field_name).splitlines(), 1):
            lines.append(line)
            origins.append((f"<{stem}>", number))

    def include(path: Path, stack: tuple[Path, ...]) -> None:
        if path in seen:
            return
        if path in stack:
            raise ValueError(f"circular shader requirement: {' -> '.join(p.name for p in stack + (path,))}")
        text = path.read_text()
        for stem in _requirements(text):
            if stem in constants.GENERATED:
                include_generated(stem)
            else:
                include(_resolve(root, stem, ext, chosen), stack + (path,))
        seen.add(path)
        name = f"{lang}/{path.parent.name}/{path.name}"
        for number, line in enumerate(text.splitlines(), 1):
            lines.append(line)
            origins.append((name, number))

    kernel_path = root / "kernels" / f"{kernel}.{ext}"
    if not kernel_path.is_file():
        raise FileNotFoundError(f"no kernel file {kernel_path}")
    include(kernel_path, ())
    return ComposedSource("\n".join(lines) + "\n", tuple(origins))


def map_diagnostic(message: str, source: ComposedSource) -> str:
    """Rewrite 'wgsl:L:C' / '<source>:L:' positions in a compiler message to original file:line."""
    def repl(match: re.Match) -> str:
        return source.origin(int(match.group(2))) + (f":{match.group(3)}" if match.group(3) else "")

    return re.sub(r"(wgsl|program_source|<source>):(\d+)(?::(\d+))?", repl, message)
