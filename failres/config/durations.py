"""Durations as people write them in configuration: "30s", "15m", "1h30m", "500ms".

Kept apart from the configuration reader because gates, seats, the probe and the
report all speak durations, and none of them should need to know about TOML.
"""

from __future__ import annotations

import re

# Largest unit first, each at most once: "1h30m" reads one way only, and a typo
# such as "30m1h" is more likely a mistake than an intent, so it is refused.
_UNITS: tuple[tuple[str, float], ...] = (
    ("d", 86400.0),
    ("h", 3600.0),
    ("m", 60.0),
    ("s", 1.0),
    ("ms", 0.001),
)
_UNIT_SECONDS = dict(_UNITS)
_UNIT_RANK = {unit: rank for rank, (unit, _) in enumerate(_UNITS)}
# "ms" must be tried before "m" and "s", or "500ms" would read as 500 minutes and a stray "s".
_COMPONENT = re.compile(r"(\d+(?:\.\d+)?)(ms|d|h|m|s)")

_FORMAT_HINT = 'write a number and a unit (d, h, m, s, ms), e.g. "30s", "15m", "1h30m", "500ms"'


def parse_duration(text: str) -> float:
    """Seconds in a duration such as "30s", "15m", "2h", "1h30m" or "500ms"."""
    if not isinstance(text, str):
        msg = f"a duration must be a string such as \"30s\", got {type(text).__name__}"
        raise ValueError(msg)
    if not text:
        msg = f"empty duration; {_FORMAT_HINT}"
        raise ValueError(msg)
    seconds = 0.0
    position = 0
    last_rank = -1
    while position < len(text):
        component = _COMPONENT.match(text, position)
        if component is None:
            msg = f"cannot read duration {text!r}; {_FORMAT_HINT}"
            raise ValueError(msg)
        number, unit = component.groups()
        rank = _UNIT_RANK[unit]
        if rank <= last_rank:
            msg = f"cannot read duration {text!r}: units must go from largest to smallest, each once"
            raise ValueError(msg)
        last_rank = rank
        seconds += float(number) * _UNIT_SECONDS[unit]
        position = component.end()
    return seconds


def format_duration(seconds: float) -> str:
    """The shortest duration text that parse_duration reads back, e.g. 5400 -> "1h30m"."""
    if seconds < 0:
        msg = f"a duration cannot be negative, got {seconds}"
        raise ValueError(msg)
    # Whole milliseconds are the finest unit; rounding here keeps the round trip exact.
    remaining_ms = round(seconds * 1000)
    if remaining_ms == 0:
        return "0s"
    parts = []
    for unit, unit_seconds in _UNITS:
        unit_ms = round(unit_seconds * 1000)
        count, remaining_ms = divmod(remaining_ms, unit_ms)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
