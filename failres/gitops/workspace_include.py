"""What of the person's checkout a workspace carries that git does not: `[workspace] include`.

A project's tests often read a file the project keeps out of git on purpose (`.env`,
a local settings file); a workspace made from the commit alone lacks it, and the gate
fails for a reason no seat can fix. Each untracked file the patterns name is copied from
the person's checkout into the workspace, and copied again before every seat and every
gate, so what the gate reads is the person's file and not what a seat left in its place.

Such a file is never the task's: the scope guard does not see it, the task commit never
holds it, and its values (`KEY=value` lines) are redacted wherever output is written.
A tracked file is never copied (the task's tree has it), nothing under `.git` is, and a
file is written into the workspace only through directories that are really inside it
(a seat may have put a symlink on the way), never through a link at the file's place.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

# Files that large are not what `include` is for (a virtualenv is an environment, not a file to copy).
MAX_INCLUDED_BYTES = 4 * 1024 * 1024
_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*[=:]\s*(.+?)\s*$")
# Shorter values are words like "true" or "8000": redacting them would blank half the output.
MIN_SECRET_CHARS = 8


def included_paths(top: Path, patterns: Sequence[str], tracked) -> tuple[str, ...]:
    """The untracked regular files of the person's checkout that `patterns` (globs from the top) name.

    `tracked(path)` says whether git tracks a path; those are the tree's, not copied.
    """
    found: dict[str, None] = {}
    for pattern in patterns:
        for full in sorted(top.glob(pattern.rstrip("/"))):
            for path in _files_under(full):
                relative = path.relative_to(top).as_posix()
                if relative.split("/", 1)[0] == ".git" or tracked(relative):
                    continue
                found[relative] = None
    return tuple(found)


def _files_under(path: Path) -> Iterable[Path]:
    try:
        info = path.stat()
    except OSError:
        return
    if stat.S_ISREG(info.st_mode):
        if info.st_size <= MAX_INCLUDED_BYTES:
            yield path
    elif stat.S_ISDIR(info.st_mode) and not path.is_symlink():
        for child in sorted(path.rglob("*")):
            if child.is_file() and not child.is_symlink() and child.stat().st_size <= MAX_INCLUDED_BYTES:
                yield child


def copy_included(top: Path, workspace: Path, paths: Sequence[str]) -> list[str]:
    """Copy each path from the checkout into the workspace; return the ones that could not be."""
    refused = []
    real_workspace = os.path.realpath(workspace)
    for relative in paths:
        target = workspace / relative
        try:
            data = (top / relative).read_bytes()
            target.parent.mkdir(parents=True, exist_ok=True)
            parent = os.path.realpath(target.parent)
            if parent != real_workspace and not parent.startswith(real_workspace + os.sep):
                refused.append(relative)  # a directory on the way leads out of the workspace
                continue
            try:
                if stat.S_ISDIR(target.lstat().st_mode):
                    refused.append(relative)
                    continue
                target.unlink()  # a link a seat put there is removed, never written through
            except FileNotFoundError:
                pass
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
        except OSError:
            refused.append(relative)
    return refused


def secret_values(top: Path, paths: Sequence[str]) -> tuple[str, ...]:
    """The values of `KEY=value` (and `key: value`) lines of the included files, for redaction."""
    values: dict[str, None] = {}
    for relative in paths:
        try:
            text = (top / relative).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            if line.lstrip().startswith("#"):
                continue
            found = _ASSIGNMENT.match(line)
            if not found:
                continue
            value = found.group(1).strip().strip("'\"")
            if len(value) >= MIN_SECRET_CHARS:
                values[value] = None
    return tuple(values)
