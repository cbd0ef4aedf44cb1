"""The primitives the WHIR prover asks of a backend, on buffers that stay on the backend's device.

Layouts (shared by every backend, so they are interchangeable and comparable word for word):
- A *table* is a multilinear evaluation table: base (2^n,) or EF (2^n, 4) uint32 Montgomery words, x_0 = MSB.
- *Weights* are an EF table of the same length as the table they weight.
- A *commitment* is the Reed-Solomon codeword matrix of a table plus its Merkle tree (see ``commit``).
- Host-side values crossing this interface (points, challenges, roots, answers) are numpy uint32 Montgomery
  arrays; EF scalars have shape (4,).

The protocol never touches a buffer's contents except through these calls and ``download``.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..canonical import first_non_canonical, non_canonical  # noqa: F401 - part of the backend interface
from ..errors import ConfigError
from ..field import BABYBEAR, Field
from ..devices.limits import DeviceLimits, StorageMode  # noqa: F401 - part of the backend interface
from ..ref import field_np as F


# Storage policies of the GPU backend (``Prover(storage=...)``, ``--storage``, ``WHIRGPU_STORAGE``): which
# StorageMode each buffer gets. hybrid: buffers the host writes or reads (uploaded tables and points, partials,
# roots, openings, PoW results) SHARED, intermediates (codewords, Merkle levels, folded tables, weights, factor
# tables, scratch) PRIVATE; shared / private: every buffer in that mode (to measure the difference).
class DeviceTables:
    """A table already on a backend's device, for ``stack_columns``: ``table`` what ``device_table`` returned (the
    caller's buffer of canonical words, read in place, never written) and ``shape`` the array it holds, (rows,
    columns) row-major or (columns, rows) as the entry's col_major says."""

    def __init__(self, table, shape: tuple[int, int]):
        self.table, self.shape = table, (int(shape[0]), int(shape[1]))


STORAGE_POLICIES = ("hybrid", "shared", "private")
DEFAULT_STORAGE = "hybrid"
STORAGE_ENV = "WHIRGPU_STORAGE"
CPU_FALLBACK = "using the numpy reference"  # the end of every reason auto gives for choosing the CPU


def resolve_storage(policy: str | None = None) -> str:
    """The storage policy to use: ``policy``, else ``WHIRGPU_STORAGE``, else hybrid; a ConfigError naming the
    choices for anything else."""
    where = "storage"
    if policy is None:
        policy = os.environ.get(STORAGE_ENV) or DEFAULT_STORAGE
        where = STORAGE_ENV
    if not isinstance(policy, str) or policy.lower() not in STORAGE_POLICIES:
        raise ConfigError(f"{where}={policy!r} is not a storage policy; choose one of {', '.join(STORAGE_POLICIES)}")
    return policy.lower()


def policy_mode(policy: str, host_facing: bool) -> StorageMode:
    """The StorageMode of a buffer under ``policy``; ``host_facing``: the host writes or reads it (an input or an
    output), as opposed to an intermediate the device alone touches."""
    if policy == "shared":
        return StorageMode.SHARED
    if policy == "private":
        return StorageMode.PRIVATE
    return StorageMode.SHARED if host_facing else StorageMode.PRIVATE


@dataclass(frozen=True)
class TableLayout:
    """The backend's part of a protocol profile: the field of every table and how tables are folded, encoded,
    hashed and opened. The default is the whir-p3-metal profile's; ``P3_WHIR_LAYOUT(field)`` is upstream
    Plonky3 p3-whir's.

    - ``variable_order``: "prefix" binds x_0 (the index MSB) first, and a table is committed as 2^k contiguous
      column blocks (``Backend.commit``); "suffix" binds x_{n-1} (the index LSB) first, and a table of 2^n entries
      is committed as the row-major (2^(n-k), 2^k) matrix (``ref.p3_codeword``).
    - ``round_message``: what a sumcheck round sends for its degree-2 polynomial h: "h2" = [h(0), h(2)]
      (whir-p3-metal) or "c_inf" = [h(0), c_inf], c_inf its X^2 coefficient (p3-whir, in either order: upstream's
      ``SuffixProver`` and ``PrefixProver``). The suffix order exists only with "c_inf".
    - ``leaf_width``: the Poseidon2 width of the leaf sponge, 16 (rate 8) or 24 (rate 16); nodes are the width-16
      compression either way. The permutations are the field's SmallRng(1) constants.
    - ``openings``: "paths" (``open_rows`` returns a full path per row, (q, depth, 8)) or "pruned" (one pruned
      multiproof for the sorted distinct rows, (s, 8): ``ref.merkle_pruned.prune``).
    - ``length_tagged``, ``distinct_queries``: the challenger a backend that keeps the transcript on its device
      speaks (``protocol.transcript.DuplexChallenger(length_tagged=)``, ``query_indices.distinct_query_indices``);
      the host transcript the prover hands ``begin_proof`` is already that challenger."""

    field: Field = BABYBEAR
    variable_order: str = "prefix"
    leaf_width: int = 16
    openings: str = "paths"
    length_tagged: bool = False
    distinct_queries: bool = False
    round_message: str = "h2"

    def __post_init__(self) -> None:
        if self.variable_order not in ("prefix", "suffix"):
            raise ConfigError(f"variable_order must be 'prefix' or 'suffix', got {self.variable_order!r}")
        if self.leaf_width not in (16, 24):
            raise ConfigError(f"leaf_width must be 16 or 24, got {self.leaf_width!r}")
        if self.openings not in ("paths", "pruned"):
            raise ConfigError(f"openings must be 'paths' or 'pruned', got {self.openings!r}")
        if self.round_message not in ("h2", "c_inf"):
            raise ConfigError(f"round_message must be 'h2' or 'c_inf', got {self.round_message!r}")
        if self.suffix and self.round_message != "c_inf":
            raise ConfigError("the suffix variable order sends [h(0), c_inf] round messages (round_message='c_inf')")

    @property
    def suffix(self) -> bool:
        return self.variable_order == "suffix"

    @property
    def draws_points(self) -> bool:
        """The statement of the profile speaking this layout draws its points from the transcript (one sampled z
        each) and observes its claims after the OOD answers: upstream p3-whir's, in either variable order (its
        challenger is the length-tagged one)."""
        return self.length_tagged


DEFAULT_LAYOUT = TableLayout()


def interleave_columns_host(table: np.ndarray, randomness: np.ndarray, log_folding: int, rows: int) -> np.ndarray:
    """``Backend.interleave_columns`` on host arrays: (2^log_folding rows[, 4])."""
    table, randomness = np.asarray(table, np.uint32), np.asarray(randomness, np.uint32)
    width, tail = 1 << log_folding, table.shape[1:]
    m, t = table.shape[0] >> log_folding, randomness.shape[0] >> log_folding
    if m << log_folding != table.shape[0] or t << log_folding != randomness.shape[0] or m + t > rows \
            or rows & (rows - 1) or randomness.shape[1:] != tail:
        raise ValueError(f"interleave_columns: {table.shape[0]} entries and {randomness.shape[0]} randomness "
                         f"entries of shape {randomness.shape[1:]} do not make 2^{log_folding} columns of {rows}")
    out = np.zeros((width, rows) + tail, np.uint32)
    out[:, :m] = table.reshape((width, m) + tail)
    out[:, m:m + t] = randomness.reshape((width, t) + tail)
    return out.reshape((width * rows,) + tail)


def P3_WHIR_LAYOUT(field: Field, variable_order: str = "suffix") -> TableLayout:  # noqa: N802 - a constant
    """Upstream p3-whir's layout over ``field``: ``variable_order`` "suffix" (``SuffixProver``: row-major
    codewords, the default and the single-column example's) or "prefix" (``PrefixProver``: 2^k contiguous column
    blocks), [h(0), c_inf] messages, width-24 leaves, pruned openings, the length-tagged challenger drawing
    distinct queries."""
    return TableLayout(field, variable_order, 24, "pruned", True, True, "c_inf")


@dataclass
class DeviceBuffer:
    """A backend-owned array. ``handle`` is backend-specific; ``shape`` is the logical numpy shape (uint32)."""

    handle: Any
    shape: tuple[int, ...]
    mode: StorageMode = StorageMode.PRIVATE

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * 4

    @property
    def is_ext(self) -> bool:
        return len(self.shape) == 2


@dataclass
class Commitment:
    """A committed table: ``root`` (8,) Montgomery; ``height`` rows of ``width`` field elements per leaf
    (EF leaves are flattened c0..c3 per element). ``handle`` keeps the codeword and tree on the device."""

    root: np.ndarray
    height: int
    width: int
    is_ext: bool
    handle: Any = None


@dataclass
class TransferStats:
    """Bytes moved per proof: ``uploaded`` host -> device, ``downloaded`` device -> host, ``copied`` device ->
    device (batch copies and the staging blits behind uploads to / readbacks from buffers the host cannot map).
    The prover starts every proof with fresh counters."""

    uploaded: int = 0
    downloaded: int = 0
    copied: int = 0


class PowRangeExceeded(RuntimeError):
    """A device proof-of-work search found no nonce in the range it encoded (odds below e^-32 per grind); the
    prover proves again with ``backend.pow_full_range = True``."""


class Backend(ABC):
    """The prover's view of a compute device. Every method is deterministic and bit-exact with ``CpuBackend``.

    Inside a proof (between ``begin_proof`` and ``end_proof``) values crossing this interface are *handles*: on
    the cpu backend host numpy arrays, on a GPU backend ``DeviceValue``s that stay on the device until
    ``end_proof`` reads the proof back. Outside a proof every method takes and returns host arrays."""

    name: str = "abstract"
    storage: str | None = None  # the storage policy in use (STORAGE_POLICIES); None: no device memory (cpu)
    layout: TableLayout = DEFAULT_LAYOUT  # the running proof's (``begin_proof`` sets it from the shape)
    # Runs the p3-whir stacked-tables prover (``profiles.p3_whir.tables``): it has ``stack_columns``,
    # ``evaluate_columns``, ``column_weights``, ``adopt_root`` and a prefix-order sumcheck with [h(0), c_inf] messages
    # (the cpu backend and the GPU backends).
    proves_tables: bool = False

    def __init__(self) -> None:
        self.stats = TransferStats()
        self.timer = None  # a prover's PhaseTimer, when one wants the backend's sub-phases (ntt, merkle)
        # Held for the whole of one proof (``WhirProver``): proofs of several threads on one backend queue here.
        # Reentrant, so a caller may hold it across several proofs (a batch) while each proof takes it again.
        self.proof_lock = threading.RLock()

    def phase(self, name: str):
        """Context manager timing a backend-internal phase into ``self.timer`` (no-op without one)."""
        return self.timer.phase(name) if self.timer is not None else nullcontext()

    # -- buffers -------------------------------------------------------------------------------------------
    @abstractmethod
    def upload(self, array: np.ndarray, mode: StorageMode = StorageMode.SHARED) -> DeviceBuffer:
        """Copy a uint32 Montgomery array to the device."""

    def upload_canonical(self, source) -> DeviceBuffer:
        """A base table of Montgomery words from ``source``, 2^n **canonical** words: a C-contiguous uint32 array,
        or a table on this backend's device (``device_table``). A word >= p is refused with ``ConfigError``
        (``non_canonical``: the first such index and its value), here or, on a backend that checks on the device
        inside a proof, at ``end_proof``, before any proof value is returned. Default: checked and converted on
        the host, then uploaded."""
        if not isinstance(source, np.ndarray):
            raise ConfigError(f"the {self.name} backend takes a host array here, not {type(source).__name__}")
        field = self.layout.field
        index = first_non_canonical(source, field.P)
        if index is not None:
            raise non_canonical(index, int(source[index]), prime=field.P)
        return self.upload(F.field_ops(field).to_monty(source) if field is not BABYBEAR else F.to_monty(source))

    def device_table(self, buffer, n_words: int, what: str = "evaluations"):
        """A table of ``n_words`` canonical u32 words that already lies in ``buffer`` on this backend's device,
        for ``upload_canonical`` or ``stack_columns`` (``DeviceTables``; no host transfer); ``what`` names it in a
        refusal. ConfigError for anything this backend cannot read so."""
        raise ConfigError(f"a device buffer ({type(buffer).__name__}) can only be proved by a wgpu or dawn backend "
                          f"on the buffer's own device; this prover runs on {self.name}")

    @abstractmethod
    def download(self, buffer: DeviceBuffer) -> np.ndarray:
        """Copy a buffer back to the host as a uint32 array of ``buffer.shape``."""

    # -- commitment ----------------------------------------------------------------------------------------
    @abstractmethod
    def commit(self, table: DeviceBuffer, log_folding: int, log_height: int) -> Commitment:
        """Reed-Solomon encode and Merkle-commit a table of 2^nv entries.

        The table is viewed as 2^k columns (k = log_folding) of 2^(nv-k) coefficients each (column j = entries
        j*2^(nv-k) .. (j+1)*2^(nv-k)-1), zero-padded to 2^log_height rows and NTT'd per column (per EF
        coefficient for EF tables): M[i][j] = Σ_t table[j 2^(nv-k) + t] omega^(i t). Leaf i = row i (2^k base
        elements, or 2^k EF elements flattened to 4*2^k base), Merkle-hashed with Poseidon2.
        Under a suffix ``layout`` column j is the entries j, j + 2^k, j + 2 * 2^k, ... instead (the row-major
        matrix of ``ref.p3_codeword``) and leaves are hashed by the layout's leaf sponge."""

    def interleave_columns(self, table: DeviceBuffer, randomness: np.ndarray, log_folding: int,
                           rows: int) -> DeviceBuffer:
        """A new table of 2^log_folding columns of ``rows`` entries (the prefix layout's column blocks, as
        ``commit`` reads them): column b = the table's column b (entries b m .. b m + m - 1, m = len(table) >>
        log_folding) ‖ randomness[b t .. b t + t - 1] (t = len(randomness) >> log_folding; a host array of the
        table's element kind, base (2^k t,) or EF (2^k t, 4)) ‖ zeros; ``rows`` a power of two >= m + t. Committed
        at a height >= rows this is the hiding PCS's interleaved encoding (``profiles.p3_whir.zk.oracles``): a
        column's codeword does not change when the column is zero-padded further. Default: on the host
        (``interleave_columns_host`` between a download and an upload)."""
        return self.upload(interleave_columns_host(self.download(table), randomness, log_folding, rows))

    def stack_columns(self, num_variables: int, tables) -> DeviceBuffer:
        """The stacked polynomial (2^num_variables Montgomery words, zero where no column lies) of tables given as
        the user holds them: each (array, first_slot, m, prefix, col_major[, name]), ``array`` the table's uint32
        words, (rows, columns) row-major, or with ``col_major`` (columns, rows); column c sits in slot s =
        first_slot + c: row r at (s << m) + r, or with ``prefix`` at (r << (num_variables - m)) | bitrev(s)
        (``profiles.p3_whir.tables.stacking``). Every word must be canonical (< p): a word >= p is a
        ``non_canonical`` ``ConfigError`` naming ``name[i]`` (default "columns"), i its index in ``array`` as given
        (row-major: r * columns + c), here or, on a backend that checks on the device, when the proof ends (the
        caller checks nothing: a table is read once, where it is stacked). Default: checked and stacked on the
        host, then uploaded."""
        field = self.layout.field
        out = np.zeros(1 << num_variables, np.uint32)
        for array, first_slot, m, prefix, col_major, *name in tables:
            columns = np.asarray(array, np.uint32)
            index = first_non_canonical(columns.reshape(-1), field.P)
            if index is not None:
                raise non_canonical(index, int(columns.reshape(-1)[index]), name[0] if name else "columns",
                                    prime=field.P)
            columns = columns if col_major else columns.T
            bits = num_variables - m
            for c, column in enumerate(columns):
                s, rows = first_slot + c, np.arange(len(column), dtype=np.int64)
                at = (rows << bits) | int(format(s, f"0{bits}b")[::-1] or "0", 2) if prefix else (s << m) + rows
                out[at] = column
        return self.upload(F.field_ops(field).to_monty(out) if field is not BABYBEAR else F.to_monty(out))

    def residency(self, *items) -> tuple:
        """A key equal for two sequences of held items (tables, commitments) exactly when they hold the same
        device storage, so that launches recorded against one are valid against the other (a replayed opening of
        a held commitment, ``replay_proof``). Default: the items' identities."""
        return tuple(id(item) for item in items)

    def adopt_root(self, commitment: Commitment, root: np.ndarray) -> Commitment:
        """A commitment made in an earlier proof, used again in the running one (commit once, open many): its
        ``root`` becomes a value of this proof holding ``root`` (8,) Montgomery words (the proof's input "root" of
        ``replay_proof``); the same object is returned.
        Default: the host array itself."""
        commitment.root = np.asarray(root, np.uint32).reshape(8)
        return commitment

    @abstractmethod
    def open_rows(self, commitment: Commitment, indices: list[int],
                  capacity: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``indices`` of the codeword matrix and their Merkle paths.

        ``capacity``: the most indices a call of this kind can carry (the prover passes the round's query count,
        capped by the folded domain), a sizing hint: a backend that keeps buffers may size them for it, so that
        every proof of one configuration needs the same buffers whatever number of distinct indices it draws.

        Returns values (q, 2^k) base or (q, 2^k, 4) EF, and siblings (q, log_height, 8), leaf level first; under
        a layout of pruned openings, the indices are sorted and distinct and the siblings are the one pruned
        multiproof (s, 8)."""

    # -- multilinear algebra -------------------------------------------------------------------------------
    @abstractmethod
    def evaluate(self, table: DeviceBuffer, point: np.ndarray) -> np.ndarray:
        """The table's multilinear extension at ``point`` (nv, 4) -> EF (4,)."""

    def evaluate_points(self, table: DeviceBuffer, points: np.ndarray) -> np.ndarray:
        """``evaluate`` at each of ``points`` (E, nv, 4) -> (E, 4) EF; a backend may do all in one step (the GPU:
        one session, one read)."""
        points = np.asarray(points, np.uint32)
        return np.array([np.asarray(self.evaluate(table, p), np.uint32).reshape(4) for p in points],
                        np.uint32).reshape(-1, 4)

    def univariate(self, table: DeviceBuffer, z: np.ndarray) -> np.ndarray:
        """sum_b table[b] z^b for an EF point ``z`` (4,) and a base (2^m,) or EF (2^m, 4) table -> EF (4,), b the
        table's index (plain powers: no variable order). Default: downloaded and summed on the host, in the
        running layout's field."""
        ops = F.field_ops(self.layout.field)
        values = np.asarray(self.download(table), np.uint32)
        values = values.reshape(-1, 4) if values.ndim == 2 else ops.ef_from_base(values.reshape(-1))
        powers = ops.ef_powers(np.asarray(z, np.uint32).reshape(4), values.shape[0])
        return np.asarray(ops.ef_sum(ops.ef_mul(values, powers)), np.uint32).reshape(4)

    @abstractmethod
    def eq_weights(self, points: np.ndarray, coefficients: np.ndarray) -> DeviceBuffer:
        """New weights W[b] = Σ_i coefficients[i] * eq(b, points[i]) for points (m, nv, 4), coefficients (m, 4)."""

    @abstractmethod
    def add_constraint_weights(
        self,
        weights: DeviceBuffer,
        eq_points: np.ndarray,
        eq_coefficients: np.ndarray,
        select_vars: np.ndarray,
        select_coefficients: np.ndarray,
        select_capacity: int | None = None,
    ) -> DeviceBuffer:
        """W[b] += Σ_i eq_coefficients[i] eq(b, eq_points[i]) + Σ_m select_coefficients[m] select_vars[m]^b.

        eq_points (m, nv, 4), eq_coefficients (m, 4), select_vars (q,) base, select_coefficients (q, 4).
        ``select_capacity``: the most select constraints a call of this kind can carry, a sizing hint (as
        ``open_rows``'s ``capacity``). May update in place; returns the buffer to use from now on."""

    def add_next_weights(self, weights: DeviceBuffer, points: np.ndarray, windows: np.ndarray,
                         coefficients: np.ndarray) -> DeviceBuffer:
        """W[b] += Σ_j coefficients[j] eq(b_out, points[j]_out) next(b_win, points[j]_win): next-row weights.

        points (q, nv, 4) in the table's variable order (x_0 first); windows (q, 2) ints (start, m): the m
        variables x_start .. x_{start+m-1} are the local row index of a column (x_start its most significant bit),
        the others (``_out``, in practice boolean selector coordinates) are matched by eq. ``next`` is the
        repeat-last successor weight of a local point p: next(i, p) = eq(i - 1, p) for i >= 1, plus eq(2^m - 1, p)
        at i = 2^m - 1, so that Σ_i next(i, p) col[i] = Σ_i eq(i, p) col[min(i + 1, 2^m - 1)] (upstream's
        ``eval_next``; ``ref.shift``). coefficients (q, 4). May update in place; returns the buffer to use.
        Default: none (a backend that lacks it cannot prove next-row openings)."""
        raise ConfigError(f"next-row openings are not implemented on the {self.name} backend yet (the cpu backend "
                          f"has them); use backend='cpu'")

    def evaluate_columns(self, table: DeviceBuffer, point, columns) -> np.ndarray:
        """The claims of a batch of columns of ``table`` (base, 2^n words) at one local point (m, 4): columns
        (k, 3) ints (offset, log_stride, next), column c's row i being table[offset + (i << log_stride)] for
        i < 2^m; claim c is Σ_i eq(i, point) col[i], or with ``next`` 1 Σ_i eq(i, point) col[min(i + 1, 2^m - 1)]
        (the repeat-last successor, ``ref.shift``). Returns (k, 4). Default: none (a backend that lacks it cannot
        evaluate stacked tables' claims)."""
        raise ConfigError(f"column claims are not implemented on the {self.name} backend yet; use backend='cpu'")

    def column_weights(self, num_variables: int, batches, coefficients) -> DeviceBuffer:
        """New weights (2^num_variables, 4) for stacked tables' claims: zero, plus for each batch (point (m, 4),
        columns (k, 4) ints (offset, log_stride, next, power)) and i < 2^m: W[offset + (i << log_stride)] +=
        coefficients[power] * (eq(i, point), or with ``next`` 1 the repeat-last successor weight next(i, point),
        ``ref.shift``). The same weights as eq / next-row claims at the lifted points (their selector coordinates
        are boolean). Default: none."""
        raise ConfigError(f"column weights are not implemented on the {self.name} backend yet; use backend='cpu'")

    @abstractmethod
    def sumcheck_round(self, table: DeviceBuffer, weights: DeviceBuffer) -> np.ndarray:
        """[h(0), h(2)] (2, 4) of Σ_b table[b] weights[b] with x_0 free; under a suffix ``layout`` [h(0), c_inf]
        with x_{n-1} free (``ref.sumcheck.suffix_round_message``); under a prefix layout of "c_inf" messages
        [h(0), c_inf] with x_0 free (``ref.sumcheck.prefix_round_message``)."""

    @abstractmethod
    def fold(self, table: DeviceBuffer, weights: DeviceBuffer, r: np.ndarray) -> tuple[DeviceBuffer, DeviceBuffer]:
        """Bind x_0 := r (x_{n-1} under a suffix ``layout``) in table and weights; the new table is EF with half
        the entries."""

    def fold_and_sum(self, table: DeviceBuffer, weights: DeviceBuffer, r: np.ndarray):
        """``fold(table, weights, r)`` then the ``sumcheck_round`` of the folded tables (at least 2 entries):
        (table', weights', sums (2, 4)). A backend may do both in one step (the GPU: one session, one launch)."""
        table, weights = self.fold(table, weights, r)
        return table, weights, self.sumcheck_round(table, weights)

    def sumcheck_rounds(self, table: DeviceBuffer, weights: DeviceBuffer, transcript, rounds: int):
        """``rounds`` sumcheck rounds without proof of work in one step, where the backend can: for each round,
        h = ``sumcheck_round``, observe h, r = ``transcript.sample_ef()``, ``fold`` by r (the loop of
        ``WhirProver._sumcheck``, byte for byte), releasing the tables it folds. Returns (the rounds' h values,
        table, weights), or None to leave the rounds to that loop (the default)."""
        return None

    def masked_rounds(self, table: DeviceBuffer, weights: DeviceBuffer, challenger, plan):
        """The rounds of a masked sumcheck batch (``backends.masked_rounds``: ``plan`` a ``MaskedRoundsPlan``) in
        one step, where the backend can: returns (table, weights, ``MaskedRoundsTrace``) with ``challenger`` (a host
        ``DuplexChallenger``) advanced past the last challenge, the input tables left to the caller; or None to
        leave the rounds to the caller's loop (the default)."""
        return None

    def code_switch(self, table: DeviceBuffer, source: Commitment, challenger, plan):
        """The device part of a code-switching round (``backends.code_switch``: ``plan`` a ``CodeSwitchPlan``,
        ``table`` the residual, ``source`` the commitment the queries open) in one step, where the backend can:
        returns a ``CodeSwitchTrace`` with ``challenger`` (a host ``DuplexChallenger``) advanced past the
        combination challenge; or None to leave it to the caller's steps (the default)."""
        return None

    def query_openings(self, challenger, pow_bits: int, domain_size: int, folding: int, num_queries: int,
                       commitments: list):
        """Proof of work (when ``pow_bits`` > 0), the distinct query draw (``protocol.query_indices.
        distinct_query_indices(challenger, domain_size, folding, num_queries)``) and every commitment's
        ``open_rows`` at the drawn indices, in one step where the backend can (the GPU: one session): returns
        (witness, indices (q,) int64 ascending, [(rows, siblings)] per commitment) with ``challenger`` (a host
        ``DuplexChallenger``) advanced past the draw; or None to leave them to the caller's steps (the default)."""
        return None

    # -- Fiat-Shamir help ----------------------------------------------------------------------------------
    def grind(self, challenger, bits: int) -> np.uint32:
        """Proof of work: the witness with the smallest canonical value; advances ``challenger`` past it."""
        return challenger.grind(bits)

    # -- a whole proof (handles) ---------------------------------------------------------------------------
    pow_full_range: bool = False  # device PoW searches cover every nonce (see PowRangeExceeded)

    def begin_proof(self, shape: "ProofShape", transcript, statement_points: np.ndarray):
        """Start a proof of ``shape``: returns (the transcript the prover drives, the statement points (m, n, 4)
        as a handle). ``transcript`` is the host transcript after the domain separator (``HostTranscript``);
        a backend may keep it or move its state to the device. Sets ``layout`` to the shape's."""
        self.layout = shape.layout
        return transcript, np.asarray(statement_points, np.uint32)

    def end_proof(self, resolve, outputs=()):
        """Finish the proof: returns ``resolve(read)``, ``read`` mapping a handle to its host array (openings to
        (rows, siblings)). ``outputs``: the tables and commitments the proof made that its caller keeps (a
        commitment): a backend that replays the proof later claims the same storage for them again, and the
        recorded ``resolve(read, prover)`` must then return new objects over it."""
        return resolve(lambda value: value)

    def end_proof_deferred(self, resolve) -> Callable[[], Any]:
        """``end_proof`` in two halves, for proofs in flight: finish recording the proof now and return
        ``collect``, which reads it back and returns ``resolve(read)`` (raising what ``end_proof`` raises). The
        backend is free for the next ``begin_proof`` as soon as this returns; ``collect`` must be called, once,
        before this backend is closed, and proofs are collected in the order they were ended. Default: the proof
        is read back at once (nothing runs asynchronously)."""
        result = self.end_proof(resolve)
        return lambda: result

    overlaps_proofs: bool = False  # end_proof_deferred leaves the proof running while the next is recorded

    def record_proof(self, key) -> None:
        """The proof about to begin has the shape ``key`` (a ``backends.program_key.ProgramKey``; None: a proof
        that must not be recorded): a backend that replays may record its launches. Called before every
        ``begin_proof`` of a prover. Default: nothing."""

    def replay_proof(self, key, words: np.ndarray | None, points: np.ndarray, deferred: bool,
                     inputs: dict | None = None, prover=None):
        """Prove ``words`` (2^n canonical uint32; None for a proof of a held table) at ``points`` (m, n, 4)
        Montgomery by replaying the launches recorded for ``key``, returning what ``end_proof`` (``deferred``:
        ``end_proof_deferred``) returns with the recorded proof's ``resolve``; None when there is no such recording
        (the default). ``inputs``: the proof's other inputs by name (``{"root": (8,) words}``: a held commitment's
        root, ``adopt_root``). ``prover``: the prover asking, passed to the recorded ``resolve`` (which then reads
        that prover's state, not the recording prover's)."""
        return None

    def instances_for(self, key, wanted: int) -> int:
        """How many proofs of shape ``key`` ``replay_many`` proves in one set of launches, at most ``wanted``;
        1 (the default): none."""
        return 1

    def replay_many(self, key, items: list, prover=None):
        """Prove each (words, points (m, n, 4) Montgomery, inputs or None) of ``items`` as ``replay_proof`` does,
        all in the same launches: one deferred collect per item, or None (the default) where
        ``instances_for`` is 1."""
        return None

    def drop_batches(self) -> None:
        """Free what ``replay_many`` kept for the next batch (the end of a ``prove_many``). Default: nothing."""

    def abort_proof(self) -> None:
        """Drop a proof that failed while being built."""

    def sync(self) -> None:
        """Wait until the device has done everything recorded so far (profiling); a no-op without a device."""

    @abstractmethod
    def expand_point(self, z, num_variables: int):
        """The point (z^(2^(nv-1)), ..., z^2, z) (nv, 4) of an EF challenge z (an OOD sample), x_0 first."""

    @abstractmethod
    def concat_points(self, points: list):
        """Point arrays (m_i, nv, 4) as one (Σ m_i, nv, 4) array, in order."""

    @abstractmethod
    def challenge_powers(self, x, n: int, queries=None):
        """(n + slots, 4): x^0 .. x^(n-1), then x^n, ... one per query slot of ``queries`` (0 for slots past the
        number of distinct indices drawn)."""

    @abstractmethod
    def domain_points(self, queries, log_folded_domain: int):
        """(slots,) base: generator^index of the folded domain (order 2^log_folded_domain) per query slot."""

    @abstractmethod
    def final_poly(self, table: DeviceBuffer):
        """The final table's coefficients (2^k, 4), as a value of the proof."""

    # -- information ---------------------------------------------------------------------------------------
    @abstractmethod
    def limits(self) -> DeviceLimits:
        """This backend's device limits."""

    def release(self, *items: "DeviceBuffer | Commitment") -> None:
        """The caller is done with these buffers / commitments: a backend may free or reuse their memory now
        (optional; backends free on garbage collection otherwise). Using an item after releasing it is an error."""

    def close(self) -> None:
        """Free every buffer this backend holds and its device; idempotent. The backend must not be used
        afterwards. Default: nothing to free (host memory, collected with the backend)."""


@dataclass(frozen=True)
class QueryStep:
    """One opening of a commitment: ``num_queries`` indices drawn (``slots`` the most distinct ones), rows of
    ``row_words`` words, Merkle paths of ``depth`` siblings."""

    num_queries: int
    slots: int
    row_words: int
    depth: int


@dataclass(frozen=True)
class ProofShape:
    """The sizes of one proof, fixed by its configuration (``protocol.proof_shape`` derives them): backends that
    keep a proof's values on a device plan their buffers from it.

    commitments: (num_variables of the committed table, OOD samples) per commitment, initial first;
    queries: one ``QueryStep`` per opening (each round's, then the final one); sumcheck_rounds and grinds: totals
    (grinds an upper bound); final_variables: the final polynomial has 2^final_variables EF coefficients;
    sumcheck_phases: the rounds of each sumcheck in proof order (the initial one, one per round, the final one), so a
    backend knows which fold is followed by another sumcheck round of the same table (empty: unknown); layout: the
    profile's ``TableLayout`` (queries' ``depth`` is then the tree's; a pruned opening's sibling count varies)."""

    num_variables: int
    n_points: int
    commitments: tuple[tuple[int, int], ...]
    queries: tuple[QueryStep, ...]
    sumcheck_rounds: int
    grinds: int
    final_variables: int
    sumcheck_phases: tuple[int, ...] = ()
    layout: TableLayout = DEFAULT_LAYOUT
