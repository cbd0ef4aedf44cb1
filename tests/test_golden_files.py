"""The golden files shipped in tests/golden: small, complete, and the same bytes as the reference's own set."""

from __future__ import annotations

import lzma

import pytest

from .conftest import GOLDEN_PROOFS, SHARED_GOLDEN, SHARED_GOLDEN_P3, SHIPPED_GOLDEN, SHIPPED_GOLDEN_P3

SHIPPED = sorted(SHIPPED_GOLDEN.glob("*.xz"))
SHIPPED_P3 = sorted(SHIPPED_GOLDEN_P3.glob("*.xz"))
MAX_SHIPPED_BYTES = 4 << 20  # "a few MB": the compressed set is about 2.4 MB


def test_the_shipped_set_is_complete_and_small():
    names = {p.name[:-3] for p in SHIPPED}
    assert set(GOLDEN_PROOFS) <= names | {p.name for p in SHARED_GOLDEN.glob("n*_f*_r*.json")}
    assert {"kat_perm.json", "kat_challenger.json", "kat_merkle_8x16_seed42.json",
            "merkle_8x16_seed42_matrix.json"} <= names
    assert len([n for n in names if n.startswith("n")]) >= 5
    assert (SHIPPED_GOLDEN / "README.md").is_file()
    assert sum(p.stat().st_size for p in SHIPPED) <= MAX_SHIPPED_BYTES


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_copy_equals_the_shared_file(path):
    shared = SHARED_GOLDEN / path.name[:-3]
    if not shared.is_file():
        pytest.skip(f"{shared} is not here to compare with")
    assert lzma.decompress(path.read_bytes()) == shared.read_bytes()


def test_the_shipped_p3_set_has_the_permutation_kats():
    names = {p.name[:-3] for p in SHIPPED_P3}
    assert {f"kat_perm_{f}_{w}.json" for f in ("babybear", "koalabear") for w in (16, 24)} <= names
    assert (SHIPPED_GOLDEN_P3 / "README.md").is_file()


@pytest.mark.parametrize("path", SHIPPED_P3, ids=lambda p: p.name)
def test_shipped_p3_copy_equals_the_shared_file(path):
    shared = SHARED_GOLDEN_P3 / path.name[:-3]
    if not shared.is_file():  # the table documents come from the oracle's own folder
        shared = SHARED_GOLDEN_P3.parent / "oracle-p3" / "golden-tables" / path.name[:-3]
    if not shared.is_file():
        pytest.skip(f"{shared} is not here to compare with")
    assert lzma.decompress(path.read_bytes()) == shared.read_bytes()
