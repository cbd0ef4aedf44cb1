"""The oracle's command-line syntax for tables (``oracle-p3 prove-tables``), parsed and printed canonically, so that
a command line means the same to ``whirgpu prove --profile p3-whir`` and to the oracle.

Contract (the oracle's rules, ``oracle-p3/src/main.rs`` ``parse_tables`` / ``parse_open``):
- ``parse_tables(text) -> tuple[TableShape, ...]``: ``LOGROWSxCOLUMNS`` items separated by ``,`` (``X`` is also
  accepted for ``x``; blanks around items and numbers are ignored, as are empty items); log rows 0..``MAX_LOG_ROWS``
  (26, the oracle's limit), columns >= 1, at least one table, at most ``MAX_TABLES`` tables, ``MAX_COLUMNS``
  columns and ``2^MAX_STACKED_LOG_CELLS`` cells in all (limits of whirgpu's, not the oracle's). Canonical form: ``TableShape.__str__`` joined by ``,``
  (``format_tables``).
- ``parse_open(text, shapes) -> tuple[OpeningBatch, ...]``: ``BATCH[/BATCH...]``, ``BATCH = TABLE:CURRENT[:NEXT]``,
  CURRENT and NEXT comma-separated column indices, either may be empty but not both; ``;`` is accepted for ``/``
  and ``|`` for the second ``:``; empty items are skipped (``--open ""`` opens nothing: every table committed,
  none opened). Refused: an unknown table, a column >= the table's width, a column repeated within one side, an
  empty batch, more than ``MAX_BATCHES`` batches or ``MAX_CLAIMS`` opened columns in all. The batches come back in protocol order: stably grouped by table,
  whatever the order given. Canonical form (``format_open``): both colons, ``/`` between batches, e.g.
  ``0:0,1:1/1:0:``; it is what the oracle writes to ``params.open``.
- ``default_open(shapes)``: the oracle's default, one batch per table opening all its columns, no ``next``.
- ``parse_layout(text)`` (``suffix`` | ``prefix``), ``parse_points(text)`` (``transcript`` | ``prescribed``).
- ``TablesSpec.parse(tables, open=None, layout="suffix", points="transcript")``: all four at once, with
  ``protocol`` the core's ``TablesProtocol`` and ``canonical()`` the four canonical strings as a dict.
A number is ASCII digits with an optional leading ``+`` (Rust's ``usize`` parse); anything else is refused.
Every refusal is a ``ConfigError`` of one line naming the flag, the item and the limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....errors import ConfigError
from .shapes import OpeningBatch, TableShape, TablesProtocol

MAX_LOG_ROWS = 26  # the oracle's limit on a table's log2 rows
MAX_TABLES = 1 << 10
MAX_BATCHES = 1 << 10
MAX_COLUMNS = 1 << 16  # in all tables together: a trace has hundreds; the verifier's work grows with the count
MAX_CLAIMS = 1 << 16  # opened columns (current and next) over all batches: the verifier's work grows with them
MAX_STACKED_LOG_CELLS = 33  # 2^33 values: past anything a device proves (document_limits.MAX_PROVED_VARIABLES)
MAX_NUMBER_DIGITS = 20  # a u64
MAX_OPEN_TEXT = 1 << 20  # characters of an --open text: MAX_CLAIMS columns of a few digits each, and blanks
LAYOUTS = ("suffix", "prefix")
POINTS = ("transcript", "prescribed")
LAYOUT_PROVERS = {"suffix": "SuffixProver", "prefix": "PrefixProver"}


def _number(text: str, flag: str, item: str, what: str) -> int:
    digits = text.strip()
    body = digits[1:] if digits.startswith("+") else digits
    if not body or not body.isascii() or not body.isdigit():
        raise ConfigError(f"{flag} {item!r:.60}: {what} {digits!r:.30} is not a number (ASCII digits)")
    if len(body.lstrip("0")) > MAX_NUMBER_DIGITS:
        raise ConfigError(f"{flag} {item!r:.60}: {what} has more than {MAX_NUMBER_DIGITS} digits")
    return int(body)


def _items(text: str, separators: str) -> list[str]:
    if not isinstance(text, str):
        raise ConfigError(f"expected a text, got {type(text).__name__}")
    for sep in separators[1:]:
        text = text.replace(sep, separators[0])
    return [item.strip() for item in text.split(separators[0]) if item.strip()]


def parse_tables(text: str, flag: str = "--tables") -> tuple[TableShape, ...]:
    """``10x3,8x2`` -> the table shapes (see the module contract)."""
    shapes = []
    for item in _items(text, ","):
        if len(shapes) == MAX_TABLES:
            raise ConfigError(f"{flag}: more than MAX_TABLES {MAX_TABLES} tables")
        cut = min((i for i in (item.find("x"), item.find("X")) if i >= 0), default=-1)
        if cut < 0:
            raise ConfigError(f"{flag} {item!r:.60}: not LOGROWSxCOLUMNS (e.g. 10x3)")
        log_rows = _number(item[:cut], flag, item, "log rows")
        columns = _number(item[cut + 1:], flag, item, "columns")
        if log_rows > MAX_LOG_ROWS:
            raise ConfigError(f"{flag} {item!r:.60}: log rows {log_rows} above the limit {MAX_LOG_ROWS}")
        if columns < 1:
            raise ConfigError(f"{flag} {item!r:.60}: a table needs at least 1 column, got {columns}")
        if columns >> MAX_STACKED_LOG_CELLS:
            raise ConfigError(f"{flag} {item!r:.60}: {columns} columns, more than the 2^{MAX_STACKED_LOG_CELLS} "
                              f"cells a stack may hold")
        shapes.append(TableShape(log_rows, columns))
    if not shapes:
        raise ConfigError(f"{flag}: at least one table is needed (LOGROWSxCOLUMNS, e.g. 10x3)")
    if sum(s.columns for s in shapes) > MAX_COLUMNS:
        raise ConfigError(f"{flag}: {sum(s.columns for s in shapes)} columns in all, above MAX_COLUMNS {MAX_COLUMNS}")
    cells = sum(s.columns << s.log_rows for s in shapes)
    if cells > 1 << MAX_STACKED_LOG_CELLS:
        raise ConfigError(f"{flag} {format_tables(shapes)!r:.60}: {cells} values in all, above the limit "
                          f"2^{MAX_STACKED_LOG_CELLS} (MAX_STACKED_LOG_CELLS)")
    return tuple(shapes)


def format_tables(shapes) -> str:
    """The canonical ``--tables`` text of ``shapes``."""
    return ",".join(map(str, shapes))


def _columns(text: str, flag: str, item: str, side: str, width: int) -> tuple[int, ...]:
    columns: list[int] = []
    for part in _items(text, ","):
        column = _number(part, flag, item, f"{side} column")
        if column >= width:
            raise ConfigError(f"{flag} {item!r:.60}: {side} column {column} >= the table's width {width}")
        if column in columns:
            raise ConfigError(f"{flag} {item!r:.60}: {side} column {column} repeated within one side")
        columns.append(column)
    return tuple(columns)


def parse_open(text: str, shapes, flag: str = "--open") -> tuple[OpeningBatch, ...]:
    """``0:0,1:1/1:0`` -> the opening batches in protocol order (see the module contract)."""
    shapes = tuple(shapes)
    batches = []
    claims = 0
    for item in _items(text, "/;"):
        if len(batches) == MAX_BATCHES:
            raise ConfigError(f"{flag}: more than MAX_BATCHES {MAX_BATCHES} batches")
        table_text, colon, rest = item.partition(":")
        if not colon:
            raise ConfigError(f"{flag} {item!r:.60}: a batch is TABLE:CURRENT[:NEXT]")
        table = _number(table_text, flag, item, "table")
        if table >= len(shapes):
            raise ConfigError(f"{flag} {item!r:.60}: table {table} does not exist (there are {len(shapes)}: "
                              f"0..{len(shapes) - 1})")
        cut = min((i for i in (rest.find(":"), rest.find("|")) if i >= 0), default=len(rest))
        width = shapes[table].columns
        current = _columns(rest[:cut], flag, item, "current", width)
        following = _columns(rest[cut + 1:], flag, item, "next", width)
        if not current and not following:
            raise ConfigError(f"{flag} {item!r:.60}: an empty batch (open at least one current or next column)")
        batches.append(OpeningBatch(table, current, following))
        claims += len(current) + len(following)
        if claims > MAX_CLAIMS:
            raise ConfigError(f"{flag}: more than MAX_CLAIMS {MAX_CLAIMS} opened columns in all batches")
    return tuple(sorted(batches, key=lambda b: b.table))


def format_open(batches) -> str:
    """The canonical ``--open`` text of ``batches`` (given in protocol order)."""
    return "/".join(map(str, batches))


def default_open(shapes) -> tuple[OpeningBatch, ...]:
    """One batch per table opening all its columns, no ``next`` (the oracle's default)."""
    return tuple(OpeningBatch(t, tuple(range(s.columns))) for t, s in enumerate(shapes))


def _choice(text, choices: tuple[str, ...], flag: str) -> str:
    if text not in choices:
        raise ConfigError(f"{flag} {text!r:.40}: expected {' or '.join(choices)}")
    return text


def parse_layout(text: str, flag: str = "--layout") -> str:
    return _choice(text, LAYOUTS, flag)


def parse_points(text: str, flag: str = "--points") -> str:
    return _choice(text, POINTS, flag)


@dataclass(frozen=True)
class TablesSpec:
    """What ``--tables``, ``--open``, ``--layout`` and ``--points`` say: the protocol (tables and batches in
    protocol order), the layout (``suffix`` | ``prefix``) and who chooses the points (``transcript`` |
    ``prescribed``)."""

    protocol: TablesProtocol
    layout: str = "suffix"
    points: str = "transcript"

    @classmethod
    def parse(cls, tables: str, open: str | None = None, layout: str | None = None,  # noqa: A002 - the flag
              points: str | None = None) -> TablesSpec:
        shapes = parse_tables(tables)
        batches = default_open(shapes) if open is None else parse_open(open, shapes)
        return cls(TablesProtocol(shapes, batches), parse_layout("suffix" if layout is None else layout),
                   parse_points("transcript" if points is None else points))

    @property
    def prescribed(self) -> bool:
        return self.points == "prescribed"

    def canonical(self) -> dict:
        """The canonical texts, as the oracle writes them to ``params`` (``tables``, ``open``, ``layout``,
        ``points``)."""
        return {"tables": format_tables(self.protocol.shapes), "open": format_open(self.protocol.batches),
                "layout": self.layout, "points": self.points}

    def __str__(self) -> str:
        c = self.canonical()
        return f"--tables {c['tables']} --layout {c['layout']} --open {c['open'] or '/'} --points {c['points']}"


__all__ = ["LAYOUTS", "LAYOUT_PROVERS", "MAX_BATCHES", "MAX_CLAIMS", "MAX_COLUMNS", "MAX_LOG_ROWS", "MAX_OPEN_TEXT", "MAX_TABLES", "POINTS", "TablesSpec",
           "default_open", "format_open", "format_tables", "parse_layout", "parse_open", "parse_points",
           "parse_tables"]
