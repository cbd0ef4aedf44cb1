"""``whirgpu warmup [--backend B] [--profile P]``: prepare every cache a first proof would otherwise fill, and say
what each part took.

Output contract: one line per part on stdout (``C Poseidon2 permutation: built in 9.1 s (PATH)``, ``backend: ...``,
``whir-p3-metal babybear proof n=12: 3.2 s, 21 pipelines``, ...), then ``warmup done in T s: ...`` naming the
caches later processes reuse; exit 0. A failure is one ``error: ...`` line on stderr (exit 1), as every command's.
A machine without a C compiler is not a failure: the line says the numpy permutation will be used and how to get
the compiled one. On a terminal (``progress.wanted``), a progress line on stderr from ``PROGRESS_DELAY_S`` on names
the part running (``whirgpu.activity``: the kernel it compiles, when a runtime says) and the time elapsed, redrawn
several times a second: something changes at least every 2 s however long a part takes.

The parts, in order (``warm``):
1. The C Poseidon2 permutation (``native.permute``), built now if it is not on disk (an earlier failed
   build is retried), and with it the C ChaCha keystream of the hiding proofs' masks (``native.chacha``), the
   multiproof pruning (``native.prune``) and the random instances' sampler (``native.xoshiro``).
2. The backend ``select_backend(B)`` opens for the default configuration (``DEFAULT_CONFIG``, the README's
   first proof, 20:4:1): ``auto`` warms what such a proof would run on. The cpu backend compiles nothing: the
   warmup ends there.
3. One small proof (``SMALL``) per profile and field: whir-p3-metal (babybear), p3-whir (koalabear, babybear),
   which compiles every pipeline those proofs use, with the constants they use (msl-cpu: C++ kernels in the
   cache folder).
4. Every other kernel of the registry (``kernels.registry.KERNELS``, default constants, for each field warmed):
   the variants only large proofs reach (the non-cooperative Merkle kernels past 2^14 states, the NTT's
   cross-window stage), so a first large proof compiles nothing either where pipelines compile when they are
   created (NVIDIA, Metal, msl-cpu).
5. On wgpu and Dawn, with whir-p3-metal warmed, one proof of the default configuration itself: a software
   Vulkan driver (lavapipe, llvmpipe underneath) makes a kernel's machine code at its first dispatch, not when
   its pipeline is created, so only what a proof dispatches reaches its cache.

What persists: the permutation and msl-cpu's kernels in whirgpu's cache folder (``cache_dir.root()``); compiled
WGSL pipelines in the GPU driver's own shader cache (Mesa, lavapipe included: ``$MESA_SHADER_CACHE_DIR``, default
``~/.cache/mesa_shader_cache*``; NVIDIA: ``$__GL_SHADER_DISK_CACHE_PATH``, default ``~/.cache/nvidia``), which
wgpu-native and Dawn reach through Vulkan; wgpu-native's own pipeline cache is not reachable from wgpu-py 0.32,
and Dawn's blob cache is not wired in wgpudawn. A driver cache that is switched off (``DRIVER_CACHE_OFF``) is
named in the last line: then warming helps only the process that warms.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .. import activity
from ..backends import BACKEND_NAMES
from ..errors import BackendUnavailable, WhirGpuError

PROFILES = ("whir-p3-metal", "p3-whir")
# (profile, field) pairs a profile warms.
PROFILE_FIELDS = {"whir-p3-metal": ("babybear",), "p3-whir": ("koalabear", "babybear")}
DEFAULT_CONFIG = (20, 4, 1)  # n, fold, rate: the configuration `auto` is resolved for
SMALL = (12, 4, 1)  # the proofs that compile a profile's pipelines
SKIPPED_STEMS = ("field_selftest", "calibrate")  # kernels of the tests and benchmarks, never of a proof
# Variables that switch a driver's shader cache off, and the value that does.
# The progress line shows from this on: below 2 s, so that a terminal sees something at least every 2 s.
PROGRESS_DELAY_S = 1.0
DRIVER_CACHE_OFF = {"MESA_SHADER_CACHE_DISABLE": ("1", "true", "yes"), "__GL_SHADER_DISK_CACHE": ("0", "false")}


@dataclass
class Part:
    """One part of the warmup: what (``name``), how it went (``detail``), seconds."""

    name: str
    detail: str
    seconds: float


@dataclass
class Report:
    backend: str = ""
    parts: list[Part] = field(default_factory=list)


def add_warmup_parser(sub) -> None:
    p = sub.add_parser(
        "warmup", help="build and compile ahead what a first proof would (the C permutation, the kernels)",
        description="Prepare every cache a first proof fills: build the C Poseidon2 permutation, open the backend "
                    "and compile the pipelines the default configuration needs (one small proof per profile, then "
                    "the registry's other kernels), saying what each part took. Later processes start warm.")
    p.add_argument("--backend", default="auto", choices=BACKEND_NAMES,
                   help="the backend to warm (default auto: the one a 20:4:1 proof would use here)")
    p.add_argument("--profile", default="all", choices=("all",) + PROFILES,
                   help="the protocol profiles whose pipelines to compile (default all)")


def run_warmup(args) -> int:
    """The command: on a terminal, under a progress line shown from ``PROGRESS_DELAY_S`` on (the part running,
    what it waits on, the time elapsed, redrawn several times a second), so that the parts' own lines, each said
    when it ends, are never the only sign of life (a part can take minutes on a cold software driver)."""
    from .progress import progress_line, wanted  # noqa: PLC0415

    start = time.perf_counter()
    profiles = PROFILES if args.profile == "all" else (args.profile,)
    with progress_line(f"warmup --backend {args.backend}", wanted(False), delay=PROGRESS_DELAY_S):
        report = warm(args.backend, profiles, say=lambda line: print(line, flush=True))
    print(f"warmup done in {time.perf_counter() - start:.1f} s: later processes reuse {_caches(report.backend)}")
    return 0


def warm(backend: str = "auto", profiles: tuple[str, ...] = PROFILES,
         say: Callable[[str], None] = lambda line: None) -> Report:
    """The warmup's parts (module docstring), each said as it ends; whirgpu errors propagate."""
    report = Report()

    def part(name: str, detail: str, seconds: float) -> None:
        report.parts.append(Part(name, detail, seconds))
        say(f"{name}: {detail}")

    with activity.doing("building the C Poseidon2 permutation"):
        _permutation(part)
    opened = time.perf_counter()
    with activity.doing(f"opening the {backend} backend"):
        choice = _open(backend)
    chosen = choice.backend
    report.backend = chosen.name
    try:
        rt = getattr(chosen, "rt", None)
        what = f"{chosen.name}{', the numpy reference' if rt is None else ''} ({choice.reason})"
        part("backend", f"{what}, opened in {time.perf_counter() - opened:.1f} s", time.perf_counter() - opened)
        if rt is None:
            part("kernels", "none to compile on the cpu backend", 0.0)
            return report
        for profile in profiles:
            for field_name in PROFILE_FIELDS[profile]:
                before = _pipelines(rt)
                with activity.doing(f"{profile} {field_name} proof n={SMALL[0]}"):
                    took = _small_proof(profile, field_name, chosen)
                part(f"{profile} {field_name} proof n={SMALL[0]}", f"{took:.1f} s, "
                     f"{_count(_pipelines(rt) - before, 'pipeline')}", took)
        fields = sorted({f for profile in profiles for f in PROFILE_FIELDS[profile]})
        with activity.doing("compiling the other kernels"):
            took, count = _registry(rt, fields)
        part("other kernels", f"{_count(count, 'more pipeline')} ({', '.join(fields)}) in {took:.1f} s", took)
        if chosen.name in ("wgpu", "dawn") and "whir-p3-metal" in profiles:
            before = _pipelines(rt)
            n, k, r = DEFAULT_CONFIG
            with activity.doing(f"whir-p3-metal babybear proof {n}:{k}:{r}"):
                took = _small_proof("whir-p3-metal", "babybear", chosen, DEFAULT_CONFIG)
            part(f"whir-p3-metal babybear proof {n}:{k}:{r}", f"{took:.1f} s, "
                 f"{_count(_pipelines(rt) - before, 'pipeline')} (every kernel it uses dispatched once: some drivers "
                 "compile at the first dispatch)", took)
    finally:
        chosen.close()
    return report


def _permutation(part) -> None:
    from ..native import permute as native_permute  # noqa: PLC0415

    start = time.perf_counter()
    name = "C Poseidon2 permutation"
    try:
        how, path = native_permute.build_now(retry_failed=True)
    except BackendUnavailable as exc:
        part(name, f"skipped: {exc}", time.perf_counter() - start)
        return
    from ..native import chacha, prune, xoshiro  # noqa: PLC0415

    # The mask generator's keystream (hiding proofs), the provers' pruning and the random instances' sampler: the
    # same compiler, the same line.
    keystream = ""
    for library, label, fallback in ((chacha, "C ChaCha keystream", "the numpy one"),
                                     (prune, "C multiproof pruning", "the numpy one"),
                                     (xoshiro, "C instance sampler", "the numpy one")):
        try:
            built, _ = library.build_now(retry_failed=True)
            keystream += f"; {label} {'built' if built == 'built' else 'already built'}"
        except WhirGpuError as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            keystream += f"; {label} not built ({reason}): {fallback} is used"
    took = time.perf_counter() - start
    part(name, (f"built in {took:.1f} s ({path})" if how == "built" else f"already built ({path})") + keystream,
         took)


def _open(backend: str):
    from ..backends import select_backend  # noqa: PLC0415
    from ..profiles.whir_p3_metal.config import WhirConfig  # noqa: PLC0415
    from ..profiles.whir_p3_metal import prover as _prover  # noqa: F401, PLC0415 - registers the planned proof
    from ..protocol.parameters import ProtocolParameters  # noqa: PLC0415

    n, k, r = DEFAULT_CONFIG
    config = WhirConfig.from_params(ProtocolParameters.default(num_variables=n, folding_factor=k,
                                                               starting_log_inv_rate=r))
    # auto is resolved for the default configuration; an explicit backend only has to open (the small proofs
    # need far less memory than 20:4:1).
    return select_backend(backend, config if backend == "auto" else None)


def _small_proof(profile: str, field_name: str, backend, size: tuple[int, int, int] = SMALL) -> float:
    """Prove one random instance of ``profile`` over ``field_name`` at ``size`` (n, fold, rate) on ``backend``;
    the seconds it took."""
    from ..field import field_by_name  # noqa: PLC0415

    n, k, r = size
    field_ = field_by_name(field_name)
    values = np.random.default_rng(n).integers(0, field_.P, size=1 << n, dtype=np.int64).astype(np.uint32)
    start = time.perf_counter()
    if profile == "whir-p3-metal":
        from ..proving import Prover, random_points  # noqa: PLC0415
        from ..protocol.parameters import ProtocolParameters  # noqa: PLC0415
        from ..ref import field_np  # noqa: PLC0415

        params = ProtocolParameters.default(num_variables=n, folding_factor=k, starting_log_inv_rate=r)
        points = field_np.from_monty(random_points(n, 0)[1])
        Prover(params, backend=backend).prove(values, points)
    else:
        from ..profiles.p3_whir.api import P3Prover  # noqa: PLC0415
        from ..profiles.p3_whir.config import P3Parameters  # noqa: PLC0415
        from ..protocol.folding import Constant  # noqa: PLC0415
        from ..protocol.parameters import DEFAULT_MAX_POW, DEFAULT_SECURITY_LEVEL  # noqa: PLC0415
        from ..protocol.soundness import SoundnessType  # noqa: PLC0415

        params = P3Parameters(security_level=DEFAULT_SECURITY_LEVEL, pow_bits=DEFAULT_MAX_POW, folding=Constant(k),
                              soundness_type=SoundnessType.CapacityBound, starting_log_inv_rate=r)
        P3Prover(n, params, field_name, backend=backend).prove(values, 1, seed=0)
    return time.perf_counter() - start


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _pipelines(rt) -> int:
    """The pipelines (kernel variants) ``rt`` holds compiled, 0 for a runtime that keeps none."""
    return len(getattr(rt, "_kernels", None) or {})


def _registry(rt, fields: list[str]) -> tuple[float, int]:
    """Compile every registry kernel (default constants) for ``fields``; (seconds, pipelines added)."""
    from ..kernels.registry import KERNELS  # noqa: PLC0415

    start, before = time.perf_counter(), _pipelines(rt)
    started = []
    for field_name in fields:
        for stem, kernel_spec in KERNELS.items():
            if stem in SKIPPED_STEMS:
                continue
            for entry in kernel_spec.entries:
                # kernel_async: wgpu and Dawn compile side by side, resolved below; the others compile at once.
                started.append(rt.kernel_async(stem, entry, None, field_name))
    for kernel in started:
        if hasattr(kernel, "resolve"):
            kernel.resolve()
    return time.perf_counter() - start, _pipelines(rt) - before


def _caches(backend: str) -> str:
    """The caches a warmed machine keeps for ``backend``, and a driver cache switched off, if one is."""
    from .. import cache_dir  # noqa: PLC0415

    kept = f"{cache_dir.root()}"
    if backend in ("wgpu", "dawn"):
        off = [f"{name}={os.environ[name]}" for name, values in DRIVER_CACHE_OFF.items()
               if os.environ.get(name, "").strip().lower() in values]
        kept += (" and the GPU driver's shader cache (Mesa: $MESA_SHADER_CACHE_DIR, default "
                 "~/.cache/mesa_shader_cache*; NVIDIA: $__GL_SHADER_DISK_CACHE_PATH, default ~/.cache/nvidia)")
        if off:
            kept += f", which {', '.join(off)} switches off: the pipelines compiled here are lost with this process"
    elif backend == "metal":
        kept += " and macOS's Metal shader cache"
    return kept
