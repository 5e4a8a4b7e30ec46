"""Every file git reads as the person's configuration, so the tamper check records them all.

failres runs git on the person's repository right after a dispatch. Whatever git reads
there can make it run code: a `core.fsmonitor`, a filter driver, a hooks path, an
`alias`. So the tamper check records, and puts back, every file git would read:

- the system, global (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`) and repository
  configuration (`config`, `config.worktree`), as git's own variables choose them;
- every file those include (`[include] path`, `[includeIf "..."] path`), followed as
  git follows them: `~/` expanded, a relative path taken from the including file's
  directory, to a depth of ten;
- the global excludes and attributes files (`core.excludesFile`, `core.attributesFile`,
  or their XDG defaults): an exclude hides a planted file from every status, an
  attribute picks a filter;
- each submodule's own git dir under `modules/` (its `config`, hooks and `info/`):
  git runs a submodule's fsmonitor on the person's next `status`.

The parsing is deliberately small (sections, `key = value`, quotes): a line it does
not understand is skipped, and what it cannot name is at worst not recorded, never
run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

_MAX_DEPTH = 10
_MAX_CONFIG_BYTES = 1024 * 1024
# What git keeps of a submodule's git dir that it reads as configuration or runs.
_MODULE_PARTS = ("config", "config.worktree", "hooks", "info")


def config_files(git_dir: Path) -> list[Path]:
    """The configuration files git reads for this repository, includes included, in git's order."""
    roots = [*_system(), *_global(), git_dir / "config", git_dir / "config.worktree"]
    found: list[Path] = []
    for root in roots:
        _follow(root, found, 0)
    return found


def excludes_and_attributes(configs: Iterable[Path]) -> list[Path]:
    """The global excludes and attributes files these configs name (or git's XDG defaults)."""
    chosen: dict[str, str] = {}
    for path in configs:
        for section, key, value in _entries(path):
            if section == "core" and key in ("excludesfile", "attributesfile"):
                chosen[key] = _expand(value, path.parent)
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "git"
    return [Path(chosen.get("excludesfile", xdg / "ignore")), Path(chosen.get("attributesfile", xdg / "attributes"))]


def module_files(git_dir: Path) -> list[Path]:
    """Each submodule git dir's config, hooks and info files under `<git dir>/modules/` (nested ones too)."""
    modules = git_dir / "modules"
    if not modules.is_dir():
        return []
    found: list[Path] = []
    for root, dirs, names in os.walk(modules):
        here = Path(root)
        if (here / "HEAD").is_file() or "config" in names:
            found += [here / n for n in names if n in _MODULE_PARTS]
            for part in ("hooks", "info"):
                if part in dirs:
                    for sub_root, _, sub_names in os.walk(here / part):
                        found += [Path(sub_root) / n for n in sub_names]
            # A submodule's own submodules live in its `modules/`; objects and refs are not configuration.
            dirs[:] = [d for d in dirs if d == "modules"]
    return found


def _system() -> list[Path]:
    if os.environ.get("GIT_CONFIG_NOSYSTEM", "").lower() in ("1", "true", "yes", "on"):
        return []
    return [Path(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")]


def _global() -> list[Path]:
    explicit = os.environ.get("GIT_CONFIG_GLOBAL")
    if explicit:
        return [Path(explicit)]
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return [Path.home() / ".gitconfig", Path(xdg) / "git" / "config"]


def _follow(path: Path, found: list[Path], depth: int) -> None:
    if path in found or depth > _MAX_DEPTH:
        return
    found.append(path)
    for section, key, value in _entries(path):
        if key == "path" and (section == "include" or section.startswith("includeif")):
            _follow(Path(_expand(value, path.parent)), found, depth + 1)


def _expand(value: str, base: Path) -> str:
    expanded = os.path.expanduser(value)
    return expanded if os.path.isabs(expanded) else str(base / expanded)


def _entries(path: Path) -> list[tuple[str, str, str]]:
    """(section, key, value) of each `key = value` line of a git config file; the section lower-cased."""
    try:
        if path.stat().st_size > _MAX_CONFIG_BYTES:
            return []
        text = path.read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return []
    entries = []
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            close = line.find("]")
            header = line[1:close] if close > 0 else ""
            name, _, sub = header.partition(" ")
            section = name.lower() + (" " + sub.strip() if sub else "")
            line = line[close + 1:].strip() if close > 0 else ""
        if not line or line[0] in "#;" or "=" not in line:
            continue
        key, _, value = line.partition("=")
        entries.append((section, key.strip().lower(), _value(value)))
    return entries


def _value(raw: str) -> str:
    raw = raw.strip()
    out, quoted = [], False
    i = 0
    while i < len(raw):
        char = raw[i]
        if char == '"':
            quoted = not quoted
        elif char == "\\" and i + 1 < len(raw):
            i += 1
            out.append({"n": "\n", "t": "\t"}.get(raw[i], raw[i]))
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        i += 1
    return "".join(out).strip()
