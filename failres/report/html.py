"""The report as one self-contained HTML file to send to a team: no script, no network.

Charts are rows of CSS bars, so their labels stay readable on a phone and nothing
scrolls sideways at 420 px; tables turn into one block per row on narrow screens.
Colours carry meaning, not position: green is landed or resolved, orange a
quarantine, red a stop, blue work in progress, grey what has not started.
Every value from the store is escaped: messages and paths are data.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from failres.inert import inert


def escape(value: object) -> str:
    """Text for the page: HTML-escaped, and made inert (a report may be read as source too)."""
    return html.escape(inert(value))


# What a name means, for its colour (the tone classes in STYLE).
TONE_OF_STATE = {"landed": "good", "committed": "done", "running": "active", "pending": "idle",
                 "interrupted": "warn", "quarantined": "bad", "stopped": "halt"}
STOP_CLASSES = frozenset({"repeated-failure-stop"})

STYLE = """
:root{--good:#2e7d32;--done:#66a84f;--active:#1e6fd9;--idle:#8a94a6;--warn:#b7791f;--bad:#e0702a;--halt:#c62828;
--ink:#1d2330;--muted:#5b6475;--line:#dde2ea;--card:#fbfcfe;--track:#eef1f6}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1040px;color:var(--ink);
padding:1.2rem}
h1{font-size:1.5rem;margin:0 0 .2rem}h2{font-size:1rem;margin:0 0 .6rem}
.sub,.note{color:var(--muted);margin:.1rem 0}.meta{display:flex;flex-wrap:wrap;gap:.2rem 1.2rem;margin:.4rem 0 1rem;
padding:0;list-style:none;color:var(--muted)}.meta b{color:var(--ink);font-weight:600}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,170px),1fr));gap:.8rem;margin-bottom:.8rem}
.charts{grid-template-columns:repeat(auto-fit,minmax(min(100%,420px),1fr))}
.card{border:1px solid var(--line);border-radius:8px;padding:.9rem;background:var(--card);min-width:0}
.kpi{font-size:1.8rem;font-weight:600}
.bars{display:grid;grid-template-columns:minmax(0,max-content) minmax(0,1fr) max-content;gap:.35rem .6rem;
align-items:center}
.bars .label{overflow-wrap:anywhere;font-size:.9rem}.bars .count{font-variant-numeric:tabular-nums;font-size:.9rem}
.track{background:var(--track);border-radius:3px;height:1rem;min-width:2rem}
.bar{display:block;height:100%;border-radius:3px;min-width:3px}
.tone-good{background:var(--good)}.tone-done{background:var(--done)}.tone-active{background:var(--active)}
.tone-idle{background:var(--idle)}.tone-warn{background:var(--warn)}.tone-bad{background:var(--bad)}
.tone-halt{background:var(--halt)}.tone-cost{background:#6b7fa8}
.badge{display:inline-block;padding:0 .45rem;border-radius:999px;color:#fff;font-size:.8rem;white-space:nowrap}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #e4e8ef;padding:.3rem .35rem;text-align:left;
vertical-align:top}td{overflow-wrap:break-word}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code{font:.85rem ui-monospace,SFMono-Regular,Menlo,monospace;white-space:nowrap}.nowrap{white-space:nowrap}
section{margin-bottom:.8rem}
.cmd{display:block;font:.8rem ui-monospace,SFMono-Regular,Menlo,monospace;color:var(--muted);overflow-wrap:anywhere;
white-space:normal}
.day{display:flex;height:1rem;border-radius:3px;overflow:hidden;background:var(--track)}
.day .bar{border-radius:0}
@media (prefers-color-scheme:dark){
 :root{--ink:#e6e9ef;--muted:#a3acbd;--line:#343b49;--card:#1b2029;--track:#2a303c;--idle:#6f7a8e}
 body{background:#12151b}
 .track{background:var(--track)}
 th,td{border-bottom-color:var(--line)}
}
@media print{
 :root{--ink:#000;--muted:#333;--line:#999;--card:#fff}
 body{background:#fff;max-width:none;padding:0;font-size:11pt}
 .card{break-inside:avoid;border-color:#999}
 .grid{display:block}.grid .card{margin-bottom:.5rem}
 .bar,.badge{print-color-adjust:exact;-webkit-print-color-adjust:exact}
 .badge{color:#000;border:1px solid #555}
 a{color:inherit;text-decoration:none}
}
@media (max-width:640px){
 body{padding:.7rem}
 table.rows thead{display:none}
 table.rows tr{display:block;border-bottom:1px solid var(--line);padding:.35rem 0}
 table.rows td{display:flex;gap:.6rem;border:0;padding:.1rem 0;text-align:left}
 table.rows td::before{content:attr(data-label);flex:0 0 6.5rem;color:var(--muted)}
 table.rows td .v{min-width:0;flex:1 1 auto}
 td.num{text-align:left}
}
"""


def _tone_of_class(name: str) -> str:
    return "halt" if name in STOP_CLASSES else "bad"


def bar_chart(title: str, rows: Sequence[Mapping[str, object]], chart_id: str, tone, *, value: str = "count",
              shown=str) -> str:
    """A titled list of bars; `tone(name)` says what each bar means; an empty chart says so."""
    rows = [r for r in rows if float(r.get(value, 0) or 0) > 0]
    if not rows:
        return (f'<section class="card chart" id="{chart_id}"><h2>{escape(title)}</h2>'
                '<p class="note">nothing yet</p></section>')
    top = max(float(r[value]) for r in rows)
    parts = []
    for row in rows:
        name = str(row["name"])
        amount = float(row[value])
        width = max(2.0, 100.0 * amount / top)
        parts.append(f'<span class="label">{escape(name)}</span><span class="track"><span class="bar tone-{tone(name)}" '
                     f'style="width:{width:.1f}%" title="{escape(name)}: {escape(shown(row[value]))}"></span></span>'
                     f'<span class="count">{escape(shown(row[value]))}</span>')
    return (f'<section class="card chart" id="{chart_id}" role="img" aria-label="{escape(title)}">'
            f'<h2>{escape(title)}</h2><div class="bars">{"".join(parts)}</div></section>')


def _kpi(title: str, value: str, note: str = "") -> str:
    return (f'<div class="card"><h2>{escape(title)}</h2><div class="kpi">{escape(value)}</div>'
            f'<p class="note">{escape(note)}</p></div>')


def duration(seconds: object) -> str:
    if seconds is None:
        return "—"
    s = float(seconds)  # type: ignore[arg-type]
    if s < 10:
        return f"{s:.1f} s"
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def _table(table_id: str, headings: Sequence[tuple[str, bool]], rows: Sequence[Sequence[str]], empty: str) -> str:
    """A table whose cells are already HTML; headings are (text, numeric). On a narrow screen
    each row is a block and each cell is labelled by its heading."""
    head = "".join(f'<th{" class=num" if numeric else ""}>{escape(text)}</th>' for text, numeric in headings)
    if not rows:
        return f'<table class="rows" id="{table_id}"><tbody><tr><td>{escape(empty)}</td></tr></tbody></table>'
    body = "".join(
        "<tr>" + "".join(f'<td data-label="{escape(text)}"{" class=num" if numeric else ""}><span class="v">{cell}</span></td>'
                         for (text, numeric), cell in zip(headings, row, strict=True)) + "</tr>"
        for row in rows)
    return f'<table class="rows" id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _badge(text: str, tone: str) -> str:
    return f'<span class="badge tone-{tone}">{escape(text)}</span>'


def _short(value: object, length: int = 8) -> str:
    return f"<code>{escape(str(value or '')[:length])}</code>"


def _task(row: Mapping) -> str:
    # A task's name is an identifier: it is never broken across lines.
    return f'<span class="nowrap">{escape(str(row["slug"]))}/{escape(str(row["task"]))}</span>'


def _when(ts: object) -> str:
    return f'<span class="nowrap">{escape(str(ts or "")[:16].replace("T", " "))}</span>'


def _commands(row: Mapping) -> str:
    """The commands that show a task's (or a lesson's) logs, record and commit, to copy."""
    commands = row.get("commands") or {}
    shown = [commands.get(k) for k in ("lesson", "logs", "show") if commands.get(k)]
    return "".join(f'<code class="cmd">{escape(c)}</code>' for c in shown)


def _days(report: Mapping) -> str:
    """Quarantines per day, each day one bar split by failure class."""
    days = report["quarantines"].get("byDay") or []
    if not days:
        return ('<section class="card chart" id="chart-days"><h2>Quarantines by day</h2>'
                '<p class="note">nothing yet</p></section>')
    top = max(d["total"] for d in days)
    classes = sorted({c["name"] for d in days for c in d["byFailClass"]})
    shades = {name: f"hsl({(20 + 47 * i) % 360} 65% 50%)" for i, name in enumerate(classes)}
    parts = []
    for day in days:
        segments = "".join(
            f'<span class="bar" style="width:{100.0 * c["count"] / top:.1f}%;background:{shades[c["name"]]}" '
            f'title="{escape(c["name"])}: {c["count"]}"></span>' for c in day["byFailClass"])
        parts.append(f'<span class="label">{escape(day["day"])}</span><span class="day">{segments}</span>'
                     f'<span class="count">{day["total"]}</span>')
    legend = " ".join(f'<span class="nowrap"><span class="badge" style="background:{shades[n]}">{escape(n)}</span>'
                      f'</span>' for n in classes)
    return (f'<section class="card chart" id="chart-days" role="img" aria-label="Quarantines by day and class">'
            f'<h2>Quarantines by day and class</h2><div class="bars">{"".join(parts)}</div>'
            f'<p class="note">{legend}</p></section>')


def _header(report: Mapping, generated_at: str, title: str) -> list[str]:
    header = report.get("header") or {}
    period = header.get("period") or {}
    since, until = period.get("from"), period.get("to")
    span = f"{_when(since)} – {_when(until)} UTC" if since else "no runs yet"
    items = [("repository", escape(str(header.get("repository") or "—"))),
             ("branch", escape(str(header.get("branch") or "—"))),
             ("period", span), ("generated", escape(generated_at))]
    meta = "".join(f"<li>{name} <b>{value}</b></li>" for name, value in items)
    totals = report["summary"]
    return [f"<header><h1>{escape(title)}</h1><p class=\"sub\">{escape(totals)}</p>"
            f'<ul class="meta">{meta}</ul></header>']


def _kpis(report: Mapping) -> list[str]:
    repair, stop, land, spent = report["repair"], report["stopLoss"], report["timeToLand"], report["cost"]
    rate = "—" if repair["rate"] is None else f"{repair['rate'] * 100:.0f}%"
    return [
        '<div class="grid">',
        _kpi("Repair success", rate, f"{repair['repaired']} of {repair['runsWithFixer']} runs with a fixer went green"),
        _kpi("Agent time", duration(spent["agentSeconds"]),
             f"{spent['dispatches']} dispatches; gates ran {duration(spent['gateSeconds'])}"),
        _kpi("Saved by the stop-loss", str(stop["dispatchesNotMade"]),
             f"dispatches not made ({stop['runsStopped']} run{'' if stop['runsStopped'] == 1 else 's'} stopped)"),
        _kpi("First quarantine to landing", duration(land["medianSeconds"]), f"median over {land['tasks']} tasks"),
        "</div>",
    ]


def _charts(report: Mapping) -> list[str]:
    outcome_tone = (lambda name: "good" if name == "committed" else
                    "active" if name == "running" else _tone_of_class(name))
    return [
        '<div class="grid charts">',
        _days(report),
        bar_chart("Tasks by state", report["tasks"]["byState"], "chart-states", lambda n: TONE_OF_STATE.get(n, "idle")),
        bar_chart("Quarantines by failure class", report["quarantines"]["byFailClass"], "chart-classes",
                  _tone_of_class),
        bar_chart(f"What resolved them ({report['resolutions']['resolvedLessons']} lessons)",
                  report["resolutions"]["byResolution"], "chart-resolutions",
                  lambda n: "good" if n != "unknown" else "idle"),
        bar_chart("Quarantines by package", report["quarantines"]["byPackage"], "chart-packages", lambda n: "cost"),
        bar_chart("Dispatches by how the run ended", report["cost"]["byOutcome"], "chart-cost-dispatches",
                  outcome_tone, value="dispatches"),
        bar_chart("Agent time by how the run ended", report["cost"]["byOutcome"], "chart-cost-time", outcome_tone,
                  value="agentSeconds", shown=duration),
        "</div>",
    ]


def _tables(report: Mapping) -> list[str]:
    tasks = [(_task(r), _badge(r["state"], TONE_OF_STATE.get(r["state"], "idle")),
              str(r["runs"]), str(r["dispatches"]), escape(duration(r["agentSeconds"])),
              escape(duration(r["gateSeconds"])), escape(str(r["lastFailClass"] or "")), _commands(r))
             for r in report["tasks"]["table"]]
    lessons = report["lessons"]
    unresolved = [(_short(l["id"]), _task(l),
                   _badge(str(l["failClass"]), _tone_of_class(str(l["failClass"]))),
                   escape(str(l["message"])) + _commands(l), _when(l["ts"])) for l in lessons["unresolved"]]
    resolved = [(_short(l["id"]), _task(l), escape(str(l["failClass"])),
                 ", ".join(_badge(str(r), "good") for r in l.get("resolvedBy") or []),
                 escape(str(l["message"])) + _commands(l))
                for l in lessons["resolved"]]
    recurring = [(str(r["count"]), _when(r["firstSeen"]), _when(r["lastSeen"]),
                  _badge("open", "bad") if r["open"] else _badge("resolved", "good"),
                  escape(", ".join(r["tasks"])), escape(str(r["signature"])))
                 for r in report.get("recurring") or []]
    decisions = [(_short(d["id"], 12), _task(d),
                  escape(", ".join(map(str, d["files"])))) for d in report["openDecisions"]]
    return [
        '<section class="card"><h2>Tasks</h2>',
        _table("table-tasks", [("task", False), ("state", False), ("runs", True), ("dispatches", True),
                               ("agent time", True), ("gate time", True), ("last failure", False),
                               ("logs and commit", False)], tasks,
               "no task has run yet"),
        "</section>",
        f'<section class="card"><h2>Recurring failures, worth acting on ({len(recurring)})</h2>',
        _table("table-recurring", [("count", True), ("first seen", False), ("last seen", False), ("", False),
                                   ("tasks", False), ("signature", False)], recurring,
               "none: no failure has come back"),
        "</section>",
        f'<section class="card"><h2>Unresolved lessons ({len(unresolved)})</h2>',
        _table("table-unresolved", [("lesson", False), ("task", False), ("class", False), ("message", False),
                                    ("since", False)], unresolved, "none: every quarantine was resolved"),
        "</section>",
        f'<section class="card"><h2>Resolved lessons ({len(resolved)})</h2>',
        _table("table-resolved", [("lesson", False), ("task", False), ("class", False), ("resolved by", False),
                                  ("message", False)], resolved, "none yet"),
        "</section>",
        '<section class="card"><h2>Open decisions</h2>',
        _table("table-decisions", [("id", False), ("task", False), ("files", False)], decisions, "none"),
        "</section>",
    ]


def page_title(report: Mapping) -> str:
    """The repository in the title: a tab, a bookmark or a print names which project it is."""
    header = report.get("header") or {}
    repository = str(header.get("repository") or "").rstrip("/")
    name = repository.rsplit("/", 1)[-1] if repository else ""
    branch = str(header.get("branch") or "")
    return "failres report" + (f" — {name}" if name else "") + (f" ({branch})" if name and branch else "")


def render_html(report: Mapping, *, generated_at: str = "", title: str | None = None) -> str:
    title = title or page_title(report)
    from failres.report.learned_rules import html_section

    body = [*_header(report, generated_at, title), *_kpis(report), *_charts(report), *_tables(report),
            *html_section(report.get("learnedRules", []), escape, _table)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
