"""`help [COMMAND]`, `version`, and `-h`/`--help`/`--version` anywhere.

Help is rendered from the command tree (`failres.clidoc`) rather than by typer, so
`git failres help run`, `git failres run -h`, the manual page and shell completion
all say the same thing in git's own style. `git failres --help` itself never
reaches this program: git turns it into `git help failres`, which opens the
`git-failres(1)` manual page installed with the package.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence

import typer

from failres.cli.app import app
from failres.cli.common import emit_json, terminal_width
from failres.clidoc.model import HELP_FLAGS, HOUSEKEEPING, CommandDoc, cli_description, find_command
from failres.errors import UsageError

@functools.cache
def description() -> CommandDoc:
    return cli_description(app)


def _help_text(doc: CommandDoc) -> str:
    from failres.clidoc.text import render_help

    return render_help(doc, terminal_width())


def command_named(words: Sequence[str]) -> CommandDoc:
    """The command `words` name exactly; exit 2 with the nearest names otherwise."""
    node, rest = find_command(description(), words)
    if rest:
        raise unknown_command(node, rest[0])
    return node


def unknown_command(node: CommandDoc, word: str) -> UsageError:
    import difflib

    names = [c.name for c in node.visible_subcommands()]
    close = difflib.get_close_matches(word, names, n=1)
    where = f"'{node.full_name}'"
    msg = f"{word!r} is not a command of {where}"
    hint = f"did you mean '{node.full_name} {close[0]}'?" if close else f"see '{node.full_name} -h'"
    return UsageError(msg, hint=hint)


def _wants_help(args: Sequence[str]) -> bool:
    words = list(args)
    if "--" in words:
        words = words[: words.index("--")]
    return any(word in HELP_FLAGS for word in words)


def answer_early(args: Sequence[str]) -> int | None:
    """Answer what needs no command to run (help, version); None otherwise. (<TAB>'s
    `__complete` is answered before, from the kept command tree: `failres.cli._complete`.)"""
    if args[:1] == ["--version"]:
        _print_version(json_out=False)
        return 0
    if not args or _wants_help(args):
        node, rest = find_command(description(), [a for a in args if a not in HELP_FLAGS])
        if node.is_group and rest and not rest[0].startswith("-"):
            # `stauts --help` asks about a command that does not exist: a typo, not a request for
            # the overview (which would hide it behind exit 0).
            raise unknown_command(node, rest[0])
        sys.stdout.write(_help_text(node))
        return 0
    node, rest = find_command(description(), args)
    if node.is_group and rest and not rest[0].startswith("-") and not node.runs_alone:
        raise unknown_command(node, rest[0])
    if node.is_group and not node.runs_alone and " ".join(node.path) not in DEFAULT_COMMANDS:
        if not rest:
            sys.stdout.write(_help_text(node))  # a group with nothing to list alone: what it holds
            return 0
        names = ", ".join(c.name for c in node.visible_subcommands())
        msg = f"'{node.full_name}' needs a command: {names}"
        raise UsageError(msg, hint=f"see '{node.full_name} -h'")
    return None


# What a group name alone runs: its listing, the way `git remote` or `git stash list` reads.
# (A group with no listing prints its help.) Each group's help says so too.
DEFAULT_COMMANDS = {
    "config": "show",
    "facts": "list",
    "lessons": "list",
    "policy": "show",
    "proposals": "list",
}


def default_command(args: Sequence[str]) -> list[str]:
    """`args` with the listing a group name stands for put in: `lessons --unresolved` is
    `lessons list --unresolved`. Anything else as it is."""
    words = list(args)
    node, rest = find_command(description(), words)
    name = " ".join(node.path)
    if name in DEFAULT_COMMANDS and (not rest or rest[0].startswith("-")):
        depth = len(words) - len(rest)
        return [*words[:depth], DEFAULT_COMMANDS[name], *rest]
    return words


@app.command("help", rich_help_panel=HOUSEKEEPING, epilog="git failres help lessons list")
def help_command(
    command: list[str] = typer.Argument(None, metavar="COMMAND", help="A command, e.g. run or lessons list."),
) -> None:
    """Show what a command does, its options and an example; alone, list every command."""
    sys.stdout.write(_help_text(command_named(command or [])))


def _print_version(*, json_out: bool) -> None:
    from failres import version

    if json_out:
        import platform

        import pygit2

        emit_json({"version": version(), "python": platform.python_version(),
                   "pygit2": pygit2.__version__, "libgit2": pygit2.LIBGIT2_VERSION})
        return
    sys.stdout.write(f"git failres version {version()}\n")


@app.command("version", rich_help_panel=HOUSEKEEPING, epilog="git failres version --json")
def version_command(
    json_out: bool = typer.Option(False, "--json", help="Also name the Python and libgit2 in use."),
) -> None:
    """Print the version of failres (the same as --version)."""
    _print_version(json_out=json_out)
