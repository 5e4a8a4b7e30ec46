"""`git failres logs SLUG TASK`: the exact prompt, seat output and gate output of each dispatch."""

from __future__ import annotations

import sys

import typer

from failres.cli.app import app
from failres.cli.common import emit_json, open_context
from failres.clidoc.model import LOOP
from failres.inert import inert


@app.command(rich_help_panel=LOOP, epilog="git failres logs release-readiness t1 --attempt 2")
def logs(
    slug: str = typer.Argument(..., help="The plan's slug."),
    task: str = typer.Argument(..., help="The task id."),
    attempt: int = typer.Option(None, "--attempt", min=1, help="Only dispatch N of the run (1 = the first)."),
    run_index: int = typer.Option(None, "--run", help="Which run: 1 = the first, -1 = the latest (default)."),
    follow: bool = typer.Option(False, "--follow", "-f", help="Follow a live run's output as it arrives."),
    json_out: bool = typer.Option(False, "--json", help="Print the run's dispatches as JSON."),
) -> None:
    """Show what each dispatch of a task's run was told and said, and what the gate said after it."""
    from failres.engine.task_logs import follow_run, render_run, run_document, select_run

    ctx = open_context()
    run = select_run(ctx.git_dir, slug, task, run_index)
    if follow:
        for chunk in follow_run(ctx.git_dir, slug, task, run):
            sys.stdout.write(inert(chunk, multiline=True))  # a seat's live output: shown, never obeyed
            sys.stdout.flush()
        return
    if json_out:
        emit_json(run_document(run, attempt))
        return
    sys.stdout.write(inert(render_run(run, attempt), multiline=True))
