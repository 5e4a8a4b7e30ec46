"""`git failres cancel SLUG [TASK]`: stop a live run from another terminal."""

from __future__ import annotations

import typer

from failres.cli.app import app
from failres.cli.common import console, emit_json, open_context
from failres.clidoc.model import LOOP


@app.command(rich_help_panel=LOOP, epilog="git failres cancel release-readiness t1")
def cancel(
    slug: str = typer.Argument(..., help="The plan's slug."),
    task: str = typer.Argument(None, help="Only this task (default: every running task of the plan)."),
    wait: float = typer.Option(30.0, "--wait", help="Seconds to wait for the run to stop before signalling it."),
    json_out: bool = typer.Option(False, "--json", help="Print what was cancelled as JSON."),
    remote: str = typer.Option(None, "--remote", metavar="REMOTE",
                               help="Stop the holders of the plan's tasks wherever they run, through this remote."),
) -> None:
    """Stop a live run: its seats' processes end and the task becomes `interrupted`. Exit 2 if none runs."""
    from failres.containment.cancel import cancel_runs

    ctx = open_context()
    if remote is not None:
        _cancel_remote(ctx, slug, task, remote, json_out)
        return
    stopped = cancel_runs(ctx.git_dir, slug, task, wait=wait)
    if json_out:
        emit_json([{"slug": s.slug, "task": s.task, "pid": s.pid, "stopped": s.stopped, "signalled": s.signalled}
                   for s in stopped])
        return
    out = console()
    for item in stopped:
        how = "stopped" if item.stopped else "did not stop in time"
        extra = " (signalled)" if item.signalled else ""
        out.print(f"{item.slug}/{item.task}: {how}{extra} (pid {item.pid})", markup=False)


def _cancel_remote(ctx, slug: str, task: str | None, remote: str, json_out: bool) -> None:
    from failres.remote.view import cancel_remote

    marked = cancel_remote(ctx.top, remote, slug, task)
    if json_out:
        emit_json([{"slug": m.slug, "task": m.task, "host": m.host, "pid": m.pid, "requested": m.requested}
                   for m in marked])
        return
    out = console()
    for item in marked:
        how = ("asked to stop: the holder stops at its next renewal" if item.requested
               else "finished or changed hands meanwhile: nothing to stop")
        out.print(f"{item.slug}/{item.task} on {item.host} pid {item.pid}: {how}", markup=False)
