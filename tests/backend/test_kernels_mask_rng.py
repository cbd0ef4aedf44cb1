"""The hiding PCS's mask sampler (``chacha_sample``, ``kernels/mask_rng``) against the numpy reference
(``ref.chacha_rng.StdRng`` + ``ref.rng.random_base``), word for word, both fields, on every runtime. Sizes cross
every threshold: n = 0 and 1, one workgroup, several, more workgroups than the fixture's 7 per grid dimension
(the 2-D grid), more than the scan's WG threads (its chunking, reached with a lowered WG), a first block counter
whose 64-bit add carries into the high word (and one wrapping at 2^64), compaction in several output windows
(a lowered binding limit), and the NOT_FOUND status (W forced too small). Output words outside the written range
keep their garbage."""

from __future__ import annotations

import numpy as np
import pytest

from tests.backend.conftest import RUNTIMES, open_runtime
from tests.conftest import golden_p3_names, load_golden_p3
from whirgpu.field import field_by_name
from whirgpu.kernels import mask_rng
from whirgpu.ref.chacha_rng import StdRng, chacha_blocks
from whirgpu.ref.rng import random_base

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


def _run(rt, key, n: int, field: str, out_offset: int = 3, status_at: int = 2, **kwargs):
    """(out words, status words, launches) of one recorded call into a fresh batch."""
    out = _upload(rt, np.full(out_offset + n + 5, GARBAGE, np.uint32))
    status = _upload(rt, np.full(status_at + 3, STATUS_GARBAGE, np.uint32))
    batch = rt.batch()
    launches = mask_rng.record_samples(rt, batch, key, n, out, out_offset, status, status_at, field=field, **kwargs)
    batch.submit()
    return rt.read(out), rt.read(status), launches


def _check(rt, key, n, field, first_block=0, n_words=None, out_offset=3, status_at=2, **kwargs):
    got, status, launches = _run(rt, key, n, field, out_offset, status_at, first_block=first_block, n_words=n_words,
                                 **kwargs)
    samples, consumed = _expected(np.asarray(key, np.uint32), n, field, first_block, n_words)
    assert status[status_at] == consumed
    assert (status[:status_at] == STATUS_GARBAGE).all() and (status[status_at + 1:] == STATUS_GARBAGE).all()
    written = samples.size  # on NOT_FOUND, the accepted words there were, at their ranks
    np.testing.assert_array_equal(got[out_offset:out_offset + written], samples)
    assert (got[:out_offset] == GARBAGE).all() and (got[out_offset + written:] == GARBAGE).all()
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
