"""The command line: ``whirgpu devices | params | prove | verify | bench | warmup`` (``main``), one module per
command beside the shared options (``options``) and the progress line (``progress``)."""


def main(argv: list[str] | None = None) -> int:
    """``whirgpu``'s entry point (``commands.main``), imported when called so that ``cli.options`` stays light."""
    from .commands import main as run  # noqa: PLC0415

    return run(argv)
