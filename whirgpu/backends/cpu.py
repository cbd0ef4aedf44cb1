"""The reference backend: every primitive is a call into ``whirgpu.ref`` on host numpy arrays, in the running
proof's ``TableLayout`` (field, variable order, codeword layout, leaf hash, openings)."""

from __future__ import annotations

import os

import numpy as np

from ..field import BABYBEAR
from ..ref import field_np as F
from ..ref import multilinear, p3_codeword, shift, sumcheck
from ..ref.merkle import MerkleTree
from ..ref.merkle_pruned import prune
from ..ref.ntt import dft_batch
from .base import Backend, Commitment, DeviceBuffer, DeviceLimits, StorageMode, resolve_storage


class CpuBackend(Backend):
    """numpy on the host; 'device' buffers are the arrays themselves. ``storage`` is accepted (and validated) so
    that every backend takes the same options, and ignored: there is no device memory, so ``self.storage`` stays
    None and nothing is counted in ``stats``."""

    name = "cpu"
    proves_tables = True

    def __init__(self, storage: str | None = None) -> None:
        super().__init__()
        if storage is not None:
            resolve_storage(storage)

    def upload(self, array: np.ndarray, mode: StorageMode = StorageMode.SHARED) -> DeviceBuffer:
        array = np.ascontiguousarray(array, dtype=np.uint32)
        return DeviceBuffer(array, array.shape, mode)

    def download(self, buffer: DeviceBuffer) -> np.ndarray:
        return buffer.handle

    def _wrap(self, array: np.ndarray) -> DeviceBuffer:
        return DeviceBuffer(array, array.shape, StorageMode.PRIVATE)

    def _field(self):
        """The running layout's field, or None for BabyBear (the ref functions' default path)."""
        field = self.layout.field
        return None if field is BABYBEAR else field

    def _ops(self):
        return F if self.layout.field is BABYBEAR else F.field_ops(self.layout.field)

    def commit(self, table: DeviceBuffer, log_folding: int, log_height: int) -> Commitment:
        values = table.handle
        is_ext = values.ndim == 2
        n_entries = values.shape[0]
        n_columns = 1 << log_folding
        n_coeffs = n_entries // n_columns
        if n_coeffs << log_folding != n_entries or n_coeffs > 1 << log_height:
            raise ValueError(f"cannot commit {n_entries} entries as 2^{log_folding} columns of height 2^{log_height}")
        layout = self.layout
        if layout.suffix:
            with self.phase("ntt"):
                rate = log_height - (n_coeffs.bit_length() - 1)
                encode = p3_codeword.encode_ext if is_ext else p3_codeword.encode_base
                codeword = p3_codeword.leaf_rows(encode(values, log_folding, rate, layout.field))
        else:
            # Column j is the contiguous chunk j of the table: transpose the (columns, coefficients) view.
            columns = values.reshape((n_columns, n_coeffs) + values.shape[1:])
            matrix = np.zeros((1 << log_height, n_columns) + values.shape[1:], dtype=np.uint32)
            matrix[:n_coeffs] = np.swapaxes(columns, 0, 1)
            flat = matrix.reshape(1 << log_height, -1)  # EF: c0..c3 per element, one base NTT per coefficient
            with self.phase("ntt"):
                codeword = dft_batch(flat, layout.field)
        with self.phase("merkle"):
            if layout.leaf_width == 24:
                levels = p3_codeword.merkle_levels(codeword, layout.field)
                tree = MerkleTree(levels, codeword)
            else:
                tree = MerkleTree.build(codeword)
        return Commitment(tree.root, 1 << log_height, codeword.shape[1], is_ext, handle=(codeword, tree))

    def open_rows(self, commitment: Commitment, indices: list[int],
                  capacity: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        codeword, tree = commitment.handle
        idx = np.asarray(indices, dtype=np.int64)
        rows = codeword[idx]
        if commitment.is_ext:
            rows = rows.reshape(len(indices), commitment.width // 4, 4)
        if self.layout.openings == "pruned":
            return rows, prune(tree.levels, [int(i) for i in idx])
        return rows, tree.open(idx)

    def evaluate(self, table: DeviceBuffer, point: np.ndarray) -> np.ndarray:
        return multilinear.evaluate(table.handle, point, self._field())

    def eq_weights(self, points: np.ndarray, coefficients: np.ndarray) -> DeviceBuffer:
        ops, field = self._ops(), self._field()
        points = np.asarray(points, dtype=np.uint32)
        total = np.zeros((1 << points.shape[1], 4), dtype=np.uint32)
        for point, coefficient in zip(points, coefficients):
            total = ops.ef_add(total, multilinear.eq_table(point, coefficient, field))
        return self._wrap(total)

    def add_constraint_weights(self, weights, eq_points, eq_coefficients, select_vars, select_coefficients,
                               select_capacity=None):
        ops, field = self._ops(), self._field()
        total = weights.handle
        nv = (total.shape[0]).bit_length() - 1
        eq_points = np.zeros((0, nv, 4), np.uint32) if eq_points is None else eq_points
        for point, coefficient in zip(np.asarray(eq_points, dtype=np.uint32), eq_coefficients):
            total = ops.ef_add(total, multilinear.eq_table(point, coefficient, field))
        for var, coefficient in zip(np.asarray(select_vars, dtype=np.uint32), select_coefficients):
            total = ops.ef_add(total, multilinear.select_table(var, nv, coefficient, field))
        return self._wrap(total)

    def add_next_weights(self, weights, points, windows, coefficients):
        ops, field = self._ops(), self._field()
        total = weights.handle
        for point, (start, m), coefficient in zip(np.asarray(points, dtype=np.uint32), np.asarray(windows),
                                                  np.asarray(coefficients, dtype=np.uint32)):
            total = ops.ef_add(total, shift.lifted_next_table(point, int(start), int(m), coefficient, field))
        return self._wrap(total)

    def evaluate_columns(self, table, point, columns):
        ops, field = self._ops(), self._field()
        point = np.asarray(point, np.uint32).reshape(-1, 4)
        rows = np.arange(1 << point.shape[0], dtype=np.int64)
        tables = (multilinear.eq_table(point, None, field), shift.next_table(point, None, field))
        values = [ops.ef_dot_base(table.handle[offset + (rows << log_stride)], tables[int(following)])
                  for offset, log_stride, following in np.asarray(columns, np.int64).reshape(-1, 3)]
        return np.asarray(values, np.uint32).reshape(-1, 4)

    def column_weights(self, num_variables, batches, coefficients):
        ops, field = self._ops(), self._field()
        coefficients = np.asarray(coefficients, np.uint32).reshape(-1, 4)
        total = np.zeros((1 << num_variables, 4), np.uint32)
        for point, columns in batches:
            point = np.asarray(point, np.uint32).reshape(-1, 4)
            rows = np.arange(1 << point.shape[0], dtype=np.int64)
            tables = (multilinear.eq_table(point, None, field), shift.next_table(point, None, field))
            for offset, log_stride, following, power in np.asarray(columns, np.int64).reshape(-1, 4):
                at = offset + (rows << log_stride)
                total[at] = ops.ef_add(total[at], ops.ef_mul(tables[int(following)], coefficients[power]))
        return self._wrap(total)

    def sumcheck_round(self, table: DeviceBuffer, weights: DeviceBuffer) -> np.ndarray:
        if self.layout.suffix:
            return np.stack(sumcheck.suffix_round_message(table.handle, weights.handle, self._field()))
        if self.layout.round_message == "c_inf":
            return np.stack(sumcheck.prefix_round_message(table.handle, weights.handle, self._field()))
        return np.stack(sumcheck.round_evaluations(table.handle, weights.handle))

    def fold(self, table: DeviceBuffer, weights: DeviceBuffer, r: np.ndarray) -> tuple[DeviceBuffer, DeviceBuffer]:
        if self.layout.suffix:
            new_table, new_weights = sumcheck.fold_suffix(table.handle, weights.handle, r, self._field())
        else:
            new_table, new_weights = sumcheck.fold(table.handle, weights.handle, r, self._field())
        return self._wrap(new_table), self._wrap(new_weights)

    # -- transcript-dependent values: plain numpy ---------------------------------------------------------------
    def expand_point(self, z, num_variables: int) -> np.ndarray:
        return multilinear.expand_from_univariate(z, num_variables, self._field())

    def concat_points(self, points: list) -> np.ndarray:
        return np.concatenate([np.asarray(p, np.uint32).reshape(-1, *np.shape(points[0])[-2:]) for p in points])

    def challenge_powers(self, x, n: int, queries=None) -> np.ndarray:
        return self._ops().ef_powers(x, n + (len(queries) if queries is not None else 0)).reshape(-1, 4)

    def domain_points(self, queries, log_folded_domain: int) -> np.ndarray:
        ops = self._ops()
        generator = ops.constant(self.layout.field.TWO_ADIC_GENERATORS[log_folded_domain])
        return ops.power_each(generator, np.asarray(queries, np.int64)).reshape(-1)

    def final_poly(self, table: DeviceBuffer) -> np.ndarray:
        values = table.handle
        return values if values.ndim == 2 else self._ops().ef_from_base(values)

    def limits(self) -> DeviceLimits:
        big = 1 << 62
        return DeviceLimits(
            name=f"numpy reference ({os.cpu_count()} CPU cores)",
            api="numpy",
            device_type="CPU",
            max_buffer_size=big,
            max_storage_binding_size=big,
            has_u64=True,
            unified_memory=True,
        )
