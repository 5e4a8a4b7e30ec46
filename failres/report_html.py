"""The report as one self-contained HTML file: inline SVG charts, no script, no network."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from failres.inert import inert


def escape(value: object) -> str:
    """Text for the page: HTML-escaped, and made inert (a report may be read as source too)."""
    return html.escape(inert(value))


PALETTE = ("#2f6fdf", "#e0803a", "#3a9d5d", "#c94848", "#8a5cc9", "#7a7a7a", "#2aa3a3", "#b5a02a")
STYLE = """
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:980px;color:#1d2330;
padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}.sub{color:#5b6475;margin-top:0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:1rem;margin-bottom:1rem}
.charts{grid-template-columns:repeat(auto-fit,minmax(440px,1fr))}svg.chart{width:100%;height:auto}
.card{border:1px solid #dde2ea;border-radius:8px;padding:1rem;background:#fbfcfe}
.card h2{font-size:1rem;margin:0 0 .6rem}.kpi{font-size:2rem;font-weight:600}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #e4e8ef;padding:.3rem;text-align:left}
svg text{font:12px system-ui,sans-serif;fill:#1d2330}
"""


def bar_chart(title: str, rows: Sequence[Mapping[str, object]], chart_id: str) -> str:
    """A horizontal bar chart as inline SVG; an empty chart says so."""
    rows = [r for r in rows if int(r.get("count", 0) or 0) > 0]
    if not rows:
        return f'<div class="card"><h2>{escape(title)}</h2><p class="sub">nothing yet</p></div>'
    width, bar_h, gap, label_w = 440, 22, 8, 180
    top = max(int(r["count"]) for r in rows)
    height = len(rows) * (bar_h + gap) + gap
    parts = [f'<svg id="{chart_id}" class="chart" role="img" aria-label="{escape(title)}" '
             f'viewBox="0 0 {width} {height}" preserveAspectRatio="xMinYMin meet">']
    for i, row in enumerate(rows):
        y = gap + i * (bar_h + gap)
        count = int(row["count"])
        length = max(2, int((width - label_w - 50) * count / top))
        color = PALETTE[i % len(PALETTE)]
        parts.append(f'<text x="{label_w - 8}" y="{y + 15}" text-anchor="end">{escape(str(row["name"]))[:28]}</text>')
        parts.append(f'<rect class="bar" x="{label_w}" y="{y}" width="{length}" height="{bar_h}" rx="3" fill="{color}">'
                     f'<title>{escape(str(row["name"]))}: {count}</title></rect>')
        parts.append(f'<text x="{label_w + length + 6}" y="{y + 15}">{count}</text>')
    parts.append("</svg>")
    return f'<div class="card"><h2>{escape(title)}</h2>{"".join(parts)}</div>'


def _kpi(title: str, value: str, note: str = "") -> str:
    return (f'<div class="card"><h2>{escape(title)}</h2><div class="kpi">{escape(value)}</div>'
            f'<p class="sub">{escape(note)}</p></div>')


def _duration(seconds: object) -> str:
    if seconds is None:
        return "—"
    s = float(seconds)  # type: ignore[arg-type]
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def render_html(report: Mapping, *, title: str = "failres report") -> str:
    repair = report["repair"]
    rate = "—" if repair["rate"] is None else f"{repair['rate'] * 100:.0f}%"
    stop = report["stopLoss"]
    land = report["timeToLand"]
    decisions = report["openDecisions"]
    rows = "".join(
        f"<tr><td><code>{escape(str(d['id']))[:12]}</code></td><td>{escape(str(d['slug']))}/{escape(str(d['task']))}"
        f"</td><td>{escape(', '.join(map(str, d['files'])))}</td></tr>" for d in decisions
    ) or '<tr><td colspan="3">none</td></tr>'
    body = [
        f"<h1>{escape(title)}</h1>",
        f'<p class="sub">{report["tasks"]["total"]} tasks, {report["quarantines"]["total"]} quarantines, '
        f'{report["resolutions"]["resolvedLessons"]} resolved</p>',
        '<div class="grid">',
        _kpi("Repair success", rate, f"{repair['repaired']} of {repair['runsWithFixer']} runs with a fixer went green"),
        _kpi("Stop-loss savings", str(stop["dispatchesNotMade"]),
             f"dispatches not made ({stop['runsStopped']} runs stopped)"),
        _kpi("First quarantine to landing", _duration(land["medianSeconds"]), f"median over {land['tasks']} tasks"),
        "</div>",
        '<div class="grid charts">',
        bar_chart("Tasks by state", report["tasks"]["byState"], "chart-states"),
        bar_chart("Quarantines by failure class", report["quarantines"]["byFailClass"], "chart-classes"),
        bar_chart("Quarantines by package", report["quarantines"]["byPackage"], "chart-packages"),
        bar_chart("What resolved them", report["resolutions"]["byReason"], "chart-resolutions"),
        "</div>",
        '<div class="card"><h2>Open decisions</h2><table><tr><th>id</th><th>task</th><th>files</th></tr>'
        f"{rows}</table></div>",
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
