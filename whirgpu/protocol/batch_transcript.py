"""K duplex challengers in lockstep: ``BatchChallenger``, the transcripts of K proofs of one shape advanced by the
same calls, one value per proof (row k is proof k's challenger).

Contract: ``BatchChallenger.of(challenger, K)`` starts K copies of one ``DuplexChallenger`` (whir-p3's: BabyBear,
not length-tagged); every call then does, for each row, exactly what the same call does on a ``DuplexChallenger``
(``protocol.transcript``), with the values of that row: ``observe(words)`` (K, c) Montgomery words in [0, P)
(the caller checked them), ``sample()`` -> (K,) Montgomery words, ``sample_ef()`` -> (K, 4), ``sample_bits(b)``
-> (K,) int64, ``check_witness(b, w)`` -> (K,) bool. Because every row makes the same calls with the same
lengths, the rows' input and output buffers always hold the same number of words: one buffer of (K,) columns
serves them all, and a duplex is one permutation call over K lanes (``native.permute.fast_permute_lanes`` where
built, else ``ref.poseidon2.permute_lanes``).
"""

from __future__ import annotations

import numpy as np

from ..field import BABYBEAR
from ..native.permute import fast_permute_lanes
from ..ref.poseidon2 import Poseidon2Constants, permute_lanes
from .transcript import MAX_SAMPLE_BITS, RATE, DuplexChallenger

_P = np.uint64(BABYBEAR.P)
_R = np.uint64(BABYBEAR.R)
_R_INV = np.uint64(BABYBEAR.R_INV)


class BatchChallenger:
    """K whir-p3 challengers in lockstep (module contract). State: the sponges as (16, K) canonical words, the
    pending input as (K,) Montgomery columns, the unread output as (K,) Montgomery columns (popped last first)."""

    def __init__(self, state: np.ndarray, input_columns: list, output_columns: list):
        self._state = state
        self._input = input_columns
        self._output = output_columns
        self._constants = Poseidon2Constants.smallrng(1)
        self._permute = fast_permute_lanes() or permute_lanes

    @classmethod
    def of(cls, challenger: DuplexChallenger, k: int) -> "BatchChallenger":
        """``k`` rows, each a copy of ``challenger`` (whir-p3's variant only)."""
        if challenger.length_tagged or challenger.field.name != BABYBEAR.name:
            raise ValueError("BatchChallenger runs whir-p3's challenger (BabyBear, not length-tagged) only")
        canonical = challenger.sponge_state.astype(np.uint64) * _R_INV % _P
        state = np.repeat(canonical[:, None], k, axis=1)
        column = lambda w: np.full(k, w, np.uint32)  # noqa: E731
        return cls(state, [column(w) for w in challenger.input_buffer], [column(w) for w in challenger.output_buffer])

    @property
    def k(self) -> int:
        return self._state.shape[1]

    def _duplex(self) -> None:
        for i, column in enumerate(self._input):
            self._state[i] = column.astype(np.uint64) * _R_INV % _P
        self._input = []
        self._state = self._permute(self._state, self._constants)
        self._output = [(self._state[i] * _R % _P).astype(np.uint32) for i in range(RATE)]

    def observe(self, words: np.ndarray) -> None:
        """Absorb each row's words (K, c) in order (c may be 0)."""
        words = np.asarray(words, np.uint32).reshape(self.k, -1)
        if words.shape[1]:
            self._output = []
        for c in range(words.shape[1]):
            self._input.append(words[:, c])
            if len(self._input) == RATE:
                self._duplex()

    def sample(self) -> np.ndarray:
        if self._input or not self._output:
            self._duplex()
        return self._output.pop()

    def sample_ef(self) -> np.ndarray:
        return np.stack([self.sample() for _ in range(4)], axis=1)

    def sample_bits(self, bits: int) -> np.ndarray:
        if not 0 <= bits <= MAX_SAMPLE_BITS:
            raise ValueError(f"sample_bits: bits = {bits} outside [0, {MAX_SAMPLE_BITS}]")
        canonical = self.sample().astype(np.uint64) * _R_INV % _P
        return (canonical & np.uint64((1 << bits) - 1)).astype(np.int64)

    def check_witness(self, bits: int, witness: np.ndarray) -> np.ndarray:
        """Each row's ``check_witness(bits, witness[k])``; ``bits`` 0 accepts every row and touches nothing."""
        if bits == 0:
            return np.ones(self.k, bool)
        self.observe(np.asarray(witness, np.uint32).reshape(self.k, 1))
        return self.sample_bits(bits) == 0
