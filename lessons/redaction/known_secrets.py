"""Secrets known by value: text that must never be written, whatever shape it has.

The shapes `secret_shapes` knows (keys, tokens, passwords in assignments) miss a value
that looks like nothing in particular — `DB_PASSWORD=correct-horse` read from a `.env`
file a harness copies into an agent's workspace. A harness that hands such a file over
names its values here once; `redact` replaces each of them wherever it appears.
"""

from __future__ import annotations

import threading

MARKER = "[REDACTED:local-file]"
_values: frozenset[str] = frozenset()
_lock = threading.Lock()


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
    return text
