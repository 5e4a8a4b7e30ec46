"""A seat's `SCOPE-REQUEST: <file> — <reason>` lines, read from its output.

A request is text a seat printed, so it is read as untrusted: a path outside the
repository or inside a git dir is refused when it is read, and its reason is shown to a
person with every escape made visible, never obeyed by their terminal.
"""

from __future__ import annotations

import re
from lessons.frozen import record



@record
class ScopeRequest:
    """A seat's `SCOPE-REQUEST:` line: a file outside its scope and why it needs it."""

    file: str
    reason: str


SCOPE_REQUEST_MARKER = "SCOPE-REQUEST:"
MAX_SCOPE_REQUESTS = 20
# A request is evidence for a person to read, not a channel for pasting whole files into
# the decision record.
_MAX_FILE_CHARS = 1024
_MAX_REASON_CHARS = 1000
_QUOTES = "\"'`"
_GLUED_SEPARATORS = ("\u2014", "\u2013")  # em dash, en dash: often written without spaces
_LEADING_SEPARATOR = re.compile(r"^(?:\u2014|\u2013|--|-(?=\s)|:)\s*")


def parse_scope_requests(text: str) -> tuple[ScopeRequest, ...]:
    """Every `SCOPE-REQUEST: <file> — <reason>` line in `text`, first per file, at most 20.

    Seats are free text generators, so this accepts the separators people actually type
    (em dash, en dash, ` - `, `--`, `:`), quoted or backticked paths, and markdown
    emphasis around the marker; it never raises. Lines naming no file, and the
    `<file>` placeholder of the prompt echoed back, are ignored.
    """
    requests: list[ScopeRequest] = []
    seen: set[str] = set()
    for line in text.splitlines():
        request = _parse_request_line(line)
        if request is None or request.file in seen:
            continue
        seen.add(request.file)
        requests.append(request)
        if len(requests) == MAX_SCOPE_REQUESTS:
            break
    return tuple(requests)


def _parse_request_line(line: str) -> ScopeRequest | None:
    _, marker, rest = line.partition(SCOPE_REQUEST_MARKER)
    if not marker:
        return None
    if rest.startswith("*"):
        # "**SCOPE-REQUEST:** file": markdown bold glued to the marker. Only glued asterisks
        # go; a path may itself begin with "_" (`__init__.py`) or be a glob after a space.
        rest = rest.lstrip("*")
    rest = rest.strip()
    file, remainder = _split_file(rest)
    file = file.strip().strip(_QUOTES).strip().rstrip(":,;")
    if not file or len(file) > _MAX_FILE_CHARS or _is_placeholder(file):
        return None
    if file in ("-", "--"):
        return None  # a separator with no file before it
    if not requestable(file):
        return None
    reason = _LEADING_SEPARATOR.sub("", remainder.strip()).strip()
    reason = visible(reason.rstrip("*").strip()[:_MAX_REASON_CHARS])
    return ScopeRequest(file=file, reason=reason)


def requestable(file: str) -> bool:
    """Whether a requested path could be a task's file (pure): inside the repository, outside
    any git dir, and every character one a person sees (no terminal escape hides a part of it)."""
    if any(not (char.isprintable() or char == " ") or char == "\ufffd" for char in file):
        return False  # U+FFFD: a control character the output reader already neutralised
    if file.startswith(("/", "~")) or "\\" in file:
        return False
    parts = [part for part in file.split("/") if part not in ("", ".")]
    return bool(parts) and ".." not in parts and not any(part.lower() == ".git" for part in parts)


def visible(text: str) -> str:
    """`text` with every control character shown as an escape (`\\x1b`), so a person reads what was sent (pure)."""
    return "".join(char if char.isprintable() or char == " " else char.encode("unicode_escape").decode("ascii")
                   for char in text)


def _split_file(rest: str) -> tuple[str, str]:
    """(file, what follows it); a path with spaces must be quoted to survive."""
    if rest[:1] and rest[0] in _QUOTES:
        closing = rest.find(rest[0], 1)
        if closing == -1:
            return rest[1:], ""
        return rest[1:closing], rest[closing + 1 :]
    parts = rest.split(maxsplit=1)
    token = parts[0] if parts else ""
    remainder = parts[1] if len(parts) > 1 else ""
    for separator in _GLUED_SEPARATORS:
        if separator in token:
            token, _, glued = token.partition(separator)
            remainder = f"{glued} {remainder}"
    return token, remainder


def _is_placeholder(file: str) -> bool:
    return file.startswith("<") and file.endswith(">")
