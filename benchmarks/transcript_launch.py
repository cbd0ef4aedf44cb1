"""What a transcript program costs on the device: one ``transcript`` launch per program shape, timed with GPU
timestamps on a wgpu adapter (a tuning aid for the device challenger, challenger.wgsl).

Usage: python3 -m benchmarks.transcript_launch [--mul u64|emulated] [--runs 20] [--json FILE]
Shapes: ``observe1`` (one observed word, no permutation), ``sample1`` (one observed word and one EF sample: one
duplex), ``sample5x`` (five of those: five duplexes), ``observe8`` (a full rate: one duplex), ``observe64`` (eight
duplexes), ``samples91`` (one op of 91 base samples: 12 duplexes), ``queries11`` / ``44`` / ``91`` (a round's query draw
of that many 18-bit indices and its SORT). Per shape, the median GPU time of its launches (summed) over ``runs`` proofs' sessions (the first is dropped as
warm-up). The difference between shapes is what a duplex costs. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import statistics

import numpy as np

from whirgpu.backends.device_transcript import OP_SAMPLE
from whirgpu.backends.gpu import GpuBackend, challenger_words
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.runtime.wgpu_rt import WgpuRuntime

SHAPES = {
    "observe1": lambda t, v: t.observe(v[0]),
    "sample1": lambda t, v: (t.observe(v[0]), t.sample_ef()),
    "sample5x": lambda t, v: [(t.observe(v[i]), t.sample_ef()) for i in range(5)],
    "observe8": lambda t, v: t.observe(v[6]),
    "observe64": lambda t, v: t.observe(v[5]),
    # the query draw of a round (2^22 points folded by 2^4: 18-bit indices, one sample each) and its SORT, against
    # as many plain samples (the same duplexes, no draw ops, no SORT)
    "samples91": lambda t, v: (t.observe(v[0]), t._op(OP_SAMPLE, t.session.regions.scratch.take((91,)).word, 91)),
    "queries11": lambda t, v: (t.observe(v[0]), t.sample_queries(1 << 22, 4, 11)),
    "queries44": lambda t, v: (t.observe(v[0]), t.sample_queries(1 << 22, 4, 44)),
    "queries91": lambda t, v: (t.observe(v[0]), t.sample_queries(1 << 22, 4, 91)),
}


def _time_shape(rt: WgpuRuntime, gpu: GpuBackend, shape, runs: int) -> list[float]:
    times = []
    for run in range(runs + 1):
        session = gpu.state.open_session(4 * 4096, 4 * (1 << 14), 64)
        regions = session.regions
        start = DuplexChallenger()
        gpu.state.drivers.write(regions.scratch.buffer, challenger_words(start.sponge_state, start.input_buffer,
                                                                    len(start.output_buffer)), regions.state.offset)
        gpu.state.session = session
        values = []
        for words in [np.array([i + 1], np.uint32) for i in range(5)] + [np.arange(64, dtype=np.uint32),
                                                                        np.arange(8, dtype=np.uint32)]:
            value = regions.proof.take(words.shape)
            gpu.state.drivers.write(regions.proof.buffer, words, value.offset)
            values.append(value)
        rt.kernel_times()
        shape(session.transcript, values)
        session.transcript.flush()
        session.runtime_batch.submit()
        gpu.state.session = None
        gpu.state.drivers.read(regions.proof.buffer)
        gpu.state.pool.free(regions.proof.buffer, regions.scratch.buffer, regions.points.buffer)
        launch = [ns for label, ns in rt.kernel_times() if label.startswith("transcript")]
        if run and launch:
            times.append(sum(launch))  # a shape of more ops than a program holds takes several launches
    return times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mul", default="u64", choices=("u64", "emulated"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    rt = WgpuRuntime(mul=args.mul)
    gpu = GpuBackend(rt)
    rt.set_profiling(True)
    results = {}
    for name, shape in SHAPES.items():
        times = _time_shape(rt, gpu, shape, args.runs)
        results[name] = {"median_us": statistics.median(times) / 1e3, "min_us": min(times) / 1e3,
                         "launches": len(times)}
        print(f"{name:10s} median {results[name]['median_us']:8.1f} us   min {results[name]['min_us']:8.1f} us")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"adapter": rt.adapter.summary, "mul": args.mul, "shapes": results}, out, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
