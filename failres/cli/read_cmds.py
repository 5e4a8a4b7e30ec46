"""`status` and `journal`: the read commands, as plain functions a start-up without typer can call.

A person or a script runs `status --json` and `journal SLUG --json` to look, often many
times over; each pays the process's start. These functions are what the typer commands
call too, and `read_fast` parses the few arguments they take, so that a read command
started with nothing more skips importing typer (and what it imports) altogether. Any
argument it does not know hands the line back to typer, whose answer (help, a usage
error) stays the one a person sees.
"""

from __future__ import annotations

from collections.abc import Callable

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


def status_command(slug: str | None, json_out: bool, remote: str | None) -> None:
    """Each task of every plan that ran (pending ones too), its state as the journal tells it, and the totals."""
    ctx = open_context()
    if remote is not None:
        _remote_status(ctx, slug, remote, json_out)
        return
    from failres.engine.status_view import status_of
    from failres.engine.tally import summary_line

    from failres.cli.known import journal_of

    if slug is not None:
        journal_of(ctx.store, slug)  # an unknown slug is a typo, not an empty plan
    view = status_of(ctx.store, slug, with_lessons=not json_out)
    rows = view.rows
    if json_out:
        emit_json(rows)
        return
    if not rows:
        console().print("no tasks have run yet" + (f" for {slug}" if slug else ""))
        return
    from failres.cli.tables import Column, print_table

    live = any(row["pid"] for row in rows)
    columns = (Column("slug"), Column("task"), Column("state"), *((Column("pid", right=True),) if live else ()),
               Column("runs", right=True), Column("quarantines", right=True), Column("stops", right=True),
               Column("last failure"), Column("updated"))
    print_table(columns, [(row["slug"], row["task"], row["state"] + (" (no change was needed)" if row.get("empty") else ""), *((row["pid"] or "",) if live else ()),
                           row["runs"], row["quarantines"], row["stops"],
                           row["lastFailClass"] or (f"waits for {', '.join(row['waitsFor'])}" if row["waitsFor"]
                                                    else ""),
                           str(row["updated"] or "")[:19].replace("T", " ")) for row in rows])
    # The totals go to stderr: piped, stdout stays a header and one line per task.
    err_console().print(summary_line(view.totals), markup=False)


def _remote_status(ctx, slug: str | None, remote: str, json_out: bool) -> None:
    from failres.remote.view import remote_statuses

    rows = remote_statuses(ctx.top, ctx.config.store.ref, remote, slug, branches=ctx.config.remote.branches)
    if json_out:
        emit_json(rows)
        return
    if not rows:
        console().print(f"{remote} knows no task" + (f" of {slug}" if slug else ""), markup=False)
        return
    from failres.cli.tables import Column, print_table

    def holder(row: dict) -> str:
        who = row["holder"]
        return f"{who['host']} pid {who['pid']}" if who and row["claim"] == "held" else ""

    def lease(row: dict) -> str:
        left = row["leaseLeft"]
        return "" if left is None else (f"{left:.0f}s" if left > 0 else "expired")

    columns = (Column("slug"), Column("task"), Column("state"), Column("holder"), Column("lease left", right=True),
               Column("last failure"))
    print_table(columns, [(row["slug"], row["task"], row["state"] + (" (its committed claim has no branch: not trusted)"
                                                                     if row.get("claimProblem") else ""),
                           holder(row), lease(row), row["lastFailClass"]) for row in rows])


def journal_command(slug: str, task: str | None, json_out: bool) -> None:
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


# command -> (positional names, required positionals, {option: name}, {flag: name})
_GRAMMAR: dict[str, tuple[tuple[str, ...], int, dict[str, str], dict[str, str]]] = {
    "status": (("slug",), 0, {"--remote": "remote"}, {"--json": "json_out"}),
    "journal": (("slug",), 1, {"--task": "task"}, {"--json": "json_out"}),
    "sync": (("remote",), 0, {}, {"--json": "json_out"}),
}


def read_fast(args: list[str]) -> Callable[[], int | None] | None:
    """The call `args` (a `status`, `journal`, `sync` or `run` line) asks for, or None when typer should parse it.

    Only what the command's own parser would take the same way is taken here: its
    positionals, `--json`, and its options given as `--opt VALUE` or `--opt=VALUE`
    once each. Anything else (help, `--`, an unknown or repeated option, a value that
    begins with a dash, a missing or extra argument) is typer's.
    """
    if args[:1] == ["run"]:
        from failres.cli.run_plain import run_fast

        return run_fast(args)
    if not args or args[0] not in _GRAMMAR:
        return None
    positional_names, required, options, flags = _GRAMMAR[args[0]]
    values: dict[str, object] = {}
    positionals: list[str] = []
    rest = iter(args[1:])
    for word in rest:
        name, _, inline = word.partition("=")
        if word in flags and flags[word] not in values:
            values[flags[word]] = True
        elif name in options and options[name] not in values:
            value = inline if "=" in word else next(rest, None)
            if not value or value.startswith("-"):
                return None
            values[options[name]] = value
        elif word.startswith("-") or len(positionals) == len(positional_names):
            return None
        else:
            positionals.append(word)
    if len(positionals) < required:
        return None
    values.update(zip(positional_names, positionals))
    if args[0] == "status":
        return lambda: status_command(values.get("slug"), bool(values.get("json_out")), values.get("remote"))
    if args[0] == "sync":
        from failres.cli.sync_plain import sync_command

        return lambda: sync_command(values.get("remote"), bool(values.get("json_out")))
    return lambda: journal_command(str(values["slug"]), values.get("task"), bool(values.get("json_out")))
