"""`git failres`: one typer app; each command group lives in its own module.

A command parses its arguments, calls one function that does the work and
returns a result, and renders it (rich for people, `--json` for programs).
Help, `--version` and shell completion are answered before typer runs, from
the same description of the command tree the manual page is made from
(`failres.cli.help_cmds`, `failres.clidoc`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from failres.cli.boundary import run_guarded


def __getattr__(name: str) -> object:
    # The typer app, imported when asked for before `_register` ran: a read command started
    # alone never needs typer.
    if name == "app":
        from failres.cli.app import app

        return app
    raise AttributeError(name)

# The command modules a read command needs, so that `status` and `journal` start without
# importing every other command (and what they import): a start-up near a bare
# `import pygit2`. A command not named here registers them all. Both modules come
# along either way: an app of a single command would take its name for an argument.
_ONLY = {"status": ("run_cmds", "journal_cmd"), "journal": ("run_cmds", "journal_cmd")}

# Commands a plain line of which (`read_cmds.read_fast`) runs without typer. `sync` and
# `run` change the store: their plain lines are refused to a seat as typer's would be, and
# any other line of them goes through the whole command tree.
_PLAIN = frozenset({*_ONLY, "sync", "run"})


def _only_reads(args: list[str]) -> tuple[str, ...] | None:
    """The command modules `args` need, when it is a read command named in `_ONLY` (no help asked)."""
    if not args or args[0] not in _ONLY or _asks_early(args):
        return None
    return _ONLY[args[0]]


def _asks_early(args: list[str]) -> bool:
    return any(arg in ("-h", "--help", "--version") for arg in args)


def _plain_line(args: list[str]) -> bool:
    """Whether `args` may be a plain line of a command in `_PLAIN` (`read_fast` has the last word)."""
    return bool(args) and args[0] in _PLAIN and not _asks_early(args)


def _register() -> None:
    # Each module adds its commands to `app`; help groups and sorts them itself. The
    # command tree help is built from must be the whole one.
    loaded = sys.modules.get("failres.cli.help_cmds")
    if loaded is not None:
        loaded.description.cache_clear()
    from failres.cli import journal_cmd, run_cmds, store_cmds  # noqa: F401
    from failres.cli import cancel_cmd, logs_cmd  # noqa: F401
    from failres.cli import ci_cmd  # noqa: F401
    from failres.cli import decisions_cmds, hooks_cmds, land_cmds, lessons_cmds  # noqa: F401
    from failres.cli import report_cmd  # noqa: F401
    from failres.cli import demo_cmd  # noqa: F401
    from failres.cli import sync_cmds  # noqa: F401
    from failres.cli import facts_cmds, knowledge_cmds, policy_cmds  # noqa: F401
    from failres.cli import learning_cmds  # noqa: F401
    from failres.cli import completion_cmds, config_cmds, gc_cmd, help_cmds  # noqa: F401
    from failres.cli import doctor_cmd  # noqa: F401
    from failres.cli.app import app as typer_app

    # Importing the submodule `failres.cli.app` bound that module to the name; the package's
    # `app` is the typer app, as callers (the manual page's builder, tests) expect.
    globals()["app"] = typer_app


def _started_for_speed(args: list[str]) -> bool:
    """Whether this process was started for `--version`, a <TAB> or a command in `_PLAIN`."""
    return args == ["--version"] or args[:1] == ["__complete"] or _plain_line(args)


def _described():
    """The whole command tree, described from the typer app (every command module imported)."""
    _register()
    from failres.cli.help_cmds import description

    return description()


def _complete(words: list[str]) -> int:
    """What the completion scripts run on <TAB>: the candidates, one a line.

    From the command tree kept for this source (`failres.clidoc.tree_cache`): a <TAB>
    builds the command line only when failres's source changed since the last one.
    """
    from failres.clidoc.completion import complete
    from failres.clidoc.names import offered
    from failres.clidoc.tree_cache import kept_tree

    sys.stdout.write("".join(line + "\n" for line in complete(kept_tree(_described), words, offered).lines()))
    return 0


if not _started_for_speed(sys.argv[1:]):
    # Whoever imports the package (a test, a hook, the manual page's builder) gets the
    # whole command tree, as before; a process started for a read command does not pay it.
    _register()


# Commands that change the store, the person's refs or their hooks: a person's, never a
# seat's (`failres.processes.ancestry`). Reading commands stay open to seats.
WRITES = frozenset({
    "cancel", "ci", "consolidate", "decide", "decisions propose", "facts set", "gc", "hooks install", "hooks uninstall",
    "init", "label", "land", "learn", "lessons import", "proposals accept", "proposals reject", "reflect",
    "restore", "rules retire", "run", "sync", "undo",
})


def _refuse_seats(args: list[str]) -> None:
    from failres.clidoc.model import find_command
    from failres.cli.help_cmds import description

    node, _ = find_command(description(), args)
    _refuse_seat_for(" ".join(node.path))


def _refuse_seat_for(command: str) -> None:
    if command not in WRITES:
        return
    from failres.processes.ancestry import seat_supervisor

    if seat_supervisor() is not None:
        from failres.clidoc.model import PROGRAM  # the command tree's model: only a refusal names it
        from failres.errors import UsageError

        msg = f"'{PROGRAM} {command}' cannot be run by a seat: it changes what only a person or the run decides"
        raise UsageError(msg, hint="a seat may read (status, journal, lessons, prompt); a person answers decisions")


def _page(args: list[str], choice: bool | None) -> None:
    from failres.cli.help_cmds import description
    from failres.cli.pager import start_pager
    from failres.clidoc.model import find_command

    node, rest = find_command(description(), args)
    if node.path == ("logs",) and {"--follow", "-f"} & set(rest):
        return  # a live view is read as it comes, not from a pager
    start_pager(" ".join(node.path), choice)


def _dispatch(args: list[str]) -> object:
    from failres.cli.pager import split_pager_flags, start_pager

    args, pager_choice = split_pager_flags(args)
    if args[:1] == ["__complete"]:
        return _complete(args[1:])
    if args == ["--version"]:
        from failres import version

        sys.stdout.write(f"git failres version {version()}\n")
        return 0
    fast = None
    if _plain_line(args):
        from failres.cli.read_cmds import read_fast

        fast = read_fast(args)
    if fast is not None:
        # A plain line of a command in `_PLAIN` (each a top-level one, never a group):
        # straight to its function, paged by its own name, and without typer.
        _refuse_seat_for(args[0])
        start_pager(args[0], pager_choice)
        from failres.containment import moves

        moves.install()
        return fast() or 0
    only = _only_reads(args)
    if only is not None:
        # A read command (never in WRITES, never a group, no help asked) whose line is not
        # a plain one: typer with only the modules it needs.
        import importlib

        for module in only:
            importlib.import_module(f"failres.cli.{module}")
        start_pager(args[0], pager_choice)
    else:
        _register()
        from failres.cli.help_cmds import answer_early, default_command

        early = answer_early(args)
        if early is not None:
            return early
        args = default_command(args)
        _refuse_seats(args)
        _page(args, pager_choice)
    from failres.cli.app import app
    from failres.clidoc.model import PROGRAM

    from failres.containment import moves

    moves.install()  # every store move of this command noted: a live run never takes it for a seat's
    return app(args=args, prog_name=PROGRAM, standalone_mode=False)


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI in-process and return its exit code (tests call this)."""
    from failres.cli.pager import finish_pager

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return run_guarded(lambda _: _dispatch(args), args)
    finally:
        finish_pager()


def main() -> None:
    sys.exit(run(None))
