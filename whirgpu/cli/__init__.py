"""The command line: ``whirgpu devices | params | prove | verify | bench | warmup`` (``main``), one module per
command beside the shared options (``options``) and the progress line (``progress``)."""

import sys


def main(argv: list[str] | None = None) -> int:
    """``whirgpu``'s entry point (``commands.main``), imported when called so that ``cli.options`` stays light;
    ``whirgpu --version`` alone is answered here, importing nothing (argparse would print the same line)."""
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:
        from .. import __version__  # noqa: PLC0415

        print(f"whirgpu {__version__}")
        return 0
    from .commands import main as run  # noqa: PLC0415

    return run(argv)
