"""The kinds of value a configuration key can hold, each checked strictly.

A kind turns the raw TOML value into its Python value or raises `Invalid` with the
key path and, where it helps, a hint. Tables of tables are read by the kinds in
`failres.config.schema`, next to the reader they call back into.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import ClassVar

from lessons.frozen import record
from failres.config.schema import Invalid, KeyPath, read_list, suggestion, wrong_type
from failres.config.durations import parse_duration
from failres.config.network_setting import network_value_problem
from failres.config.placeholders import NOT_FOR_SEATS, placeholders_in


# No value read from a file may carry a NUL byte: an argument list, an environment
# variable or a path holding one cannot be passed to the operating system at all
# (Python refuses with "embedded null byte" in the middle of a run).
def _refuse_nul(raw: str, path: KeyPath) -> None:
    if "\0" in raw:
        raise Invalid(path, f"must not contain a NUL byte (at character {raw.index(chr(0)) + 1})")


# The longest duration any key may hold. Longer is a typo ("30d" for "30s"), and a
# timeout beyond what the operating system's timers take would fail mid-run.
MAX_DURATION_SECONDS = 30 * 86400.0


@record
class Text:
    """A string; optionally one of `choices`, matching `pattern`, or passing `check`."""

    expected: ClassVar[str] = "a string"
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    pattern_meaning: str = "valid"  # completes '"x" is not ...'
    check: Callable[[str], str | None] | None = None
    non_empty: bool = False

    def read(self, raw: object, path: KeyPath) -> str:
        if not isinstance(raw, str):
            raise wrong_type(path, self.expected, raw)
        _refuse_nul(raw, path)
        if self.non_empty and not raw:
            raise Invalid(path, "must not be empty")
        if self.choices and raw not in self.choices:
            allowed = ", ".join(f'"{choice}"' for choice in self.choices)
            raise Invalid(path, f'must be one of {allowed}, got "{raw}"',
                          hint=suggestion(raw, list(self.choices), "value"))
        if self.pattern is not None and not re.fullmatch(self.pattern, raw):
            raise Invalid(path, f'"{raw}" is not {self.pattern_meaning}')
        problem = self.check(raw) if self.check is not None else None
        if problem:
            raise Invalid(path, problem)
        return raw


@record
class Network:
    """A `network` value: "on", "off", "open" (or "" to follow), or a list of hosts (a tuple)."""

    expected: ClassVar[str] = '"on", "off", "open" or an array of hosts'

    def read(self, raw: object, path: KeyPath) -> str | tuple[str, ...]:
        if isinstance(raw, list):
            raw = list(TextList().read(raw, path))
        elif not isinstance(raw, str):
            raise wrong_type(path, self.expected, raw)
        else:
            _refuse_nul(raw, path)
        problem = network_value_problem(raw)
        if problem:
            raise Invalid(path, problem)
        return tuple(raw) if isinstance(raw, list) else raw


@record
class Flag:
    """true or false."""

    expected: ClassVar[str] = "a boolean (true or false)"

    def read(self, raw: object, path: KeyPath) -> bool:
        if not isinstance(raw, bool):
            raise wrong_type(path, self.expected, raw)
        return raw


@record
class Integer:
    """A whole number within [minimum, maximum]."""

    expected: ClassVar[str] = "an integer"
    minimum: int | None = None
    maximum: int | None = None

    def read(self, raw: object, path: KeyPath) -> int:
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise wrong_type(path, self.expected, raw)
        _check_range(raw, self.minimum, self.maximum, path)
        return raw


def _check_range(value: int, minimum: int | None, maximum: int | None, path: KeyPath) -> None:
    if minimum is not None and maximum is not None and not minimum <= value <= maximum:
        raise Invalid(path, f"must be between {minimum} and {maximum}, got {value}")
    if minimum is not None and value < minimum:
        raise Invalid(path, f"must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise Invalid(path, f"must be at most {maximum}, got {value}")


@record
class Duration:
    """A duration string ("30s", "1h30m") read as seconds; zero is refused."""

    expected: ClassVar[str] = 'a duration string such as "30s"'

    def read(self, raw: object, path: KeyPath) -> float:
        if not isinstance(raw, str):
            raise wrong_type(path, self.expected, raw)
        try:
            seconds = parse_duration(raw)
        except ValueError as error:
            raise Invalid(path, str(error)) from None
        if seconds <= 0:
            raise Invalid(path, f'must be longer than zero, got "{raw}"')
        if seconds > MAX_DURATION_SECONDS:
            raise Invalid(path, f'must be at most 30 days ("30d"), got "{raw}"')
        return seconds


@record
class TextList:
    """A list of non-empty strings, each optionally passing `check`."""

    expected: ClassVar[str] = "an array of strings"
    min_items: int = 0
    check: Callable[[str], str | None] | None = None

    def read(self, raw: object, path: KeyPath) -> tuple[str, ...]:
        items = read_list(raw, path, self.expected)
        if len(items) < self.min_items:
            raise Invalid(path, f"must list at least {self.min_items} item(s)")
        for index, item in enumerate(items):
            if not isinstance(item, str):
                raise wrong_type((*path, index), "a string", item)
            _refuse_nul(item, (*path, index))
            if not item:
                raise Invalid((*path, index), "must not be empty")
            problem = self.check(item) if self.check is not None else None
            if problem:
                raise Invalid((*path, index), problem)
        return tuple(items)


def placeholder_problem(argument: str) -> str | None:
    """Why `argument` holds a placeholder failres does not know, or None."""
    return _placeholder_problem(argument)


def _placeholder_problem(argument: str) -> str | None:
    try:
        placeholders_in((argument,))
    except ValueError as error:
        return str(error)
    return None


def regex_problem(pattern: str, flags: int = 0) -> str | None:
    """Why `pattern` is not a usable regular expression, or None when it is."""
    try:
        re.compile(pattern, flags)
    except re.error as error:
        return f"not a valid regular expression ({error})"
    return None


def seat_placeholder_problem(argument: str) -> str | None:
    """`_placeholder_problem`, and no placeholder a seat may not see."""
    problem = _placeholder_problem(argument)
    if problem:
        return problem
    for name in placeholders_in((argument,)):
        if name in NOT_FOR_SEATS:
            return (f"{{{name}}} is not available to a seat's command or environment: a seat is not told "
                    f"where your repository is (gates keep {{{name}}})")
    return None


# Checked at load time, so that a typo such as {worktre} is reported by the file that
# holds it instead of surfacing as a KeyError in the middle of a run.
COMMAND = TextList(min_items=1, check=_placeholder_problem)
OPTIONAL_COMMAND = TextList(min_items=0, check=_placeholder_problem)
SEAT_COMMAND = TextList(min_items=1, check=seat_placeholder_problem)
OPTIONAL_SEAT_COMMAND = TextList(min_items=0, check=seat_placeholder_problem)


@record
class RegexList:
    """A list of regular expressions that must compile with `flags`."""

    expected: ClassVar[str] = "an array of regular expressions (strings)"
    flags: int = 0

    def read(self, raw: object, path: KeyPath) -> tuple[str, ...]:
        return TextList(check=lambda pattern: regex_problem(pattern, self.flags)).read(raw, path)


@record
class IntegerList:
    """A list of whole numbers, each within [minimum, maximum]."""

    expected: ClassVar[str] = "an array of integers"
    minimum: int | None = None
    maximum: int | None = None

    def read(self, raw: object, path: KeyPath) -> tuple[int, ...]:
        items = read_list(raw, path, self.expected)
        element = Integer(self.minimum, self.maximum)
        return tuple(element.read(item, (*path, index)) for index, item in enumerate(items))


@record
class TextTable:
    """A table of string values whose keys match `key_pattern`."""

    expected: ClassVar[str] = "a table of strings"
    key_pattern: str = r".+"
    key_meaning: str = "a valid key"  # completes '"x" is not ...'
    check: Callable[[str], str | None] | None = None  # on each value

    def read(self, raw: object, path: KeyPath) -> Mapping[str, str]:
        if not isinstance(raw, dict):
            raise wrong_type(path, self.expected, raw)
        for key, value in raw.items():
            _refuse_nul(key, (*path, key))
            if not re.fullmatch(self.key_pattern, key):
                raise Invalid((*path, key), f'"{key}" is not {self.key_meaning}')
            if not isinstance(value, str):
                raise wrong_type((*path, key), "a string", value)
            _refuse_nul(value, (*path, key))
            problem = self.check(value) if self.check is not None else None
            if problem:
                raise Invalid((*path, key), problem)
        return MappingProxyType(dict(raw))
