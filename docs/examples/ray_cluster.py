"""Proving on a Ray cluster: one prover actor per GPU, proofs back in order.

    pip install 'ray>=2.9'                 # or, in the clone: pip install '.[ray]'
    python docs/examples/ray_cluster.py [--address auto] [--proofs 16] [-n 16]

Without ``--address`` Ray starts a local cluster; on a cluster, ``ray start --head`` on one host and
``ray start --address HEAD:6379`` on the others, then ``--address auto`` here. Each proof is verified.
"""

from __future__ import annotations

import argparse
import time

import ray

import whirgpu
from whirgpu.api import random_canonical_instance
from whirgpu.many.ray import prove_with_ray


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", default=None, help="a running cluster (auto, or HOST:PORT)")
    parser.add_argument("--proofs", type=int, default=16)
    parser.add_argument("-n", type=int, default=16, help="2^n evaluations per polynomial")
    args = parser.parse_args()
    ray.init(address=args.address)
    params = whirgpu.ProtocolParameters.default(num_variables=args.n, folding_factor=4, starting_log_inv_rate=1)
    instances = (random_canonical_instance(args.n, seed) for seed in range(args.proofs))
    start = time.perf_counter()
    for i, proof in enumerate(prove_with_ray(params, instances)):
        whirgpu.verify(proof, params=params)
        print(f"proof {i}: {len(whirgpu.dump(proof))} bytes, verified")
    print(f"{args.proofs} proofs in {time.perf_counter() - start:.1f} s on {ray.cluster_resources()}")


if __name__ == "__main__":
    main()
