"""Zero-knowledge proofs a user makes: ``ZkOptions`` and ``P3ZkTables`` (the hiding PCS over stacked tables, the
oracle's ``prove-tables --zk`` composition; one polynomial is one table of one column), returning a
``P3ZkProofDocument`` (a hiding ``p3-whir-oracle/v2`` document) that ``whirgpu.verify`` / ``is_valid`` read.

Contracts (canonical field elements in and out):
- ``ZkOptions(ell_zk=4, mask_log_inv_rate=1, mask_seed=None)``: upstream's ``ZkParameters`` (defaults: upstream's
  tests) and where the masks come from: ``mask_seed`` None (normal use) is the operating system's CSPRNG, an
  integer a seeded, reproducible and NOT hiding proof (``zk.randomness``). Bad values are ``ConfigError``s with
  upstream's error names (``MaskLengthTooSmall``, ``MaskRateTooHigh``, ``RandomnessExceedsSlack``, ...).
- ``P3ZkTables(tables, *, orient, params=None, field="koalabear", zk=ZkOptions(), backend="cpu")``: ``tables``,
  ``orient``, ``field`` as ``P3Tables`` takes them (host arrays only); ``params`` None is upstream's example at
  starting rate 2 (upstream's zk tests' rate: at the example's rate 1 ``ZkWhirConfig::new`` refuses most sizes with
  ``RandomnessExceedsSlack``), its budget raised where upstream refuses it (``pow_note``); given ``P3Parameters`` are
  used exactly. The layout is prefix (the only one HidingWhirPcs has). ``backend`` "cpu" or "auto" (which then
  means cpu): the numpy reference; a GPU backend's name ("wgpu", "dawn", "metal", "msl-cpu") or a ``Backend``:
  ``zk.backend_prover.ZkBackendProver``, the same bytes with the size-2^n work on that backend (host-driven: not
  yet one launch program); ``close()`` (or a ``with`` block) closes a backend it opened. ``config`` is the
  derived ``ZkWhirConfig``, ``pow_note`` as ``P3Prover``'s. ``expected(batches=None)``: the ``P3Expected`` a
  verifier passes to ``whirgpu.verify``.
- ``P3ZkTables.prove(points, batches=None, seed=None)`` -> ``P3ZkProofDocument``: ``batches`` None (one batch per
  table, every column) or the oracle's ``--open`` text or ``OpeningBatch``es, current columns only (a ``next``
  column is refused: HidingWhirPcs opens point evaluations); ``points`` one (m_b, 4) array of canonical EF
  coefficients per batch (m_b = the table's committed arity) — HidingWhirPcs opens at the caller's points only.
  Each column c of batch b is opened at p_b lifted by c's selector bits (``zk.tables``). ``seed``: an instance
  seed to record in ``params.seed`` (None, the default: none recorded; the columns are the caller's own).
- ``P3ZkProofDocument``: ``tree`` (``zk.document_write``), ``to_json()``, ``dumps()`` (the oracle's compact
  text), ``write(path)`` (atomic), ``seeded`` (True when the masks came from ``mask_seed``), ``phase_seconds``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field as dataclass_field

import numpy as np

from ....canonical import integer_array
from ....errors import ConfigError
from ....field import Field
from ....files import write_atomic
from ....ref.field_np import field_ops
from ..config import P3Parameters
from ..defaults import EXAMPLE_FIELD, as_field, example_parameters, resolve
from ..tables.document_checks import stacked_arity
from ..tables.document_write import dumps_tables_document
from ..tables.shapes import OpeningBatch, TableShape, TablesProtocol
from ..tables.spec import MAX_LOG_ROWS, TablesSpec, default_open, parse_open
from .. import prover as _inner_prover  # noqa: F401 - registers the planned proof select_backend plans with
from .config import ZkWhirConfig
from .document_write import zk_document_tree
from .prover import zk_prove
from .randomness import check_mask_seed, mask_rng
from .tables import zk_tables_statement

CPU_BACKENDS = ("cpu", "auto")
API_DEFAULT_RATE = 2  # upstream's zk tests' starting rate; the example's 1 leaves too little slack for the randomness

__all__ = ["P3ZkProofDocument", "P3ZkTables", "ZkOptions", "zk_config_for"]


@dataclass(frozen=True)
class ZkOptions:
    """Upstream's ``ZkParameters`` and the mask seed (None: the OS CSPRNG; see the module contract)."""

    ell_zk: int = 4
    mask_log_inv_rate: int = 1
    mask_seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("ell_zk", "mask_log_inv_rate"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 32:
                raise ConfigError(f"{name} {value!r:.40}: a non-negative integer is expected")
        check_mask_seed(self.mask_seed)


def zk_config_for(shapes, params: P3Parameters | None, field: Field, options: ZkOptions, explicit: bool):
    """(ZkWhirConfig, pow note) for the stacked arity ``shapes`` derive under ``params`` (None: upstream's example at
    starting rate ``API_DEFAULT_RATE``, its budget raised where upstream refuses it, as ``P3Prover``)."""
    asked = example_parameters(rate=API_DEFAULT_RATE) if params is None else params
    n = stacked_arity(shapes, asked.folding.k)
    resolved = resolve(n, asked, field, explicit=explicit, flag="pow_bits")
    try:
        config = ZkWhirConfig.derive(n, resolved.params, field, options.ell_zk, options.mask_log_inv_rate)
    except ConfigError as exc:
        if "RandomnessExceedsSlack" not in str(exc):
            raise
        raise ConfigError(f"{exc} (the queries need more randomness rows than the codeword has spare at n = {n}, "
                          f"rate {resolved.params.starting_log_inv_rate}: raise starting_log_inv_rate, or lower the "
                          "security level)") from None
    return config, resolved.note


def zk_backend(backend, config: ZkWhirConfig):
    """(the ``Backend`` the hiding prover's heavy work runs on, or None for the numpy reference; whether it was
    opened here): "cpu" and "auto" are the reference, a name is ``select_backend``'s, a ``Backend`` is used."""
    if isinstance(backend, str) and backend in CPU_BACKENDS:
        return None, False
    from ....backends import select_backend  # noqa: PLC0415 - the GPU runtimes are optional dependencies
    from ....backends.base import Backend  # noqa: PLC0415

    if not isinstance(backend, (str, Backend)):
        raise ConfigError(f"backend: a backend name or a Backend, got {type(backend).__name__}")
    return select_backend(backend, config.inner).backend, not isinstance(backend, Backend)


def _columns(tables, orient: str, field: Field) -> tuple[list, tuple[TableShape, ...]]:
    if orient not in ("rows", "columns"):
        raise ConfigError(f"orient={orient!r:.30}: 'rows' for (rows, columns) arrays, 'columns' for (columns, rows)")
    if isinstance(tables, np.ndarray) or not isinstance(tables, (list, tuple)) or not tables:
        raise ConfigError("tables: expected a non-empty list of 2-D arrays, one per table (one table: [trace])")
    columns, shapes = [], []
    for t, table in enumerate(tables):
        array = integer_array(table, f"table {t}")
        if array.ndim != 2 or 0 in array.shape:
            raise ConfigError(f"table {t}: expected a non-empty 2-D array, got shape {array.shape}")
        array = array.T if orient == "rows" else array
        width, rows = array.shape
        if rows & (rows - 1) or rows > 1 << MAX_LOG_ROWS:
            raise ConfigError(f"table {t}: {rows} rows, not a power of two up to 2^{MAX_LOG_ROWS} (orient={orient!r})")
        if int(array.min()) < 0 or int(array.max()) >= field.P:
            raise ConfigError(f"table {t}: values must be canonical field elements in [0, {field.P})")
        columns.append(np.ascontiguousarray(array, dtype=np.uint32))
        shapes.append(TableShape(rows.bit_length() - 1, width))
    return columns, tuple(shapes)


def _batches(batches, shapes) -> tuple[OpeningBatch, ...]:
    if batches is None:
        found = default_open(shapes)
    elif isinstance(batches, str):
        found = parse_open(batches, shapes, "batches")
    else:
        found = tuple(b if isinstance(b, OpeningBatch) else OpeningBatch(*b) for b in batches)
    if any(b.next for b in found):
        raise ConfigError("batches: zero-knowledge proofs open current columns only; a next-row opening is not a "
                          "point evaluation of the committed polynomial (HidingWhirPcs has none)")
    return tuple(sorted(found, key=lambda b: b.table))


@dataclass
class P3ZkProofDocument:
    """A hiding proof document (see the module contract)."""

    tree: dict
    seeded: bool
    phase_seconds: dict = dataclass_field(default_factory=dict)

    def to_json(self) -> dict:
        return self.tree

    def dumps(self) -> str:
        return dumps_tables_document(self.tree)

    def write(self, path) -> int:
        data = self.dumps().encode()
        write_atomic(path, data)
        return len(data)


def prove_zk_statement(config: ZkWhirConfig, spec: TablesSpec, columns, local_points, mask_seed: int | None,
                       seed: int | None = None, witness: bool = False, backend=None) -> P3ZkProofDocument:
    """Stack ``columns`` (canonical, one (columns, rows) array per table), lift ``local_points`` (Montgomery, one per
    batch), prove with masks from ``zk.randomness.mask_rng(mask_seed)`` (on ``backend`` through
    ``ZkBackendProver``, or the numpy reference for None) and write the document tree."""
    field = config.inner.field
    ops = field_ops(field)
    start = time.perf_counter()
    # On a backend the stacked polynomial goes up as canonical words and is converted there (upload_canonical):
    # the host's conversion of 2^24 words takes about a second. The reference and witness documents take it in
    # Montgomery form.
    canonical = backend is not None and not witness
    stacked_columns = [np.ascontiguousarray(c, np.uint32) if canonical else ops.to_monty(np.asarray(c, np.uint64))
                       for c in columns]
    polynomial, points, point_map = zk_tables_statement(spec.protocol, config.fold(0), stacked_columns,
                                                        local_points, field)
    stacked = time.perf_counter()
    if backend is None:
        commitment, proof = zk_prove(config, field, polynomial, points, mask_rng(mask_seed))
    else:
        from .backend_prover import ZkBackendProver  # noqa: PLC0415 - a verifier reading documents needs none of it

        commitment, proof = ZkBackendProver(backend, config, field).prove(polynomial, points, mask_rng(mask_seed),
                                                                          canonical=canonical)
    proved = time.perf_counter()
    tree = zk_document_tree(config, spec, commitment, proof, local_points, point_map, seed, mask_seed,
                            columns if witness else None, polynomial if witness else None)
    return P3ZkProofDocument(tree, mask_seed is not None,
                             {"stack": stacked - start, "prove": proved - stacked, "document": time.perf_counter()
                              - proved})


class P3ZkTables:
    """Hiding commitments to stacked tables, opened at the caller's points (see the module contract)."""

    def __init__(self, tables, *, orient: str, params: P3Parameters | None = None, field: str | Field = EXAMPLE_FIELD,
                 zk: ZkOptions | None = None, backend="cpu"):
        self.field = as_field(field)
        self.zk = ZkOptions() if zk is None else zk
        if not isinstance(self.zk, ZkOptions):
            raise ConfigError(f"zk: expected ZkOptions, got {type(self.zk).__name__}")
        self.columns, self.shapes = _columns(tables, orient, self.field)
        self.config, self.pow_note = zk_config_for(self.shapes, params, self.field, self.zk, params is not None)
        self.backend, self._owns_backend = zk_backend(backend, self.config)
        self.backend_name = "cpu" if self.backend is None else self.backend.name
        self.closed = False

    def close(self) -> None:
        """Close the backend this object opened (a named GPU backend); idempotent."""
        self.closed = True
        if self.backend is not None and self._owns_backend:
            self.backend.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def expected(self, batches=None):
        """The ``P3Expected`` a verifier of these tables opened as ``batches`` passes to ``whirgpu.verify``: the
        inner WHIR configuration, the shapes, the prefix layout, the schedule, prescribed points."""
        from ..expectations import P3Expected  # noqa: PLC0415

        return P3Expected(self.config.inner, tables=self._spec(batches))

    def _spec(self, batches) -> TablesSpec:
        return TablesSpec(TablesProtocol(self.shapes, _batches(batches, self.shapes)), "prefix", "prescribed")

    def prove(self, points, batches=None, seed: int | None = None) -> P3ZkProofDocument:
        if self.closed:
            raise ConfigError("P3ZkTables.prove after close()")
        spec = self._spec(batches)
        protocol = spec.protocol
        arities = protocol.batch_log_rows(self.config.fold(0))
        if isinstance(points, (str, bytes)) or not hasattr(points, "__len__") or len(points) != len(arities):
            raise ConfigError(f"points: one (m, 4) array of canonical EF coefficients per batch ({len(arities)}); "
                              "HidingWhirPcs opens at the caller's points only")
        ops = field_ops(self.field)
        local = []
        for b, (point, m) in enumerate(zip(points, arities)):
            array = integer_array(point, f"points[{b}]")
            if array.shape != (m, 4):
                raise ConfigError(f"points[{b}]: expected shape ({m}, 4) (the table's committed arity), got "
                                  f"{array.shape}")
            if int(array.min()) < 0 or int(array.max()) >= self.field.P:
                raise ConfigError(f"points[{b}]: canonical field elements in [0, {self.field.P}) are expected")
            local.append(ops.to_monty(array.astype(np.uint64)))
        return prove_zk_statement(self.config, spec, self.columns, local, self.zk.mask_seed, seed,
                                  backend=self.backend)
