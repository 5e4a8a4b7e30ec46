"""What every command needs: the repository, its configuration, the store, output."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from typing import TYPE_CHECKING

from failres.config.model import Config, find_repo_top
from failres.config.loading import load_config
from failres.inert import inert

if TYPE_CHECKING:  # a look at a remote opens neither: it reads through git (`remote.view`)
    import pygit2

    from lessons.storage.store import Store


@dataclass
class Context:
    """The repository a command works on. Configuration is read only when asked for,
    so commands that do not need it still work beside a broken `.failres.toml`."""

    top: Path

    @cached_property
    def repo(self) -> pygit2.Repository:
        import pygit2

        return pygit2.Repository(str(self.top))

    @cached_property
    def config(self) -> Config:
        return load_config(self.top)

    @cached_property
    def store(self) -> Store:
        """The store, checked before any command trusts it (see `Store.verify`)."""
        from lessons.storage.store import Store

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
    text = json.dumps(versioned(document), indent=2, sort_keys=True, ensure_ascii=False)
    sys.stdout.write(text.translate(_JSON_UNSAFE) + "\n")


def cell(value: object):
    """A table cell for untrusted text: one line, controls escaped, never read as markup."""
    from rich.text import Text

    return Text(inert(value))


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


def table_width() -> int | None:
    """The width a table is fitted to: the terminal's, or None where nothing is cut.

    Behind a pager (git's, or the one `failres.cli.pager` started) stdout is a pipe, but a
    person still reads it on the terminal: the pager's starter leaves the terminal's width
    in COLUMNS and sets GIT_PAGER_IN_USE, as git does for the commands it pages.
    """
    import os
    import shutil

    if stdout_is_terminal():
        return shutil.get_terminal_size().columns
    columns = os.environ.get("COLUMNS", "")
    if os.environ.get("GIT_PAGER_IN_USE") and columns.isdigit() and int(columns) > 0:
        return int(columns)
    return None


# What rich is told the width of a pipe is: wide enough that it never wraps a line.
_UNWRAPPED = 100_000


def _inert_console(*, stderr: bool = False):
    """A rich console that shows data as written: no markup, no emoji codes, no controls.

    Every string it prints (table cells and titles included) passes through
    `failres.inert.inert` first, so a file name, a record or a seat's output that
    holds escape sequences or "[red]" is shown, never obeyed. Text objects built
    by a caller are the caller's to make (see `cell`). On a terminal rich wraps prose
    at word boundaries; anywhere else nothing is wrapped and no colour is written.
    """
    from rich.console import Console

    class InertConsole(Console):
        def render_str(self, text: str, **kwargs):
            kwargs["markup"] = False
            kwargs["emoji"] = False
            return super().render_str(inert(text, multiline=True), **kwargs)

        def on_broken_pipe(self) -> None:
            # rich's own answer is SystemExit(1), which reads as "a task did not go green";
            # a reader (a pager, `head`) that went away is the boundary's quiet case.
            self.quiet = True
            raise BrokenPipeError

    stream = sys.stderr if stderr else sys.stdout
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    if terminal:
        return InertConsole(stderr=stderr, markup=False, emoji=False, highlight=False, soft_wrap=False)
    return InertConsole(stderr=stderr, markup=False, emoji=False, highlight=False, soft_wrap=True, no_color=True,
                        width=_UNWRAPPED)


def console():
    """Where people-facing output goes (see `_inert_console`)."""
    return _inert_console()


def print_lines(lines: list[str]) -> None:
    """Each line as `console().print(line, soft_wrap=True)` prints it, rich imported only where it changes one.

    Piped, that console writes a line as `inert` leaves it (no colour, no wrap, nothing
    cropped), tabs apart, which it expands. A run's outcome lines almost never hold one,
    and each task of a plan is a process of its own, whose import of rich and console
    cost about 20 ms of cpu to print one line (issue 32).
    """
    shown = [inert(line, multiline=True) for line in lines]
    if stdout_is_terminal() or not all(_written_as_is(text) for text in shown):
        out = console()
        for text in lines:
            out.print(text, markup=False, soft_wrap=True)
        return
    for text in shown:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()  # as rich does after each print: a reader gone shows at once


def _written_as_is(shown: str) -> bool:
    """Whether a piped console writes `shown` unchanged: no tab it expands, nothing the stream cannot encode."""
    utf8 = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "") == "utf8"
    return all(part.isprintable() and (utf8 or part.isascii()) for part in shown.split("\n"))


def err_console():
    return _inert_console(stderr=True)


def echo_text(text: str) -> None:
    """Print a block of data (a prompt, a diff) exactly, or made inert on a terminal.

    Piped, the bytes are the data (a patch must apply); shown, they must not be obeyed,
    and a pager (ours or git's, GIT_PAGER_IN_USE) shows them to a person too.
    """
    import os

    import typer

    shown = stdout_is_terminal() or bool(os.environ.get("GIT_PAGER_IN_USE"))
    typer.echo(inert(text, multiline=True) if shown else text, nl=False)
