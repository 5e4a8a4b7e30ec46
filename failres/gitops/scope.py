"""Which changed paths a task may keep: its allowed globs minus the protected ones.

Globs are anchored at the repository top and read the way git reads a `glob`
pathspec:

- `*` is any run of characters except `/`, `?` one character except `/`, and
  `[abc]`, `[a-z]`, `[!abc]` a character class;
- `**` crosses directories: `src/**` is everything under `src`, `**/x.py` an `x.py`
  at any depth (the top included), `a/**/b` `a/b`, `a/x/b`, `a/x/y/b` ...;
- a pattern ending in `/` names a directory: it matches the directory and
  everything under it (`docs/`);
- a path without wildcards matches itself, and everything under it when it names a
  directory, as `git add src` takes the whole directory;
- a path is always matched literally first, so `a[1].txt` matches the file of that
  name even though `[1]` is also a character class.

Protected wins: a path matched by a protected glob is rejected whatever allows it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

_WILDCARDS = frozenset("*?[")


def match_scope(
    paths: Iterable[str], allow_globs: Iterable[str], protected_globs: Iterable[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Split `paths` into (allowed, rejected), each in input order."""
    allow = tuple(allow_globs)
    protected = tuple(protected_globs)
    allowed: list[str] = []
    rejected: list[str] = []
    for path in paths:
        if matches_any(path, protected) or not matches_any(path, allow):
            rejected.append(path)
        else:
            allowed.append(path)
    return tuple(allowed), tuple(rejected)


def matches_any(path: str, globs: Iterable[str]) -> bool:
    """True when at least one of `globs` matches `path`."""
    return any(glob_matches(glob, path) for glob in globs)


def glob_matches(glob: str, path: str) -> bool:
    """True when `glob` matches the repository-relative `path` (rules in the module docstring)."""
    body, directory_only = _normalise(glob)
    if not body:
        return False  # an empty pattern names nothing; it must not widen to everything
    if path == body or path.startswith(body + "/"):
        return True
    if not _WILDCARDS.intersection(body):
        return False
    pattern = _compile(body)
    if pattern.fullmatch(path):
        return True
    if directory_only:
        # `src/*/` names directories: a path matches when one of its parents does.
        return any(
            pattern.fullmatch(path[:cut]) for cut, char in enumerate(path) if char == "/"
        )
    return False


def _normalise(glob: str) -> tuple[str, bool]:
    # No whitespace trimming: " notes.txt" is a legal file name, and globs are exact.
    body = glob
    while body.startswith("./"):
        body = body[2:]
    body = body.lstrip("/")
    directory_only = body.endswith("/")
    return body.rstrip("/"), directory_only


_NEVER = re.compile(r"(?!)")


@lru_cache(maxsize=1024)
def _compile(body: str) -> re.Pattern[str]:
    try:
        return re.compile(_translate(body), re.DOTALL)
    except re.error:
        # A malformed class such as "[z-a]" matches nothing as a glob; the path is
        # still matched literally, so a file really named that way is not lost.
        return _NEVER


def _translate(body: str) -> str:
    out: list[str] = []
    index = 0
    length = len(body)
    while index < length:
        char = body[index]
        if char == "*":
            if body.startswith("**", index):
                index = _translate_double_star(body, index, out)
                continue
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = _class_end(body, index)
            if end < 0:
                out.append(re.escape(char))  # an unclosed "[" is an ordinary character
            else:
                out.append(_translate_class(body[index + 1 : end]))
                index = end
        elif char == "\\" and index + 1 < length:
            index += 1
            out.append(re.escape(body[index]))
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def _translate_double_star(body: str, index: int, out: list[str]) -> int:
    end = index
    while end < len(body) and body[end] == "*":
        end += 1
    at_start = index == 0 or body[index - 1] == "/"
    if at_start and body.startswith("/", end):
        # "**/" matches zero or more whole directories.
        out.append("(?:.*/)?")
        return end + 1
    out.append(".*")
    return end


def _class_end(body: str, start: int) -> int:
    index = start + 1
    if index < len(body) and body[index] in "!^":
        index += 1
    if index < len(body) and body[index] == "]":
        index += 1  # a "]" right after "[" or "[!" is a member, not the end
    end = body.find("]", index)
    return end


def _translate_class(members: str) -> str:
    negate = members[:1] in ("!", "^")
    if negate:
        members = members[1:]
    # "[", "&", "~", "|" are escaped too: Python reads "[[", "&&", "~~", "||" in a
    # class as set operations.
    escaped = "".join("\\" + c if c in "\\^][&~|" else c for c in members)
    # A class never matches "/": like "*" and "?", it stays inside one path segment.
    return f"[^/{escaped}]" if negate else f"(?!/)[{escaped}]"


def ignore_pattern_matches(pattern: str, path: str) -> bool:
    """True when a `.gitignore`-style `pattern` covers `path` (a file, or anything under a directory).

    Used for `[scope] artifacts` and a gate's `keep`, which people write the way they
    write `.gitignore`: a pattern without a slash (`__pycache__/`, `.aider*`) matches a
    name at any depth; one with a slash in it is anchored at the top; a trailing slash
    names a directory, and a directory covers everything below it.
    """
    body = pattern.strip()
    if not body or body.startswith("#") or body.startswith("!"):
        return False
    directory_only = body.endswith("/")
    body = body.rstrip("/")
    anchored = "/" in body
    body = body.lstrip("/")
    if not body:
        return False
    parts = path.split("/")
    # A directory-only pattern can match only the path's parents; the path itself
    # may be a file.
    last = len(parts) - 1 if directory_only else len(parts)
    pattern_re = _compile(body)
    if anchored:
        prefixes = ("/".join(parts[:cut]) for cut in range(1, last + 1))
        return any(prefix == body or pattern_re.fullmatch(prefix) for prefix in prefixes)
    return any(name == body or pattern_re.fullmatch(name) for name in parts[:last])
