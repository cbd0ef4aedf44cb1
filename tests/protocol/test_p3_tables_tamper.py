"""Tampered stacked multi-table proofs and statements are rejected: every claimed value (current and next), a
prescribed point coordinate, a sumcheck message, an OOD answer, the root; and the caller's expectations the
transcript does not bind (table shapes, column lists, the layout) where they change what is proved. A proof of the
wrong form (eval counts, point shapes) raises ``ProofFormatError``; nothing else escapes."""

from __future__ import annotations

import copy
import random

import pytest

from whirgpu.errors import ProofFormatError, VerificationError
from whirgpu.profiles.p3_whir.format import merkle_cap_from_json, pcs_proof_from_postcard, pcs_proof_to_json
from whirgpu.profiles.p3_whir.tables.shapes import OpeningBatch, TableShape, TablesProtocol
from whirgpu.profiles.p3_whir.tables.verifier import tables_proof_bounds, verify_tables

from .p3_tables_cases import TablesCase
from .test_p3_tables import case
from .test_p3_verifier import words

NEXT = "t02_kb_prefix_10x3-8x2-8x1_k4_s32_p0_cb_next.json"
NEXT_SUFFIX = "t03_kb_suffix_10x3-8x2-8x1_k4_s32_p0_cb_next.json"
PRESCRIBED = "t04_kb_prefix_11x4-9x1_k3_s90_p0_cb_prescribed.json"
PADDED = "t05_bb_suffix_12x2-10x4-3x1_k4_s90_p0_cb_padded.json"


def verify(c: TablesCase, proof_tree=None, protocol=None, layout=None, points="same", commitment=None):
    return verify_tables(c.config, c.field, c.commitment() if commitment is None else commitment,
                         c.proof(proof_tree), c.protocol if protocol is None else protocol,
                         c.layout if layout is None else layout, c.points if points == "same" else points)


def bumped(tree, path, p: int):
    tree = copy.deepcopy(tree)
    node = tree
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = (node[path[-1]] + 1) % p
    return tree


@pytest.mark.parametrize("name", [NEXT, NEXT_SUFFIX, PRESCRIBED, PADDED])
def test_every_claimed_value_is_bound(name):
    c = case(name)
    evals = [path for path in words(c.document["proof"]) if path[0][0] == "evals"]
    assert evals
    for path, _ in evals:
        with pytest.raises(VerificationError):
            verify(c, bumped(c.document["proof"], path, c.field.P))


@pytest.mark.parametrize("name", [NEXT, PRESCRIBED])
@pytest.mark.parametrize("part", ["initial_sumcheck", "initial_ood_answers", "final_poly"])
def test_whir_values_are_bound(name, part):
    c = case(name)
    paths = [path for path, _ in words(c.document["proof"]["whir"][part])]
    for path in (paths[0], paths[-1]):
        with pytest.raises(VerificationError):
            verify(c, bumped(c.document["proof"], ("whir", part) + path, c.field.P))


def test_prescribed_points_are_bound():
    c = case(PRESCRIBED)
    for b, point in enumerate(c.points):
        for coordinate in (0, point.shape[0] - 1):
            points = [p.copy() for p in c.points]
            points[b][coordinate, 0] = (points[b][coordinate, 0] + 1) % c.field.P
            with pytest.raises(VerificationError):
                verify(c, points=points)
    with pytest.raises(VerificationError):  # the transcript's points are not the prescribed ones
        verify(c, points=None)


def test_the_root_is_bound():
    c = case(NEXT)
    tree = copy.deepcopy(c.document["commitment"])
    path, _ = next(words(tree))
    with pytest.raises(VerificationError):
        verify(c, commitment=merkle_cap_from_json(bumped(tree, path, c.field.P)))


def _protocol(shapes, batches) -> TablesProtocol:
    return TablesProtocol(tuple(TableShape(*s) for s in shapes), tuple(OpeningBatch(*b) for b in batches))


T02_SHAPES = [(10, 3), (8, 2), (8, 1)]
T02_BATCHES = [(0, (0, 1), (1,)), (0, (2,)), (1, (0,)), (2, (0,), (0,))]


@pytest.mark.parametrize("shapes,batches", [
    ([(10, 3), (8, 1), (8, 2)], T02_BATCHES),  # two tables' shapes swapped: other placements, same arity
    (T02_SHAPES, [(0, (1, 0), (1,)), (0, (2,)), (1, (0,)), (2, (0,), (0,))]),  # a batch's columns reordered
    (T02_SHAPES, [(0, (0, 2), (1,)), (0, (2,)), (1, (0,)), (2, (0,), (0,))]),  # another column claimed
    (T02_SHAPES, [(0, (0, 1), (0,)), (0, (2,)), (1, (0,)), (2, (0,), (0,))]),  # another next column
    (T02_SHAPES, [(0, (0, 1), (1,)), (0, (2,)), (1, (1,)), (2, (0,), (0,))]),  # another table's column
    (T02_SHAPES, [(0, (0, 1), (1,)), (0, (2,)), (2, (0,)), (2, (0,), (0,))]),  # a batch on another table
])
def test_other_expectations_are_rejected(shapes, batches):
    with pytest.raises(VerificationError):
        verify(case(NEXT), protocol=_protocol(shapes, batches))


@pytest.mark.parametrize("name", [NEXT, NEXT_SUFFIX])
def test_the_other_layout_is_rejected(name):
    c = case(name)
    with pytest.raises(VerificationError):
        verify(c, layout="suffix" if c.layout == "prefix" else "prefix")


@pytest.mark.parametrize("shapes,batches", [
    (T02_SHAPES, T02_BATCHES[:3]),  # one batch fewer than the proof's evals
    (T02_SHAPES, [(0, (0, 1), ()), (0, (2,)), (1, (0,)), (2, (0,), (0,))]),  # a next value the proof has
    (T02_SHAPES, [(0, (0, 1, 2), (1,)), (0, (2,)), (1, (0,)), (2, (0,), (0,))]),  # one current value missing
    ([(10, 3), (8, 2), (8, 1), (10, 1)], T02_BATCHES),  # another table: a larger stack than the configuration's
])
def test_malformed_statements_are_format_errors(shapes, batches):
    with pytest.raises(ProofFormatError):
        verify(case(NEXT), protocol=_protocol(shapes, batches))


def test_malformed_points_are_format_errors():
    c = case(PRESCRIBED)
    for points in (c.points[:-1], [p[:-1] for p in c.points], [c.points[0]] * len(c.points), 7):
        with pytest.raises(ProofFormatError):
            verify(c, points=points)


@pytest.mark.parametrize("name", [NEXT, PRESCRIBED, PADDED])
def test_decoding_is_bounded_by_the_protocol(name):
    """The postcard bytes decode under the protocol's bounds; one batch more than the protocol has is refused
    before anything is read for it, and a proof cut short or bit-flipped raises only the two errors."""
    c = case(name)
    bounds = tables_proof_bounds(c.config, c.protocol)
    data = bytes.fromhex(c.document["proof_postcard_hex"])
    proof = pcs_proof_from_postcard(data, c.field.P, bounds)
    verify(c, proof_tree=pcs_proof_to_json(proof))
    fewer = TablesProtocol(c.protocol.shapes, c.protocol.batches[:-1])
    with pytest.raises(ProofFormatError):
        pcs_proof_from_postcard(data, c.field.P, tables_proof_bounds(c.config, fewer))
    rng = random.Random(name)
    for _ in range(12):
        mutated = bytearray(data)
        if rng.random() < 0.3:
            mutated = mutated[:rng.randrange(len(mutated))]
        else:
            mutated[rng.randrange(len(mutated))] ^= 1 << rng.randrange(8)
        try:
            decoded = pcs_proof_from_postcard(bytes(mutated), c.field.P, bounds)
            verify_tables(c.config, c.field, c.commitment(), decoded, c.protocol, c.layout, c.points)
        except (ProofFormatError, VerificationError):
            continue
        pytest.fail("a mutated proof was accepted")
