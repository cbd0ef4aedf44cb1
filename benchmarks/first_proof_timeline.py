"""Where a whole ``whirgpu prove`` process's time goes, marked in the process itself (a tuning aid for item 3 of
issue 41):

    python3 -m benchmarks.first_proof_timeline [--backend wgpu] [--early] [-n 20]

Runs the CLI's ``whirgpu prove -n N -k 4 -r 1 --seed 1 --backend B --out /tmp/first_proof_timeline.whir`` in this
process and prints, in ms since this module started: whirgpu's backends imported, the CLI imported, the runtime's
opening (start and end), the random instance's draw (start and end) and the end of the command. ``--early``
opens the runtime on a thread from the start and hands it to the CLI when it asks (whether an early opening
overlaps the imports). Time before this module ran (the interpreter's start) and after (its exit) is outside
the marks: time the whole process from outside to see them. Nothing here asserts a time.
"""

import sys
import time

T0 = time.perf_counter()


def mark(what: str, at: float | None = None) -> None:
    print(f"  {what}: {((at or time.perf_counter()) - T0) * 1e3:.0f} ms", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    import argparse  # noqa: PLC0415 - after T0

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="wgpu")
    parser.add_argument("--early", action="store_true")
    parser.add_argument("-n", type=int, default=20)
    args = parser.parse_args(argv)
    box = {}
    if args.early:
        import threading  # noqa: PLC0415

        def open_runtime():
            from whirgpu import backends  # noqa: PLC0415

            box["runtime"] = backends._runtime(args.backend)
            mark("early runtime ready")

        thread = threading.Thread(target=open_runtime)
        thread.start()
    from whirgpu import backends, proving  # noqa: PLC0415

    mark("import whirgpu.backends")
    open_runtime_now, draw = backends._runtime, proving.random_points

    def timed_runtime(name):
        mark(f"runtime {name} opening starts")
        if args.early:
            thread.join()
            runtime = box["runtime"]
        else:
            runtime = open_runtime_now(name)
        mark(f"runtime {name} opening ends")
        return runtime

    def timed_draw(*a):
        mark("draw starts")
        out = draw(*a)
        mark("draw ends")
        return out

    backends._runtime, proving.random_points = timed_runtime, timed_draw
    from whirgpu.cli import main as cli  # noqa: PLC0415

    mark("import whirgpu.cli")
    try:
        code = cli(["prove", "-n", str(args.n), "-k", "4", "-r", "1", "--seed", "1", "--backend", args.backend,
                    "--out", "/tmp/first_proof_timeline.whir"])
    finally:
        backends._runtime, proving.random_points = open_runtime_now, draw
    mark("end")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
