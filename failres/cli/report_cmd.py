"""`report`: what failed, what resolved it, what it cost."""

from __future__ import annotations

from pathlib import Path

import typer

from failres.cli.app import app
from failres.cli.common import console, emit_json, err_console, open_context
from failres.clidoc.model import LESSONS
from failres.errors import UsageError


def write_page(path: Path, page: str) -> None:
    """Write the page whole (through a temporary file beside it) or not at all; UsageError saying why.

    Where it goes was checked before the report was built (`_html_target`); this is
    what can still fail while writing (a full disk, a permission)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(page, encoding="utf-8")
        tmp.replace(path)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        msg = f"--html {path}: cannot write it ({error.strerror})"
        raise UsageError(msg) from None


def _percent(rate: float | None) -> str:
    return "—" if rate is None else f"{rate * 100:.0f}%"


def _html_target(path: Path) -> Path:
    """Where the HTML goes; refused before anything is read or written when it cannot go there."""
    target = path.expanduser()
    if target.is_dir():
        msg = f"--html {path}: is a directory"
        raise UsageError(msg, hint="name the file to write, e.g. --html report.html")
    if not target.parent.is_dir():
        msg = f"--html {path}: the directory {target.parent} does not exist"
        raise UsageError(msg, hint="create it first, or name a file in an existing directory")
    return target


def _print_report(data: dict) -> None:
    from failres.cli.tables import Column, print_table
    from failres.report.html import duration

    out = console()
    header = data["header"]
    period = header["period"]
    span = f"{period['from'][:16].replace('T', ' ')} – {period['to'][:16].replace('T', ' ')} UTC" if period["from"] \
        else "no runs yet"
    out.print(f"{header['repository']} ({header['branch']}), {span}", markup=False)
    out.print(data["summary"], markup=False)
    out.print("")
    print_table((Column("task"), Column("state"), Column("runs", right=True), Column("dispatches", right=True),
                 Column("agent time", right=True), Column("gate time", right=True), Column("last failure"),
                 Column("commit")),
                [(f"{r['slug']}/{r['task']}", r["state"], r["runs"], r["dispatches"], duration(r["agentSeconds"]),
                  duration(r["gateSeconds"]), r["lastFailClass"], (r.get("commit") or "")[:12])
                 for r in data["tasks"]["table"]],
                title="Tasks")
    out.print("a task's logs: git failres logs SLUG TASK; its commit: git show COMMIT", markup=False)
    days = data["quarantines"]["byDay"]
    if days:
        out.print("")
        print_table((Column("day"), Column("quarantines", right=True), Column("by class", wraps=True)),
                    [(d["day"], d["total"], ", ".join(f"{c['name']} {c['count']}" for c in d["byFailClass"]))
                     for d in days], title="Quarantines by day")
    if data["recurring"]:
        out.print("")
        print_table((Column("count", right=True), Column("first seen"), Column("last seen"), Column("open"),
                     Column("tasks"), Column("signature", wraps=True)),
                    [(r["count"], r["firstSeen"][:16].replace("T", " "), r["lastSeen"][:16].replace("T", " "),
                      "yes" if r["open"] else "no", ", ".join(r["tasks"]), r["signature"])
                     for r in data["recurring"]], title="Recurring failures (worth acting on)")
    for title, rows in (("Quarantines by failure class", data["quarantines"]["byFailClass"]),
                        ("Quarantines by package", data["quarantines"]["byPackage"]),
                        (f"What resolved them ({data['resolutions']['resolvedLessons']} lessons resolved)",
                         data["resolutions"]["byResolution"])):
        out.print("")
        print_table((Column("name"), Column("count", right=True)), [(r["name"], r["count"]) for r in rows] or
                    [("(none)", 0)], title=title)
    out.print("")
    print_table((Column("ended"), Column("runs", right=True), Column("dispatches", right=True),
                 Column("agent time", right=True)),
                [(r["name"], r["runs"], r["dispatches"], duration(r["agentSeconds"])) for r in data["cost"]["byOutcome"]],
                title="What it cost, by how each run ended")
    lessons = data["lessons"]
    if lessons["unresolved"]:
        out.print("")
        print_table((Column("lesson"), Column("task"), Column("class"), Column("message", wraps=True)),
                    [(str(l.get("id") or "?")[:8], f"{l.get('slug')}/{l.get('task')}", str(l.get("failClass")),
                      str(l.get("message"))) for l in lessons["unresolved"]], title="Unresolved lessons")
        out.print("a lesson: git failres lessons show ID; its task's logs: git failres logs SLUG TASK", markup=False)
    repair, stop, land, spent = data["repair"], data["stopLoss"], data["timeToLand"], data["cost"]
    out.print("")
    out.print(f"repair success: {_percent(repair['rate'])} ({repair['repaired']} of {repair['runsWithFixer']} runs "
              "with a fixer went green)", markup=False)
    out.print(f"cost: {spent['dispatches']} dispatches, agent time {duration(spent['agentSeconds'])}, "
              f"gate time {duration(spent['gateSeconds'])}", markup=False)
    out.print(f"stop-loss: {stop['runsStopped']} runs stopped, {stop['dispatchesNotMade']} dispatches not made",
              markup=False)
    median = land["medianSeconds"]
    out.print("first quarantine to landing: " + ("—" if median is None else f"median {duration(median)} over "
                                                  f"{land['tasks']} tasks"), markup=False)
    out.print(f"open decisions: {len(data['openDecisions'])}", markup=False)
    for d in data["openDecisions"]:
        files = d.get("files") if isinstance(d.get("files"), list) else []
        out.print(f"  {d.get('id')}  {d.get('slug')}/{d.get('task')}  {', '.join(map(str, files))}", markup=False)
    from failres.report.learned_rules import text_lines

    for line in text_lines(data.get("learnedRules", [])):
        out.print(line, markup=False)


@app.command(rich_help_panel=LESSONS, epilog="git failres report --html report.html")
def report(
    json_out: bool = typer.Option(False, "--json", help="Print the report as one JSON document."),
    html: Path = typer.Option(None, "--html", help="Write a self-contained HTML report to this file (instead of "
                                                   "the text report; with --json, as well)."),
) -> None:
    """What failed, what resolved it, what it cost."""
    from failres.report.build import load_report

    target = _html_target(html) if html is not None else None
    ctx = open_context()
    data, problems = load_report(ctx.store, repository=str(ctx.top), branch=ctx.config.integration.branch)
    for problem in problems:
        err_console().print(f"warning: skipped unreadable record {problem}", markup=False)
    if target is not None:
        from datetime import UTC, datetime

        from failres.report.html import render_html

        generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        write_page(target, render_html(data, generated_at=generated))
        # One line saying where: the page is what was asked for, not the text report too.
        if not json_out:
            console().print(f"wrote {target}", markup=False)
            return
        err_console().print(f"wrote {target}", markup=False)  # stdout stays the one JSON document
    if json_out:
        emit_json(data)
        return
    _print_report(data)
