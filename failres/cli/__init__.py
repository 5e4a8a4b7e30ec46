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
from failres.cli.app import app
from failres.clidoc.model import PROGRAM

def _register() -> None:
    # Each module adds its commands to `app`; help groups and sorts them itself.
    from failres.cli import journal_cmd, run_cmds, store_cmds  # noqa: F401
    from failres.cli import cancel_cmd, logs_cmd  # noqa: F401
    from failres.cli import decisions_cmds, hooks_cmds, land_cmds, lessons_cmds  # noqa: F401
    from failres.cli import report_cmd  # noqa: F401
    from failres.cli import demo_cmd  # noqa: F401
    from failres.cli import sync_cmds  # noqa: F401
    from failres.cli import facts_cmds, knowledge_cmds, policy_cmds  # noqa: F401
    from failres.cli import learning_cmds  # noqa: F401
    from failres.cli import completion_cmds, config_cmds, gc_cmd, help_cmds  # noqa: F401
    from failres.cli import doctor_cmd  # noqa: F401


_register()


# Commands that change the store, the person's refs or their hooks: a person's, never a
# seat's (`failres.processes.ancestry`). Reading commands stay open to seats.
WRITES = frozenset({
    "cancel", "consolidate", "decide", "decisions propose", "facts set", "gc", "hooks install", "hooks uninstall",
    "init", "label", "land", "learn", "lessons import", "proposals accept", "proposals reject", "reflect",
    "restore", "rules retire", "run", "sync", "undo",
})


def _refuse_seats(args: list[str]) -> None:
    from failres.clidoc.model import find_command
    from failres.cli.help_cmds import description
    from failres.errors import UsageError
    from failres.processes.ancestry import seat_supervisor

    node, _ = find_command(description(), args)
    command = " ".join(node.path)
    if command in WRITES and seat_supervisor() is not None:
        msg = f"'{PROGRAM} {command}' cannot be run by a seat: it changes what only a person or the run decides"
        raise UsageError(msg, hint="a seat may read (status, journal, lessons, prompt); a person answers decisions")


def _dispatch(args: list[str]) -> object:
    from failres.cli.help_cmds import answer_early

    early = answer_early(args)
    if early is not None:
        return early
    _refuse_seats(args)
    return app(args=args, prog_name=PROGRAM, standalone_mode=False)


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI in-process and return its exit code (tests call this)."""
    args = list(sys.argv[1:] if argv is None else argv)
    return run_guarded(lambda _: _dispatch(args), args)


def main() -> None:
    sys.exit(run(None))
