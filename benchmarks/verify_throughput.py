"""Verifications per second of one configuration's proofs, on the host CPU and with a GPU's help:

    python -m benchmarks.verify_throughput [--point 20:4:1] [--count 64] [--backend auto] [--processes K]
                                           [--gpu wgpu]

The proofs (``count`` random instances) are made first, untimed, on ``--backend``; then the same in-memory
``ProofFile``s are verified, each way timed as a whole and every verdict required to be an acceptance:
one by one (``whirgpu.verify``), as one batch on the host (``verify_many``), as one batch with its openings hashed
on ``--gpu`` (``verify_many(backend=...)``, skipped without one), and in ``--processes`` worker processes
(``verify_many(processes=K)``, default every CPU; its pool is started and warmed before the clock starts, as a
service keeps it).
"""

from __future__ import annotations

import argparse
import os
import time

from whirgpu.api import Prover, random_canonical_instance, verify
from whirgpu.many.batch_verify import verify_many
from whirgpu.bench.grid import parse_point


def _timed(label: str, count: int, run) -> None:
    start = time.perf_counter()
    verdicts = run()
    seconds = time.perf_counter() - start
    assert verdicts is None or all(v.ok for v in verdicts), label
    print(f"  {label}: {count / seconds:.1f}/s ({seconds / count * 1e3:.2f} ms each)", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--point", default="20:4:1")
    parser.add_argument("--count", type=int, default=64)
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--gpu", default=None, help="hash the batch's openings on this backend too")
    args = parser.parse_args(argv)
    point = parse_point(args.point)
    prover = Prover(point.config(), backend=args.backend)
    proofs = list(prover.prove_many(random_canonical_instance(point.n, seed) for seed in range(args.count)))
    prover.close()
    count = len(proofs)
    print(f"{point}: {count} proofs made on {args.backend}")
    verify(proofs[0])  # warm: the configuration's separator state is cached
    _timed("verify one by one", count, lambda: [verify(p) for p in proofs] and None)
    _timed("verify_many on the host", count, lambda: verify_many(proofs))
    if args.gpu:
        verify_many(proofs[:2], backend=args.gpu)  # warm: the kernel compiled
        _timed(f"verify_many, openings on {args.gpu}", count, lambda: verify_many(proofs, backend=args.gpu))
    verify_many(proofs[:2 * args.processes], processes=args.processes)  # warm: every worker started
    _timed(f"verify_many in {args.processes} processes", count,
           lambda: verify_many(proofs, processes=args.processes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
