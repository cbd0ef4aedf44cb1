"""Work models of the proof's kernels: what one launch must do, from its label and params words, so its time can
be set against a calibration ceiling (``whirgpu.kernels.calibrate``).

- Memory-bound kernels: the bytes the launch must move (reads + writes of its arrays, each once; small factor
  and index tables left out), compared with the copy bandwidth.
- Poseidon2 kernels: permutations x ``POSEIDON2_PRODUCTS`` Montgomery products (8 full rounds x 16 S-boxes x 4
  products + 13 partial rounds x 4; the linear layers' additions are not counted, so the fraction overstates
  the headroom), compared with the products per second. The width-24 leaf hash (``merkle_leaves24``) counts
  ``POSEIDON2_24_PRODUCTS`` per permutation (BabyBear: 8 x 24 x 4 + 21 partial rounds x (4 + 24 diagonal
  products)), 16 words per permutation.
- Everything else (factor tables, reductions' second stage, the proof-of-work search, whose work depends on
  where the smallest hit lies) has no model. Params layouts are the registry's (``kernels.registry``); a model
  reads only the words it names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

POSEIDON2_PRODUCTS = 8 * 16 * 4 + 13 * 4
POSEIDON2_24_PRODUCTS = 8 * 24 * 4 + 21 * (4 + 24)
BYTES, PRODUCTS = "bytes", "products"  # a model's unit
_WORD, _EF = 4, 16


@dataclass(frozen=True)
class Work:
    """What one launch must do: ``amount`` of ``unit`` (BYTES moved, or Montgomery PRODUCTS)."""

    unit: str
    amount: int


def _bytes(fn: Callable[[list[int]], int]) -> Callable[[list[int]], Work]:
    return lambda p: Work(BYTES, fn(p))


def _permutations(fn: Callable[[list[int]], int]) -> Callable[[list[int]], Work]:
    return lambda p: Work(PRODUCTS, fn(p) * POSEIDON2_PRODUCTS)


# label -> params words -> Work. NTT passes read and write the (H, w) matrix, or the window they are given; their
# params give its size.
_MODELS: dict[str, Callable[[list[int]], Work]] = {
    "to_monty.to_monty_inplace": _bytes(lambda p: 2 * _WORD * p[0]),
    "to_monty.to_monty_copy": _bytes(lambda p: 2 * _WORD * p[0]),
    "transpose_pad": _bytes(lambda p: _WORD * (p[7] << p[3]) + _WORD * p[0]),  # its table window, its output
    "ntt_bitrev": _bytes(lambda p: 2 * _WORD * p[0]),
    "ntt.ntt_local": _bytes(lambda p: 2 * _WORD * (p[0] << (p[2] + p[3]))),
    "ntt.ntt_radix2": _bytes(lambda p: 2 * _WORD * 2 * p[0]),
    "ntt.ntt_radix4": _bytes(lambda p: 2 * _WORD * 4 * p[0]),
    "ntt_cross": _bytes(lambda p: 4 * _WORD * p[0]),  # a word of each window read and written per thread
    "sumcheck.sumcheck_base": _bytes(lambda p: 2 * p[0] * (_WORD + _EF)),
    "sumcheck.sumcheck_ext": _bytes(lambda p: 4 * p[0] * _EF),
    "fold.fold_base": _bytes(lambda p: 2 * p[0] * (_WORD + _EF) + 2 * p[0] * _EF),
    "fold.fold_ext": _bytes(lambda p: 6 * p[0] * _EF),
    # len = a quarter of the input: 4 len entries of table and weights read, 2 len of each written
    "sumcheck_fold.sumcheck_fold_base": _bytes(lambda p: 4 * p[0] * (_WORD + 2 * _EF)),
    "sumcheck_fold.sumcheck_fold_ext": _bytes(lambda p: 12 * p[0] * _EF),
    "weights": _bytes(lambda p: p[0] * _EF * (1 + (p[3] != 0))),
    "mle_eval.mle_eval_base": _bytes(lambda p: p[0] * _WORD),
    "mle_eval.mle_eval_ext": _bytes(lambda p: p[0] * _EF),
    "gather_rows": _bytes(lambda p: 2 * _WORD * p[0]),
    "interleave_columns": _bytes(lambda p: 2 * _WORD * p[0]),  # each word written once, read at most once
    # every word written once; columns x (msg_len + rnd_len) EF entries read once
    "mask_matrix": _bytes(lambda p: _WORD * p[0] + _EF * p[3] * (p[6] + p[9])),
    # rows (when the launch has a codeword window) and 8 words per bound level, per slot; read and written once
    "openings": _bytes(lambda p: 2 * _WORD * p[0] * (((1 << p[1]) if p[5] else 0) + 8 * p[7])),
    "merkle_leaves": _permutations(lambda p: p[0] * -(-p[1] // 8)),
    "merkle_leaves24": lambda p: Work(PRODUCTS, p[0] * -(-p[1] // 16) * POSEIDON2_24_PRODUCTS),
    "merkle_leaves24.merkle_permute24": lambda p: Work(PRODUCTS, p[0] * POSEIDON2_24_PRODUCTS),
    "merkle_compress": _permutations(lambda p: p[0]),
    "merkle_compress.merkle_compress_coop": _permutations(lambda p: p[0]),
    "merkle_compress.merkle_permute": _permutations(lambda p: p[0]),
    "merkle_compress.merkle_permute_coop": _permutations(lambda p: p[0]),
    "merkle_top": _permutations(lambda p: 2 * p[0] - p[0] // p[3]),  # n, n/2, ... n/per parents
}


def launch_work(label: str, params) -> Work | None:
    """The work of one launch of kernel ``label`` (``stem`` or ``stem.entry``) with ``params`` (uint32 words);
    None for a kernel without a model."""
    model = _MODELS.get(label)
    return None if model is None else model([int(w) for w in params])


def ceiling_name(unit: str) -> str:
    """The calibration ceiling a unit is compared with."""
    return "copy" if unit == BYTES else "mul"
