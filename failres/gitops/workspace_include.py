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
_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?(?P<key>[A-Za-z_][A-Za-z0-9_.-]*)\s*[=:]\s*(?P<value>.+?)\s*$")
# Shorter values are words like "true" or "8000": redacting them would blank half the output.
MIN_SECRET_CHARS = 8
# Under a key that says it holds a secret, shorter values are still the person's secret.
MIN_NAMED_SECRET_CHARS = 4
_SECRET_KEY = re.compile(r"pass|secret|token|key|auth|credential|private|pwd|pin\b|session|cookie|signature",
                         re.IGNORECASE)
_PLAIN_WORD = re.compile(r"true|false|yes|no|on|off|null|none|\d{1,5}", re.IGNORECASE)
_FORMAT_CHARACTERS = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]")


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
    """The values the included files hold, for redaction wherever output is written.

    A dotenv's `KEY=value` (and a YAML's `key: value`) line gives its value without the
    quotes around it or a ` # comment` after it; a JSON, TOML or INI file gives every value
    it holds, by key, parsed as what it is. A value under a key that names a secret
    (`PASSWORD`, `TOKEN`, `API_KEY` ...) counts from 4 characters, any other from 8: shorter
    words (`true`, `8000`) would blank half the output. Format characters (a zero-width
    joiner) are dropped from a value: redaction finds it with or without them. Measured
    before: a value with a trailing comment, a 7-character password, a value with a
    zero-width joiner and a password in an included JSON file reached `seat.log` in clear.
    """
    values: dict[str, None] = {}
    for relative in paths:
        try:
            text = (top / relative).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for key, value in _pairs(relative, text):
            value = _FORMAT_CHARACTERS.sub("", value).strip()
            if len(value) >= (MIN_NAMED_SECRET_CHARS if _SECRET_KEY.search(key) else MIN_SECRET_CHARS) \
                    and not _PLAIN_WORD.fullmatch(value):
                values[value] = None
    return tuple(values)


def _pairs(relative: str, text: str) -> Iterable[tuple[str, str]]:
    """(key, value) pairs of one included file, by what the file is."""
    suffix = os.path.splitext(relative)[1].lower()
    parsed = _structured(suffix, text)
    if parsed is not None:
        yield from _leaves("", parsed)
        return
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        found = _ASSIGNMENT.match(line)
        if found:
            yield found.group("key"), _unquoted(found.group("value"))


def _structured(suffix: str, text: str):
    """A JSON, TOML or INI file's contents as plain data; None for anything else, or unparsable."""
    import configparser

    try:
        if suffix == ".json":
            import json

            return json.loads(text)
        if suffix == ".toml":
            import tomllib

            return tomllib.loads(text)
        if suffix in (".ini", ".cfg", ".conf"):
            parser = configparser.ConfigParser(interpolation=None, strict=False)
            parser.read_string(text)
            return {section: dict(parser[section]) for section in parser.sections()}
    except (ValueError, configparser.Error):
        return None
    return None


def _leaves(key: str, value) -> Iterable[tuple[str, str]]:
    if isinstance(value, dict):
        for name, inner in value.items():
            yield from _leaves(str(name), inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _leaves(key, inner)
    elif isinstance(value, str):
        yield key, value
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and _SECRET_KEY.search(key):
        yield key, str(value)  # a PIN or a numeric password is still the person's secret


def _unquoted(raw: str) -> str:
    """A dotenv value as the program reads it: inside its quotes, or before a ` #` comment."""
    raw = raw.strip()
    if raw[:1] in ("'", '"'):
        end = raw.find(raw[0], 1)
        return raw[1:end] if end > 0 else raw[1:]
    return re.split(r"\s+#", raw, maxsplit=1)[0].strip()
