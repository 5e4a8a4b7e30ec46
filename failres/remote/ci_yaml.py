"""Workflow files as data: every value a generated CI file carries goes out as a quoted scalar.

A plan's file name, a branch, an install command: each was once pasted into the text of
a workflow, and a name holding a newline ended the header comment and began a key of its
own (`defaults.run.shell` on GitHub, a whole job on GitLab) that no linter questioned.
Here a workflow is built as plain dicts and lists and written by `emit`, which writes
every string as a JSON string (a JSON string is a YAML double-quoted scalar, and
`ensure_ascii` leaves no line break in it, not even U+2028), so what the file says is
exactly the structure that was built. PyYAML is not a dependency of failres; this is all
the YAML a workflow needs. Names with control characters are refused before that
(`refuse_unprintable`): a file name with a newline in it is no name a job should run.
"""

from __future__ import annotations

import json
import unicodedata

from failres.errors import UsageError

Value = str | int | bool | None | dict | list


def refuse_unprintable(what: str, value: str) -> None:
    """UsageError (exit 2) when `value` holds a control, format or line-separator character."""
    for char in value:
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            msg = (f"the {what} {value!r} holds the character U+{ord(char):04X}: "
                   "a CI workflow carries no control characters")
            raise UsageError(msg, hint=f"rename it so that it holds printable characters only")


def quoted(text: str) -> str:
    """A YAML scalar that reads back as exactly `text`."""
    return json.dumps(text, ensure_ascii=True)


def _scalar(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, str):
        return quoted(value)
    if value == {}:
        return "{}"
    if value == []:
        return "[]"
    msg = f"no YAML for {type(value).__name__}"
    raise TypeError(msg)


def _inline(value: Value) -> bool:
    return not isinstance(value, (dict, list)) or not value


def _block(value: dict | list, depth: int) -> list[str]:
    pad = "  " * depth
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if _inline(item):
                lines.append(f"{pad}{quoted(str(key))}: {_scalar(item)}")
            else:
                lines.append(f"{pad}{quoted(str(key))}:")
                lines += _block(item, depth + 1)
        return lines
    for item in value:
        if _inline(item):
            lines.append(f"{pad}- {_scalar(item)}")
            continue
        inner = _block(item, depth + 1)
        lines.append(f"{pad}- {inner[0].lstrip()}")
        lines += inner[1:]
    return lines


def emit(document: dict, comments: tuple[str, ...] = ()) -> str:
    """The YAML text of `document`, after `comments` (each one line of prose, no value in it
    unquoted: a value is written with `quoted`)."""
    for comment in comments:
        refuse_unprintable("comment", comment)
    return "\n".join([*(f"# {comment}" for comment in comments), *_block(document, 0)]) + "\n"
