"""Terminal output as the plain text a person reads on the screen: escapes removed, not shown.

A gate's or seat's output is written for a terminal. A project whose pytest runs with
`--color=yes` prints `ESC[31m` before every red line, and a tool that draws a progress bar
redraws one line with carriage returns. Kept as they were, those bytes became U+FFFD in every
summary, lesson, prompt and report (an 860-line fixer prompt of `\ufffd[31m`), and a signature read
`[31m` as a duration. `plain_text` is what failres keeps instead, the one place this is decided:

- escape sequences go whole: CSI (`ESC[...m`, colours and cursor moves, and its one-byte
  form U+009B), OSC (`ESC]...BEL` or `ESC]...ESC\\`: window titles, hyperlinks, whose
  visible text stays), the other string sequences (DCS, SOS, PM, APC) and the two-byte
  ones (`ESC(B`, `ESC=`, `ESC7`);
- a line redrawn with carriage returns keeps its last state (`50%\\r100%` is `100%`), the
  way the screen showed it when the line was done; `\\r\\n` is a line break;
- every other control character (C0 but newline and tab, DEL, C1) is removed.

Removed rather than escaped: what a terminal would obey is formatting, not content, and the
raw bytes stay in the dispatch's own log file for whoever wants them. Text without any of
these comes back unchanged. Pure, standard library only.
"""

from __future__ import annotations

import re

__all__ = ["has_terminal_controls", "plain_text"]

# An OSC, DCS, SOS, PM or APC string runs to its terminator (BEL, ST as `ESC\` or U+009C).
# One that never ends takes the rest of its line, not the rest of the output: a cut output
# (the head of a long run) must not lose every line after a broken title.
_STRING = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
# CSI: parameters, intermediates, one final byte (ECMA-48 5.4). Without its final byte
# (cut off at the end) the introducer and what follows are removed up to where it broke.
_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
# Every other escape: intermediates, then one final byte (`ESC(B`, `ESC=`, `ESC7`).
_SHORT = r"\x1b[ -/]*[0-~]"
_SEQUENCE = re.compile(f"{_STRING}|{_CSI}|{_SHORT}")
_CONTROLS = {code: None for code in (*range(0x00, 0x20), *range(0x7F, 0xA0)) if code not in (0x09, 0x0A)}
_ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def has_terminal_controls(text: str) -> bool:
    """Whether `text` holds anything `plain_text` would remove (an ESC, a CR, any control)."""
    return _ANY_CONTROL.search(text) is not None


def plain_text(text: str) -> str:
    """`text` as a terminal would show it, in plain characters: no escape, no control but newline and tab."""
    if not has_terminal_controls(text):
        return text
    text = _SEQUENCE.sub("", text)
    if "\r" in text:
        text = "\n".join(_last_state(line) for line in text.replace("\r\n", "\n").split("\n"))
    return text.translate(_CONTROLS)


def _last_state(line: str) -> str:
    """A line redrawn with carriage returns, as it was last drawn (a trailing return redraws nothing)."""
    if "\r" not in line:
        return line
    drawn = [part for part in line.split("\r") if part]
    return drawn[-1] if drawn else ""
