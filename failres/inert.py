"""Untrusted text made inert before a terminal, a log line or a web page shows it.

Much of what failres prints was written by someone else: seat and gate output, file
names a seat created, records fetched from a remote store, messages of commits. A
terminal obeys the control characters in it: `ESC]0;...BEL` retitles the window,
`ESC[2J` clears the screen, `ESC[31m` colours every line after it, a carriage
return overwrites what was printed before it on the line, and the C1 range
(U+0080-U+009F) is read as the same commands by some terminals. Unicode's
bidirectional controls reorder what a person reads (the "Trojan Source" trick),
so a file name can show as something it is not.

`inert` replaces each of those characters with its escape (`\\x1b`, `\\u202e`):
the text stays readable, and what it tried to do is visible instead of done. It
imports only the standard library, because the merge hook (which must start fast)
prints through it too. Rich markup (`[red]`) is the other half of the problem and
belongs to the console: `failres.cli.common` never lets rich interpret markup in
data.
"""

from __future__ import annotations

_BIDI_AND_SEPARATORS = (
    0x061C,  # arabic letter mark
    0x200E, 0x200F,  # left-to-right and right-to-left marks
    0x202A, 0x202B, 0x202C, 0x202D, 0x202E,  # embeddings and overrides
    0x2066, 0x2067, 0x2068, 0x2069,  # isolates
    0x2028, 0x2029,  # line and paragraph separators: a line break to some readers, not to others
)


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _table(keep: str) -> dict[int, str]:
    controls = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *_BIDI_AND_SEPARATORS]
    return {code: _escape(code) for code in controls if chr(code) not in keep}


# One line (a table cell, a file name, an error message): every control is escaped,
# newlines included, so a value can never start a line of its own.
_ONE_LINE = _table(keep="")
# A block of text (a message, a prompt, a diff): its own line breaks and tabs stay.
# A carriage return does not: it would let one line overwrite another.
_MULTILINE = _table(keep="\n\t")


def inert(value: object, *, multiline: bool = False) -> str:
    """`value` as text with every control character escaped (`ESC` becomes `\\x1b`).

    With `multiline`, line breaks and tabs are kept; everything else a terminal
    would obey is shown, not obeyed. Text without controls comes back unchanged.
    """
    text = value if isinstance(value, str) else str(value)
    return text.translate(_MULTILINE if multiline else _ONE_LINE)


def is_inert(text: str, *, multiline: bool = False) -> bool:
    """Whether `text` holds nothing a terminal would obey (what `inert` leaves unchanged)."""
    return inert(text, multiline=multiline) == text
