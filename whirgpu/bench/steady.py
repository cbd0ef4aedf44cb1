"""Warm-ups that end in the steady state: the proofs a long-lived process makes of a shape it has proved before.

A GPU backend (``GpuBackend``, every runtime) proves the first ``RECORD_AFTER`` proofs of a shape unrecorded
(they fill the kernel, twiddle and bind-group caches), records the next one's launches, and replays that
recording for every later proof of the shape (``whirgpu.backends.gpu.replay``); its ``replays`` attribute counts
the proofs it replayed. Those first proofs cost about twice a replayed one (20:4:1 on an H200), so a benchmark
that times them reports a figure no long-lived process sees.

``warm_up`` proves untimed until the backend reports a replayed proof of the shape, then ``minimum`` more (the
user's ``--warmup``). The backend's own count decides, not an assumed number of proofs: the wait ends at most
``REPLAY_WARMUPS`` proofs in, and when no proof was replayed by then (a recording the backend dropped) the
warm-up says so (``Warmup.steady`` False) instead of going on. A backend that does not replay (cpu; a GPU
backend with ``replay_enabled`` False or ``profile`` set, or any object without a ``replays`` count) needs no
extra warm-up: it gets ``minimum`` proofs. ``replayed`` tells, for one proof, whether the backend replayed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, TypeVar

from ..backends.gpu.replay import RECORD_AFTER

# The untimed proofs before the first replay: the unrecorded ones, the recording, the first replayed proof.
REPLAY_WARMUPS = RECORD_AFTER + 2
T = TypeVar("T")


def replay_count(backend) -> int | None:
    """How many proofs ``backend`` has replayed so far; None for a backend that will not replay the next proof
    (no ``replays`` count, ``replay_enabled`` False, or ``profile`` set)."""
    count = getattr(backend, "replays", None)
    if not isinstance(count, int) or isinstance(count, bool):
        return None
    if not getattr(backend, "replay_enabled", False) or getattr(backend, "profile", False):
        return None
    return count


def replays(backend) -> bool:
    """Whether ``backend`` replays recorded proofs (so its first proofs of a shape are not its steady state)."""
    return replay_count(backend) is not None


@dataclass
class Warmup:
    """The untimed proofs of one shape on one backend: ``seconds`` of each, in order; ``steady`` True when the
    backend replayed one of them, False when it replays proofs but replayed none of these (the timed proofs that
    follow are not its steady state), None on a backend that does not replay."""

    seconds: list[float] = field(default_factory=list)
    steady: bool | None = None


def replayed(backend, prove: Callable[[], T]) -> tuple[T, bool | None]:
    """What ``prove()`` returns, and whether ``backend`` replayed that proof (None: a backend that does not
    replay)."""
    before = replay_count(backend)
    result = prove()
    return result, None if before is None else backend.replays > before


def warm_up(backend, prove: Callable[[int, int | None], float], minimum: int) -> Warmup:
    """Untimed proofs until ``backend`` has replayed one (at most ``REPLAY_WARMUPS``; none on a backend that does
    not replay), then ``minimum`` >= 0 more. ``prove(i, total)`` makes the i-th (from 1) and returns its seconds;
    ``total`` is how many there will be, None while the wait for a replay lasts."""
    warmup = Warmup()
    if replays(backend):
        warmup.steady = False
        while len(warmup.seconds) < REPLAY_WARMUPS:
            seconds, was_replayed = replayed(backend, lambda: prove(len(warmup.seconds) + 1, None))
            warmup.seconds.append(seconds)
            if was_replayed:
                warmup.steady = True
                break
    waited = len(warmup.seconds)
    for i in range(minimum):
        warmup.seconds.append(prove(waited + i + 1, waited + minimum))
    return warmup
