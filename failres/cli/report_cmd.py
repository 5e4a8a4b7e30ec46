"""`report`: what failed, what resolved it, what it cost."""

from __future__ import annotations

from pathlib import Path

import typer

from failres.cli import app
from failres.clidoc.model import LESSONS
from failres.cli.common import console, emit_json, err_console, open_context


def _percent(rate: float | None) -> str:
    return "—" if rate is None else f"{rate * 100:.0f}%"


@app.command(rich_help_panel=LESSONS, epilog="git failres report --html report.html")
def report(
    json_out: bool = typer.Option(False, "--json", help="Print the report as one JSON document."),
    html: Path = typer.Option(None, "--html", help="Also write a self-contained HTML report to this file."),
) -> None:
    """What failed, what resolved it, what it cost."""
    from failres.report import load_report

    ctx = open_context()
    data, problems = load_report(ctx.store)
    for problem in problems:
        err_console().print(f"warning: skipped unreadable record {problem}", markup=False)
    if html is not None:
        from failres.report_html import render_html

        tmp = html.with_name(html.name + ".tmp")
        tmp.write_text(render_html(data), encoding="utf-8")
        tmp.replace(html)
    if json_out:
        emit_json(data)
        return
    from rich.table import Table

    out = console()

    def table(title: str, rows: list[dict]) -> None:
        t = Table(title=title, title_justify="left")
        t.add_column("")
        t.add_column("count", justify="right")
        for row in rows:
            t.add_row(str(row["name"]), str(row["count"]))
        if not rows:
            t.add_row("(none)", "0")
        out.print(t)

    table("Tasks by state", data["tasks"]["byState"])
    table("Quarantines by failure class", data["quarantines"]["byFailClass"])
    table("Quarantines by package", data["quarantines"]["byPackage"])
    table("What resolved them", data["resolutions"]["byReason"])
    repair, stop, land = data["repair"], data["stopLoss"], data["timeToLand"]
    out.print(f"repair success: {_percent(repair['rate'])} ({repair['repaired']} of {repair['runsWithFixer']} runs "
              f"with a fixer went green)")
    out.print(f"stop-loss: {stop['runsStopped']} runs stopped, {stop['dispatchesNotMade']} dispatches not made")
    median = land["medianSeconds"]
    out.print("first quarantine to landing: " + ("—" if median is None else f"median {median:.0f} s over "
                                                  f"{land['tasks']} tasks"))
    out.print(f"open decisions: {len(data['openDecisions'])}")
    for d in data["openDecisions"]:
        out.print(f"  {d['id']}  {d['slug']}/{d['task']}  {', '.join(d['files'])}", markup=False)
    if html is not None:
        out.print(f"wrote {html}")
