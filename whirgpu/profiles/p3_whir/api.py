"""Proving in the p3-whir profile (upstream Plonky3 ``p3-whir`` at 5dc50e51): ``P3Prover`` and the proof document
it writes, which ``whirgpu verify --profile p3-whir`` and upstream's oracle read.

Contract: ``P3Prover(num_variables, params=None, field="koalabear", backend="auto", storage=None)``:
- ``params=None``: upstream's example (``defaults.EXAMPLE_PARAMETERS``) with its grinding budget raised, where
  upstream refuses it at this size, to the smallest budget upstream accepts (``defaults.resolve``);
  ``P3Prover.pow_note`` is then the line saying so (None when nothing was raised) and ``P3Prover.params`` the
  parameters proved. ``defaults.resolve(n, defaults.example_parameters(...), field, explicit=False).params`` gives
  the same rule for other choices.
- ``params`` a ``P3Parameters``: exactly those; a budget upstream refuses is a ``ConfigError`` keeping upstream's
  message and naming the smallest budget that works.
Either way a derived PoW above what the transcript can grind is refused. ``prove(evaluations, num_openings=1,
points=None)`` takes the 2^n canonical values (uint32 or any integer array-like, below the field's p) and either a
number of openings whose points the transcript draws (upstream's ``MultilinearPcs::open``) or prescribed points
(E, n, 4) of canonical EF coefficients c0..c3 (``PrescribedPointPcs::open_at``), 1 to ``defaults.MAX_OPENINGS``
of them, and returns a ``P3ProofDocument``. Bad input is a ``ConfigError`` naming it. The proof bytes are
upstream's (the golden-p3 files are reproduced byte for byte on every backend). ``prove_many(instances,
in_flight=2, devices=None, processes=None, num_openings=1)`` proves (evaluations, points) pairs as ``prove`` does,
with ``Prover.prove_many``'s options; ``close()``, ``with``, ``backend``, ``device`` and ``storage`` are
``Prover``'s (``many.surface.ProverSurface``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field as dataclass_field

import numpy as np

from ...canonical import canonical_table
from ...backends import select_backend
from ...backends.base import Backend
from ...errors import ConfigError
from ...files import write_atomic
from ...field import Field
from ...many.surface import ProverSurface
from ...protocol.folding import Constant
from .config import P3Parameters, P3WhirConfig
from .defaults import EXAMPLE_FIELD, EXAMPLE_PARAMETERS, PLONKY3_COMMIT, as_field, check_openings, resolve
from .document import FORMAT
from .format import merkle_cap_to_json, merkle_cap_to_postcard, pcs_proof_to_json, \
    pcs_proof_to_postcard
from .prover import P3Proved, P3WhirProver
from ...ref.field_np import field_ops

__all__ = ["EXAMPLE_PARAMETERS", "PLONKY3_COMMIT", "P3ProofDocument", "P3Prover"]


@dataclass
class P3ProofDocument:
    """A p3-whir proof with what its verifier needs (``p3-whir-oracle/v1``): the parameters, the field, the
    commitment, the proof (serde JSON and postcard), the points and the claimed values (canonical)."""

    num_variables: int
    params: P3Parameters
    field: Field
    proved: P3Proved
    prescribed: bool
    seed: int | None = None
    phase_seconds: dict = dataclass_field(default_factory=dict)

    def to_json(self) -> dict:
        ops = field_ops(self.field)
        p = self.params
        claims = np.stack([e.current[0] for e in self.proved.proof.evals])
        postcard = pcs_proof_to_postcard(self.proved.proof)
        params = {"num_variables": self.num_variables, "folding_factor": p.folding.k,
                  "folding_factor_kind": "Constant",
                  "starting_log_inv_rate": p.starting_log_inv_rate,
                  "round_log_inv_rates": [r.log_inv_rate for r in self.config.rounds],
                  "security_level": p.security_level, "pow_bits": p.pow_bits,
                  "soundness_type": p.soundness_type.name, "evaluations": len(claims),
                  "points": "prescribed" if self.prescribed else "transcript", "layout": "SuffixProver"}
        if self.seed is not None:
            params["seed"] = self.seed
        return {
            "format": FORMAT, "field": self.field.name, "plonky3_commit": PLONKY3_COMMIT, "params": params,
            "commitment": merkle_cap_to_json(self.proved.commitment),
            "commitment_postcard_hex": merkle_cap_to_postcard(self.proved.commitment).hex(),
            "proof": pcs_proof_to_json(self.proved.proof),
            "proof_postcard_hex": postcard.hex(), "proof_postcard_len": len(postcard),
            "points_canonical": ops.from_monty(self.proved.points).tolist(),
            "claimed_values_canonical": ops.from_monty(claims).tolist(),
        }

    @property
    def config(self) -> P3WhirConfig:
        return P3WhirConfig.derive(self.num_variables, self.params, self.field)

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1)

    def write(self, path) -> int:
        """Write the document as JSON through a temporary file renamed over ``path`` (``files.write_atomic``: a
        failed write leaves ``path`` as it was); returns its size in bytes. ``FileError`` when it cannot be
        written."""
        data = self.dumps().encode()
        write_atomic(path, data)
        return len(data)


class P3Prover(ProverSurface):
    """Commits to polynomials and opens them in the p3-whir profile on the backend ``select_backend`` resolves.
    ``backend``, ``closed``, ``close()``, ``with``, ``storage``, ``device`` and the worker processes of
    ``prove_many(processes=...)`` are ``ProverSurface``'s, as ``Prover`` has them."""

    def __init__(self, num_variables: int, params: P3Parameters | None = None, field: str | Field = EXAMPLE_FIELD,
                 backend: str | Backend = "auto", storage: str | None = None):
        self.field = as_field(field)
        asked = EXAMPLE_PARAMETERS if params is None else params
        if not isinstance(asked.folding, Constant):
            raise ConfigError("the p3-whir proof document carries a Constant folding factor; "
                              f"got {type(asked.folding).__name__}")
        self.num_variables = int(num_variables)
        resolved = resolve(self.num_variables, asked, self.field, explicit=params is not None, flag="pow_bits")
        self.pow_note: str | None = resolved.note
        self.params: P3Parameters = resolved.params
        self.config: P3WhirConfig = resolved.config
        choice = select_backend(backend, self.config, storage)  # auto: the proof must fit the device
        super().__init__(choice.backend, not isinstance(backend, Backend))
        self.backend_reason = choice.reason
        self.last_phase_seconds: dict[str, float] = {}

    def prove(self, evaluations, num_openings: int = 1, points=None, seed: int | None = None) -> P3ProofDocument:
        n = self.num_variables
        start = time.perf_counter()
        if points is None:
            num_openings = check_openings(num_openings, "num_openings")
        words = _canonical(evaluations, n, self.field)
        monty_points = None
        if points is not None:
            monty_points = _canonical_points(points, n, self.field)
        input_seconds = time.perf_counter() - start
        prover = P3WhirProver(self.config, self.field, self.backend)
        proved = prover.prove_p3(words, num_openings, monty_points if points is not None else None, canonical=True)
        self.last_phase_seconds = {"input": input_seconds, **prover.timer.seconds}
        return P3ProofDocument(n, self.params, self.field, proved, points is not None, seed, self.last_phase_seconds)

    def prove_many(self, instances, in_flight: int = 2, devices=None, processes: int | None = None,
                   num_openings: int = 1, batch: int | None = None):
        """Prove every (evaluations, points) of ``instances`` (any iterable, consumed as the proofs go) as ``prove``
        does, yielding the ``P3ProofDocument``s in order: ``points`` None draws ``num_openings`` points from the
        transcript (``prove(evaluations, num_openings)``), an (E, n, 4) array prescribes them
        (``prove(evaluations, points=points)``). The documents are those ``prove`` makes one by one, byte for
        byte. ``in_flight``, ``devices``, ``processes`` and ``batch`` as ``Prover.prove_many`` takes them: proofs in flight on
        a GPU backend, instance i on device i mod D (``"all"`` adapters or a list of backends), or that many worker
        processes per device, started at the first such call and kept until ``close()`` (tables travel to them as
        host arrays; the call must run under ``if __name__ == "__main__":`` in a script). A bad instance raises its
        ``ConfigError`` in its turn, after the documents before it."""
        num_openings = check_openings(num_openings, "num_openings")
        yield from super().prove_many(instances, in_flight, devices, processes, batch, num_openings=num_openings)

    def _prove_here(self, instances, in_flight: int, batch: int, num_openings: int):
        n, field = self.num_variables, self.field

        def sources():
            for evaluations, points in instances:
                words = _canonical(evaluations, n, field)
                if points is None:
                    yield words, num_openings, None
                else:
                    yield words, 0, _canonical_points(points, n, field)

        prover = P3WhirProver(self.config, field, self.backend)
        for proved, prescribed in prover.prove_many_p3(sources(), in_flight, batch):
            self.last_phase_seconds = dict(prover.timer.seconds)
            yield P3ProofDocument(n, self.params, field, proved, prescribed, None, self.last_phase_seconds)

    def _rebuilder(self, for_processes: bool, options: tuple):
        """This prover on another backend, with the parameters it proves (``pow_note``'s raise already in them),
        drawing ``num_openings`` (the one option) points where an instance's points are None."""
        return P3Rebuild(self.num_variables, self.params, self.field, dict(options)["num_openings"])


@dataclass(frozen=True)
class P3Rebuild:
    """``make(backend=...)`` of ``ProverSurface``: a ``P3Prover`` with these parameters on another backend (a
    device's thread, a worker process: it pickles), whose ``prove(evaluations, points)`` and ``prove_many``
    draw ``num_openings`` points where an instance's points are None."""

    num_variables: int
    params: P3Parameters
    field: Field
    num_openings: int

    def __call__(self, backend: Backend) -> "RebuiltP3Prover":
        return RebuiltP3Prover(P3Prover(self.num_variables, self.params, self.field, backend=backend),
                               self.num_openings)


class RebuiltP3Prover:
    """A ``P3Prover`` taking instances as its ``prove_many`` does (``P3Rebuild``)."""

    def __init__(self, prover: P3Prover, num_openings: int):
        self.prover = prover
        self.num_openings = num_openings

    @property
    def backend(self) -> Backend:
        return self.prover.backend

    def prove(self, evaluations, points) -> P3ProofDocument:
        return self.prover.prove(evaluations, self.num_openings, points)

    def prove_many(self, instances, in_flight: int = 2):
        return self.prover.prove_many(instances, in_flight, num_openings=self.num_openings)

def _canonical(values, n: int, field: Field) -> np.ndarray:
    """As ``Prover.prove`` takes them (``api.canonical_table``): a C-contiguous uint32 array as it is, other integer
    arrays narrowed; the range below the field's p is checked by the backend (on the device for a GPU)."""
    return canonical_table(values, n)


def _canonical_points(points, n: int, field: Field) -> np.ndarray:
    array = np.asarray(points)
    if array.ndim != 3 or array.shape[1:] != (n, 4) or array.shape[0] < 1:
        raise ConfigError(f"points must have shape (E, {n}, 4) with E >= 1 (canonical EF coefficients), got "
                          f"{array.shape}")
    check_openings(array.shape[0], "the number of prescribed points")
    if array.dtype.kind not in "iu" or int(array.min()) < 0 or int(array.max()) >= field.P:
        raise ConfigError(f"points must be canonical field elements in [0, {field.P})")
    return field_ops(field).to_monty(array.astype(np.uint64))
