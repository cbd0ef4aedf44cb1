"""Poseidon2 / Merkle kernel variants on the wgpu adapter, timed with GPU timestamps (a tuning aid).

Usage: python3 -m benchmarks.p2_variants [--variants storage,switch,...] [--wg 64,128,256] [--log-states 20]
       [--log-height 21] [--width 16] [--runs 7] [--json FILE]
A variant rewrites the composed WGSL of the merkle kernels before compiling (round-constant source, add form);
``storage`` is the shipped source. Per variant, multiply and workgroup size: permutation throughput over
2^log-states states (median per-dispatch GPU time), and for the tree: leaves and per-level GPU times (median
of runs, each dispatch in its own pass; tree_gpu_ms is their sum), the GPU time of the whole tree as one pass
(tree_one_pass_ms: first begin to last end timestamp), and the wall time of build_tree + wait. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time

import numpy as np

from benchmarks.gpu_timing import one_pass_ms
from whirgpu.backends.base import StorageMode
from whirgpu.field import P
from whirgpu.kernels import merkle
from whirgpu.kernels.constants import poseidon2_rc_table
from whirgpu.ref.poseidon2 import permute
from whirgpu.runtime import wgpu_rt
from whirgpu.runtime.base import RtBuffer
from whirgpu.runtime.wgpu_rt import WgpuRuntime

_compose = wgpu_rt.pipelines.compose
_RC_ACCESS = re.compile(r"p2_rc\[([^\]]*)\]")


def _table_literal(kind: str, name: str) -> str:
    rows = poseidon2_rc_table().reshape(-1, 4)
    body = ", ".join(f"vec4<u32>({', '.join(f'{int(w)}u' for w in row)})" for row in rows)
    return f"{kind} {name}: array<vec4<u32>, {len(rows)}> = array<vec4<u32>, {len(rows)}>({body});\n"


def _switch_fn() -> str:
    rows = poseidon2_rc_table().reshape(-1, 4)
    cases = "".join(f"        case {i}u: {{ return vec4<u32>({', '.join(f'{int(w)}u' for w in row)}); }}\n"
                    for i, row in enumerate(rows))
    return ("fn p2_rc_switch(i: u32) -> vec4<u32> {\n    switch (i) {\n" + cases +
            "        default: { return p2_rc[0]; }\n    }\n}\n")


def _external_only(text: str, repl) -> str:
    # rewrite the external-round accesses only: the internal one keeps the binding referenced (auto layout)
    head, tail = text.split("fn p2_internal_round", 1)
    return _RC_ACCESS.sub(repl, head) + "fn p2_internal_round" + tail


_PREFETCH = """fn p2_rc_round(r: u32) -> P2State {
    let k = 4u * r;
    return P2State(p2_rc[k], p2_rc[k + 1u], p2_rc[k + 2u], p2_rc[k + 3u]);
}

fn poseidon2_permute(state: P2State) -> P2State {
    var s = p2_mds_light(state);
    var rc = p2_rc_round(0u);
    for (var r = 0u; r < P2_EXTERNAL_HALF_ROUNDS; r++) {
        let next = p2_rc_round(r + 1u);
        s = p2_mds_light(P2State(p2_sbox4(s.a, rc.a), p2_sbox4(s.b, rc.b), p2_sbox4(s.c, rc.c), p2_sbox4(s.d, rc.d)));
        rc = next;
    }
    var rci = p2_rc[P2_RC_INTERNAL_AT].x;
    for (var r = 0u; r < P2_INTERNAL_ROUNDS; r++) {
        let next = p2_rc[P2_RC_INTERNAL_AT + r + 1u].x;
        s = p2_internal_round(s, rci);
        rci = next;
    }
    for (var r = P2_EXTERNAL_HALF_ROUNDS; r < 2u * P2_EXTERNAL_HALF_ROUNDS; r++) {
        let next = p2_rc_round(r + 1u);
        s = p2_mds_light(P2State(p2_sbox4(s.a, rc.a), p2_sbox4(s.b, rc.b), p2_sbox4(s.c, rc.c), p2_sbox4(s.d, rc.d)));
        rc = next;
    }
    return s;
}
"""


def _replace_fn(text: str, name: str, new: str) -> str:
    start = text.index(f"fn {name}(")
    end = text.index("\n}\n", start) + 3
    return text[:start] + new + text[end:]


def rewrite(variant: str, text: str) -> str:
    if "+" in variant:
        for part in variant.split("+"):
            text = rewrite(part, text)
        return text
    if variant == "storage":
        return text
    if variant == "prefetch":
        return _replace_fn(text, "poseidon2_permute", _PREFETCH)
    if variant == "uniform":
        return text.replace("var<storage, read> p2_rc:", "var<uniform> p2_rc:")
    if variant == "switch":
        head, tail = text.split("fn p2_internal_round", 1)
        return (_RC_ACCESS.sub(r"p2_rc_switch(\1)", head) + "fn p2_internal_round"
                + _RC_ACCESS.sub(r"p2_rc_switch(\1)", tail) + _switch_fn())
    if variant == "const":
        return _table_literal("const", "P2_RC_TAB") + _external_only(text, r"P2_RC_TAB[\1]")
    if variant == "private":
        return _table_literal("var<private>", "P2_RC_TAB") + _external_only(text, r"P2_RC_TAB[\1]")
    if variant == "select":  # bb_add/bb_sub/Montgomery correction as compare + select instead of min
        text = text.replace("return min(s, s - BB_P);", "return select(s, s - BB_P, s >= BB_P);")
        text = text.replace("return min(d, d + BB_P);", "return select(d, d + BB_P, a < b);")
        text = text.replace("return min(r, r + BB_P);", "return select(r, r + BB_P, hi < u);")
        return text.replace("return min(s, s - vec4<u32>(BB_P));",
                            "return select(s, s - vec4<u32>(BB_P), s >= vec4<u32>(BB_P));")
    raise ValueError(f"unknown variant {variant!r}")


def make_runtime(mul: str, variant: str) -> WgpuRuntime:
    def patched(lang, stem, variants=()):
        source = _compose(lang, stem, variants)
        if not stem.startswith("merkle_"):
            return source
        return type(source)(rewrite(variant, source.text), source.line_map)

    wgpu_rt.pipelines.compose = patched
    rt = WgpuRuntime(mul=mul)
    if variant == "uniform":
        words = poseidon2_rc_table()
        usage = rt.wgpu.BufferUsage
        handle = rt.device.create_buffer(size=words.nbytes, usage=usage.UNIFORM | usage.STORAGE | usage.COPY_DST)
        rt.device.queue.write_buffer(handle, 0, words)
        merkle._rc_tables[rt] = RtBuffer(handle, words.nbytes, StorageMode.PRIVATE)
    return rt


def gpu_times(rt: WgpuRuntime, record, runs: int) -> list[list[float]]:
    """Per run, the GPU ms of each dispatch ``record(batch)`` makes."""
    rt.set_profiling(True)
    out = []
    for _ in range(runs + 1):
        batch = rt.batch()
        record(batch)
        batch.submit()
        rt.wait()
        out.append([ns / 1e6 for _, ns in rt.kernel_times()])
    rt.set_profiling(False)
    return out[1:]


def bench(rt: WgpuRuntime, wg: int, args, data: dict) -> dict:
    merkle.WORKGROUP = wg
    merkle.COOP_MAX_STATES = args.coop_max
    merkle.TOP_MAX_PARENTS = args.top_max
    n_states = 1 << args.log_states
    perm = gpu_times(rt, lambda b: merkle.permute_states(rt, b, data["states"], data["out"], n_states), args.runs)
    perm_ms = statistics.median(t[0] for t in perm)
    check = min(n_states, 4096)
    exact = bool(np.array_equal(rt.read(data["out"], 64 * check).reshape(-1, 16), permute(data["host"][:check])))
    height, width = 1 << args.log_height, args.width
    tree = gpu_times(rt, lambda b: merkle.build_tree(rt, data["matrix"], height, width, batch=b), args.runs)
    levels = [statistics.median(t[i] for t in tree) for i in range(len(tree[0]))]  # dispatches, not copies
    tree_one_pass = one_pass_ms(rt, lambda b: merkle.build_tree(rt, data["matrix"], height, width, batch=b),
                                args.runs)
    walls, parts = [], []
    for _ in range(args.runs + 1):
        start = time.perf_counter()
        batch = rt.batch()
        merkle.build_tree(rt, data["matrix"], height, width, batch=batch)
        recorded = time.perf_counter()
        batch.submit()
        submitted = time.perf_counter()
        rt.wait()
        done = time.perf_counter()
        walls.append((done - start) * 1e3)
        parts.append(((recorded - start) * 1e3, (submitted - recorded) * 1e3, (done - submitted) * 1e3))
    n_perms = height * (-(-width // 8)) + height - 1
    return {
        "wg": wg,
        "coop_max": args.coop_max,
        "top_max": args.top_max,
        "exact": exact,
        "perm_Gperm_s": round(n_states / perm_ms / 1e6, 3),
        "tree_gpu_ms": round(sum(levels), 3),
        "tree_one_pass_ms": round(tree_one_pass, 3),
        "tree_Gperm_s": round(n_perms / sum(levels) / 1e6, 3),
        "leaves_ms": round(levels[0], 3),
        "levels_ms": [round(x, 4) for x in levels[1:]],
        "tree_wall_ms": round(statistics.median(walls[1:]), 3),
        "wall_record_submit_wait_ms": [round(statistics.median(p[i] for p in parts[1:]), 3) for i in range(3)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="storage")
    parser.add_argument("--muls", default="u64,emulated")
    parser.add_argument("--wg", default="64")
    parser.add_argument("--log-states", type=int, default=20)
    parser.add_argument("--log-height", type=int, default=21)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--coop-max", type=int, default=merkle.COOP_MAX_STATES)
    parser.add_argument("--top-max", type=int, default=merkle.TOP_MAX_PARENTS)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    results = []
    for mul in args.muls.split(","):
        for variant in args.variants.split(","):
            try:
                rt = make_runtime(mul, variant)
                data = {}
                for name, words in (("states", 16 << args.log_states), ("out", 16 << args.log_states),
                                    ("matrix", args.width << args.log_height)):
                    data[name] = rt.alloc(4 * words)
                    if name != "out":
                        host = rng.integers(0, P, words, dtype=np.uint64).astype(np.uint32)
                        rt.write(data[name], host)
                        if name == "states":
                            data["host"] = host.reshape(-1, 16)
                for wg in (int(w) for w in args.wg.split(",")):
                    start = time.perf_counter()
                    r = {"mul": mul, "variant": variant, **bench(rt, wg, args, data)}
                    r["bench_s"] = round(time.perf_counter() - start, 2)
                    print(json.dumps(r), flush=True)
                    results.append(r)
            except Exception as exc:  # noqa: BLE001 - report and go on with the next variant
                print(json.dumps({"mul": mul, "variant": variant, "error": str(exc)[:2000]}), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)


if __name__ == "__main__":
    main()
