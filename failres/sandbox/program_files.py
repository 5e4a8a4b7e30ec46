"""Where a program's files are on the host: what a world must show for it to run.

A program named by the person's configuration or found on `PATH` runs from more than its
own file: the links on the way to it, its install prefix (a venv, `~/.nvm/versions/...`,
an npm package tree), the interpreter a venv was made from, the one its `#!` line names.
These functions follow those, and read only the files they are given: `world` decides
which programs may be followed at all (never one a seat could have written).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

_SHEBANG_LIMIT = 256


def run_needs(programs: Iterable[str]) -> list[str]:
    """Each program's file and directory, every hop of its links, its venv and base interpreter, its `#!`."""
    needs: list[str] = []
    seen: set[str] = set()
    todo = list(programs)
    while todo:
        path = todo.pop()
        if path in seen or len(seen) > 64:
            continue
        seen.add(path)
        needs.append(path)
        for hop in _link_hops(path):
            needs += [hop, os.path.dirname(hop)]
            needs += _prefix_of(hop)
            needs += venv_base(Path(hop).parent.parent)
        real = os.path.realpath(path)
        needs += [real, *_prefix_of(real)]
        interpreter = _shebang(real)
        if interpreter:
            todo.append(interpreter)
    return needs


def _link_hops(path: str) -> list[str]:
    hops = [path]
    current = path
    for _ in range(16):
        if not os.path.islink(current):
            break
        target = os.readlink(current)
        current = os.path.normpath(os.path.join(os.path.dirname(current), target))
        hops.append(current)
    return hops


# What of an install prefix a program in its `bin/` runs from: its programs, libraries and a
# venv's `pyvenv.cfg`; a version manager's versions beside its shims. Never the prefix
# whole: `~/.local` holds `share/` (shell history, the keyring), seen inside once
# `~/.local/bin` was on `PATH`.
_PREFIX_PARTS = ("bin", "sbin", "lib", "lib64", "libexec", "pyvenv.cfg")
_SHIMS_PARTS = ("shims", "versions", "libexec", "bin", "lib", "plugins")


def _prefix_of(path: str) -> list[str]:
    """The parts of the install prefix a program in a `bin/` needs: `~/.nvm/versions/node/v20`, a venv, `/opt/x`."""
    directory = os.path.dirname(path)
    return [*(_prefix_parts(directory) or [directory]), *_package_tree(path)]


def _package_tree(path: str) -> list[str]:
    """The `node_modules` an npm-installed program lives in: its packages find each other there
    (Codex's launcher looks for its platform package beside its own)."""
    parts = path.split("/")
    return ["/".join(parts[: parts.index("node_modules") + 1])] if "node_modules" in parts else []


def _prefix_parts(directory: str) -> list[str]:
    """For a `bin`/`shims`/`scripts` directory, the parts of its prefix a program there needs; else []."""
    name = os.path.basename(os.path.normpath(directory))
    prefix = os.path.dirname(os.path.normpath(directory))
    if name not in ("bin", "shims", "scripts") or prefix in ("", "/"):
        return []
    parts = _SHIMS_PARTS if name == "shims" else (*_PREFIX_PARTS, name)
    return [os.path.join(prefix, part) for part in dict.fromkeys(parts)]


def venv_base(venv: Path) -> list[str]:
    """A venv's own dir and the interpreter it was made from (`home =` in pyvenv.cfg)."""
    config = venv / "pyvenv.cfg"
    if not config.is_file():
        return []
    needs = [str(venv)]
    for line in config.read_text(encoding="utf-8", errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            needs += [value.strip(), os.path.dirname(value.strip())]
    return needs


def _shebang(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SHEBANG_LIMIT)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env" and len(words) > 1:
        return shutil.which(words[-1]) if not words[-1].startswith("-") else None
    return words[0] if words[0].startswith("/") else None


def path_dirs(path_value: str, home: Path) -> list[str]:
    """The directories on PATH, with what of each one's prefix its programs need (`~/.local/lib`,
    `~/.pyenv/versions`), never the prefix's data (`~/.local/share`)."""
    out = []
    for entry in path_value.split(os.pathsep):
        if not entry.startswith("/"):
            continue
        out.append(entry)
        if os.path.dirname(os.path.normpath(entry)) != str(home):
            out += _prefix_parts(entry)
        out.append(os.path.realpath(entry))
    return out
