"""The numpy oracle every kernel is checked against: field arithmetic, NTT, Poseidon2 and its constants, Merkle
trees (full and pruned), multilinear evaluation, sumcheck, the RNGs (rand's SmallRng and StdRng) and the p3-whir codeword."""
