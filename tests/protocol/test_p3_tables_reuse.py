"""A commitment used more than once (issue 38 item 3): ``P3TablesProver.commit`` once, ``open`` several times with
other batches and points, each opening byte for byte the ``prove_tables`` of the same columns, schedule and
points, in both layouts, with no upload, encoding or Merkle hashing of the committed table after ``commit``
(a spy on the backend counts them). Parametrised over the backends that prove tables (``TABLE_BACKENDS``)."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.cpu import CpuBackend
from whirgpu.errors import ConfigError
from whirgpu.profiles.p3_whir.expectations import p3_expected_config
from whirgpu.profiles.p3_whir.format import merkle_cap_to_postcard, pcs_proof_to_postcard
from whirgpu.profiles.p3_whir.tables.instance import draw_instance
from whirgpu.profiles.p3_whir.tables.prover import P3TablesProver, prove_tables
from whirgpu.profiles.p3_whir.tables.spec import TablesSpec
from whirgpu.ref import p3_codeword
from whirgpu.ref.field_np import field_ops

from .test_p3_tables import TABLE_BACKENDS, make_backend

TABLES = "10x2,8x1,4x3"
SCHEDULES = ("0:0,1:1/1:0/2:2:0", "1::0/0:1/2:0,1,2")
CONFIG = p3_expected_config(12, 4, 1, security_level=32, pow_bits=0)


class SpyBackend(CpuBackend):
    """The cpu backend, counting what costs: uploads and commitments (each an encoding and a Merkle tree), with
    the tables committed."""

    def __init__(self):
        super().__init__()
        self.uploads = 0
        self.committed: list = []

    def upload(self, array, mode=None):
        self.uploads += 1
        return super().upload(array) if mode is None else super().upload(array, mode)

    def commit(self, table, log_folding, log_height):
        self.committed.append(table)
        return super().commit(table, log_folding, log_height)


def _bytes(proved) -> tuple[bytes, bytes]:
    return merkle_cap_to_postcard(proved.commitment), pcs_proof_to_postcard(proved.proof)


@pytest.fixture(params=TABLE_BACKENDS)
def backend_name(request):
    return request.param


@pytest.mark.parametrize("layout", ["suffix", "prefix"])
def test_each_opening_is_a_fresh_proof(backend_name, layout):
    specs = [TablesSpec.parse(TABLES, s, layout) for s in SCHEDULES]
    columns, _ = draw_instance(specs[0].protocol, 3, CONFIG.field, 4)
    backend = make_backend(backend_name)
    try:
        prover = P3TablesProver(CONFIG, CONFIG.field, backend, specs[0].protocol, layout)
        data = prover.commit(columns)
        rng = np.random.default_rng(1)
        ops = field_ops(CONFIG.field)
        for spec in specs:
            for prescribed in (False, True):
                points = None
                if prescribed:
                    points = [ops.to_monty(rng.integers(0, CONFIG.field.P, (m, 4)).astype(np.uint64))
                              for m in spec.protocol.batch_log_rows(4)]
                opened = prover.open(data, spec.protocol, points)
                fresh = prove_tables(CONFIG, CONFIG.field, backend, columns, spec.protocol, layout, points)
                assert _bytes(opened) == _bytes(fresh)
                assert [p.tolist() for p in opened.points] == [p.tolist() for p in fresh.points]
        assert np.array_equal(data.commitment.roots, fresh.commitment.roots)
    finally:
        backend.close()


@pytest.mark.parametrize("layout", ["suffix", "prefix"])
def test_an_opening_neither_uploads_nor_encodes_nor_hashes_the_committed_table(layout, monkeypatch):
    spec = TablesSpec.parse(TABLES, SCHEDULES[0], layout)
    columns, _ = draw_instance(spec.protocol, 3, CONFIG.field, 4)
    backend = SpyBackend()
    calls = {"encode_base": 0, "merkle_levels": 0}  # the numpy primitives under the cpu backend's commit

    def counted(name, function):
        def call(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)
        return call

    for name in calls:
        monkeypatch.setattr(p3_codeword, name, counted(name, getattr(p3_codeword, name)))
    prover = P3TablesProver(CONFIG, CONFIG.field, backend, spec.protocol, layout)
    data = prover.commit(columns)
    assert backend.uploads == 1 and backend.committed == [data.table]
    assert calls["merkle_levels"] == 1 and calls["encode_base"] == (layout == "suffix")
    for _ in range(2):
        backend.uploads, backend.committed = 0, []
        calls.update(encode_base=0, merkle_levels=0)
        prover.open(data)
        assert backend.uploads == 0
        assert len(backend.committed) == CONFIG.n_rounds  # the rounds' own codewords, never the stacked table
        assert not any(t is data.table for t in backend.committed)
        assert calls == {"encode_base": 0, "merkle_levels": CONFIG.n_rounds}  # one tree per round, none for it
    backend.uploads, backend.committed = 0, []
    prove_tables(CONFIG, CONFIG.field, backend, columns, spec.protocol, layout)
    assert backend.uploads == 1 and len(backend.committed) == CONFIG.n_rounds + 1  # what open saves


def test_prover_data_is_bound_to_its_commitment():
    spec = TablesSpec.parse(TABLES, SCHEDULES[0])
    columns, _ = draw_instance(spec.protocol, 3, CONFIG.field, 4)
    backend = CpuBackend()
    prover = P3TablesProver(CONFIG, CONFIG.field, backend, spec.protocol, "suffix")
    data = prover.commit(columns)
    other = TablesSpec.parse("10x2,8x1,4x4", "0:0")
    with pytest.raises(ConfigError, match="committed table shapes"):
        prover.open(data, other.protocol)
    with pytest.raises(ConfigError, match="another configuration"):
        P3TablesProver(CONFIG, CONFIG.field, CpuBackend(), spec.protocol, "suffix").open(data)
    with pytest.raises(ConfigError, match="another configuration"):
        P3TablesProver(CONFIG, CONFIG.field, backend, spec.protocol, "prefix").open(data)
    data.release()
    data.release()
    with pytest.raises(ConfigError, match="released"):
        prover.open(data)
