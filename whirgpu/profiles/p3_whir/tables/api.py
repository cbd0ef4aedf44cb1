"""Committing a STARK's traces in the p3-whir profile: ``P3Tables`` (the tables, committed once), the
``P3TablesCommitment`` it returns (opened as often as the caller likes) and the ``P3TablesProofDocument`` of each
opening (``p3-whir-oracle/v2``, what the oracle and ``whirgpu verify`` read).

Contracts (canonical field elements in and out):
- ``P3Tables(tables, *, orient, params=None, field="koalabear", layout="suffix", backend="auto", storage=None,
  shapes=None)``: a table may also be a ``GPUBuffer`` on the backend's device (wgpu, dawn: ``Backend.device_table``),
  its (log_rows, columns) in ``shapes`` (docs/API.md);
  ``tables`` a list (or tuple) of 2-D integer arrays, one per table, of canonical values of ``field``; ``orient``
  says how every array holds its table and has no default: ``"rows"`` for (rows, columns), a trace as a STARK holds
  it (row i is the i-th step), ``"columns"`` for (columns, rows) (upstream's ``Table``: one matrix row per column).
  The number of rows must be a power of two (1 to 2^26); a table's shape is ``TableShape(log2 rows, columns)``,
  within the oracle's limits (``spec.parse_tables``). Row i is hypercube index i: coordinate 0 of a point binds
  its most significant bit. ``params`` as ``P3Prover`` takes them (None: upstream's example, its grinding budget
  raised where upstream refuses it, ``pow_note`` the line saying so), for the *stacked* arity ``num_variables``
  the shapes and the folding factor derive (``stacked_arity``). ``layout``: ``"suffix"`` (``SuffixProver``) or
  ``"prefix"`` (``PrefixProver``). ``backend="auto"`` takes the backend ``select_backend`` picks when it proves
  tables (``Backend.proves_tables``), else the cpu backend (``backend_reason`` says which); a named backend that
  does not prove tables is a ``ConfigError``; ``close()`` (or a ``with`` block) closes a backend it opened. Every
  refusal is a ``ConfigError`` of one line naming the table.
  ``expected(batches=None, prescribed=False)``: the ``P3Expected`` a verifier of these shapes, this layout and that
  schedule passes to ``whirgpu.verify`` (a verifier that does not hold the tables builds the same value from
  ``TablesSpec.parse``).
- ``P3Tables.commit() -> P3TablesCommitment``: stacks, encodes and Merkle-commits the tables once
  (``tables.prover.P3TablesProver.commit``). The commitment has ``root`` (8 canonical words), ``cap`` (the
  ``MerkleCap``), ``num_variables``, ``shapes``, ``layout``, ``stacked`` (where each column lies), and
  ``open(batches=None, points=None) -> P3TablesProofDocument``, any number of times, each opening from a fresh
  transcript after the commitment (upstream's prover data cloned per opening), without re-encoding or re-hashing:
  byte for byte what committing and opening afresh gives. ``batches``: None (one batch per table, every column at
  the current row: the oracle's default), the oracle's ``--open`` text (``"0:0,1:1/1:0"``), or a sequence of
  ``OpeningBatch`` or ``(table, current)`` / ``(table, current, next)`` tuples. ``points``: None (each batch's point
  drawn from the transcript) or one (m_b, 4) array of canonical EF coefficients per batch, in the order the batches
  are given (for a text, the order written) (m_b = the table's committed arity, ``max(log_rows, fold)``). The batches are regrouped by table
  (stably: protocol order); the document lists batches, points and values in that order. ``release()`` frees the
  backend's copies; an opening after it is a ``ConfigError``.
- ``P3Tables.prove(batches=None, points=None) -> P3TablesProofDocument``: commit and open in one proof
  (``P3TablesProver.prove_tables``), byte for byte ``commit().open(batches, points)``, for a prover that does not
  need the root before the opening: no round trip between the two, nothing held afterwards, and on a GPU backend a
  shape proved before (shapes, orientation, layout, schedule, who chooses the points) is replayed whole.
- ``P3TablesProofDocument``: ``spec`` (``TablesSpec``: shapes, schedule, layout, who chose the points), ``config``,
  ``points`` (canonical (m_b, 4) per batch), ``claimed`` (per batch a ``BatchValues``: ``current`` (c_b, 4) and
  ``next`` (d_b, 4) canonical), ``proved`` (the ``TablesProved``), ``phase_seconds``; ``to_json()`` the v2 tree,
  ``dumps()`` its text (compact, sorted: the oracle's), ``write(path)`` atomically (``files.write_atomic``).
  ``whirgpu.verify``, ``is_valid``, ``verify_many``, ``claimed_values`` and ``dump`` take it as its bytes
  (``profiles.documents``): nothing it states is trusted.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field as dataclass_field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ....backends import select_backend
from ....backends.base import Backend, DeviceTables
from ....canonical import integer_array
from ....errors import ConfigError
from ....field import Field
from ....files import write_atomic
from ....protocol.folding import Constant
from ....ref.field_np import field_ops
from ....ref.multilinear import expand_from_univariate
from ..config import P3Parameters, P3WhirConfig
from ..defaults import EXAMPLE_FIELD, EXAMPLE_PARAMETERS, as_field, resolve
from ..expectations import P3Expected
from ..proof import MerkleCap
from ..verifier import p3_challenger
from .document_checks import stacked_arity
from .document_write import dumps_tables_document, tables_document_tree
from .prover import P3TablesProver, TablesProved, TablesProverData
from .shapes import OpeningBatch, TableShape, TablesProtocol
from .spec import MAX_LOG_ROWS, TablesSpec, default_open, format_open, format_tables, parse_layout, parse_open, \
    parse_tables
from .stacking import StackedLayout

ORIENTS = ("rows", "columns")

__all__ = ["BatchValues", "ORIENTS", "P3Tables", "P3TablesCommitment", "P3TablesProofDocument"]


class _OnDevice(NamedTuple):
    """A table given as a device buffer (``P3Tables(..., shapes=...)``), adopted once the backend is chosen."""

    buffer: object
    shape: tuple[int, int]  # the array the buffer holds, as ``orient`` reads it


def _device_shape(t: int, table, shapes, orient: str) -> tuple[int, int, tuple[int, int]]:
    """(rows, columns, held shape) of device buffer ``t`` from ``shapes[t]`` = (log_rows, columns)."""
    if shapes is None:
        raise ConfigError(f"table {t}: a device buffer carries no shape; pass shapes=[(log_rows, columns), ...], "
                          "one per table")
    try:
        log_rows, width = (int(v) for v in shapes[t])
    except (TypeError, ValueError, IndexError):
        raise ConfigError(f"table {t}: shapes[{t}] must be (log_rows, columns), got {shapes[t]!r:.40}") from None
    if not 0 <= log_rows <= MAX_LOG_ROWS or width < 1:
        raise ConfigError(f"table {t}: shape ({log_rows}, {width}): log_rows in [0, {MAX_LOG_ROWS}] and columns >= 1")
    rows = 1 << log_rows
    return rows, width, (rows, width) if orient == "rows" else (width, rows)


def _table_arrays(tables, orient, field: Field, shapes=None) -> tuple[list, tuple[TableShape, ...]]:
    """Each table as a C-contiguous uint32 array of words as the user holds it ((rows, columns) with
    ``orient="rows"``, else (columns, rows): the backend's ``stack_columns`` reads either; a C-contiguous uint32
    array is used as it is, never transposed nor copied on the host), and the shapes."""
    if orient not in ORIENTS:
        raise ConfigError(f"orient={orient!r:.30}: say how each array holds its table: orient='rows' for (rows, "
                          "columns), a trace as a STARK holds it, or orient='columns' for (columns, rows)")
    if isinstance(tables, np.ndarray) or not isinstance(tables, (list, tuple)):
        raise ConfigError(f"tables: expected a list of 2-D arrays, one per table, got {type(tables).__name__} "
                          "(one table: [trace])")
    if not tables:
        raise ConfigError("tables: at least one table is needed")
    arrays, shapes_out = [], []
    if shapes is not None and (not isinstance(shapes, (list, tuple)) or len(shapes) != len(tables)):
        raise ConfigError(f"shapes: one (log_rows, columns) per table ({len(tables)}), got {shapes!r:.60}")
    for t, table in enumerate(tables):
        if type(table).__name__ == "GPUBuffer":  # wgpu-py's and wgpudawn's buffer classes, as Prover.prove
            rows, width, held = _device_shape(t, table, shapes, orient)
            arrays.append(_OnDevice(table, held))
            shapes_out.append(TableShape(rows.bit_length() - 1, width))
            continue
        array = integer_array(table, f"table {t}")
        if array.ndim != 2 or 0 in array.shape:
            axes = "rows, columns" if orient == "rows" else "columns, rows"
            raise ConfigError(f"table {t}: expected a non-empty 2-D array ({axes}), got shape {array.shape}")
        rows, width = array.shape if orient == "rows" else array.shape[::-1]
        if rows & (rows - 1) or rows > 1 << MAX_LOG_ROWS:
            other = array.shape[1] if orient == "rows" else array.shape[0]
            hint = f" (is it orient={ORIENTS[orient == 'rows']!r}?)" if other & (other - 1) == 0 else \
                " (pad the trace to a power of two)"
            raise ConfigError(f"table {t}: {rows} rows, not a power of two up to 2^MAX_LOG_ROWS = "
                              f"2^{MAX_LOG_ROWS}, with orient={orient!r}{hint}")
        # uint32 words are range-checked where they are stacked (on the device for a GPU backend): no host pass
        if array.dtype != np.uint32 and (array.min() < 0 or array.max() >= field.P):
            raise ConfigError(f"table {t}: values must be canonical {field.name} elements in [0, {field.P})")
        words = array.astype(np.uint32, copy=False)
        arrays.append(np.ascontiguousarray(words))
        shapes_out.append(TableShape(rows.bit_length() - 1, width))
    return arrays, parse_tables(format_tables(shapes_out), "tables")  # the oracle's limits on what it reads back


def _protocol(shapes, batches, what: str = "batches") -> tuple[TablesProtocol, list[int]]:
    """The ``TablesProtocol`` of ``batches`` (see the module contract) and, for each batch in protocol order, its
    index in the order given."""
    if batches is None:
        given: list = list(default_open(shapes))
    elif isinstance(batches, str):
        parse_open(batches, shapes, what)  # the oracle's checks and limits on the whole text, one line each
        # one batch per item, in the order written (parse_open returns them regrouped by table)
        given = [b for item in re.split("[/;]", batches) for b in parse_open(item, shapes, what)]
    else:
        given = []
        for i, batch in enumerate(batches):
            if not isinstance(batch, OpeningBatch):
                try:
                    batch = OpeningBatch(*batch)
                except TypeError:
                    raise ConfigError(f"{what}[{i}]: expected an OpeningBatch or (table, current[, next]), got "
                                      f"{batch!r:.60}") from None
            given.append(batch)
        parse_open(format_open(given), shapes, what)  # the oracle's checks and limits, one line each
    order = sorted(range(len(given)), key=lambda i: given[i].table)  # stable, as TablesProtocol regroups
    return TablesProtocol(tuple(shapes), tuple(given)), order


class BatchValues(NamedTuple):
    """One batch's claimed values: ``current`` (c, 4) and ``next`` (d, 4), canonical EF coefficients."""

    current: np.ndarray
    next: np.ndarray


@dataclass
class P3TablesProofDocument:
    """One opening of a ``P3TablesCommitment`` as a ``p3-whir-oracle/v2`` document (module contract)."""

    spec: TablesSpec
    config: P3WhirConfig
    proved: TablesProved
    phase_seconds: dict = dataclass_field(default_factory=dict)

    @property
    def field(self) -> Field:
        return self.config.field

    @cached_property
    def points(self) -> tuple[np.ndarray, ...]:
        canonical = field_ops(self.field).from_monty
        return tuple(canonical(np.asarray(p, np.uint32)).astype(np.uint32) for p in self.proved.points)

    @cached_property
    def claimed(self) -> tuple[BatchValues, ...]:
        canonical = field_ops(self.field).from_monty
        return tuple(BatchValues(canonical(e.current).astype(np.uint32).reshape(-1, 4),
                                 canonical(e.next).astype(np.uint32).reshape(-1, 4)) for e in self.proved.proof.evals)

    def ood_points(self) -> np.ndarray:
        """The initial OOD points (t, n, 4) Montgomery, replayed on the host from the proof's root and answers."""
        n = self.config.num_variables
        challenger = p3_challenger(self.config, self.field)
        challenger.observe_many(self.proved.commitment.roots[0])
        points = np.zeros((len(self.proved.proof.whir.initial_ood_answers), n, 4), np.uint32)
        for j, answer in enumerate(self.proved.proof.whir.initial_ood_answers):
            points[j] = expand_from_univariate(challenger.sample_ef(), n, self.field)
            challenger.observe_many(answer)
        return points

    def to_json(self) -> dict:
        """The v2 JSON tree, as the oracle writes it (seed 0: the columns are the caller's)."""
        p = self.proved
        return tables_document_tree(self.field, self.config, self.spec, p.commitment, p.proof, p.points,
                                    self.ood_points(), seed=0)

    def dumps(self) -> str:
        return dumps_tables_document(self.to_json())

    def write(self, path) -> int:
        """Write the document through a temporary file renamed over ``path`` (``files.write_atomic``: a failed write
        leaves ``path`` as it was); returns its size in bytes. ``FileError`` when it cannot be written."""
        data = self.dumps().encode()
        write_atomic(path, data)
        return len(data)


def _prescribed_points(points, protocol: TablesProtocol, order: list[int], config: P3WhirConfig, field: Field):
    """None (points drawn from the transcript), or ``points`` (one (m, 4) canonical array per batch in the order
    given) checked and in ``protocol``'s batch order as Montgomery words."""
    if points is None:
        return None
    points = list(points) if not isinstance(points, np.ndarray) else [p for p in points]
    if len(points) != len(order):
        raise ConfigError(f"points: one per batch ({len(order)}), got {len(points)}")
    arities = protocol.batch_log_rows(config.fold(0))
    monty = []
    for b, (i, m) in enumerate(zip(order, arities)):
        point = integer_array(points[i], f"points[{i}]")
        if point.shape != (m, 4):
            raise ConfigError(f"points[{i}]: batch {protocol.batches[b]} opens a table of committed arity "
                              f"{m}: a point of shape ({m}, 4) is needed, got {point.shape}")
        if point.size and (point.min() < 0 or point.max() >= field.P):
            raise ConfigError(f"points[{i}]: canonical field elements in [0, {field.P}) are needed")
        monty.append(field_ops(field).to_monty(point.astype(np.uint64)).astype(np.uint32))
    return monty


class P3TablesCommitment:
    """The tables committed once (``P3Tables.commit``), opened as often as wanted (module contract)."""

    def __init__(self, prover: P3TablesProver, data: TablesProverData, layout: str, commit_seconds: dict):
        self._prover, self._data = prover, data
        self.layout = layout
        self.commit_seconds = commit_seconds
        self.last_phase_seconds: dict[str, float] = {}

    @property
    def cap(self) -> MerkleCap:
        return self._data.commitment

    @property
    def root(self) -> np.ndarray:
        field = self._data.field
        return field_ops(field).from_monty(np.asarray(self.cap.roots[0], np.uint32)).astype(np.uint32)

    @property
    def num_variables(self) -> int:
        return self._data.config.num_variables

    @property
    def config(self) -> P3WhirConfig:
        return self._data.config

    @property
    def shapes(self) -> tuple[TableShape, ...]:
        return self._data.shapes

    @property
    def stacked(self) -> StackedLayout:
        return self._data.stacked

    def open(self, batches=None, points=None) -> P3TablesProofDocument:
        """One opening (module contract): a fresh proof of this commitment."""
        config, field = self._data.config, self._data.field
        protocol, order = _protocol(self.shapes, batches)
        monty = _prescribed_points(points, protocol, order, config, field)
        self._prover.timer.seconds.clear()
        start = time.perf_counter()
        proved = self._prover.open(self._data, protocol, monty)
        self.last_phase_seconds = {**self._prover.timer.seconds, "total": time.perf_counter() - start}
        spec = TablesSpec(protocol, self.layout, "transcript" if points is None else "prescribed")
        return P3TablesProofDocument(spec, config, proved, dict(self.last_phase_seconds))

    def release(self) -> None:
        """Free the backend's copies of the stacked table, its codeword and tree; idempotent."""
        self._data.release()


class P3Tables:
    """A STARK's tables to commit in the p3-whir profile (module contract)."""

    def __init__(self, tables, *, orient: str | None = None, params: P3Parameters | None = None,
                 field: str | Field = EXAMPLE_FIELD, layout: str = "suffix", backend: str | Backend = "auto",
                 storage: str | None = None, shapes=None):
        self.field = as_field(field)
        self.layout = parse_layout(layout, "layout")
        self._columns, self.shapes = _table_arrays(tables, orient, self.field, shapes)
        self._col_major = orient == "columns"
        asked = EXAMPLE_PARAMETERS if params is None else params
        if not isinstance(asked, P3Parameters):
            raise ConfigError(f"params: expected P3Parameters or None, got {type(asked).__name__}")
        if not isinstance(asked.folding, Constant):
            raise ConfigError("the p3-whir table document carries a Constant folding factor; got "
                              f"{type(asked.folding).__name__}")
        self.num_variables = stacked_arity(self.shapes, asked.folding.k)
        resolved = resolve(self.num_variables, asked, self.field, explicit=params is not None, flag="pow_bits")
        self.pow_note: str | None = resolved.note
        self.params: P3Parameters = resolved.params
        self.config: P3WhirConfig = resolved.config
        choice = select_backend(backend, self.config, storage)
        self.backend: Backend = choice.backend
        self.backend_reason = choice.reason
        self._owns_backend = not isinstance(backend, Backend)
        if not self.backend.proves_tables:
            name = self.backend.name
            if self._owns_backend:
                self.backend.close()
            if backend != "auto":
                raise ConfigError(f"the {name} backend does not prove stacked tables yet (issue 38 item 2); use "
                                  "backend='cpu' or 'auto'")
            self.backend_reason = f"auto: {name} does not prove stacked tables yet, so the cpu backend"
            self.backend = select_backend("cpu", self.config, storage).backend
        for t, entry in enumerate(self._columns):
            if isinstance(entry, _OnDevice):
                self._columns[t] = self._adopt(t, entry)

    def _adopt(self, t: int, entry: "_OnDevice") -> DeviceTables:
        """Device buffer ``t`` as the backend's device table (``Backend.device_table``: its device, STORAGE
        usage and size checked; one-line ``ConfigError`` naming the table)."""
        try:
            table = self.backend.device_table(entry.buffer, entry.shape[0] * entry.shape[1], f"table {t}")
        except ConfigError:
            if self._owns_backend:
                self.backend.close()
            raise
        return DeviceTables(table, entry.shape)

    def close(self) -> None:
        """Close the backend this object opened (a ``Backend`` passed in is left to its owner); idempotent.
        Commitments made here must not be opened afterwards."""
        if self._owns_backend:
            self.backend.close()

    def __enter__(self) -> "P3Tables":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def commit(self) -> P3TablesCommitment:
        """Stack, encode and Merkle-commit the tables once (module contract)."""
        start = time.perf_counter()
        prover = P3TablesProver(self.config, self.field, self.backend, TablesProtocol(self.shapes), self.layout)
        data = prover.commit(self._columns, self._col_major)
        seconds = {**prover.timer.seconds, "total": time.perf_counter() - start}
        return P3TablesCommitment(prover, data, self.layout, seconds)

    def prove(self, batches=None, points=None) -> P3TablesProofDocument:
        """Commit and open in one proof (module contract): byte for byte ``commit().open(batches, points)``, with
        no round trip between the two and nothing held afterwards; on a GPU backend a shape proved before is
        replayed, commitment included."""
        protocol, order = _protocol(self.shapes, batches)
        monty = _prescribed_points(points, protocol, order, self.config, self.field)
        prover = P3TablesProver(self.config, self.field, self.backend, protocol, self.layout)
        start = time.perf_counter()
        proved = prover.prove_tables(self._columns, monty, self._col_major)
        seconds = {**prover.timer.seconds, "total": time.perf_counter() - start}
        spec = TablesSpec(protocol, self.layout, "transcript" if points is None else "prescribed")
        return P3TablesProofDocument(spec, self.config, proved, seconds)

    def expected(self, batches=None, prescribed: bool = False) -> P3Expected:
        """What a verifier of these tables opened as ``batches`` (as ``open`` takes them) expects."""
        if not isinstance(prescribed, bool):
            raise ConfigError(f"prescribed: True or False, got {prescribed!r:.40}")
        protocol, _ = _protocol(self.shapes, batches)
        points = "prescribed" if prescribed else "transcript"
        return P3Expected(self.config, tables=TablesSpec(protocol, self.layout, points))
