"""`journal SLUG`: the run journal's events, oldest first."""

from __future__ import annotations

import typer

from failres.cli.app import app
from failres.clidoc.model import LOOP


@app.command(rich_help_panel=LOOP, epilog="git failres journal release-readiness --task t1")
def journal(
    slug: str = typer.Argument(..., help="The plan's slug."),
    task: str = typer.Option(None, "--task", help="Only this task's events."),
    json_out: bool = typer.Option(False, "--json", help="Print the events as a JSON array."),
) -> None:
    """The run journal's events, oldest first."""
    from failres.cli.read_cmds import journal_command

    journal_command(slug, task, json_out)
