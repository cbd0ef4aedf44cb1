"""A whole ``whirgpu prove`` process, as a user's first proof pays it: wall time from exec to exit, the proof's own
``prove_ms`` (its ``--json`` summary) and the rest (imports, device, instance, pipelines, writing), median of
``--runs`` processes. ``warm``: the caches a machine keeps (whirgpu's cache folder, the GPU driver's shader cache)
filled by one untimed process first; ``cold``: each process with empty ones (fresh ``WHIRGPU_CACHE_DIR``,
``MESA_SHADER_CACHE_DIR`` and NVIDIA's ``__GL_SHADER_DISK_CACHE_PATH``: what a fresh machine has, short of the
operating system's file cache). ``--before DIR``: the same processes from another checkout (its ``whirgpu``
package on ``PYTHONPATH``), alternating with this one, in the same call. Nothing here asserts a time.

Usage: python3 -m benchmarks.first_proof [--runs R] [--backend B] [--before DIR] [--mode warm|cold|both] [N ...]
(default N = 20; fold 4, rate 1, seed 1, as ``whirgpu prove -n N -k 4 -r 1 --seed 1``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE_VARIABLES = ("WHIRGPU_CACHE_DIR", "MESA_SHADER_CACHE_DIR", "__GL_SHADER_DISK_CACHE_PATH")


def one_process(checkout: Path, n: int, backend: str, caches: Path | None) -> tuple[float, float]:
    """(wall ms, prove_ms) of one ``python3 -m whirgpu prove`` process of ``checkout``; ``caches``: a folder under
    which every cache starts empty (None: the machine's own)."""
    others = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)  # e.g. a folder of wheels
              if p and Path(p).resolve() not in (REPO, checkout)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkout), *others])}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's install has its bytecode
    if caches is not None:
        for name in CACHE_VARIABLES:
            folder = caches / name.strip("_").lower()
            folder.mkdir(parents=True, exist_ok=True)
            env[name] = str(folder)
    with tempfile.TemporaryDirectory() as out:
        argv = [sys.executable, "-m", "whirgpu", "prove", "-n", str(n), "-k", "4", "-r", "1", "--seed", "1",
                "--backend", backend, "--json", "--out", str(Path(out) / "proof.whir")]
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=out, env=env, capture_output=True, text=True, timeout=600)
        wall = (time.perf_counter() - start) * 1e3
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: whirgpu prove exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return wall, float(json.loads(done.stdout)["prove_ms"])


def measure(checkouts: dict[str, Path], n: int, backend: str, mode: str, runs: int) -> dict[str, list]:
    """Alternating processes of every checkout: {label: [(wall, prove_ms), ...]}."""
    if mode == "warm":
        for checkout in checkouts.values():
            one_process(checkout, n, backend, None)  # fills the caches
    results: dict[str, list] = {label: [] for label in checkouts}
    for _ in range(runs):
        for label, checkout in checkouts.items():
            if mode == "cold":
                with tempfile.TemporaryDirectory() as caches:
                    results[label].append(one_process(checkout, n, backend, Path(caches)))
            else:
                results[label].append(one_process(checkout, n, backend, None))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[20])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--backend", default="wgpu")
    parser.add_argument("--before", type=Path, default=None, help="another checkout to compare with")
    parser.add_argument("--mode", choices=("warm", "cold", "both"), default="both")
    args = parser.parse_args()
    checkouts = {"this": REPO}
    if args.before is not None:
        checkouts = {"before": args.before.resolve(), "this": REPO}
    modes = ("warm", "cold") if args.mode == "both" else (args.mode,)
    print(f"whole `whirgpu prove -n N -k 4 -r 1 --seed 1 --backend {args.backend}` processes, median of {args.runs}")
    for n in args.sizes:
        for mode in modes:
            for label, runs in measure(checkouts, n, args.backend, mode, args.runs).items():
                wall = statistics.median(w for w, _ in runs)
                prove = statistics.median(p for _, p in runs)
                print(f"n={n} {mode} {label}: wall {wall:.0f} ms, prove_ms {prove:.0f}, rest {wall - prove:.0f} ms "
                      f"(walls {', '.join(f'{w:.0f}' for w, _ in runs)})", flush=True)


if __name__ == "__main__":
    main()
