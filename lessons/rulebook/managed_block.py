"""The rules in force, written into a block of a file the person's own agents read.

Claude Code reads `CLAUDE.md`, Codex `AGENTS.md`, aider a `CONVENTIONS.md` it is told to
read: files a person writes by hand and commits. failres owns only the lines between
its two markers; `splice_block` is the pure function that puts the block there, and it
keeps every other byte of the file as it was (its line endings, a missing final
newline, bytes that are not UTF-8), so `git diff` after an export shows the block and
nothing else. The same rules always give the same bytes: a second export writes nothing.

A rule's text comes from the store, where learning may have put words first seen in a
transcript; inside the block it can never pose as a marker or open an HTML comment
that would hide the lines after it, and control characters (an escape that repaints a
terminal, a bidirectional override that reorders a reviewer's view) are replaced.
"""

from __future__ import annotations

import re
import unicodedata

from lessons.errors import InvalidInput

BEGIN_MARKER = "<!-- failres:rules:begin -->"
END_MARKER = "<!-- failres:rules:end -->"
MANAGED_NOTE = ("<!-- Managed by failres: `git failres rules export` rewrites the lines between these markers. "
                "Change the rules with git failres (proposals accept, rules retire, the store's "
                "rules/<domain>.user.toml), then export again. -->")

# Bidirectional embeddings, overrides and isolates: format characters, not Cc, that make
# a reviewer read a line in another order than the agent does.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def inert_line(text: str) -> str:
    """One line of block text that cannot end the block, open a comment or drive a terminal."""
    shown = "".join("\ufffd" if unicodedata.category(c) == "Cc" or c in _BIDI else c for c in text)
    # Breaking the comment brackets is enough: a marker is a whole line starting "<!--".
    return shown.replace("<!--", "< !--").replace("-->", "-- >")


def block_lines(rules_block: str) -> list[str]:
    """The managed block, markers included, without line terminators."""
    body = [inert_line(line) for line in rules_block.splitlines()]
    while body and not body[-1].strip():
        body.pop()
    return [BEGIN_MARKER, MANAGED_NOTE, *([""] + body if body else []), END_MARKER]


def _is_marker(line: str, marker: str) -> bool:
    return line.rstrip("\r\n").strip().lstrip("\ufeff") == marker


def _newline(text: str) -> str:
    """The file's own line ending: CRLF when most of its lines end so."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"


def splice_block(existing: bytes | None, rules_block: str, where: str = "the file") -> bytes:
    """`existing` with its managed block replaced by one holding `rules_block` (appended
    when it has none; the block alone when there is no file yet).

    InvalidInput naming `where` when the markers are not one begin line followed by one
    end line: a block failres cannot tell apart is never guessed at.
    """
    text = (existing or b"").decode("utf-8", errors="surrogateescape")
    lines = _LINE.findall(text)
    begins = [i for i, line in enumerate(lines) if _is_marker(line, BEGIN_MARKER)]
    ends = [i for i, line in enumerate(lines) if _is_marker(line, END_MARKER)]
    if len(begins) > 1:
        msg = f"{where} has {len(begins)} failres rules begin markers (lines {begins[0] + 1} and {begins[1] + 1})"
        raise InvalidInput(msg)
    if len(ends) > 1:
        msg = f"{where} has {len(ends)} failres rules end markers (lines {ends[0] + 1} and {ends[1] + 1})"
        raise InvalidInput(msg)
    if len(begins) != len(ends) or (begins and ends[0] < begins[0]):
        line = (begins or ends)[0] + 1
        msg = f"{where} has a failres rules marker at line {line} without its partner"
        raise InvalidInput(msg)
    block = block_lines(rules_block)
    if begins:
        first, last = begins[0], ends[0]
        newline = lines[first][len(lines[first].rstrip("\r\n")):]
        # The end line keeps its own terminator: none when it was the file's last, unterminated line.
        closing = lines[last][len(lines[last].rstrip("\r\n")):]
        middle = "".join(line + newline for line in block[:-1]) + block[-1] + closing
        spliced = "".join(lines[:first]) + middle + "".join(lines[last + 1:])
    else:
        newline = _newline(text)
        prefix = text
        if prefix and not prefix.endswith("\n"):
            prefix += newline
        if lines and lines[-1].strip():  # a blank line between the person's text and the block
            prefix += newline
        spliced = prefix + "".join(line + newline for line in block)
    return spliced.encode("utf-8", errors="surrogateescape")
