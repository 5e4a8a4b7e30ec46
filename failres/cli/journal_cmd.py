"""`journal SLUG`: the run journal's events, oldest first."""

from __future__ import annotations

import typer

from failres.cli.app import app
from failres.clidoc.model import LOOP
from failres.cli.common import console, emit_json, err_console, open_context

_SUMMARY_SKIP = {"id", "ts", "slug", "task", "type", "seq", "definition", "bindings", "scopeKey", "bindingsKey"}


def summarise(event: dict) -> str:
    """The event's own fields in one readable line, each value whole (a terminal's table
    cuts the line to its width; a pipe gets all of it), a long list bounded with a count."""
    from failres.cli.tables import as_text, bounded_list

    parts = []
    for key in sorted(k for k in event if k not in _SUMMARY_SKIP):
        value = event[key]
        if isinstance(value, str):
            # A message's first line is its gist; the whole of it is in `--json`.
            value = value.strip().splitlines()[0] if value.strip() else ""
        text = bounded_list(value) if isinstance(value, (list, tuple)) else as_text(value)
        if len(text) == 40 and all(c in "0123456789abcdef" for c in text):
            text = text[:12]  # a commit id: the short form is what git shows too
        parts.append(f"{key}={text}")
    return "  ".join(parts)


@app.command(rich_help_panel=LOOP, epilog="git failres journal release-readiness --task t1")
def journal(
    slug: str = typer.Argument(..., help="The plan's slug."),
    task: str = typer.Option(None, "--task", help="Only this task's events."),
    json_out: bool = typer.Option(False, "--json", help="Print the events as a JSON array."),
) -> None:
    """The run journal's events, oldest first."""
    from failres.cli.known import journal_of, require_task

    ctx = open_context()
    found = journal_of(ctx.store, slug)
    events = list(found.events) if task is None else require_task(found, task)
    for problem in found.problems:
        err_console().print(f"warning: skipped unreadable record {problem}", markup=False)
    if json_out:
        emit_json(events)
        return
    if not events:
        console().print(f"no events for {slug}", markup=False)
        return
    from failres.cli.tables import Column, print_table

    rows = [(str(event.get("ts", ""))[:19].replace("T", " "), event.get("task"), event.get("type"), summarise(event))
            for event in events]
    print_table((Column("time"), Column("task"), Column("event"), Column("details", wraps=True)), rows)
