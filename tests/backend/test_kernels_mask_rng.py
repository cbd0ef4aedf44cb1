"""The hiding PCS's mask sampler (``chacha_sample``, ``kernels/mask_rng``) against the numpy reference
(``ref.chacha_rng.StdRng`` + ``ref.rng.random_base``), word for word, both fields, on every runtime. Sizes cross
every threshold: n = 0 and 1, one workgroup, several, more workgroups than the fixture's 7 per grid dimension
(the 2-D grid), more than the scan's WG threads (its chunking, reached with a lowered WG), a first block counter
whose 64-bit add carries into the high word (and one wrapping at 2^64), compaction in several output windows
(a lowered binding limit), and the NOT_FOUND status (W forced too small). The key is read from the status binding
(written there before the launches): next to the status word, at offset 0, far in, through a view, and replayed
launches recorded once draw each newly written key's samples. Output and status words outside the written ones
keep their garbage (the key words their key)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.backend.conftest import RUNTIMES, open_runtime
from tests.conftest import golden_p3_names, load_golden_p3
from whirgpu.field import field_by_name
from whirgpu.kernels import mask_rng
from whirgpu.ref.chacha_rng import StdRng, chacha_blocks
from whirgpu.ref.rng import random_base
from whirgpu.runtime.base import RtView
from whirgpu.runtime.program import Copy, Dispatch

GARBAGE = 0xDEADBEEF
STATUS_GARBAGE = 0x5EED5EED
FIELDS = ("babybear", "koalabear")
ZK_GOLDEN = golden_p3_names("z0*.json")


def _upload(rt, array: np.ndarray):
    array = np.ascontiguousarray(array, np.uint32).reshape(-1)
    buffer = rt.alloc(max(array.nbytes, 4))
    rt.write(buffer, array)
    return buffer


def _expected(key: np.ndarray, n: int, field: str, first_block: int = 0, n_words: int | None = None):
    """(samples, status) as the reference draws them: the first n accepted words from block ``first_block`` and the
    words consumed, or NOT_FOUND when the first ``n_words`` words hold fewer."""
    rng = StdRng(key.astype("<u4").tobytes())
    rng.word_pos = 16 * first_block
    samples = random_base(rng, n, field_by_name(field))
    consumed = rng.word_pos - 16 * first_block
    if n_words is not None and consumed > n_words:
        stream = chacha_blocks(key, first_block, -(-n_words // 16))[:n_words] >> np.uint32(1)
        accepted = stream[stream < np.uint32(field_by_name(field).P)]
        assert accepted.size < n
        return accepted, mask_rng.NOT_FOUND
    return samples, consumed


def _status_words(key, status_at: int, key_at: int) -> np.ndarray:
    """The status binding's words before the launches: garbage, the key at ``key_at``."""
    words = np.full(max(status_at + 1, key_at + 8) + 3, STATUS_GARBAGE, np.uint32)
    words[key_at:key_at + 8] = mask_rng.key_words(key)
    return words


def _run(rt, key, n: int, field: str, out_offset: int = 3, status_at: int = 2, key_at: int | None = None,
         **kwargs):
    """(out words, status words before, status words after, launches) of one recorded call into a fresh batch; the
    key at status word ``key_at`` (default: right after the status word)."""
    key_at = status_at + 1 if key_at is None else key_at
    out = _upload(rt, np.full(out_offset + n + 5, GARBAGE, np.uint32))
    before = _status_words(key, status_at, key_at)
    status = _upload(rt, before)
    batch = rt.batch()
    launches = mask_rng.record_samples(rt, batch, key_at, n, out, out_offset, status, status_at, field=field,
                                       **kwargs)
    batch.submit()
    return rt.read(out), before, rt.read(status), launches


def _check_words(key, n, field, got, before, status, out_offset, status_at, first_block=0, n_words=None):
    """The samples at ``out_offset`` and the status word as the reference draws them; every other word kept."""
    samples, consumed = _expected(np.asarray(mask_rng.key_words(key), np.uint32), n, field, first_block, n_words)
    assert status[status_at] == consumed
    others = np.arange(before.size) != status_at
    np.testing.assert_array_equal(status[:before.size][others], before[others])
    written = samples.size  # on NOT_FOUND, the accepted words there were, at their ranks
    np.testing.assert_array_equal(got[out_offset:out_offset + written], samples)
    assert (got[:out_offset] == GARBAGE).all() and (got[out_offset + written:] == GARBAGE).all()


def _check(rt, key, n, field, first_block=0, n_words=None, out_offset=3, status_at=2, key_at=None, **kwargs):
    got, before, status, launches = _run(rt, key, n, field, out_offset, status_at, key_at, first_block=first_block,
                                         n_words=n_words, **kwargs)
    _check_words(key, n, field, got, before, status, out_offset, status_at, first_block, n_words)
    return launches


def _key(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1 << 32, 8, dtype=np.uint64).astype(np.uint32)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("n", [0, 1, 2, 17, 300, 3000, 5000, 40000])
def test_samples_match_the_reference(gpu_runtime, field, n):
    """One workgroup (W <= 4096 words) up to ~11 workgroups (past the fixture's 7 per dimension: the 2-D grid)."""
    launches = _check(gpu_runtime, _key(n * 7 + len(field)), n, field)
    assert launches.n_words == mask_rng.words_for(n, field) and launches.windows == (1 if n else 0)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("wg,n", [(32, 20000), (8, 3000), (4, 400)])
def test_scan_chunks_past_one_workgroup_of_totals(gpu_runtime, field, wg, n):
    """More workgroup totals than the scan's WG threads: each scan thread sums a chunk of them."""
    launches = _check(gpu_runtime, _key(wg + n), n, field, wg=wg)
    assert launches.groups > wg


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("n,n_words,wg", [(10, 17, 256), (900, 1024, 8), (900, 1025, 8), (900, 1039, 8),
                                          (60, 63, 4)])
def test_word_counts_at_the_boundaries(gpu_runtime, field, n, n_words, wg):
    """W not a multiple of 16 (a block's tail not drawn) and W at exactly WG * 16 * WG words (groups = WG, the scan
    one total per thread) and one word past it (groups = WG + 1). Found or NOT_FOUND as the reference says."""
    launches = _check(gpu_runtime, _key(n_words + wg), n, field, n_words=n_words, wg=wg)
    assert launches.groups == mask_rng.groups_for(n_words, wg)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("first_block", [(1 << 32) - 3, (1 << 32) - 1, 1 << 32, (1 << 64) - 2, 12345])
def test_block_counter_carries_into_the_high_word(gpu_runtime, field, first_block):
    _check(gpu_runtime, _key(first_block % 1000), 300, field, first_block=first_block)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("n,n_words", [(200, 200), (5000, 5000), (1, 0), (3, 1), (4096, 4100)])
def test_too_few_words_is_not_found(gpu_runtime, field, n, n_words):
    """W forced below what n samples need: the status is NOT_FOUND and the accepted words are written in order."""
    if field == "koalabear" and n_words >= n > 1:
        n_words = n - 2  # KoalaBear rejects ~1/128: two words short is short
    _check(gpu_runtime, _key(n + n_words), n, field, n_words=n_words)


@pytest.mark.parametrize("name", ZK_GOLDEN)
def test_golden_fork_seeds(gpu_runtime, name):
    """The forks of the zk golden files (seeds drawn from StdRng::seed_from_u64(mask_seed) by the reference, as
    the oracle recorded them): the commit fork's oracle_randomness[0] << k0 base elements (a constant fold k0),
    then 1000 EF elements of the open fork."""
    doc = load_golden_p3(name)
    field = str(doc["field"]).lower()
    assert doc["params"]["folding_factor_kind"] == "Constant"
    commit_n = doc["zk_config"]["oracle_randomness"][0] << doc["params"]["folding_factor"]
    rng = StdRng.seed_from_u64(doc["mask_seed"])
    for draw, n in zip(doc["mask_rng"]["draws"], (commit_n, 4 * 1000), strict=True):
        fork = StdRng.from_rng(rng)
        assert fork.seed().hex() == draw["hex"]
        _check(gpu_runtime, fork.key, n, field, out_offset=0, status_at=0)


@pytest.fixture(scope="module", params=RUNTIMES, ids=[f"{name}-{mul}" for name, mul in RUNTIMES])
def narrow_runtime(request):
    """A runtime whose storage bindings are lowered to 4 KiB: the output is compacted in windows."""
    name, mul = request.param
    return open_runtime(name, mul, max_groups_per_dim=7, max_binding_bytes=4096)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("n,out_offset", [(3000, 3), (2000, 100), (1100, 0)])
def test_output_in_windows(narrow_runtime, field, n, out_offset):
    launches = _check(narrow_runtime, _key(n + out_offset), n, field, out_offset=out_offset)
    assert launches.windows > 1


def test_margin_bound():
    """The margin is the least m with the Chernoff-Hoeffding bound <= 2^-40; n = 1 is the exact all-rejected
    tail q^(m+1)."""
    for field in FIELDS:
        q = mask_rng.reject_probability(field)
        m = mask_rng.margin(1, field)
        assert q ** (m + 1) <= 2.0 ** -40 < q ** m
        for n in (0, 1, 100, 10**6):
            m = mask_rng.margin(n, field)
            assert mask_rng._log_tail_bound(n + m, m + 1, q) <= -40 * np.log(2)
            assert m == 0 or mask_rng._log_tail_bound(n + m - 1, m, q) > -40 * np.log(2)
    assert mask_rng.margin(0) == 0 and mask_rng.words_for(0) == 0


@pytest.mark.parametrize("field", FIELDS)
def test_default_workgroup_past_the_scan_threads(gpu_runtime, field):
    """n = 1.1 M (about 4.5 MB of samples): at the default WG = 256, more than 256 workgroup totals (the scan's
    chunking at the production workgroup size)."""
    launches = _check(gpu_runtime, _key(11), 1_100_000, field)
    assert launches.groups > mask_rng.WG


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("status_at,key_at", [(8, 0), (0, 1), (3, 40), (45, 37)])
def test_key_anywhere_in_the_status_binding(gpu_runtime, field, status_at, key_at):
    """The key at word 0, next to the status word, far past it, right before it."""
    _check(gpu_runtime, _key(key_at), 3000, field, status_at=status_at, key_at=key_at)


@pytest.mark.parametrize("field", FIELDS)
def test_key_in_a_status_view(gpu_runtime, field):
    """The status bound as a view: key_at and status_at count from the view's first word."""
    rt = gpu_runtime
    align = max(4, int(rt.offset_alignment)) // 4
    first = -(-32 // align) * align  # the view's first word: 32 words or more in, aligned
    key, n, status_at, key_at = _key(99), 2000, 5, 11
    words = np.full(first + 64, STATUS_GARBAGE, np.uint32)
    words[first + key_at:first + key_at + 8] = mask_rng.key_words(key)
    status = _upload(rt, words)
    out = _upload(rt, np.full(n + 8, GARBAGE, np.uint32))
    batch = rt.batch()
    mask_rng.record_samples(rt, batch, key_at, n, out, 3, RtView(status, 4 * first, 4 * 32), status_at, field=field)
    batch.submit()
    got, view = rt.read(status), slice(first, first + 32)
    _check_words(key, n, field, rt.read(out), words[view], got[view], 3, status_at)
    outside = np.ones(words.size, bool)
    outside[view] = False
    np.testing.assert_array_equal(got[outside], words[outside])


class _Recorder:
    """A batch that keeps its launches (``runtime.program`` steps) to submit again and again."""

    def __init__(self):
        self.launches = []

    def dispatch(self, kernel, buffers, params, n_groups):
        self.launches.append(Dispatch(kernel, tuple(buffers), np.array(params, np.uint32), n_groups))

    def copy(self, src, src_offset, dst, dst_offset, nbytes):
        self.launches.append(Copy(src, src_offset, dst, dst_offset, nbytes))


@pytest.mark.parametrize("primed", [False, True], ids=["encoded-when-sent", "primed"])
@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("n,key_at,status_at", [(5000, 9, 4), (17, 0, 8)])
def test_recorded_launches_draw_each_written_key(gpu_runtime, field, n, key_at, status_at, primed):
    """Launches recorded once (params fixed) and submitted again after each new key is written to the status
    binding: each submission draws the samples of the key written before it, also when it was encoded ahead
    (``prime``) before that key was written."""
    rt = gpu_runtime
    out = _upload(rt, np.full(n + 8, GARBAGE, np.uint32))
    status = _upload(rt, _status_words(_key(0), status_at, key_at))
    recorder = _Recorder()
    mask_rng.record_samples(rt, recorder, key_at, n, out, 3, status, status_at, field=field)
    recorded = rt.recorded_batch(recorder.launches)
    try:
        for seed in (1, 2, 3):
            key = _key(1000 + seed)
            before = _status_words(key, status_at, key_at)
            if primed:
                recorded.prime()
                assert getattr(recorded, "primed", "none kept") is not None  # wgpu / Dawn keep a command buffer
            rt.write(status, before)
            rt.write(out, np.full(n + 8, GARBAGE, np.uint32))
            recorded.submit()
            _check_words(key, n, field, rt.read(out), before, rt.read(status), 3, status_at)
    finally:
        recorded.close()


def test_key_and_status_words_are_checked(gpu_runtime):
    rt = gpu_runtime
    status, out = _upload(rt, np.zeros(12, np.uint32)), _upload(rt, np.zeros(16, np.uint32))
    for key_at, status_at, match in [(5, 0, "key words 5 .. 12 outside the 12-word"), (-1, 9, "key words -1"),
                                     (0, 12, "status word 12 outside"), (2, 9, "overlaps the key words 2 .. 9"),
                                     (2, 2, "overlaps")]:
        with pytest.raises(ValueError, match=match):
            mask_rng.record_samples(rt, rt.batch(), key_at, 4, out, 0, status, status_at)
    mask_rng.record_samples(rt, rt.batch(), 4, 4, out, 0, status, 3)  # the words just apart
    mask_rng.record_samples(rt, rt.batch(), 0, 4, out, 0, status, 8)
