"""`land SLUG TASK` and `label`: landing a task, and recognising tasks that landed some other way."""

from __future__ import annotations

import typer

from failres.cli.app import app
from failres.clidoc.model import LOOP
from failres.cli.common import console, emit_json, open_context


def _stamp_document(stamp) -> dict:
    return {"slug": stamp.slug, "task": stamp.task, "commit": stamp.landed_commit, "intHead": stamp.int_head,
            "landedEvent": stamp.landed_event, "stamped": list(stamp.stamped), "resolvedBy": list(stamp.resolved_by),
            "storeCommit": stamp.store_commit}


def _stamp_line(stamp) -> str:
    if stamp.stamped:
        return f"stamped {len(stamp.stamped)} lesson(s): {', '.join(stamp.resolved_by)}"
    return "no lessons to stamp"


@app.command(rich_help_panel=LOOP, epilog="git failres land release-readiness t1")
def land(
    slug: str = typer.Argument(..., help="The plan's slug."),
    task: str = typer.Argument(..., help="The task id."),
    json_out: bool = typer.Option(False, "--json", help="Print the landing as JSON."),
) -> None:
    """Merge the task branch into the integration branch (a merge commit) and stamp its lessons."""
    from failres.landing.land import land_task

    ctx = open_context()
    result = land_task(ctx.top, ctx.repo, ctx.config, ctx.store, slug, task)
    if json_out:
        emit_json({"slug": result.slug, "task": result.task, "branch": result.branch, "commit": result.merge_commit,
                   "intHead": result.int_head, "how": result.how, "stamp": _stamp_document(result.stamp)})
        return
    if result.how == "no-change":
        console().print(f"{slug}/{task} needed no change: nothing was merged into {result.branch}; "
                        f"{_stamp_line(result.stamp)}", markup=False)
        return
    verb = "was already landed" if result.how == "already-landed" else "landed"
    console().print(f"{slug}/{task} {verb} on {result.branch} at {result.merge_commit[:12]}; "
                    f"{_stamp_line(result.stamp)}", markup=False)


@app.command(rich_help_panel=LOOP, epilog="git failres label --json")
def label(json_out: bool = typer.Option(False, "--json", help="Print what was stamped as JSON.")) -> None:
    """Stamp tasks that reached the integration branch another way (forge merge, squash, rebase)."""
    from failres.landing.label import label_repository

    ctx = open_context()
    result = label_repository(ctx.repo, ctx.store, ctx.config.integration.branch)
    if json_out:
        emit_json({"branch": result.branch, "walked": result.walked,
                   "stamps": [_stamp_document(s) for s in result.stamps if s.wrote]})
        return
    written = [s for s in result.stamps if s.wrote]
    out = console()
    if not written:
        out.print(f"nothing to stamp ({result.walked} commit(s) of {result.branch} read)", markup=False)
        return
    for stamp in written:
        out.print(f"{stamp.slug}/{stamp.task} landed at {stamp.landed_commit[:12]}; {_stamp_line(stamp)}",
                  markup=False)
