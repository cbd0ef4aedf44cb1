"""The WGSL and MSL shader trees are twins of the kernel registry: same files, entry points, buffer names and
slots, params fields, workgroup sizes and specialisation ids. Parsed from the files themselves."""

from __future__ import annotations

import re

import pytest

from whirgpu.kernels.compose import compose, shader_root
from whirgpu.kernels.registry import KERNELS

WGSL, MSL = shader_root("wgsl"), shader_root("msl")
MSL_ONLY_LIBS = {"bb_mul_mulhi"}  # Metal's native multiply has no WGSL counterpart


def _stems(root, folder: str, ext: str) -> set[str]:
    return {p.stem for p in (root / folder).glob(f"*.{ext}")}


def _requires(text: str) -> list[str]:
    match = re.search(r"^//\s*requires:\s*(.*)$", text, re.M)
    return match.group(1).split() if match else []


# -- WGSL --------------------------------------------------------------------------------------------------------
def _wgsl_params(text: str) -> tuple[str, ...]:
    body = re.search(r"struct Params\s*\{(.*?)\}", text, re.S).group(1)
    fields = []
    for name, ctype, count in re.findall(r"(\w+)\s*:\s*(array<vec4<u32>,\s*(\d+)>|vec4<u32>|u32)", body):
        fields.append(name + (f":vec4x{count}" if count else ":vec4" if ctype == "vec4<u32>" else ""))
    return tuple(fields)


def _wgsl_entries(text: str) -> dict[str, str]:
    return dict((name, size) for size, name in
                re.findall(r"@compute\s+@workgroup_size\((\w+)\)\s*fn\s+(\w+)", text))


def _wgsl_bindings(text: str) -> dict[str, tuple[int, str]]:
    return {name: (int(slot), kind) for slot, kind, name in
            re.findall(r"@binding\((\d+)\)\s*var<(\w+)[^>]*>\s*(\w+)", text)}


def _wgsl_consts(text: str) -> dict[str, int]:
    return {name: int(value) for name, value in re.findall(r"const\s+(\w+)\s*:\s*u32\s*=\s*(\d+)u", text)}


# -- MSL ---------------------------------------------------------------------------------------------------------
_MSL_FIELD = re.compile(r"(uint4|uint)\s+(\w+)(?:\[(\d+)\])?\s*;")


def _msl_params(text: str) -> tuple[str, ...]:
    body = re.search(r"struct Params\s*\{(.*?)\}", text, re.S).group(1)
    out = []
    for ctype, name, count in _MSL_FIELD.findall(body):
        out.append(name + (f":vec4x{count}" if count else ":vec4" if ctype == "uint4" else ""))
    return tuple(out)


def _msl_kernels(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(r"kernel\s+void\s+(\w+)\s*\((.*?)\)\s*\{", text, re.S)}


def _msl_buffers(signature: str) -> dict[int, tuple[str, str]]:
    return {int(slot): (" ".join(ctype.split()), name) for ctype, name, slot in
            re.findall(r"([\w\s:<>*&]+?)\s*\b(\w+)\s*\[\[buffer\((\d+)\)\]\]", signature)}


def test_every_file_has_a_twin():
    for folder in ("lib", "kernels"):
        wgsl, msl = _stems(WGSL, folder, "wgsl"), _stems(MSL, folder, "metal")
        assert wgsl - msl == set(), f"WGSL {folder} files without an MSL twin"
        assert msl - wgsl - MSL_ONLY_LIBS == set(), f"MSL {folder} files without a WGSL twin"


def test_registry_names_every_kernel_file():
    assert _stems(WGSL, "kernels", "wgsl") == set(KERNELS)


@pytest.mark.parametrize("folder", ["lib", "kernels"])
def test_twins_require_the_same_libraries(folder):
    for path in (WGSL / folder).glob("*.wgsl"):
        twin = MSL / folder / f"{path.stem}.metal"
        if twin.is_file():
            assert _requires(path.read_text()) == _requires(twin.read_text()), path.stem


@pytest.mark.parametrize("stem", sorted(KERNELS))
def test_wgsl_matches_registry(stem):
    spec = KERNELS[stem]
    text = (WGSL / "kernels" / f"{stem}.wgsl").read_text()
    assert _wgsl_params(text) == spec.params
    entries = _wgsl_entries(text)
    assert set(entries) == set(spec.entries)
    composed = compose("wgsl", stem, (("bb_mul", "emulated"),)).text
    consts = _wgsl_consts(composed)
    # overrides of the kernel file and of the libraries it requires (the challenger's CH_* constants)
    overrides = {name: (int(i), int(d)) for i, name, d in
                 re.findall(r"@id\((\d+)\)\s*override\s+(\w+)\s*:\s*u32\s*=\s*(\d+)u", composed)}
    assert overrides == spec.constants
    assert "override" not in re.sub(r"@id\(\d+\)\s*override", "", composed), "every override has an @id"
    bindings = _wgsl_bindings(text)
    for entry, info in spec.entries.items():
        size = entries[entry]
        assert (int(size) if size.isdigit() else size if size in spec.constants else consts[size]) == info.workgroup
        for slot, name in enumerate(info.buffers):
            assert bindings.get(name, (None,))[0] == slot, f"{entry}: {name} is not at @binding({slot})"
            assert bindings[name][1] == "storage"
        uniforms = [n for n, (slot, kind) in bindings.items() if kind == "uniform" and slot == info.params_slot]
        assert uniforms, f"{entry}: no params uniform at @binding({info.params_slot})"


@pytest.mark.parametrize("stem", sorted(KERNELS))
def test_msl_matches_registry(stem):
    spec = KERNELS[stem]
    path = MSL / "kernels" / f"{stem}.metal"
    if not path.is_file():
        pytest.fail(f"{path} is missing")
    text = path.read_text()
    assert _msl_params(text) == spec.params
    kernels = _msl_kernels(text)
    assert set(kernels) == set(spec.entries)
    composed = compose("msl", stem, (("bb_mul", "mulhi"),)).text  # with the libraries' function constants
    constants = {name: int(i) for name, i in
                 re.findall(r"constant\s+uint\s+(\w+)\s*\[\[\s*function_constant\((\d+)\)\s*\]\]", composed)}
    assert constants == {name: i for name, (i, _) in spec.constants.items()}
    for entry, info in spec.entries.items():
        buffers = _msl_buffers(kernels[entry])
        expected_slots = set(range(info.params_slot + 1))
        assert set(buffers) == expected_slots, f"{entry}: buffer slots {sorted(buffers)}"
        for slot, name in enumerate(info.buffers):
            ctype, got = buffers[slot]
            assert got == name, f"{entry}: slot {slot} is {got}, the registry says {name}"
            assert ctype.startswith(("device", "constant")) and ctype.endswith("*"), f"{entry}: {name}: {ctype}"
        ctype, _ = buffers[info.params_slot]
        assert ctype == "constant Params&", f"{entry}: params slot holds {ctype}"


def test_msl_threadgroup_arrays_are_declared_one_per_line():
    """msl_cpu_rt rewrites `threadgroup T name[N];` lines; any other use of threadgroup storage must be a
    pointer parameter, or the CPU runtime would give each thread its own copy."""
    for path in list((MSL / "kernels").glob("*.metal")) + list((MSL / "lib").glob("*.metal")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//")[0]
            if re.search(r"\bthreadgroup\b", code):
                declaration = re.match(r"^\s*threadgroup\s+[\w:<>]+\s+\w+\s*\[[^\]]+\]\s*;\s*$", code)
                pointer = re.search(r"threadgroup\s+[\w:<>]+\s*\*\s*\w+", code)
                assert declaration or pointer, f"{path.name}:{number}: {line.strip()}"
