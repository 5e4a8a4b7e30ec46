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


def emit_json(document: object) -> None:
    """Exactly one JSON document on stdout, byte-identical for the same data."""
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def console():
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def err_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)
