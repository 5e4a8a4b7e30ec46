"""JSON from outside (a person's answer, another harness's lines, a seat's reply), read safely.

`json.loads` accepts more than a record can hold, and some of it fails later, far
from the input that caused it:

- nesting thousands of levels deep raises RecursionError in the parser, and a few
  hundred levels parse but overflow the stack of whatever walks the value next
  (redaction, the encoder);
- `NaN`, `Infinity` and numbers too large for a float are not JSON to anyone else:
  written back into a record, they make it unreadable to jq, to git tools, to a
  stricter parser;
- an escaped lone surrogate (`"\\ud800"`) becomes a string Python cannot encode
  as UTF-8, so the write of the record fails.

`loads` refuses each of these with `UnreadableJson` (a ValueError, like the
parser's own errors) saying what and where, so the caller can name the input.
"""

from __future__ import annotations

import json
import math

MAX_DEPTH = 64  # far beyond any record's shape; far below the interpreter's stack


class UnreadableJson(ValueError):
    """The text is not JSON a record can hold; the message says why."""


def _no_constant(name: str) -> float:
    msg = f"{name} is not a JSON number"
    raise UnreadableJson(msg)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        msg = f"the number {text[:20]}{'...' if len(text) > 20 else ''} is too large"
        raise UnreadableJson(msg)
    return value


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> object:
    """The JSON value in `text`; UnreadableJson (or json.JSONDecodeError) when a record could not hold it."""
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        msg = f"nested deeper than {max_depth} levels"
        raise UnreadableJson(msg) from None
    except UnreadableJson:
        raise
    except json.JSONDecodeError:
        raise
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise UnreadableJson(str(error)) from None
    if not _plainly_sound(text, max_depth):
        check_value(value, max_depth=max_depth)
    return value


def _plainly_sound(text: str | bytes, max_depth: int) -> bool:
    """Whether the text alone shows that what it parses to passes `check_value` (a bulk import's lines do).

    Every level of nesting opens with a bracket, so a text with no more brackets than
    `max_depth` nests no deeper; a lone surrogate comes from a `\\u` escape or from the
    text itself, which then cannot be encoded.
    """
    if type(text) is not str or "\\u" in text or text.count("{") + text.count("[") > max_depth:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_value(value: object, *, max_depth: int = MAX_DEPTH) -> None:
    """Refuse a parsed value a record cannot hold (too deep; a string that is not valid Unicode).

    Walked with an explicit stack: the point is to never recurse on input.
    """
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item)
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth > max_depth:
            msg = f"nested deeper than {max_depth} levels"
            raise UnreadableJson(msg)
        if isinstance(item, dict):
            for key, child in item.items():
                _check_text(key)
                stack.append((child, depth + 1))
        else:
            stack.extend((child, depth + 1) for child in item)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        msg = f"a string holds {text[error.start]!r}, a lone surrogate escape that is not a character"
        raise UnreadableJson(msg) from None
