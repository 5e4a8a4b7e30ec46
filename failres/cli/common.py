"""What every command needs: the repository, its configuration, the store, output."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pygit2

from failres.config import Config, find_repo_top, load_config
from lessons.store import Store


@dataclass
class Context:
    """The repository a command works on. Configuration is read only when asked for,
    so commands that do not need it still work beside a broken `.failres.toml`."""

    top: Path

    @cached_property
    def repo(self) -> pygit2.Repository:
        return pygit2.Repository(str(self.top))

    @cached_property
    def config(self) -> Config:
        return load_config(self.top)

    @cached_property
    def store(self) -> Store:
        return Store(self.repo, self.config.store.ref)

    @property
    def git_dir(self) -> Path:
        """The common git dir (shared by every worktree)."""
        return Path(self.repo.path)


def open_context(start: Path | None = None) -> Context:
    return Context(find_repo_top(start or Path.cwd()))


# The version of every `--json` shape (docs/json.md). It rises when a field is removed,
# renamed or changes meaning; a new field leaves it as it is.
SCHEMA_VERSION = 1


def versioned(document: object) -> object:
    """`document` with `schemaVersion` in it: in the object itself, or in each object of an
    array (an array's shape is fixed by the contract, so the version rides in its items)."""
    if isinstance(document, dict):
        return {**document, "schemaVersion": SCHEMA_VERSION}
    if isinstance(document, list):
        return [versioned(item) if isinstance(item, dict) else item for item in document]
    return document


def camel_case(document: object, records: frozenset[str] = frozenset()) -> object:
    """`document` with failres's own snake_case keys in camelCase (docs/json.md's one rule),
    not descending into the values of `records`: stored records keep their names."""
    if isinstance(document, dict):
        out = {}
        for key, value in document.items():
            head, *rest = str(key).split("_")
            name = head + "".join(part[:1].upper() + part[1:] for part in rest)
            out[name] = value if key in records else camel_case(value, records)
        return out
    if isinstance(document, list):
        return [camel_case(item, records) for item in document]
    return document


def emit_json(document: object) -> None:
    """Exactly one JSON document on stdout, byte-identical for the same data."""
    sys.stdout.write(json.dumps(versioned(document), indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stdout is no terminal
        return False


def terminal_width() -> int | None:
    """The width output may be wrapped to, or None when stdout is not a terminal.

    Piped or redirected output is never wrapped: a line cut at column 80 breaks
    `grep`, `cut` and copy-paste, and splits identifiers in the middle.
    """
    if not stdout_is_terminal():
        return None
    import shutil

    return max(shutil.get_terminal_size().columns, 40)


def console():
    """Where people-facing output goes. On a terminal rich wraps prose at word boundaries;
    anywhere else nothing is wrapped and no colour is written."""
    from rich.console import Console

    if stdout_is_terminal():
        return Console(highlight=False, soft_wrap=False)
    return Console(highlight=False, soft_wrap=True, no_color=True, width=_UNWRAPPED)


def err_console():
    from rich.console import Console

    if sys.stderr.isatty():
        return Console(stderr=True, highlight=False)
    return Console(stderr=True, highlight=False, soft_wrap=True, no_color=True, width=_UNWRAPPED)


# What rich is told the width of a pipe is: wide enough that it never wraps a line.
_UNWRAPPED = 100_000
