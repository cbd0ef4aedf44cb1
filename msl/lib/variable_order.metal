// requires: bb_ext4
// The sumcheck's variable order, a specialisation constant of every kernel that pairs a table's entries (sumcheck,
// fold, sumcheck_fold, sumcheck_tail): SUFFIX = 0 (whir-p3-metal) binds x_0 first and pairs entries k and
// k + half; SUFFIX = 1 (p3-whir) binds x_{n-1} first and pairs 2k and 2k + 1. A round's second message is then
// sum (2 g_hi - g_lo)(2 W_hi - W_lo) = h(2), or sum (g_hi - g_lo)(W_hi - W_lo) = c_inf (the X^2 coefficient).
// C_INF = 1 with SUFFIX = 0 (p3-whir's PrefixProver): x_0 first, c_inf messages. Fixed per pipeline. Words
// Montgomery in [0, P). The WGSL twin is wgsl/lib/variable_order.wgsl.

constant uint SUFFIX [[function_constant(7)]];
constant uint C_INF [[function_constant(8)]];

// The pair of entry k of a table of 2 half entries: (k, k + half), or (2k, 2k + 1) in suffix order.
uint pair_lo(uint k, uint half) {
    return SUFFIX == 1u ? 2u * k : k;
}

uint pair_hi(uint k, uint half) {
    return SUFFIX == 1u ? 2u * k + 1u : k + half;
}

// The second message's factor of a pair: 2 hi - lo (h(2)), or hi - lo (c_inf: suffix order, or C_INF = 1).
uint4 slope(uint4 hi, uint4 lo) {
    return (SUFFIX == 1u || C_INF == 1u) ? ef_sub(hi, lo) : ef_add(hi, ef_sub(hi, lo));
}

uint slope_base(uint hi, uint lo) {
    return (SUFFIX == 1u || C_INF == 1u) ? bb_sub(hi, lo) : bb_add(hi, bb_sub(hi, lo));
}
