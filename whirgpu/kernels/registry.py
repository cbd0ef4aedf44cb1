"""The kernel registry: what every kernel stem exposes, shared by its WGSL and MSL twins.

For each stem (``wgsl/kernels/<stem>.wgsl`` and ``msl/kernels/<stem>.metal``):
- ``entries``: entry point -> (buffer names in binding-slot order, workgroup size). The params struct is bound
  at the slot after the last buffer (``Entry.params_slot``). The workgroup size is a number or the name of one
  of the stem's specialisation constants.
- ``params``: the field names of the stem's ``Params`` struct, in order (every field a u32 word or, where
  marked ``name:vec4``/``name:vec4x4``, a vec4 / an array of 4 vec4; both languages lay these out identically:
  a vec4 is 16-byte aligned).
- ``constants``: specialisation constant name -> (id, default). WGSL declares ``@id(id) override NAME``; MSL
  declares ``constant uint NAME [[function_constant(id)]]`` (in the kernel file or a library it requires: the
  challenger's ``CH_*``), and a Metal-family runtime always supplies every constant of the stem (default unless
  the caller overrides it).

``tests/lint/test_twins.py`` checks both shader trees against this table; the Metal-family runtimes read
workgroup sizes and constant ids from it (WGSL states them in the shader itself).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Entry:
    """One entry point: ``buffers`` in slot order, ``workgroup`` threads (a number or a constant's name)."""

    buffers: tuple[str, ...]
    workgroup: int | str

    @property
    def params_slot(self) -> int:
        return len(self.buffers)


@dataclass(frozen=True)
class KernelSpec:
    stem: str
    params: tuple[str, ...]
    entries: dict[str, Entry]
    constants: dict[str, tuple[int, int]] = field(default_factory=dict)

    def workgroup_size(self, entry: str, constants: dict[str, int] | None = None) -> int:
        """Threads per workgroup of ``entry`` with ``constants`` (name -> value) overriding the defaults."""
        size = self.entries[entry].workgroup
        if isinstance(size, int):
            return size
        return int((constants or {}).get(size, self.constants[size][1]))

    def constant_values(self, constants: dict[str, int] | None = None) -> dict[str, int]:
        """Every constant of the stem: the defaults with ``constants`` applied; unknown names are an error."""
        unknown = set(constants or {}) - set(self.constants)
        if unknown:
            raise KeyError(f"kernel {self.stem} has no specialisation constant {', '.join(sorted(unknown))} "
                           f"(it has: {', '.join(self.constants) or 'none'})")
        values = {name: default for name, (_, default) in self.constants.items()}
        values.update({name: int(v) for name, v in (constants or {}).items()})
        return values


def _spec(stem: str, params: str, entries: dict[str, tuple[tuple[str, ...], int | str]],
          constants: dict[str, tuple[int, int]] | None = None) -> KernelSpec:
    return KernelSpec(stem, tuple(params.split()), {name: Entry(tuple(b), wg) for name, (b, wg) in entries.items()},
                      dict(constants or {}))


_WG = {"WG": (0, 256)}
_WG64 = {"WG": (0, 64)}
# SUFFIX 1: the p3-whir profile's suffix variable order (adjacent pairs, c_inf messages); C_INF 1 with SUFFIX 0: its
# prefix order (pairs k, k + half) with c_inf messages (variable_order.wgsl)
_SUFFIX = {"SUFFIX": (7, 0), "C_INF": (8, 0)}
_P2 = "p2_rc"
_P24 = "p24_rc"  # the width-24 permutation's table (constants.poseidon2_rc_table(field, 24))
# A transcript program run as a launch's epilogue (challenger.wgsl): the params' last fields, and the buffers a
# reduction that runs one binds after its data (reduction.wgsl's work words, the challenger's scratch, a proof window).
# Kernels that may EXPAND (mle_eval, pow_search, queries, merkle_top) bind the points region before p2_rc.
_TAIL = " n_ops _t0 _t1 _t2 ops:vec4x11"
_TAIL_IO = ("work", "scratch", "proof", _P2)
# The transcript variant of every stem that requires the challenger (default 0, the whir-p3 challenger):
# CH_LENGTH_TAGGED 1, upstream Plonky3's length-tagged duplex and witness absorb (challenger_sponge.wgsl declares it);
# CH_DISTINCT_QUERIES 1, the DISTINCT op (query indices by rejection-sampled uniform bits, redrawn until distinct;
# challenger.wgsl declares it).
# ``backends.device_transcript.TranscriptVariant`` sets them.
_CH = {"CH_LENGTH_TAGGED": (16, 0), "CH_DISTINCT_QUERIES": (17, 0)}
_CH_SUFFIX = {**_CH, **_SUFFIX}  # a transcript-tail reduction that also follows the variable order

KERNELS: dict[str, KernelSpec] = {spec.stem: spec for spec in (
    _spec("field_selftest", "n op _pad0 _pad1", {"field_selftest": (("a", "b", "out"), 64)}),
    _spec("calibrate", "n rounds _pad0 _pad1", {
        "copy_vec4": (("src", "dst"), 256),
        "mul_chain": (("chain_out",), 256)}),
    _spec("transpose_pad", "n_words log_w log_coeffs log_elem row_base log_rev tbl_first tbl_count",
          {"transpose_pad": (("table", "matrix"), "WG")}, {"WG": (0, 256), "ROW_MAJOR": (1, 0)}),
    _spec("ntt_bitrev", "n_words log_w log_h _pad", {"ntt_bitrev": (("data",), "WG")}, _WG),
    _spec("ntt", "n log_w log_stage log_cw", {
        "ntt_local": (("data", "tw"), "WG"),
        "ntt_radix4": (("data", "tw"), "WG"),
        "ntt_radix2": (("data", "tw"), "WG")}, _WG),
    _spec("ntt_cross", "n log_w tw_base _pad0", {"ntt_cross": (("lo", "hi", "tw"), "WG")}, _WG),
    _spec("merkle_leaves", "height width row_off digest_off",
          {"merkle_leaves": (("matrix", "digests", _P2), "WG")}, _WG64),
    _spec("merkle_leaves24", "height width row_off digest_off", {
        "merkle_leaves24": (("matrix", "digests", _P24), "WG"),
        "merkle_permute24": (("src", "dst", _P24), "WG")}, _WG64),
    _spec("merkle_compress", "n src_off dst_off _pad0", {
        "merkle_compress": (("src", "dst", _P2), "WG"),
        "merkle_permute": (("src", "dst", _P2), "WG"),
        "merkle_compress_coop": (("src", "dst", _P2), 64),
        "merkle_permute_coop": (("src", "dst", _P2), 64)}, _WG64),
    _spec("merkle_paths", "n _pad0 _pad1 _pad2",
          {"merkle_paths": (("desc", "rows", "siblings", "roots", _P2), "WG")}, _WG64),
    _spec("merkle_top", "n src_off dst_off per root_at from_dst _pad0 _pad1" + _TAIL,
          {"merkle_top": (("src", "dst", "scratch", "proof", "points", _P2), 64)}, _CH),
    _spec("openings", "n_slots log_w depth paths_off row_first row_count level n_levels node_first node_count n_own "
          "_pad0 offsets:vec4x8",
          {"openings": (("matrix", "indices", "out", "level0", "level1", "level2", "level3", "level4"), 256)}),
    # a padded matrix's rows cut to their first columns (the hiding proof's mask oracles on the device)
    _spec("compact_rows", "n_words w_in w_out _pad0", {"compact_rows": (("matrix", "out"), 256)}),
    _spec("gather_rows", "n_words log_w out_off row_first row_count _pad0 _pad1 _pad2",
          {"gather_rows": (("matrix", "indices", "out"), 256)}),
    _spec("interleave_columns", "n_words log_elem out_first log_rows m t tbl_base rnd_base",
          {"interleave_columns": (("table", "randomness", "out"), 256)}),
    # a hiding-PCS mask oracle's coefficient matrix from mask draws on the device (kernels/mask_matrix.py)
    _spec("mask_matrix", "n_words log_rows log_cols columns msg_at msg_stride msg_len rnd_at rnd_stride rnd_len "
          "reversed _pad0", {"mask_matrix": (("src", "out"), 256)}),
    _spec("sumcheck", "len lo_off hi_off partial_base groups total out_at _pad0" + _TAIL, {
        "sumcheck_base": (("table_lo_base", "table_hi_base", "weights_lo", "weights_hi") + _TAIL_IO, 256),
        "sumcheck_ext": (("table_lo_ext", "table_hi_ext", "weights_lo", "weights_hi") + _TAIL_IO, 256)}, _CH_SUFFIX),
    _spec("sumcheck_fold", "len half groups total challenge_at out_at _pad0 _pad1" + _TAIL, {
        "sumcheck_fold_base": (("table_base", "weights", "table_out", "weights_out") + _TAIL_IO, 256),
        "sumcheck_fold_ext": (("table_ext", "weights", "table_out", "weights_out") + _TAIL_IO, 256)}, _CH_SUFFIX),
    _spec("sumcheck_tail", "n rounds out_at challenge_at" + _TAIL, {
        "sumcheck_tail": (("table", "weights", "table_out", "weights_out", "scratch", "proof", _P2), 256)}, _CH_SUFFIX),
    _spec("fold", "len lo_off hi_off out_off", {
        "fold_base": (("table_lo_base", "table_hi_base", "weights_lo", "weights_hi", "table_out", "weights_out",
                       "challenge"), 256),
        "fold_ext": (("table_lo_ext", "table_hi_ext", "weights_lo", "weights_hi", "table_out", "weights_out",
                      "challenge"), 256)}, _SUFFIX),
    _spec("factor_tables", "n_eq n_sel nv log_lo eq_scaled coord_off eq_scale_off base_off sel_scale_off eq_lo_at "
          "eq_hi_at sel_lo_at sel_hi_at first end _pad0",
          {"factor_tables": (("coords", "eq_scales", "bases", "sel_scales", "out"), 256)}),
    _spec("weights", "len base log_lo accumulate n_eq n_sel hi_len _pad",
          {"weights": (("out_weights", "eq_lo", "eq_hi", "sel_lo", "sel_hi"), 256)}),
    _spec("next_weights", "len base log_low mask prev_shift win _pad0 _pad1",
          {"next_weights": (("out_weights", "prev", "cur"), 256)}),
    _spec("column_claims", "n_claims groups len _pad0", {
        "column_claims_partial": (("table", "eq", "desc", "partials"), 256),
        "column_claims_finish": (("partials_in", "out"), 256)}),
    _spec("column_weights", "len n_claims _pad0 _pad1",
          {"column_weights": (("weights", "eq", "desc", "coefficients"), 256)}),
    _spec("stack_columns", "n cols log_rows col_major first_slot m sel_bits prefix", {
        "stack_columns": (("src", "stacked", "check"), 256),
        "stack_zero": (("stacked_zero",), 256)}),
    _spec("mle_eval", "len base log_s partial_base groups total out_at point_at nv _pad0 _pad1 _pad2" + _TAIL, {
        "mle_eval_base": (("table_base", "work", "scratch", "proof", "points", _P2), 256),
        "mle_eval_ext": (("table_ext", "work", "scratch", "proof", "points", _P2), 256)},
          {"MLE_POWERS": (9, 0), **_CH}),  # MLE_POWERS 1: a 0 bit's factor is 1 (sum_b T[b] y^b at expand(y))
    _spec("pow_search", "mask found counter first_batch end_batch exit_ticket groups _pad0" + _TAIL,
          {"pow_search": (("scratch_atomic", "proof", "points", _P2), "WG")}, {"WG": (0, 64), "TAIL": (1, 1), **_CH}),
    _spec("transcript", "n_ops _pad0 _pad1 _pad2 ops:vec4x11",
          {"transcript": (("scratch", "proof", "points", _P2), 64)}, _CH),
    # rand's StdRng keystream as field samples (the hiding PCS's masks; kernels/mask_rng.py)
    # (the key: status words key_at .. key_at + 7, a per-proof input of a recorded launch)
    _spec("chacha_sample", "key_at block_lo block_hi n_words n_samples rank_first rank_end out_off status_at groups "
          "_pad0 _pad1", {
              "chacha_sample_count": (("counts", "status"), "WG"),
              "chacha_sample_scan": (("counts", "status"), "WG"),
              "chacha_sample_compact": (("counts", "status", "out"), "WG")}, _WG),
    # the hiding PCS's masked sumcheck round message (backends/gpu/masked_rounds.py)
    _spec("zk_wire", "sums_at wire_at past_at gamma_at consts_at wire_len mask_len _pad0" + _TAIL,
          {"zk_wire": (("scratch", "proof", _P2), 64)}, _CH),
    # extension-field arithmetic on the proof's scratch and proof words (kernels/ef_program.py)
    _spec("ef_program", "n_slots table window _pad0" + _TAIL,
          {"ef_program": (("scratch", "proof", "points", _P2), 256)}, _CH),
    # an out-of-domain answer of its code switch (backends/gpu/code_switch.py)
    _spec("zk_ood", "at_at z_at consts_at n_coeffs log_n out_at _pad0 _pad1" + _TAIL,
          {"zk_ood": (("scratch", "proof", "points", _P2), 64)}, _CH),
    _spec("to_monty", "n base check_at _pad0", {
        "to_monty_inplace": (("check", "table"), 256),
        "to_monty_copy": (("check", "table", "canonical"), 256)}),
)}


def spec(stem: str) -> KernelSpec:
    """The registry entry of ``stem``; a clear error for an unknown stem."""
    try:
        return KERNELS[stem]
    except KeyError:
        raise KeyError(f"no kernel {stem!r} in the registry (known: {', '.join(sorted(KERNELS))})") from None
