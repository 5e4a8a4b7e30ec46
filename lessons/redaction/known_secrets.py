"""Secrets known by value: text that must never be written, whatever shape it has.

The shapes `secret_shapes` knows (keys, tokens, passwords in assignments) miss a value
that looks like nothing in particular — `DB_PASSWORD=correct-horse` read from a `.env`
file a harness copies into an agent's workspace. A harness that hands such a file over
names its values here once; `redact` replaces each of them wherever it appears, also
where invisible format characters (a zero-width joiner, a soft hyphen, a direction mark)
were put between its letters, which a terminal shows as the same value.
"""

from __future__ import annotations

import re
import threading

MARKER = "[REDACTED:local-file]"
_values: frozenset[str] = frozenset()
_lock = threading.Lock()
# Characters a terminal shows as nothing: a value with them between its letters reads the same.
FORMAT_CHARACTERS = "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
_INVISIBLE = re.compile(f"[{FORMAT_CHARACTERS}]")
_spread: tuple[frozenset[str], re.Pattern[str] | None] = (frozenset(), None)


def remember_secret_values(values) -> None:
    """Redact each of `values` from now on (in this process)."""
    global _values
    with _lock:
        _values = _values | frozenset(v for v in values if v)


def known_values() -> frozenset[str]:
    """The values remembered now; a new set (never the same object) after every `remember_secret_values`."""
    return _values


def replace_known(text: str) -> str:
    """`text` with every remembered value replaced by the marker; the longest first, so a value
    that holds another is not cut in two."""
    values = _values
    if not values:
        return text
    for value in sorted(values, key=len, reverse=True):
        if value in text:
            text = text.replace(value, MARKER)
    if _INVISIBLE.search(text):
        text = _spread_pattern(values).sub(MARKER, text)
    return text


def _spread_pattern(values: frozenset[str]) -> re.Pattern[str]:
    """One pattern for every value with any run of format characters between its letters."""
    global _spread
    known, pattern = _spread
    if known is not values or pattern is None:
        gap = f"[{FORMAT_CHARACTERS}]*"
        pattern = re.compile("|".join(gap.join(re.escape(c) for c in value)
                                      for value in sorted(values, key=len, reverse=True)))
        _spread = (values, pattern)
    return pattern
