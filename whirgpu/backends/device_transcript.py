"""The Fiat-Shamir transcript of a GPU proof, kept in device memory and advanced by kernels in the command stream.

``DeviceTranscript`` has the interface of the host transcript the prover drives (``observe``, ``sample_ef``,
``sample``, ``grind``, ``sample_queries``, and ``expand`` / ``powers`` for the values derived from a challenge),
but its values are ``DeviceValue``s and nothing is read back: each call appends an op to a short program
(challenger.wgsl / .metal). A program runs as the epilogue of the launch recorded just before it when that launch
is a ``TailLaunch`` (the last workgroup of a reduction observes the sum it wrote and samples the next challenge;
the last workgroup of a grind's search absorbs the witness and runs what follows: the folding challenge, or the
query draw, sort and combination challenge; a commitment's last ``merkle_top`` launch observes
the root and samples the OOD point), else as one ``transcript`` launch recorded just before the next launch of any
other kernel (``flush``). So consecutive transcript steps cost at most one dispatch, and none after a reduction or
a commitment. Bit-exact with ``protocol.transcript.DuplexChallenger`` (the challenger's state layout is in
``device_values``).

Proof of work runs on the device challenger: one ``pow_search`` launch per grind (its program included), a fixed
grid of ``pow_groups`` workgroups (a first wave of 2^(bits + POW_WAVE_SLACK) nonces, at most ``POW_GROUPS``) that
claim batches of ``POW_BATCH`` nonces in increasing order and stop past the smallest hit, bounded to 2^(bits +
POW_COVER_SLACK) nonces (a miss has odds below e^-32) and to ``POW_LAUNCH`` nonces a launch (only a grind of more
than 23 bits takes several launches, the later ones exiting at their first claim after a hit). A search that finds
nothing leaves ``NOT_FOUND`` (never a field word) in its witness slot, and the prover then proves again with
``full_range`` searches that cover every nonce below P.

The proof region is bound to a program's launch as a window holding just the words its ops and the launch itself
touch (they are the last few values recorded), so the region may be larger than one binding.

Variants (``TranscriptVariant``, fixed when the transcript is made; the default is whir-p3's challenger over
BabyBear): the ``field`` whose kernels and width-16 SmallRng(1) Poseidon2 constants the challenger uses
(BabyBear or KoalaBear); ``length_tagged``, upstream Plonky3's duplex (a duplex absorbing k > 0 words zeroes the
rest of the rate and adds k to the first capacity word; PoW candidates are absorbed the same way);
``distinct_queries``, upstream's query sampler (``protocol.query_indices.distinct_query_indices``: one
``sample_uniform_bits`` a draw, drawn again until min(q, folded size) distinct indices, so a query step's count is
always its number of slots). The flags are compile-time constants of every kernel that runs a program (registry
``CH_LENGTH_TAGGED`` / ``CH_DISTINCT_QUERIES``, 0 by default): compose such kernels through
``DeviceTranscript.kernel`` (the variant's field and constants) and bind ``DeviceTranscript.round_constants()``.
The host twin of a variant is ``TranscriptVariant.challenger()`` with ``query_sampler()``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..field import BABYBEAR, P, TWO_ADIC_GENERATORS, Field, field_by_name
from ..ref import field_np as F
from ..runtime.base import RtView
from .device_values import POW_MAX_COUNTERS, DeviceQueries, DeviceValue

OP_OBSERVE, OP_SAMPLE, OP_WITNESS, OP_QUERIES, OP_POW_RESET, OP_EXPAND, OP_POWERS, OP_SORT = 1, 2, 3, 4, 5, 6, 7, 8
OP_DISTINCT = 9  # distinct_queries variants only
BITMAP_MAX_LOG = 10  # DISTINCT keeps a bitmap of folded domains up to 2^10 points (32 scratch words)
OP_SLOTS = {OP_POWERS: 2, OP_SORT: 3}  # program slots of the ops followed by data slots
MAX_OPS = 11  # ops a program holds (the params structs end with 11 op slots: a launch's params are at most 64 words)
POW_WG = 64
POW_BATCH = POW_WG  # nonces a workgroup claims at once, one a thread (pow_search.wgsl)
# Workgroups of one search: 65,536 threads, what it takes to keep a large GPU's ALUs busy on Poseidon2 (8 of
# these groups per SM of a 132-SM H100, about all its registers hold); where fewer fit, the rest start later and
# exit at their first claim once a hit is known. In flight past the smallest hit: at most one batch a group.
POW_GROUPS = 1024
POW_LAUNCH = 1 << 28  # most nonces per pow_search launch: ~85 ms at 3.2 G permutations/s, no driver watchdog
# Whether a grind's searches carry the program after them (witness, challenge, queries): the last workgroup of
# the last search runs it, so a grind is one launch. Off: the search alone and a transcript launch after it (the
# switch the measurements compare). On the H100 (20:4:1, 20 grinds; docs/PERFORMANCE-HISTORY.md) the program adds the
# ~45 us that its transcript launch took, and the search itself runs as fast as without it.
POW_TAIL = True
POW_COVER_SLACK = 5  # a grind's launches cover 2^(bits + this) nonces in all
# A search's first wave (its workgroups' first claims) covers 2^(bits + this) nonces, up to POW_GROUPS workgroups:
# a miss in it has odds e^-4, and a grind of few bits does not pay a wave of POW_GROUPS * POW_BATCH
# permutations (at 12 bits, 16 times the nonces it expects to try) before its first hit is known.
POW_WAVE_SLACK = 2
NOT_FOUND = 0xFFFFFFFF  # a witness slot whose search found no nonce
MAX_QUERY_BITS = 20  # bits one sample_bits call of the query sampler draws at most (query_indices.py)


def query_calls(num_queries: int, log_size: int) -> int:
    """Indices drawn per ``sample_bits`` call by the query sampler (``protocol.query_indices``'s three cases)."""
    if num_queries * log_size <= MAX_QUERY_BITS:
        return num_queries
    per_call = MAX_QUERY_BITS // log_size
    return per_call if per_call >= 2 else 1


def pow_groups(bits: int, batches: int) -> int:
    """Workgroups of a ``pow_search`` launch of ``batches`` nonce batches in a ``bits``-bit grind: enough for a first
    wave of 2^(bits + POW_WAVE_SLACK) nonces, at most POW_GROUPS and ``batches``, at least one."""
    return max(1, min(POW_GROUPS, batches, (1 << (bits + POW_WAVE_SLACK)) // POW_BATCH))


def pow_launches(bits: int, full_range: bool = False, modulus: int = P) -> list[tuple[int, int]]:
    """The (first batch, end batch) of each ``pow_search`` launch of one grind: 2^(bits + POW_COVER_SLACK) nonces
    (every nonce below P = ``modulus`` when ``full_range``) in ranges of at most POW_LAUNCH nonces, so one launch
    for a grind of up to 23 bits. ``bits`` >= 1 (a grind of 0 bits launches nothing)."""
    end_nonce = modulus if full_range else min(modulus, 1 << (bits + POW_COVER_SLACK))
    return [(start // POW_BATCH, -(-min(start + POW_LAUNCH, end_nonce) // POW_BATCH))
            for start in range(0, end_nonce, POW_LAUNCH)]


@dataclass(frozen=True)
class TranscriptVariant:
    """Which challenger a ``DeviceTranscript`` speaks (module docstring): ``field`` (a ``Field`` or its name),
    ``length_tagged`` and ``distinct_queries``. The default is whir-p3's; ``p3(field)`` upstream Plonky3's
    (p3-whir)."""

    field: Field = BABYBEAR
    length_tagged: bool = False
    distinct_queries: bool = False

    def __post_init__(self):
        field = field_by_name(self.field) if isinstance(self.field, str) else self.field
        object.__setattr__(self, "field", field)
        object.__setattr__(self, "length_tagged", bool(self.length_tagged))
        object.__setattr__(self, "distinct_queries", bool(self.distinct_queries))

    @classmethod
    def p3(cls, field: Field | str = BABYBEAR) -> "TranscriptVariant":
        """Upstream Plonky3's challenger and query sampler over ``field`` (the p3-whir profile)."""
        return cls(field, length_tagged=True, distinct_queries=True)

    @property
    def is_default(self) -> bool:
        return self == TranscriptVariant()

    @property
    def constants(self) -> dict[str, int]:
        """The specialisation constants of a kernel that runs a program (registry ``CH_*``; only those set, so the
        default variant's kernels are today's, cached under the same keys)."""
        out = {}
        if self.length_tagged:
            out["CH_LENGTH_TAGGED"] = 1
        if self.distinct_queries:
            out["CH_DISTINCT_QUERIES"] = 1
        return out

    def kernel_args(self, stem: str, constants: dict[str, int] | None = None) -> tuple[dict[str, int], str]:
        """(constants, field name) to compose ``stem`` with: ``constants`` plus the variant's where the stem runs
        programs (registry ``CH_LENGTH_TAGGED``), and the variant's field."""
        from ..kernels.registry import spec  # noqa: PLC0415 - the registry imports nothing of ours

        merged = dict(constants or {})
        if "CH_LENGTH_TAGGED" in spec(stem).constants:
            merged.update(self.constants)
        return merged, self.field.name

    def challenger(self):
        """The host ``DuplexChallenger`` this variant is bit-exact with (fresh, all zero)."""
        from ..protocol.transcript import DuplexChallenger  # noqa: PLC0415
        from ..ref.poseidon2_constants import Poseidon2Constants  # noqa: PLC0415

        return DuplexChallenger(Poseidon2Constants.smallrng_16_24(self.field)[0], length_tagged=self.length_tagged)

    def query_sampler(self):
        """The host query sampler the device's ``sample_queries`` reproduces."""
        from ..protocol import query_indices  # noqa: PLC0415

        return query_indices.distinct_query_indices if self.distinct_queries else query_indices.sample_query_indices


PROOF_WINDOW = object()  # a tail launch's proof binding, made once the program it runs is known


@dataclass
class TailLaunch:
    """A launch that runs the transcript program recorded after it as its epilogue (challenger.wgsl): one or more
    dispatches of ``kernel`` (the windows of one reduction; whichever holds the last workgroup runs the program),
    each ``(buffers, head, n_groups)`` with ``PROOF_WINDOW`` where the proof window goes and ``head`` the params
    before the program's fields. ``out``: the (first, end) proof words the kernel itself writes, whose window-
    relative first word goes to ``head[out_field]``; ``reads``: (field, first, end) proof words the kernel reads,
    the window-relative first word going to ``head[field]``; ``window_field``: where a kernel that binds the whole
    proof region takes the window's first word (its program's offsets relative to it); ``points``: the kernel
    binds the points region (may EXPAND); ``ops``: the launch's own program steps (4-tuples), run before the ops
    recorded after it."""

    kernel: object
    dispatches: list
    out: tuple[int, int] | None = None
    out_field: int = -1
    points: bool = True
    ops: tuple = ()
    reads: tuple = ()
    window_field: int = -1


class DeviceTranscript:
    """The device challenger of one proof (the current session of ``state``, the GPU backend's ``DeviceState``).
    Values returned live in the session's scratch (challenges) or proof (witnesses) region.

    Ops recorded after a ``TailLaunch`` (``defer``) ride on it as its epilogue; otherwise they are one transcript
    launch. Either way they are encoded at ``flush``, which the backend calls before recording any other launch."""

    def __init__(self, state, session, variant: TranscriptVariant | None = None):
        self.state = state
        self.session = session
        self.variant = variant if variant is not None else TranscriptVariant()
        self.pending: list[tuple[int, int, int, int]] = []
        self.proof_words: list[tuple[int, int]] = []  # (first, end) proof words each pending op touches
        self.tail: TailLaunch | None = None
        self.witnesses: list[DeviceValue] = []
        self.full_range = False

    # -- the variant's kernels ------------------------------------------------------------------------------------
    def kernel(self, stem: str, entry: str | None = None, constants: dict[str, int] | None = None):
        """``stem``'s kernel composed for this transcript's variant (its field; its ``CH_*`` constants where the
        stem runs programs): what every launch carrying a program of this transcript must use."""
        constants, field = self.variant.kernel_args(stem, constants)
        return self.state.drivers.kernel(stem, entry, constants or None, field=field)

    def round_constants(self):
        """The round-constant table of the variant's field, the ``p2_rc`` binding of the variant's kernels."""
        if self.variant.field.name == BABYBEAR.name:
            return self.state.round_constants()
        from ..kernels import merkle  # noqa: PLC0415

        return merkle.round_constants(self.state.drivers, self.variant.field.name)

    # -- recording -----------------------------------------------------------------------------------------------
    def _op(self, code: int, y: int = 0, z: int = 0, w: int = 0, data: tuple = (), points: bool = False) -> None:
        """Append op (code, y, z, w) and its ``data`` slots (4-tuples) to the pending program (after the session's
        pending algebra ops, recorded first)."""
        self._algebra_first()
        if points and self.tail is not None and not self.tail.points:
            self.flush()
        own = len(self.tail.ops) if self.tail is not None else 0
        if own + len(self.pending) + 1 + len(data) > MAX_OPS:
            self.flush()
        self.pending.append((code, y, z, w))
        self.pending.extend(data)

    def defer(self, launch: TailLaunch) -> None:
        """Record ``launch`` after what is pending; the ops recorded next become its epilogue."""
        self._algebra_first()
        self.flush()
        self.tail = launch

    def _algebra_first(self) -> None:
        algebra = getattr(self.session, "algebra", None)
        if algebra is not None:
            algebra.flush()

    def flush(self) -> None:
        """Encode the open tail launch with the pending ops, or the pending ops as one transcript launch."""
        tail, self.tail = self.tail, None
        if tail is None and not self.pending:
            return
        ops, self.pending = [list(op) for op in (tail.ops if tail is not None else ()) + tuple(self.pending)], []
        touched, self.proof_words = self.proof_words, []
        if tail is not None and tail.out is not None:
            touched.append(tail.out)
        if tail is not None:
            touched.extend((a, b) for _, a, b in tail.reads)
        regions = self.session.regions
        align = regions.proof.align
        first = min((a for a, _ in touched), default=0) * 4 // align * align  # bytes, aligned down
        end = max((b for _, b in touched), default=1) * 4
        k = 0
        while k < len(ops):  # proof offsets relative to the window (data slots skipped)
            op = ops[k]
            if op[0] == OP_OBSERVE:
                op[1] -= first // 4
            elif op[0] == OP_WITNESS:
                op[2] -= first // 4
            elif op[0] == OP_SORT:
                ops[k + 2][1] -= first // 4
            k += OP_SLOTS.get(op[0], 1)
        program = np.zeros(4 + 4 * MAX_OPS, np.uint32)
        program[0] = len(ops)
        if ops:
            program[4:4 + 4 * len(ops)] = np.asarray(ops, np.uint32).reshape(-1)
        window = RtView(regions.proof.buffer, first, -(-(end - first) // 16) * 16)
        batch = self.session.runtime_batch
        if tail is None:
            batch.dispatch(self.kernel("transcript"),
                           [regions.scratch.buffer, window, regions.points.buffer, self.round_constants()],
                           program, 1)
            return
        for buffers, head, n_groups in tail.dispatches:
            head = np.array(head, np.uint32)
            if tail.out is not None:
                head[tail.out_field] = tail.out[0] - first // 4
            for field, at, _ in tail.reads:
                head[field] = at - first // 4
            if tail.window_field >= 0:
                head[tail.window_field] = first // 4
            buffers = [window if b is PROOF_WINDOW else b for b in buffers]
            batch.dispatch(tail.kernel, buffers, np.concatenate([head, program]), n_groups)

    # -- the challenger's interface ------------------------------------------------------------------------------
    def observe(self, value: DeviceValue) -> None:
        """Absorb a value of the proof region (root, OOD answer, sumcheck values, final polynomial), word by word."""
        if value.buffer is not self.session.regions.proof.buffer:
            raise ValueError("the device transcript observes values of the proof region only")
        if value.words:
            self._op(OP_OBSERVE, value.word, value.words)
            self.proof_words.append((value.word, value.word + value.words))

    def sample_ef(self) -> DeviceValue:
        out = self.session.regions.scratch.take((4,))
        self._op(OP_SAMPLE, out.word, 4)
        return out

    def sample(self) -> None:
        """One base sample, dropped (the checkpoint before query sampling)."""
        self._op(OP_SAMPLE, self.session.regions.discard.word, 1)

    def expand(self, z: DeviceValue, out: DeviceValue, num_variables: int) -> None:
        """``out`` (a (nv, 4) slot of the points region) := (z^(2^(nv-1)), ..., z^2, z)."""
        self._op(OP_EXPAND, z.word, out.offset // 16, num_variables, points=True)

    def powers(self, x: DeviceValue, out: DeviceValue, n: int, slots: int, count: DeviceValue | None) -> None:
        """``out`` ((n + slots, 4) in scratch) := x^0 .. x^(n-1), then x^n .. for each of ``slots`` query slots,
        0 for the slots past the drawn ``count`` (a scratch word; None: every slot counts)."""
        self._op(OP_POWERS, x.word, out.word, count.word if count is not None else NOT_FOUND, data=((n, slots, 0, 0),))

    def grind(self, bits: int) -> DeviceValue:
        """Proof of work on the device: the smallest valid nonce's Montgomery word into a proof slot, absorbed as
        ``check_witness`` does. ``bits`` in [1, 30]."""
        bits = int(bits)
        if not 0 < bits <= 30:
            raise ConfigError(f"proof-of-work bits = {bits} outside [1, 30]")
        regions = self.session.regions
        field = self.variant.field
        launches = (pow_launches(bits, self.full_range) if field.P == P
                    else pow_launches(bits, self.full_range, modulus=field.P))
        if len(launches) > POW_MAX_COUNTERS:
            raise RuntimeError(f"{len(launches)} proof-of-work launches exceed {POW_MAX_COUNTERS} counters")
        # found, one batch counter a launch, the exit ticket: reset by the program before the grind (the searches
        # read the challenger it leaves); the witness op is the last search's epilogue.
        work = regions.scratch.take((2 + len(launches),))
        witness = regions.proof.take(())
        self._op(OP_POW_RESET, work.word, work.word + 1, len(launches) + 1)
        kernel = self.kernel("pow_search", constants={"WG": POW_WG, "TAIL": int(POW_TAIL)})
        buffers = self.state.tail_io(points=True)
        if field.name != BABYBEAR.name:
            buffers[-1] = self.round_constants()
        exit_ticket = work.word + 1 + len(launches)
        for i, (first, end) in enumerate(launches):
            groups = pow_groups(bits, end - first)
            head = [(1 << bits) - 1, work.word, work.word + 1 + i, first, end, exit_ticket, groups, 0]
            self.defer(TailLaunch(kernel, [(buffers, head, groups)]))
            if not POW_TAIL:
                self.flush()  # the search alone: what follows is a transcript launch
        self._op(OP_WITNESS, work.word, witness.word)
        self.proof_words.append((witness.word, witness.word + 1))
        self.witnesses.append(witness)
        return witness

    def sample_queries(self, domain_size: int, folding_factor: int, num_queries: int) -> DeviceQueries:
        """Query indices into the folded domain, drawn, sorted and de-duplicated on the device
        (``protocol.query_indices``: the variant's sampler), with their domain points generator^index."""
        if self.variant.distinct_queries:
            return self._distinct_queries(domain_size, folding_factor, num_queries)
        folded = domain_size >> folding_factor
        log_size = folded.bit_length() - 1
        q = int(num_queries)
        slots = min(q, folded)
        regions = self.session.regions
        raw = regions.scratch.take((q,))
        self._op(OP_QUERIES, raw.word, q | (log_size << 16), query_calls(q, log_size))
        flags = regions.scratch.take((q,))
        indices = regions.scratch.take((slots,))
        count = regions.scratch.take((1,))
        points = regions.scratch.take((slots,))
        proof_count = regions.proof.take((1,))
        generator = int(F.constant(TWO_ADIC_GENERATORS[log_size]))
        self._op(OP_SORT, raw.word, q, flags.word, data=((indices.word, slots, count.word, points.word),
                                                         (generator, proof_count.word, 0, 0)))
        self.proof_words.append((proof_count.word, proof_count.word + 1))
        return DeviceQueries(indices, count, proof_count, points, slots)

    def _distinct_queries(self, domain_size: int, folding_factor: int, num_queries: int) -> DeviceQueries:
        """``distinct_query_indices`` on the device: a DISTINCT op draws the t = min(q, folded size) indices, a SORT
        orders them (count t: every slot filled) and computes their domain points."""
        from ..protocol.query_indices import folded_domain_size  # noqa: PLC0415 - its checks and errors
        from ..protocol.transcript import MAX_SINGLE_SAMPLE_BITS  # noqa: PLC0415

        q = int(num_queries)
        folded = folded_domain_size(domain_size, folding_factor, q)
        log_size = folded.bit_length() - 1
        field = self.variant.field
        if log_size > min(field.TWO_ADICITY, MAX_SINGLE_SAMPLE_BITS[field.name]):  # one draw an index, a generator
            raise ConfigError(f"a folded domain of 2^{log_size} points exceeds {field.name}'s two-adicity")
        target = min(q, folded)
        if target >= 1 << 16:
            raise ConfigError(f"{target} distinct query indices exceed the op's 16-bit count")
        regions = self.session.regions
        raw = regions.scratch.take((target,))
        # a small domain's bitmap: one read a draw where a scan of those found took t reads, one thread, of storage
        bitmap_words = max(1, (1 << log_size) >> 5) if 0 < log_size <= BITMAP_MAX_LOG and target else 0
        bitmap = regions.scratch.take((bitmap_words,)).word if bitmap_words else NOT_FOUND
        self._op(OP_DISTINCT, raw.word, target | (log_size << 16), bitmap)
        flags = regions.scratch.take((target,))
        indices = regions.scratch.take((target,))
        count = regions.scratch.take((1,))
        points = regions.scratch.take((target,))
        proof_count = regions.proof.take((1,))
        generator = field.to_monty_int(field.TWO_ADIC_GENERATORS[log_size])
        # with a bitmap, the SORT reads the indices off it in order (no ranking by counting)
        self._op(OP_SORT, raw.word, target, flags.word, data=((indices.word, target, count.word, points.word),
                                                              (generator, proof_count.word,
                                                               bitmap if bitmap_words else 0, bitmap_words)))
        self.proof_words.append((proof_count.word, proof_count.word + 1))
        return DeviceQueries(indices, count, proof_count, points, target)
