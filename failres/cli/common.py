"""What every command needs: the repository, its configuration, the store, output."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pygit2

from failres.config import Config, find_repo_top, load_config
from failres.inert import inert
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
        """The store, checked before any command trusts it (see `Store.verify`)."""
        store = Store(self.repo, self.config.store.ref)
        store.verify()
        return store

    @property
    def git_dir(self) -> Path:
        """The common git dir (shared by every worktree)."""
        return Path(self.repo.path)


def open_context(start: Path | None = None) -> Context:
    return Context(find_repo_top(start or Path.cwd()))


# JSON escapes C0 controls itself, but with ensure_ascii=False it writes DEL, the C1
# range and the bidirectional controls as they are; a person who runs `--json` on a
# terminal would have them obeyed. Inside a JSON string "\uXXXX" is the same text,
# and outside strings JSON has no such characters, so escaping them keeps the document.
_JSON_UNSAFE = {code: f"\\u{code:04x}" for code in
                (0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                 *range(0x2066, 0x206A), 0x2028, 0x2029)}


def emit_json(document: object) -> None:
    """Exactly one JSON document on stdout, byte-identical for the same data."""
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)
    sys.stdout.write(text.translate(_JSON_UNSAFE) + "\n")


def cell(value: object):
    """A table cell for untrusted text: one line, controls escaped, never read as markup."""
    from rich.text import Text

    return Text(inert(value))


def _inert_console(**options):
    """A rich console that shows data as written: no markup, no emoji codes, no controls.

    Every string it prints (table cells and titles included) passes through
    `failres.inert.inert` first, so a file name, a record or a seat's output that
    holds escape sequences or "[red]" is shown, never obeyed. Text objects built
    by a caller are the caller's to make (see `cell`).
    """
    from rich.console import Console

    class InertConsole(Console):
        def render_str(self, text: str, **kwargs):
            kwargs["markup"] = False
            kwargs["emoji"] = False
            return super().render_str(inert(text, multiline=True), **kwargs)

    return InertConsole(markup=False, emoji=False, highlight=False, **options)


def console():
    return _inert_console(soft_wrap=False)


def err_console():
    return _inert_console(stderr=True)


def echo_text(text: str) -> None:
    """Print a block of data (a prompt, a diff) exactly, or made inert on a terminal.

    Piped, the bytes are the data (a patch must apply); shown, they must not be obeyed.
    """
    import typer

    typer.echo(inert(text, multiline=True) if sys.stdout.isatty() else text, nl=False)
