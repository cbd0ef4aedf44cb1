"""Proving beyond one host, on Ray (the optional extra ``ray``: ``pip install 'ray>=2.9'``): provers as Ray actors, one per GPU,
fed through Ray's ``ActorPool`` (Ray does the scheduling, transport and placement; nothing here is a scheduler).

Contract:
- ``ProverActor`` (a ``ray.remote`` class): ``ProverActor.remote(params, backend="auto", storage=None)`` opens one
  ``Prover`` in the actor's process; ``prove(evaluations, points)`` returns the proof file's binary bytes;
  ``prove_batch(instances)`` proves a list through ``Prover.prove_many`` (proofs in flight) and returns the
  bytes in order; ``backend_name()`` says where it proves.
- ``prove_with_ray(params, instances, actors=None, backend="auto", gpus_per_actor=None)`` yields the
  ``ProofFile``s of ``instances`` ((evaluations, points) as ``Prover.prove`` takes them) in input order, each
  instance sent to the next free actor. ``actors``: how many (default: one per GPU of the cluster, else one);
  ``gpus_per_actor``: Ray's ``num_gpus`` of each actor (default 1 when the cluster has GPUs, else 0, so a CPU-only
  cluster proves on the cpu backend or a software adapter). ``ray.init`` is the caller's (or Ray's default,
  a local cluster). The proofs are byte for byte what ``Prover.prove`` makes.
"""

from __future__ import annotations

from typing import Iterable, Iterator

try:
    import ray
    from ray.util import ActorPool
except ImportError as exc:  # the extra is optional: say what to install
    from ..errors import BackendUnavailable

    raise BackendUnavailable(f"whirgpu.many.ray needs Ray: pip install 'ray>=2.9' ({exc})") from None

from ..api import Prover
from ..protocol.parameters import ProtocolParameters
from ..profiles.whir_p3_metal.serialize import ProofFile, dump, load


@ray.remote
class ProverActor:
    """One ``Prover`` in a Ray worker process (see the module contract)."""

    def __init__(self, params: ProtocolParameters, backend: str = "auto", storage: str | None = None):
        self.prover = Prover(params, backend=backend, storage=storage)

    def backend_name(self) -> str:
        return f"{self.prover.backend.name} ({self.prover.backend_reason})"

    def prove(self, evaluations, points) -> bytes:
        return dump(self.prover.prove(evaluations, points), "binary")

    def prove_batch(self, instances: list) -> list[bytes]:
        return [dump(proof, "binary") for proof in self.prover.prove_many(instances)]


def _cluster_gpus() -> int:
    return int(ray.cluster_resources().get("GPU", 0))


def prove_with_ray(params: ProtocolParameters, instances: Iterable, actors: int | None = None,
                   backend: str = "auto", gpus_per_actor: float | None = None) -> Iterator[ProofFile]:
    """The proofs of ``instances`` in input order, proved by a pool of ``ProverActor``s (module contract)."""
    if not ray.is_initialized():
        ray.init()
    gpus = _cluster_gpus()
    if gpus_per_actor is None:
        gpus_per_actor = 1 if gpus else 0
    if actors is None:
        actors = max(1, int(gpus // gpus_per_actor) if gpus_per_actor else 1)
    pool = ActorPool([ProverActor.options(num_gpus=gpus_per_actor).remote(params, backend)
                      for _ in range(actors)])
    for data in pool.map(lambda actor, instance: actor.prove.remote(*instance), instances):
        yield load(data)
