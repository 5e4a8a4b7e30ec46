"""Rows for people that survive pipes and fit terminals: one record per line, always.

On a terminal the table is fitted to its width the way git fits `git log --format`
columns: a cell that does not fit is cut and ends with "…", a row is never wrapped
onto a second line (a wrapped row reads as two records, and the columns under it
stop lining up). The free-text columns (marked `wraps`: messages, reasons,
signatures) give up their room first; identifiers, states and times are cut only
when free text alone cannot make the room. Anywhere else (a pipe, a file) nothing
is cut or wrapped: a header line, then exactly one line per record, whole, so
`grep`, `cut` and `wc -l` see what they expect; `--json` has every value in full.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from failres.cli.common import console, table_width
from failres.inert import inert

GAP = "  "
ELLIPSIS = "…"
_BREAKS = re.compile(r"\s*[\r\n\t\v\f]+\s*")
_FREE_FLOOR = 12  # a free-text cell narrower than this says nothing; identifiers give room next
_ID_FLOOR = 8  # an identifier cut shorter than this is no longer one a person can tell apart


@dataclass(frozen=True)
class Column:
    name: str
    # Free text (a message, a reason, a signature): on a narrow terminal this column is cut
    # first. The name is kept from when such columns wrapped; they are cut now, never wrapped.
    wraps: bool = False
    right: bool = False  # numbers: aligned to the right


def as_text(value: object) -> str:
    """A value as a person reads it: lists joined, no Python reprs, one line."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(as_text(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    # One record, one line: line breaks (and tabs, which align differently everywhere) become spaces,
    # and what is left of control characters is escaped: a cell is data, never obeyed by a terminal.
    return inert(_BREAKS.sub(" ", str(value).strip()))


def bounded_list(items: Sequence[object], shown: int = 3, sep: str = ", ") -> str:
    """A list for one line of a table or a message: the first few, then how many more.

    A scope violation can name thousands of files; printed whole it is one line of tens
    of thousands of characters that no one reads. `--json` keeps the whole list.
    """
    words = [as_text(item) for item in items]
    if len(words) <= shown + 1:  # "… and 1 more" is no shorter than the one it hides
        return sep.join(words)
    return sep.join(words[:shown]) + f" {ELLIPSIS} and {len(words) - shown} more"


def cell_width(text: str) -> int:
    """Columns `text` takes on a terminal (wide characters take two)."""
    from rich.cells import cell_len

    return cell_len(text)


def cut(text: str, width: int) -> str:
    """`text` in at most `width` terminal columns, ending with "…" when it was cut."""
    if cell_width(text) <= width:
        return text
    if width <= 0:
        return ""
    from rich.cells import get_character_cell_size

    kept, used = [], 0
    for char in text:
        size = get_character_cell_size(char)
        if used + size > width - 1:
            break
        kept.append(char)
        used += size
    return "".join(kept).rstrip() + ELLIPSIS


def layout(columns: Sequence[Column], rows: Iterable[Sequence[object]], width: int | None) -> list[str]:
    """The lines of a table: a header, then one line per record (pure: the width is given).

    With no width (a pipe) every cell is whole. With one, every line fits it."""
    cells = [[as_text(value) for value in row] for row in rows]
    widths = [max([cell_width(c.name), *(cell_width(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    if width is not None and _line_width(widths) > width:
        widths = _fit(columns, widths, width)
    lines = [_join(columns, widths, [c.name for c in columns])]
    lines += [_join(columns, widths, row) for row in cells]
    if width is not None:
        lines = [cut(line, width) for line in lines]  # more columns than any terminal is wide
    return lines


def _line_width(widths: Sequence[int]) -> int:
    return sum(widths) + len(GAP) * (len(widths) - 1)


def _fit(columns: Sequence[Column], widths: list[int], width: int) -> list[int]:
    """Widths whose line fits `width`: free text narrowed first, then the widest identifiers."""
    widths = list(widths)
    free = [i for i, c in enumerate(columns) if c.wraps]
    other = [i for i, c in enumerate(columns) if not c.wraps]
    for group, floor in ((free, _FREE_FLOOR), (other, _ID_FLOOR)):
        excess = _line_width(widths) - width
        if excess <= 0:
            break
        floors = {i: min(widths[i], max(floor, cell_width(columns[i].name))) for i in group}
        widths = _lower_to_cap(widths, floors, excess)
    return widths


def _lower_to_cap(widths: list[int], floors: dict[int, int], excess: int) -> list[int]:
    """The widest of the columns in `floors` lowered to one common cap (never below its
    floor), the highest cap that takes away at least `excess` columns, or as much as the floors allow."""
    def taken(cap: int) -> int:
        return sum(widths[i] - max(cap, floors[i]) for i in floors if widths[i] > max(cap, floors[i]))

    if not floors:
        return widths
    low, high = 0, max(widths[i] for i in floors)
    while low < high:  # the highest cap that still takes away enough
        middle = (low + high + 1) // 2
        if taken(middle) >= excess:
            low = middle
        else:
            high = middle - 1
    return [min(w, max(low, floors[i])) if i in floors else w for i, w in enumerate(widths)]


def _join(columns: Sequence[Column], widths: Sequence[int], values: Sequence[str]) -> str:
    parts = []
    for column, width, value in zip(columns, widths, values, strict=True):
        shown = cut(value, width)
        pad = " " * (width - cell_width(shown))
        parts.append(pad + shown if column.right else shown + pad)
    return GAP.join(parts).rstrip()


def print_table(columns: Sequence[Column], rows: Iterable[Sequence[object]], *, title: str | None = None) -> None:
    """Print a table to stdout: its title (for output holding more than one), header, records."""
    width = table_width()
    lines = layout(columns, rows, width)
    if width is None:
        print_lines([title, *lines] if title else lines)
        return
    from rich.text import Text

    out = console()
    if title:
        out.print(Text(cut(inert(title), width), style="bold", no_wrap=True))
    out.print(Text(lines[0], style="bold", no_wrap=True))
    for line in lines[1:]:
        out.print(Text(line, no_wrap=True))


def print_lines(lines: Iterable[str]) -> None:
    """Print lines of text a person reads: on a terminal through the console (which wraps
    prose at its width), anywhere else exactly as they are, made inert.

    A pipe is where scripts and other programs read, often many times over, and what the
    console writes there is each line as `inert` leaves it: written directly, a command
    that prints only lines (a table, `sync`) starts without importing rich at all.
    """
    import sys

    from failres.cli.common import stdout_is_terminal

    if stdout_is_terminal():
        out = console()
        for line in lines:
            out.print(line, markup=False)
        return
    sys.stdout.write("".join(inert(line, multiline=True) + "\n" for line in lines))


def note_cut(shown: int, total: int, *, what: str = "", option: str = "--limit N") -> None:
    """Say on stderr that a listing shows part of what there is, and how to see more.

    On stderr, so the listing itself (and `--json`) stays exactly the records shown."""
    if total <= shown:
        return
    import sys

    noun = f" {what}" if what else ""
    sys.stderr.write(f"{shown} of {total}{noun} shown; {option} shows more\n")
