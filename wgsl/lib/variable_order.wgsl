// requires: bb_ext4
// The sumcheck's variable order, a specialisation constant of every kernel that pairs a table's entries (sumcheck,
// fold, sumcheck_fold, sumcheck_tail): SUFFIX = 0 (whir-p3-metal) binds x_0 first and pairs entries k and
// k + half; SUFFIX = 1 (p3-whir) binds x_{n-1} first and pairs 2k and 2k + 1. A round's second message is then
// sum (2 g_hi - g_lo)(2 W_hi - W_lo) = h(2), or sum (g_hi - g_lo)(W_hi - W_lo) = c_inf (the X^2 coefficient).
// C_INF = 1 with SUFFIX = 0 (p3-whir's PrefixProver): x_0 first, c_inf messages. Fixed per pipeline, so one
// variant never branches on it. Words Montgomery in [0, P).

@id(7) override SUFFIX: u32 = 0u;
@id(8) override C_INF: u32 = 0u;

// The pair of entry k of a table of 2 half entries: (k, k + half), or (2k, 2k + 1) in suffix order.
fn pair_lo(k: u32, half: u32) -> u32 {
    return select(k, 2u * k, SUFFIX == 1u);
}

fn pair_hi(k: u32, half: u32) -> u32 {
    return select(k + half, 2u * k + 1u, SUFFIX == 1u);
}

// The second message's factor of a pair: 2 hi - lo (h(2)), or hi - lo (c_inf: suffix order, or C_INF = 1).
fn slope_ext(hi: vec4<u32>, lo: vec4<u32>) -> vec4<u32> {
    if (SUFFIX == 1u || C_INF == 1u) {
        return ef_sub(hi, lo);
    }
    return ef_twice_minus(hi, lo);
}

fn slope_base(hi: u32, lo: u32) -> u32 {
    if (SUFFIX == 1u || C_INF == 1u) {
        return bb_sub(hi, lo);
    }
    return bb_add(hi, bb_sub(hi, lo));
}
