"""`journal SLUG`: the run journal's events, oldest first."""

from __future__ import annotations

import typer

from failres.cli import app
from failres.clidoc.model import LOOP
from failres.cli.common import console, emit_json, err_console, open_context
from failres.journal import read_journal

_SUMMARY_SKIP = {"id", "ts", "slug", "task", "type", "seq", "definition", "bindings", "scopeKey", "bindingsKey"}


def summarise(event: dict) -> str:
    """The event's own fields in one readable line."""
    parts = []
    for key in sorted(k for k in event if k not in _SUMMARY_SKIP):
        value = event[key]
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        text = str(value).strip().splitlines()[0] if str(value).strip() else ""
        if len(text) == 40 and all(c in "0123456789abcdef" for c in text):
            text = text[:12]  # a commit id: the short form is what git shows too
        parts.append(f"{key}={text[:80]}")
    return "  ".join(parts)


@app.command(rich_help_panel=LOOP, epilog="git failres journal release-readiness --task t1")
def journal(
    slug: str = typer.Argument(..., help="The plan's slug."),
    task: str = typer.Option(None, "--task", help="Only this task's events."),
    json_out: bool = typer.Option(False, "--json", help="Print the events as a JSON array."),
) -> None:
    """The run journal's events, oldest first."""
    ctx = open_context()
    found = read_journal(ctx.store, slug)
    events = list(found.events) if task is None else found.for_task(task)
    for problem in found.problems:
        err_console().print(f"warning: skipped unreadable record {problem}", markup=False)
    if json_out:
        emit_json(events)
        return
    from rich.table import Table

    table = Table(title=f"journal {slug}", show_lines=False)
    for column in ("time", "task", "event", "details"):
        table.add_column(column, overflow="fold")
    for event in events:
        table.add_row(str(event.get("ts", ""))[:19].replace("T", " "), str(event.get("task", "")),
                      str(event.get("type", "")), summarise(event))
    if not events:
        console().print(f"no events for {slug}")
        return
    console().print(table)
