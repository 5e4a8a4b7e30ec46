"""`git failres`: one typer app; each command group lives in its own module.

A command parses its arguments, calls one function that does the work and
returns a result, and renders it (rich for people, `--json` for programs).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from failres.cli.boundary import run_guarded

app = typer.Typer(
    name="git failres",
    help="Failure resolution and learning for automated code changes, kept in git.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _register() -> None:
    # Each module adds its commands to `app`; the order here is the order in --help.
    from failres.cli import journal_cmd, run_cmds, store_cmds  # noqa: F401
    from failres.cli import cancel_cmd, logs_cmd  # noqa: F401
    from failres.cli import decisions_cmds, hooks_cmds, land_cmds, lessons_cmds  # noqa: F401
    from failres.cli import report_cmd  # noqa: F401
    from failres.cli import demo_cmd  # noqa: F401
    from failres.cli import sync_cmds  # noqa: F401
    from failres.cli import facts_cmds, knowledge_cmds, policy_cmds  # noqa: F401
    from failres.cli import learning_cmds  # noqa: F401


_register()


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI in-process and return its exit code (tests call this)."""
    return run_guarded(
        lambda args: app(args=list(args) if args is not None else None, prog_name="git failres",
                         standalone_mode=False),
        argv,
    )


def main() -> None:
    sys.exit(run(None))
