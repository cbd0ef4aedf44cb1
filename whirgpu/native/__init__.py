"""The host's compiled Poseidon2 permutation: built once per machine in the background (``build``), loaded through
cffi and checked against ``ref.poseidon2`` (``permute``). Below the protocol and the backends, which both take it."""
