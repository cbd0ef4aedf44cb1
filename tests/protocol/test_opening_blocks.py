"""Openings read as one block (``protocol.proof.OpeningList``): the binary reader's and an unpickled proof's
openings are views of two arrays the verifier takes without copying, for as long as the list holds what it was
made with; an opening changed in place is judged as changed, and a replaced one sends the verifier back to
stacking the openings one by one."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from whirgpu.errors import VerificationError
from whirgpu.field import P
from whirgpu.profiles.whir_p3_metal.config import WhirConfig
from whirgpu.profiles.whir_p3_metal.serialize import from_binary, to_binary
from whirgpu.profiles.whir_p3_metal.verifier import MetalWhirVerifier, opened_rows
from whirgpu.protocol.proof import OpeningList, QueryOpening

from .test_tamper import _proof_file

CASE = "n12_f4_r1_s32_p0_cb.json"


@pytest.fixture
def read():
    return from_binary(to_binary(_proof_file(CASE)))


def _verify(pf):
    MetalWhirVerifier(WhirConfig.from_params(pf.params)).verify(pf.proof, pf.statement)


def _step(pf):
    queries = pf.proof.rounds[0].queries if pf.proof.rounds else pf.proof.final_queries
    kind = queries[0].kind
    width = queries[0].values.shape[0]
    return queries, kind, width, queries[0].siblings.shape[0]


def test_the_binary_reader_gives_blocks_the_openings_view(read):
    queries, kind, width, depth = _step(read)
    assert isinstance(queries, OpeningList)
    values, siblings = queries.blocks()
    assert values.shape[0] == siblings.shape[0] == len(queries)
    for i, q in enumerate(queries):
        assert np.shares_memory(q.values, values) and np.array_equal(q.values, values[i])
        assert np.array_equal(q.siblings, siblings[i])
    rows, paths = opened_rows("round 0", queries, kind, width, depth)
    assert rows is values and paths is siblings  # no copy
    _verify(read)


def test_a_value_changed_in_place_is_judged_changed(read):
    queries, *_ = _step(read)
    queries[1].values.reshape(-1)[0] = (int(queries[1].values.reshape(-1)[0]) + 1) % P
    assert queries.blocks() is not None
    with pytest.raises(VerificationError):
        _verify(read)


def test_a_value_out_of_range_in_place_is_a_format_error(read):
    from whirgpu.errors import ProofFormatError

    queries, kind, width, depth = _step(read)
    queries[0].siblings[0, 0] = P
    with pytest.raises(ProofFormatError, match="not a field element|field elements"):
        opened_rows("round 0", queries, kind, width, depth)


@pytest.mark.parametrize("change", ["replace opening", "replace array", "drop", "append"])
def test_a_changed_list_is_stacked_again(read, change):
    queries, kind, width, depth = _step(read)
    first = queries[0]
    if change == "replace opening":
        queries[0] = QueryOpening(first.kind, first.values.copy(), first.siblings.copy())
    elif change == "replace array":
        first.values = first.values.copy()
    elif change == "drop":
        queries.pop()
    else:
        queries.append(copy.deepcopy(first))
    assert queries.blocks() is None
    rows, paths = opened_rows("round 0", queries, kind, width, depth)
    assert np.array_equal(rows, np.array([q.values for q in queries]))
    if change in ("replace opening", "replace array"):
        _verify(read)  # the same values: still a proof


def test_copies_are_plain_lists_and_pickles_blocks(read):
    queries, *_ = _step(read)
    assert type(copy.deepcopy(queries)) is list and type(copy.copy(queries)) is list
    again = pickle.loads(pickle.dumps(read))
    queries_again, *_ = _step(again)
    assert isinstance(queries_again, OpeningList) and queries_again.blocks() is not None
    _verify(again)


def test_a_schedule_is_derived_once_per_parameters(read):
    params = read.params
    assert WhirConfig.from_params(params) is WhirConfig.from_params(copy.deepcopy(params))
