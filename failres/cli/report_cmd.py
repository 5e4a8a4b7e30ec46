"""`report`: what failed, what resolved it, what it cost."""

from __future__ import annotations

from pathlib import Path

import typer

from failres.cli import app
from failres.cli.common import console, emit_json, err_console, open_context
from failres.errors import UsageError


def write_page(path: Path, page: str) -> None:
    """Write the page whole (through a temporary file beside it) or not at all; UsageError saying why."""
    if path.is_dir():
        msg = f"--html {path}: is a directory"
        raise UsageError(msg, hint="name a file, e.g. --html report.html")
    if not path.parent.is_dir():
        msg = f"--html {path}: the directory {path.parent} does not exist"
        raise UsageError(msg, hint="create it first, or name a file in an existing directory")
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


@app.command()
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

        write_page(html, render_html(data))
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
