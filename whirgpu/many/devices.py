"""Proofs over several devices: ``prove_on_devices(make_prover, backends, instances, in_flight)`` runs one prover
per backend (``make_prover(backend=...)``: a ``Prover`` or a ``P3Prover`` rebuilt there), each in a thread of its
own with its proofs in flight (its ``prove_many``), and yields the proofs in input order.

Contract: ``instances`` is any iterable of (evaluations, points) as the prover's ``prove_many`` takes them; it is read by one
feeder thread, instance i going to backend i mod D, at most ``in_flight + 1`` instances ahead per backend (a
generator of tables is never read far ahead). The proof of instance i is yielded i-th, byte for byte what
``Prover.prove`` makes on any backend. An instance that fails (its ``ConfigError``) or a backend that fails raises
in that instance's turn; the proofs before it are yielded first. Closing the generator early stops the feeder
and lets the workers finish what they hold.

``all_devices(backend)`` opens a backend on every adapter of ``backend``'s WebGPU implementation (wgpu-native or
Dawn), with its multiply: what ``Prover.prove_many(devices="all")`` uses.
"""

from __future__ import annotations

import queue
import threading
from typing import Iterable, Iterator

_DONE = object()


class _Failed:
    def __init__(self, error: BaseException):
        self.error = error


def adapter_count(backend) -> int:
    """How many adapters ``backend``'s WebGPU implementation lists (``list_adapters``); ConfigError for a backend
    that is not wgpu or dawn."""
    from ..errors import ConfigError  # noqa: PLC0415

    rt = getattr(backend, "rt", None)
    if rt is None or getattr(rt, "lang", None) != "wgsl":
        raise ConfigError(f'devices="all" needs a wgpu or dawn backend, not {backend.name}')
    from ..runtime.wgpu_rt.adapters import list_adapters  # noqa: PLC0415

    return len(list_adapters(rt.name))


def all_devices(backend) -> list:
    """A ``GpuBackend`` on every adapter of ``backend``'s implementation, best first (``list_adapters``)."""
    from ..backends.gpu import GpuBackend  # noqa: PLC0415
    from ..runtime.wgpu_rt import DawnRuntime, WgpuRuntime  # noqa: PLC0415

    count = adapter_count(backend)
    rt = backend.rt
    kind = DawnRuntime if rt.name == "dawn" else WgpuRuntime
    return [GpuBackend(kind(mul=rt.mul, adapter_index=i), storage=backend.storage) for i in range(count)]


def prove_on_devices(make_prover, backends: list, instances: Iterable, in_flight: int = 2) -> Iterator:
    """``make_prover(backend=...)``: the prover to run on each backend (passed in, so that this module imports
    no prover above it)."""
    count = len(backends)
    inputs = [queue.Queue(maxsize=in_flight + 1) for _ in range(count)]
    outputs = [queue.Queue() for _ in range(count)]
    stop = threading.Event()

    def feed():
        d = 0
        try:
            for d_instance in instances:
                while not stop.is_set():
                    try:
                        inputs[d].put(d_instance, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
                d = (d + 1) % count
        except BaseException as exc:  # noqa: BLE001 - the iterable's own failure, raised in its turn
            inputs[d].put(_Failed(exc))
        finally:
            for q in inputs:
                q.put(_DONE)

    def drain(q):
        while True:
            item = q.get()
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item

    def work(k: int):
        try:
            prover = make_prover(backend=backends[k])
            for proof in prover.prove_many(drain(inputs[k]), in_flight):
                outputs[k].put(proof)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer in this instance's turn
            outputs[k].put(_Failed(exc))
        finally:
            outputs[k].put(_DONE)

    threads = [threading.Thread(target=feed, daemon=True)] + \
        [threading.Thread(target=work, args=(k,), daemon=True) for k in range(count)]
    for t in threads:
        t.start()
    try:
        i = 0
        while True:
            item = outputs[i % count].get()
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item
            i += 1
    finally:
        stop.set()
        for q in inputs:  # unblock the workers: whatever they still wait for ends their iteration
            try:
                q.put_nowait(_DONE)
            except queue.Full:  # a worker still holds work: it reaches the feeder's end marker after it
                pass
