"""Proving: ``Prover`` commits to a polynomial given as a numpy array and proves evaluation claims about it, on the
backend ``select_backend`` resolves; ``points_to_monty`` and the reference sweep's random instances
(``random_instance``, ``random_canonical_instance``, ``random_points``).

All values crossing it are **canonical** field elements (integers in [0, p), p = 2013265921); the Montgomery form
used inside is not visible here. A polynomial is its multilinear evaluation table of 2^n values, indexed by
b = Σ_t x_t 2^(n-1-t) (x_0 is the most significant bit). A point has n coordinates, each an extension element
[a0, a1, a2, a3] (a0 + a1 X + a2 X^2 + a3 X^3, X^4 = 11) or a base element.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from .backends import Backend, TransferStats, select_backend
from .canonical import canonical_array, canonical_table
from .errors import ConfigError
from .profiles.whir_p3_metal.serialize import ProofFile
from .many.surface import ProverSurface
from .profiles.whir_p3_metal.config import WhirConfig
from .protocol.parameters import ProtocolParameters
from .protocol.proof import Statement
from .profiles.whir_p3_metal.prover import MetalWhirProver
from .protocol.prover import PolynomialSource, check_polynomial
from .profiles.whir_p3_metal.reachability import derive_explained
from .ref import field_np as F
from .ref.multilinear import evaluate
from .native.xoshiro import sample_ef, sample_monty
from .ref.rng import Xoshiro256PlusPlus


def points_to_monty(points, num_variables: int) -> np.ndarray:
    """Canonical points -> Montgomery (m, n, 4). Accepts (m, n, 4) extension points or (m, n) base-field points
    (embedded as a0 = value); wrap a single point in a list."""
    array = canonical_array(points, "points")
    if array.size == 0 and array.shape[:1] == (0,):  # no claims: [], (0, n) or (0, n, 4)
        return np.zeros((0, num_variables, 4), np.uint32)
    if array.ndim == 2:
        array = np.concatenate([array[..., None], np.zeros(array.shape + (3,), array.dtype)], axis=-1)
    if array.ndim != 3 or array.shape[1:] != (num_variables, 4):
        raise ConfigError(f"points must have shape (m, {num_variables}, 4) or (m, {num_variables}); "
                          f"got {np.asarray(points).shape}")
    return F.to_monty(array.astype(np.uint64))


class Prover(ProverSurface):
    """Commits to polynomials and proves evaluation claims, on the backend ``select_backend`` resolves.

    ``storage``: the GPU storage policy, one of ``STORAGE_POLICIES`` (hybrid: inputs and outputs in host-visible
    memory, intermediates device-only; shared; private); None reads ``WHIRGPU_STORAGE``, else hybrid. The cpu
    backend accepts and ignores it. ``backend``, ``closed``, ``close()``, ``with``, ``storage``, ``device`` and the
    worker processes are ``ProverSurface``'s. After each proof, ``last_phase_seconds`` holds the wall time per phase and
    ``last_transfers`` the bytes uploaded, downloaded and copied on the device (all 0 on the cpu backend)."""

    def __init__(self, params: ProtocolParameters | WhirConfig, backend: str | Backend = "auto",
                 storage: str | None = None):
        self.config = params if isinstance(params, WhirConfig) else derive_explained(params)
        choice = select_backend(backend, self.config, storage)  # auto checks that the proof fits the device
        super().__init__(choice.backend, not isinstance(backend, Backend))
        self.backend_reason = choice.reason
        self.last_phase_seconds: dict[str, float] = {}
        self.last_transfers = TransferStats()

    @property
    def params(self) -> ProtocolParameters:
        return self.config.params

    @property
    def device(self):
        """The WebGPU device (a ``wgpu.GPUDevice``) of a wgpu or dawn prover: create a buffer on it to prove a table
        without uploading it (see ``prove``). None on the other backends."""
        return getattr(self.backend, "device", None)

    def prove(self, evaluations, points) -> ProofFile:
        """Prove the polynomial's values at ``points``; the claimed values are computed where the table is (on the
        device for a GPU backend, returned with the proof's one readback).

        evaluations: the 2^n canonical values, as
        - a C-contiguous ``uint32`` numpy array: taken as it is (no host copy or pass; converted to Montgomery
          form and range-checked on the device on GPU backends);
        - any other integer array-like (int64, lists, ...): narrowed to uint32 in one vectorised pass;
        - a ``wgpu.GPUBuffer`` created on ``prover.device`` with STORAGE usage, holding the 2^n canonical values as
          u32 words from offset 0 (wgpu and dawn backends): proved where it lies, never written.
        A value outside [0, p) is a ``ConfigError`` naming the first such index and its value (no proof is
        returned). points: see ``points_to_monty``; an empty (0, n) list proves nothing but the commitment's own
        consistency."""
        n = self.config.num_variables
        start = time.perf_counter()
        point_array = points_to_monty(points, n)
        if type(evaluations).__name__ == "GPUBuffer":  # wgpu-py's and wgpudawn's buffer classes
            words = self.backend.device_table(evaluations, 1 << n)
        else:
            words = canonical_table(evaluations, n)
        input_seconds = time.perf_counter() - start
        prover = MetalWhirProver(self.config, self.backend)
        proof, statement = prover.prove_points(PolynomialSource(words, canonical=True), point_array)
        self._record(prover, input_seconds)
        return ProofFile(self.config.params, statement, proof)

    def prove_many(self, instances, in_flight: int = 2, devices=None, processes: int | None = None,
                   batch: int | None = None):
        """Prove every (evaluations, points) of ``instances`` (any iterable, consumed as the proofs go: a
        generator of tables works) as ``prove`` does, yielding the ``ProofFile``s in order. On a GPU backend up to
        ``in_flight`` proofs are in flight: the host converts, uploads and records proof i + 1 while the device
        runs proof i, and proof i is read back only then. Once a shape has been proved twice, up to ``batch``
        (default 16; 1: never) proofs in a row run in the same launches on a WebGPU backend, every kernel over
        all of them (``backends.gpu.instanced``; as many as the device's limits allow); a batch starts once full
        (or at the end of ``instances``), so ``batch=1`` suits a slow stream. The bytes are those
        ``prove`` makes, one by one. A bad
        instance raises its ``ConfigError`` when its turn comes (the proofs before it have been yielded).
        Other threads' proofs on this prover wait until the iteration ends (or the generator is closed).

        ``devices``: None proves on this prover's backend; ``"all"`` on every adapter of its WebGPU implementation
        (one new backend each, closed at the end); a list of ``Backend``s on those (yours to close). Instance i
        goes to device i mod D, each device keeps ``in_flight`` proofs in flight in a thread of its own, and the
        proofs come back in input order (``whirgpu.many``).

        ``processes``: prove in that many worker processes per device instead (``whirgpu.many.processes``), each with a
        prover of its own on the device (on every device with ``devices``), up to ``in_flight`` proofs queued per
        worker. Host recording then runs side by side (one process records a proof in several ms of Python), so
        one GPU proves more per second than one process can record. The workers start (spawned, opening their
        devices and compiling their kernels: seconds) at the first such call and stay until ``close()``; the
        tables travel to them pickled, so they must be host arrays."""
        yield from super().prove_many(instances, in_flight, devices, processes, batch)

    def _prove_here(self, instances, in_flight: int, batch: int):
        n = self.config.num_variables
        backend = self.backend

        def sources():
            for evaluations, points in instances:
                point_array = points_to_monty(points, n)
                if type(evaluations).__name__ == "GPUBuffer":
                    words = backend.device_table(evaluations, 1 << n)
                else:
                    words = canonical_table(evaluations, n)
                yield PolynomialSource(words, canonical=True), point_array

        prover = MetalWhirProver(self.config, backend)
        for proof, statement in prover.prove_many_points(sources(), in_flight, batch):
            self.last_phase_seconds = dict(prover.timer.seconds)
            yield ProofFile(self.config.params, statement, proof)

    def _rebuilder(self, for_processes: bool, options: tuple):
        """This prover on another backend: from the configuration in a thread, from the parameters (smaller to
        pickle, derived again) in a worker process."""
        return functools.partial(type(self), self.config.params if for_processes else self.config)

    def prove_monty(self, poly: np.ndarray, statement: Statement | np.ndarray) -> ProofFile:
        """Lower level: a Montgomery table (2^n uint32 words below p, checked on the host) and either a
        ``Statement`` (its claimed values taken as given) or the points alone, (m, n, 4) Montgomery (the claimed
        values computed by the backend, as ``prove`` does)."""
        prover = MetalWhirProver(self.config, self.backend)  # a closed prover refuses here, before any work
        if isinstance(statement, Statement):
            proof = prover.prove(poly, statement)
        elif not isinstance(statement, (np.ndarray, list, tuple)):
            raise ConfigError(f"prove_monty statement: expected a Statement or its points, got "
                              f"{type(statement).__name__}")
        else:
            poly = check_polynomial(self.config, poly)
            proof, statement = prover.prove_points(PolynomialSource(poly, canonical=False),
                                                   np.asarray(statement, np.uint32))
        self._record(prover)
        return ProofFile(self.config.params, statement, proof)

    def _record(self, prover: MetalWhirProver, input_seconds: float | None = None) -> None:
        """Keep the last proof's phase times (``input``: the host's checks and conversions before the backend
        starts) and transfer counts."""
        phases = {"input": input_seconds} if input_seconds is not None else {}
        phases.update(prover.timer.seconds)
        self.last_phase_seconds = phases
        self.last_transfers = prover.stats


MAX_RANDOM_VARIABLES = 33  # 2^32 values (16 GiB of words): past any configuration a device or host proves


def random_instance(num_variables: int, seed: int) -> tuple[np.ndarray, Statement]:
    """The reference sweep's instance: SmallRng(seed) draws 2^n base values, then one EF point of n coordinates.

    Returns the Montgomery table and the statement with its claimed value, evaluated on the host (as the sweep's
    benchmarks do); ``random_points`` leaves the evaluation to the prover."""
    poly, points = random_points(num_variables, seed)
    return poly, Statement(points, evaluate(poly, points[0]).reshape(1, 4))


def random_canonical_instance(num_variables: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``random_instance`` as a user holds it: the canonical table (2^n,) uint32 and the point (1, n, 4) canonical,
    for ``Prover.prove`` (the instance benchmarks time the user's path on)."""
    poly, points = random_points(num_variables, seed)
    return F.from_monty(poly), F.from_monty(points)


def random_points(num_variables: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``random_instance`` without the claimed value: the Montgomery table (2^n,) and the point (1, n, 4)
    Montgomery, for ``Prover.prove_monty`` to evaluate where the table is."""
    for name, value, bound in (("num_variables", num_variables, MAX_RANDOM_VARIABLES), ("seed", seed, 1 << 64)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < bound:
            raise ConfigError(f"random_instance {name}: expected an integer in [0, {bound}), got {value!r}"[:200])
    num_variables, seed = int(num_variables), int(seed)
    rng = Xoshiro256PlusPlus(seed)
    poly = sample_monty(rng, 1 << num_variables)  # compiled when built: the same words as ref.rng.random_base
    return poly, sample_ef(rng, num_variables).reshape(1, num_variables, 4)
