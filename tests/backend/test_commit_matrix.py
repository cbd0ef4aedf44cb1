"""``compact_rows`` (a padded matrix's rows cut to their first columns) against numpy, and
``Commitments.commit_matrix`` (a host-written, bit-reversed EF coefficient matrix committed on the device: the
hiding proof's mask oracles) against the reference's ``Committed(mask_matrix(...))``: the root and the openings,
word for word, both fields, every runtime fixture; 1, 3, 4 and 5 columns (padded and not), domains of 16 to 512
rows, outputs past one row of workgroups of the lowered grid (the 2-D path); forests of one shape and of
several (``commit_matrices``, ``commit_forest``), each tree against its own oracle."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.base import P3_WHIR_LAYOUT
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.profiles.p3_whir.zk.oracles import Committed, mask_matrix

from .field_inputs import random_monty


@pytest.mark.parametrize("rows, w_in, w_out", [(1, 4, 1), (16, 32, 20), (512, 32, 20), (100, 8, 7), (64, 4, 4)])
def test_compact_rows_is_numpy(gpu_runtime, rows, w_in, w_out):
    rt = gpu_runtime
    matrix = np.random.default_rng(rows + w_out).integers(0, 2**32, (rows, w_in), dtype=np.uint64).astype(np.uint32)
    src, dst = rt.alloc(matrix.nbytes), rt.alloc(4 * rows * w_out + 64)
    rt.write(src, matrix.reshape(-1))
    rt.write(dst, np.full(rows * w_out + 16, 0xDEADBEEF, np.uint32))
    batch = rt.batch()
    n = rows * w_out
    batch.dispatch(rt.kernel("compact_rows"), [src, dst], np.array([n, w_in, w_out, 0], np.uint32), -(-n // 256))
    batch.submit()
    got = rt.read(dst)
    np.testing.assert_array_equal(got[:n].reshape(rows, w_out), matrix[:, :w_out])
    assert np.all(got[n:n + 16] == 0xDEADBEEF)
    rt.free(src)
    rt.free(dst)


def _bit_reversed(coeffs: np.ndarray) -> np.ndarray:
    log = coeffs.shape[0].bit_length() - 1
    rev = np.array([int(format(i, f"0{log}b")[::-1], 2) if log else 0 for i in range(coeffs.shape[0])])
    return coeffs[rev]


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
@pytest.mark.parametrize("columns, m, t, domain", [(5, 4, 101, 256), (1, 41, 101, 512), (4, 4, 9, 64), (3, 2, 5, 16)])
def test_commit_matrix_is_the_mask_oracle(gpu_runtime, field, columns, m, t, domain):
    backend = GpuBackend(gpu_runtime)
    backend.layout = P3_WHIR_LAYOUT(field, "prefix")
    try:
        rng = np.random.default_rng(columns * domain)
        messages = random_monty(rng, field, (columns, m, 4))
        randomness = random_monty(rng, field, (columns, t, 4))
        want = Committed(mask_matrix(messages, randomness, domain, field), field)
        padded = 1 << (columns - 1).bit_length()
        coeffs = np.zeros((domain, padded, 4), np.uint32)
        coeffs[:m, :columns] = np.swapaxes(messages, 0, 1)
        coeffs[m:m + t, :columns] = np.swapaxes(randomness, 0, 1)
        state = backend.state
        with state.host_call(proof_words=64) as session:
            matrix = state.upload_words(_bit_reversed(coeffs).reshape(-1))
            commitment = backend.commitments.commit_matrix(matrix, domain.bit_length() - 1, columns)
        np.testing.assert_array_equal(session.read(commitment.root).reshape(-1), want.root.reshape(-1))
        indices = [1, domain - 1, 3, 0]
        rows, siblings = backend.open_rows(commitment, indices)
        reference = want.open(indices)
        np.testing.assert_array_equal(np.asarray(rows)[:, :columns], reference.rows)
        np.testing.assert_array_equal(np.asarray(siblings).reshape(-1, 8), reference.sibling_hashes.reshape(-1, 8))
        backend.release(commitment)
    finally:
        backend.layout = CpuBackend.layout


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
@pytest.mark.parametrize("count, columns, domain", [(2, 5, 256), (3, 1, 512), (6, 5, 256), (5, 4, 64), (8, 3, 16)])
def test_commit_matrices_are_each_mask_oracle(gpu_runtime, field, count, columns, domain):
    """Several matrices in one forest: each root and each opening is its own oracle's (matrices past ``count`` in
    the forest's room are junk and never reach them)."""
    from whirgpu.backends.gpu.commit import forest_size

    backend = GpuBackend(gpu_runtime)
    backend.layout = P3_WHIR_LAYOUT(field, "prefix")
    try:
        rng = np.random.default_rng(count * columns * domain)
        m, t = 3, domain // 4
        padded = 1 << (columns - 1).bit_length()
        wants, blocks = [], []
        for _ in range(count):
            messages = random_monty(rng, field, (columns, m, 4))
            randomness = random_monty(rng, field, (columns, t, 4))
            wants.append(Committed(mask_matrix(messages, randomness, domain, field), field))
            coeffs = np.zeros((domain, padded, 4), np.uint32)
            coeffs[:m, :columns] = np.swapaxes(messages, 0, 1)
            coeffs[m:m + t, :columns] = np.swapaxes(randomness, 0, 1)
            blocks.append(_bit_reversed(coeffs).reshape(-1))
        junk = rng.integers(0, 2**32, (forest_size(count) - count) * domain * padded * 4, dtype=np.uint64)
        state = backend.state
        assert backend.commitments.forest_fits(count, domain.bit_length() - 1, columns)
        with state.host_call(proof_words=8 * count + 64) as session:
            matrix = state.upload_words(np.concatenate(blocks + [junk.astype(np.uint32)]))
            commitments = backend.commitments.commit_matrices(matrix, count, domain.bit_length() - 1, columns)
        assert len(commitments) == count
        for want, commitment in zip(wants, commitments):
            np.testing.assert_array_equal(session.read(commitment.root).reshape(-1), want.root.reshape(-1))
        indices = [1, domain - 1, 3, 0]
        for want, commitment in zip(wants, commitments):
            rows, siblings = backend.open_rows(commitment, indices)
            reference = want.open(indices)
            np.testing.assert_array_equal(np.asarray(rows)[:, :columns], reference.rows)
            np.testing.assert_array_equal(np.asarray(siblings).reshape(-1, 8),
                                          reference.sibling_hashes.reshape(-1, 8))
        backend.release(*commitments)
    finally:
        backend.layout = CpuBackend.layout


def _oracle_blocks(rng, field, count: int, columns: int, domain: int, m: int) -> tuple[list, np.ndarray]:
    """``count`` random mask oracles of one shape: their references, and their bit-reversed coefficient matrices
    back to back (as ``commit_forest`` takes a part)."""
    padded = 1 << (columns - 1).bit_length()
    wants, blocks = [], []
    for _ in range(count):
        messages = random_monty(rng, field, (columns, m, 4))
        randomness = random_monty(rng, field, (columns, domain // 4, 4))
        wants.append(Committed(mask_matrix(messages, randomness, domain, field), field))
        coeffs = np.zeros((domain, padded, 4), np.uint32)
        coeffs[:m, :columns] = np.swapaxes(messages, 0, 1)
        coeffs[m:m + domain // 4, :columns] = np.swapaxes(randomness, 0, 1)
        blocks.append(_bit_reversed(coeffs).reshape(-1))
    return wants, np.concatenate(blocks)


# (count, columns, domain) per part, in the caller's order: shorter trees before taller ones, a lone tree of a shape,
# widths that are and are not a power of two (compacted leaves), a forest whose rows are not a power of two
MIXED = [[(3, 5, 256), (1, 1, 512), (1, 1, 256)], [(1, 3, 16), (2, 4, 64)], [(2, 1, 64), (1, 5, 128), (3, 2, 16)]]


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
@pytest.mark.parametrize("parts", MIXED, ids=lambda parts: "+".join(f"{c}x{w}x{d}" for c, w, d in parts))
def test_a_forest_of_several_shapes_is_each_mask_oracle(gpu_runtime, field, parts):
    """Matrices of several shapes in one forest (``commit_forest``): each root and opening is its own oracle's."""
    backend = GpuBackend(gpu_runtime)
    backend.layout = P3_WHIR_LAYOUT(field, "prefix")
    try:
        rng = np.random.default_rng(len(parts) * 7 + parts[0][2])
        shapes = [(count, domain.bit_length() - 1, columns) for count, columns, domain in parts]
        assert backend.commitments.forest_fits_shapes(shapes)
        state = backend.state
        wants = []
        with state.host_call(proof_words=8 * sum(c for c, _, _ in parts) + 64) as session:
            uploads = []
            for count, columns, domain in parts:
                part_wants, words = _oracle_blocks(rng, field, count, columns, domain, 3)
                wants.append(part_wants)
                uploads.append((state.upload_words(words), count, domain.bit_length() - 1, columns))
            committed = backend.commitments.commit_forest(uploads)
        assert [len(c) for c in committed] == [count for count, _, _ in parts]
        for (count, columns, domain), part_wants, commitments in zip(parts, wants, committed):
            indices = [1, domain - 1, 3, 0]
            for want, commitment in zip(part_wants, commitments):
                np.testing.assert_array_equal(session.read(commitment.root).reshape(-1), want.root.reshape(-1))
                rows, siblings = backend.open_rows(commitment, indices)
                reference = want.open(indices)
                np.testing.assert_array_equal(np.asarray(rows)[:, :columns], reference.rows)
                np.testing.assert_array_equal(np.asarray(siblings).reshape(-1, 8),
                                              reference.sibling_hashes.reshape(-1, 8))
        backend.release(*[c for part in committed for c in part])
    finally:
        backend.layout = CpuBackend.layout


def test_commit_matrices_refuses_a_lone_tree(gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    assert not backend.commitments.forest_fits(1, 8, 5)
