"""Verifications per second of one configuration's proofs, one by one (``whirgpu.verify``) and as one batch
(``whirgpu.batch_verify.verify_many``), on the host CPU:

    python -m benchmarks.verify_throughput [--point 20:4:1] [--count 64] [--backend auto]

The proofs (``count`` random instances) are made first, untimed, on ``--backend``; the two timings then run over
the same in-memory ``ProofFile``s, and every verdict must be an acceptance.
"""

from __future__ import annotations

import argparse
import time

from whirgpu.api import Prover, random_canonical_instance, verify
from whirgpu.batch_verify import verify_many
from whirgpu.bench.grid import parse_point


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--point", default="20:4:1")
    parser.add_argument("--count", type=int, default=64)
    parser.add_argument("--backend", default="auto")
    args = parser.parse_args(argv)
    point = parse_point(args.point)
    prover = Prover(point.config(), backend=args.backend)
    proofs = list(prover.prove_many(random_canonical_instance(point.n, seed) for seed in range(args.count)))
    verify(proofs[0])  # warm: the configuration's separator state is cached
    start = time.perf_counter()
    for proof in proofs:
        verify(proof)
    single = time.perf_counter() - start
    start = time.perf_counter()
    verdicts = verify_many(proofs)
    batch = time.perf_counter() - start
    assert all(v.ok for v in verdicts)
    print(f"{point} on {prover.backend.name}: {args.count} proofs; verify one by one {args.count / single:.1f}/s "
          f"({single / args.count * 1e3:.2f} ms each), verify_many {args.count / batch:.1f}/s "
          f"({batch / args.count * 1e3:.2f} ms each)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
