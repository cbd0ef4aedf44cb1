"""Extension-field arithmetic over a backend's values (``EfAlgebra``): the hiding prover's steps between its
transcript ops, written once and run where the values are: ``HostAlgebra`` on numpy arrays, the GPU backend's
``DeviceAlgebra`` (``backends/gpu/algebra.py``) as ``ef_program`` launches on a session's device values.

Contract (both algebras, word for word the same results): a value is an EF scalar (shape (4,)) or an EF vector
(n, 4) of Montgomery words; ``base`` arrays are base words (n,). A matrix is an EF vector of r * c entries read
row-major (row i: entries i c .. i c + c - 1) with its row count given. Every op returns a new value and leaves
its operands unchanged.
- ``const(array)``: a host array as a value (EF (4,) or (n, 4), or base words (n,) for ``lift``);
- ``lift(base)``: base words (n,) (or a matrix of them, lifted whole) as EF (n, 4);
- ``linear(s, a, b=None)``: s a + b (s a scalar, a and b vectors or scalars of one shape);
- ``add(a, b)``, ``sub(a, b)``: element-wise, one shape; ``scale(a, s)``: s a;
- ``mul(a, b)``: element-wise product of two vectors of one length (or two scalars);
- ``dot(a, b)``: sum_i a[i] b[i] (a scalar; 0 for empty vectors); ``total(a)``: sum_i a[i];
- ``matvec(matrix, rows, v)``: (rows,) entries sum_j matrix[i c + j] v[j], c = len(v);
- ``vecmat(v, matrix)``: (c,) entries sum_i v[i] matrix[i c + j], c = len(matrix) / len(v);
- ``inv(a)``: a^-1 entry by entry (0 to 0, ``field_np.ef_inv``); ``powers(x, n, start=None)``: [start x^i,
  i < n] (start None: 1); ``squares(x, n, reverse=False)``: [x^(2^i), i < n] (reversed: x^(2^(n-1)) first);
  ``powers_each(xs, n)``, ``squares_each(xs, n, reverse=False)``: the same for every entry of the vector xs, a
  (len(xs) * n) matrix, row j for xs[j]; ``column(matrix, cols, j)``: entry j of every row of a matrix of
  ``cols`` columns;
  ``eq(point)``: the eq table of a k-point (2^k entries, point[0] the index's most significant bit, as
  ``ref.multilinear.eq_table``);
- ``concat(values)``: the vectors (and scalars, as one entry) one after another;
- ``publish(value)``: the value where a transcript observes it and the proof is read from (a device algebra's
  copy in the proof region; the value itself on the host).
``host(value)`` is a host value as numpy; a device algebra's values are read back with their session.
"""

from __future__ import annotations

import numpy as np

from ..field import Field
from ..ref.field_np import field_ops
from ..ref.multilinear import eq_table


class HostAlgebra:
    """``EfAlgebra`` on numpy arrays (module contract)."""

    def __init__(self, field: Field):
        self.field = field
        self.ops = field_ops(field)

    def const(self, array) -> np.ndarray:
        return np.asarray(array, np.uint32)

    def host(self, value) -> np.ndarray:
        return np.asarray(value, np.uint32)

    def lift(self, base) -> np.ndarray:
        return self.ops.ef_from_base(np.asarray(base, np.uint32).reshape(-1))

    def linear(self, s, a, b=None) -> np.ndarray:
        out = self.ops.ef_mul(a, s)
        return out if b is None else self.ops.ef_add(out, b)

    def add(self, a, b) -> np.ndarray:
        return self.ops.ef_add(a, b)

    def sub(self, a, b) -> np.ndarray:
        return self.ops.ef_sub(a, b)

    def scale(self, a, s) -> np.ndarray:
        return self.ops.ef_mul(a, s)

    def mul(self, a, b) -> np.ndarray:
        return self.ops.ef_mul(a, b)

    def dot(self, a, b) -> np.ndarray:
        a = np.asarray(a, np.uint32).reshape(-1, 4)
        return self.ops.ef_sum(self.ops.ef_mul(a, np.asarray(b, np.uint32).reshape(-1, 4)))

    def total(self, a) -> np.ndarray:
        return self.ops.ef_sum(np.asarray(a, np.uint32).reshape(-1, 4))

    def matvec(self, matrix, rows: int, v) -> np.ndarray:
        v = np.asarray(v, np.uint32).reshape(-1, 4)
        m = np.asarray(matrix, np.uint32).reshape(rows, v.shape[0], 4)
        return self.ops.ef_sum(self.ops.ef_mul(m, v[None]), axis=1)

    def vecmat(self, v, matrix) -> np.ndarray:
        v = np.asarray(v, np.uint32).reshape(-1, 4)
        m = np.asarray(matrix, np.uint32).reshape(v.shape[0], -1, 4)
        return self.ops.ef_sum(self.ops.ef_mul(m, v[:, None]), axis=0)

    def inv(self, a) -> np.ndarray:
        return self.ops.ef_inv(a)

    def powers(self, x, n: int, start=None) -> np.ndarray:
        out = self.ops.ef_powers(x, n)
        return out if start is None else self.ops.ef_mul(out, start)

    def squares(self, x, n: int, reverse: bool = False) -> np.ndarray:
        out = np.zeros((n, 4), np.uint32)
        x = np.asarray(x, np.uint32)
        for i in range(n):
            out[i] = x
            x = self.ops.ef_square(x)
        return out[::-1].copy() if reverse else out

    def powers_each(self, xs, n: int) -> np.ndarray:
        xs = np.asarray(xs, np.uint32).reshape(-1, 4)
        return np.concatenate([self.ops.ef_powers(x, n) for x in xs]) if xs.shape[0] and n else \
            np.zeros((0, 4), np.uint32)

    def squares_each(self, xs, n: int, reverse: bool = False) -> np.ndarray:
        xs = np.asarray(xs, np.uint32).reshape(-1, 4)
        return np.concatenate([self.squares(x, n, reverse) for x in xs]) if xs.shape[0] and n else \
            np.zeros((0, 4), np.uint32)

    def column(self, matrix, cols: int, j: int) -> np.ndarray:
        return np.asarray(matrix, np.uint32).reshape(-1, cols, 4)[:, j].copy()

    def eq(self, point) -> np.ndarray:
        point = np.asarray(point, np.uint32).reshape(-1, 4)
        return eq_table(point, field=self.field) if point.shape[0] else self.ops.ef_from_base(self.ops.ONE)[None]

    def publish(self, value) -> np.ndarray:
        return np.asarray(value, np.uint32)

    def concat(self, values) -> np.ndarray:
        return np.concatenate([np.asarray(v, np.uint32).reshape(-1, 4) for v in values])
