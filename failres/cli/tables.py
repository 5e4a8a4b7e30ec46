"""Rows for people that survive pipes: one record per line, values as text, nothing split.

On a terminal, columns are aligned and only the columns marked `wraps` (free text:
messages, reasons, details) are wrapped, at word boundaries, under themselves;
identifiers, paths, states and times never are. When even that does not fit, each
record is printed on one line of its own and the terminal may fold it. Anywhere
else (a pipe, a file) there is no wrapping at all: a header line, then exactly one
line per record, so `grep`, `cut -f` style tools and `wc -l` see what they expect.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from failres.cli.common import console, terminal_width
from failres.inert import inert

GAP = "  "
_BREAKS = re.compile(r"\s*[\r\n\t\v\f]+\s*")
_NARROWEST_WRAP = 24  # below this a wrapped column is a ribbon of single words: give up aligning


@dataclass(frozen=True)
class Column:
    name: str
    wraps: bool = False  # free text that may wrap at word boundaries on a terminal
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


def layout(columns: Sequence[Column], rows: Iterable[Sequence[object]], width: int | None) -> list[str]:
    """The lines of a table: a header, then the records (pure: the width is given)."""
    cells = [[as_text(value) for value in row] for row in rows]
    widths = [max([len(c.name), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    if width is not None and _line_width(widths) > width:
        fitted = _fit(columns, widths, width)
        if fitted is None:
            return [GAP.join(c.name for c in columns), *(GAP.join(v for v in row if v) for row in cells)]
        widths = fitted
    lines = [_join(columns, widths, [c.name for c in columns])]
    for row in cells:
        lines += _record_lines(columns, widths, row, wrap=width is not None)
    return lines


def _line_width(widths: Sequence[int]) -> int:
    return sum(widths) + len(GAP) * (len(widths) - 1)


def _fit(columns: Sequence[Column], widths: list[int], width: int) -> list[int] | None:
    """Widths that fit by narrowing the wrapping columns, or None when they cannot."""
    wrapping = [i for i, c in enumerate(columns) if c.wraps]
    if not wrapping:
        return None
    fixed = sum(w for i, w in enumerate(widths) if i not in wrapping) + len(GAP) * (len(widths) - 1)
    room = (width - fixed) // len(wrapping)
    if room < _NARROWEST_WRAP:
        return None
    return [min(w, room) if i in wrapping else w for i, w in enumerate(widths)]


def _join(columns: Sequence[Column], widths: Sequence[int], values: Sequence[str]) -> str:
    parts = [v.rjust(w) if c.right else v.ljust(w) for c, w, v in zip(columns, widths, values, strict=True)]
    return GAP.join(parts).rstrip()


def _record_lines(columns: Sequence[Column], widths: Sequence[int], row: Sequence[str], *, wrap: bool) -> list[str]:
    if not wrap:
        return [_join(columns, widths, row)]
    pieces = [textwrap.wrap(v, w, break_long_words=False, break_on_hyphens=False) or [""] if c.wraps else [v]
              for c, w, v in zip(columns, widths, row, strict=True)]
    height = max(len(p) for p in pieces)
    return [_join(columns, widths, [p[n] if n < len(p) else "" for p in pieces]) for n in range(height)]


def print_table(columns: Sequence[Column], rows: Iterable[Sequence[object]], *, title: str | None = None) -> None:
    """Print a table to stdout: its title (for output holding more than one), header, records."""
    width = terminal_width()
    out = console()
    lines = layout(columns, rows, width)
    if width is not None:
        from rich.text import Text

        if title:
            out.print(Text(inert(title), style="bold"))
        out.print(Text(lines[0], style="bold"))
    else:
        if title:
            out.print(title, markup=False)
        out.print(lines[0], markup=False)
    for line in lines[1:]:
        out.print(line, markup=False)
