"""The report: its JSON on a known store, the HTML in a real browser, progress lines."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from failres.engine.progress import LineProgress
from failres.report.build import build_report, package_of_paths
from project import FIXED, Project

NOTHING = {"print": "nothing"}


def ev(slug, task, kind, ts, **fields):
    return {"slug": slug, "task": task, "type": kind, "ts": ts, "id": f"{abs(hash((task, kind, ts))):016x}"[:16],
            **fields}


def known_events() -> list[dict]:
    return [
        ev("s", "t1", "task-started", "2026-11-30T00:00:00Z"),
        ev("s", "t1", "seat-dispatched", "2026-11-30T00:00:01Z", seat="implementer"),
        ev("s", "t1", "seat-dispatched", "2026-11-30T00:00:02Z", seat="fixer"),
        ev("s", "t1", "quarantined", "2026-11-30T00:00:03Z", failClass="gate-not-green-after-fixer", lesson="a"),
        ev("s", "t1", "task-started", "2026-11-30T00:10:00Z"),
        ev("s", "t1", "seat-dispatched", "2026-11-30T00:10:01Z", seat="fixer"),
        ev("s", "t1", "task-committed", "2026-11-30T00:10:02Z"),
        ev("s", "t1", "landed", "2026-11-30T00:20:03Z"),
        ev("s", "t2", "task-started", "2026-11-30T00:00:00Z"),
        ev("s", "t2", "seat-dispatched", "2026-11-30T00:00:01Z", seat="implementer"),
        ev("s", "t2", "quarantined", "2026-11-30T00:00:02Z", failClass="seat-crashed", lesson="c"),
        ev("s", "t2", "stop-loss", "2026-11-30T00:05:00Z"),
        ev("s", "t2", "quarantined", "2026-11-30T00:05:00Z", failClass="repeated-failure-stop"),
    ]


def test_the_report_of_a_known_store() -> None:
    lessons = [
        {"id": "a", "failClass": "gate-not-green-after-fixer", "package": "src", "resolved_by": ["scope-widened"]},
        {"id": "b", "failClass": "seat-crashed", "package": "src", "resolved_by": None},
        {"id": "c", "failClass": "repeated-failure-stop", "package": "lib", "resolved_by": None},
    ]
    decisions = [{"id": "d1", "slug": "s", "task": "t2", "files": ["x"], "status": "open", "ts": "1"},
                 {"id": "d2", "slug": "s", "task": "t1", "files": ["y"], "status": "answered", "ts": "0"}]
    report = build_report(known_events(), lessons, decisions)
    assert report["tasks"]["total"] == 2
    assert {r["name"]: r["count"] for r in report["tasks"]["byState"]} == {
        "pending": 0, "running": 0, "interrupted": 0, "committed": 0, "quarantined": 0, "stopped": 1, "landed": 1}
    # Counted from the journal's quarantines (the stop apart), each under its lesson's package.
    assert report["quarantines"]["byPackage"] == [{"name": "lib", "count": 1}, {"name": "src", "count": 1}]
    assert (report["quarantines"]["total"], report["quarantines"]["stops"]) == (2, 1)
    assert report["resolutions"]["byReason"] == [{"name": "scope-widened", "count": 1}]
    assert report["repair"] == {"runsWithFixer": 2, "repaired": 1, "rate": 0.5}
    assert report["stopLoss"] == {"runsStopped": 1, "dispatchesNotMade": 1}
    assert report["timeToLand"] == {"tasks": 1, "medianSeconds": 1200.0, "maxSeconds": 1200.0}
    assert [d["id"] for d in report["openDecisions"]] == ["d1"]


def test_each_task_and_each_outcome_has_its_cost_from_the_journals_durations() -> None:
    events = [
        ev("s", "t1", "task-started", "2026-11-30T00:00:00Z", definition={"files": ["src/dates/parse.py"]}),
        ev("s", "t1", "seat-dispatched", "2026-11-30T00:00:01Z", seat="implementer"),
        ev("s", "t1", "seat-finished", "2026-11-30T00:00:31Z", durationMs=30000),
        ev("s", "t1", "gate-result", "2026-11-30T00:00:40Z", durationMs=9000),
        ev("s", "t1", "seat-dispatched", "2026-11-30T00:00:41Z", seat="fixer"),
        ev("s", "t1", "seat-finished", "2026-11-30T00:01:41Z", durationMs=60000),
        ev("s", "t1", "gate-result", "2026-11-30T00:01:50Z", durationMs=9000),
        ev("s", "t1", "quarantined", "2026-11-30T00:01:51Z", failClass="gate-not-green-after-fixer"),
        ev("s", "t1", "task-started", "2026-11-30T01:00:00Z", definition={"files": ["src/dates/parse.py"]}),
        ev("s", "t1", "seat-dispatched", "2026-11-30T01:00:01Z", seat="implementer"),
        ev("s", "t1", "seat-finished", "2026-11-30T01:00:11Z", durationMs=10000),
        ev("s", "t1", "gate-result", "2026-11-30T01:00:20Z", durationMs=9000),
        ev("s", "t1", "task-committed", "2026-11-30T01:00:21Z", commit="c" * 40),
    ]
    lessons = [{"id": "a1", "slug": "s", "task": "t1", "failClass": "gate-not-green-after-fixer", "package": "src",
                "message": "gate tests still red\ndetails", "ts": "2026-11-30T00:01:51Z", "resolved_by": None}]
    report = build_report(events, lessons, [], repository="/r", branch="main")
    assert report["header"] == {"repository": "/r", "branch": "main",
                                "period": {"from": "2026-11-30T00:00:00Z", "to": "2026-11-30T01:00:21Z"}}
    assert report["tasks"]["table"] == [{
        "slug": "s", "task": "t1", "state": "committed", "attempts": 2, "runs": 2, "dispatches": 3,
        "agentSeconds": 100.0, "gateSeconds": 27.0, "quarantines": 1, "stops": 0,
        "lastFailClass": "gate-not-green-after-fixer", "commit": "c" * 40,
        "commands": {"logs": "git failres logs s t1", "journal": "git failres journal s --task t1",
                     "show": f"git show {'c' * 40}"}}]
    assert report["cost"]["byOutcome"] == [
        {"name": "gate-not-green-after-fixer", "runs": 1, "dispatches": 2, "agentSeconds": 90.0, "gateSeconds": 18.0},
        {"name": "committed", "runs": 1, "dispatches": 1, "agentSeconds": 10.0, "gateSeconds": 9.0}]
    assert (report["cost"]["dispatches"], report["cost"]["agentSeconds"]) == (3, 100.0)
    # A src-layout repository is not one package called "src".
    assert report["quarantines"]["byPackage"] == [{"name": "dates", "count": 1}]
    assert report["lessons"]["unresolved"] == [{"id": "a1", "slug": "s", "task": "t1",
                                                "failClass": "gate-not-green-after-fixer",
                                                "message": "gate tests still red", "ts": "2026-11-30T00:01:51Z",
                                                "commit": "c" * 40,
                                                "commands": {"lesson": "git failres lessons show a1",
                                                             "logs": "git failres logs s t1",
                                                             "journal": "git failres journal s --task t1",
                                                             "show": f"git show {'c' * 40}"}}]


@pytest.mark.parametrize(("paths", "package"), [
    (["src/calc/__init__.py"], "calc"), (["src/dates.py"], "dates"), (["lib/util/*.py"], "util"),
    (["docs/notes.md"], "docs"), (["README.md"], "README"), (["src/"], "src"), ([], "")])
def test_the_package_is_the_first_meaningful_path_segment(paths: list[str], package: str) -> None:
    assert package_of_paths(paths) == package


def test_report_json_from_a_real_run_is_stable(tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[NOTHING], fixer=[{"write": {"src/calc.py": FIXED}}])
    assert cli(project.top, "run", str(project.plan()), "--quiet").code == 0
    first = cli(project.top, "report", "--json")
    assert first.code == 0
    data = json.loads(first.out)
    assert data["repair"] == {"rate": 1.0, "repaired": 1, "runsWithFixer": 1}
    assert first.out == cli(project.top, "report", "--json").out


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--enable-logging=stderr", "--v=0", "--hide-scrollbars"]

# A page of the test's own (the report has no script) that shows the report in frames of
# the two widths and records, for each, how wide its content is and which elements stick out.
MEASURE = """<!DOCTYPE html><html><body style="margin:0">
<iframe id="w420" src="report.html" style="width:420px;height:900px;border:0"></iframe>
<iframe id="w1100" src="report.html" style="width:1100px;height:900px;border:0"></iframe>
<script>
window.addEventListener('load', () => {
  for (const id of ['w420', 'w1100']) {
    const doc = document.getElementById(id).contentDocument;
    const width = doc.documentElement.clientWidth;
    const over = [...doc.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > width + 0.5)
      .map(e => e.tagName + '.' + e.className);
    document.body.setAttribute('data-' + id, doc.documentElement.scrollWidth + ' ' + width + ' ' + over.join(','));
  }
});
</script></body></html>"""


@pytest.fixture(scope="module")
def browser_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path]:
    """A real store with every kind of row: landed after a quarantine, stopped by the stop-loss."""
    from conftest import run_failres

    browser = chromium()
    if browser is None:
        pytest.skip("no chromium on this machine (CI installs Debian's chromium package)")
    tmp = tmp_path_factory.mktemp("report")
    project = Project.create(tmp)
    project.configure(implementer=[NOTHING, NOTHING], fixer=[NOTHING, NOTHING])
    plan = project.plan()
    for _ in range(3):  # two identical quarantines, then the stop-loss
        run_failres(project.top, "run", str(plan), "--quiet")
    page = tmp / "report.html"
    proc = run_failres(project.top, "report", "--html", str(page))
    assert proc.returncode == 0, proc.stderr
    return browser, page, tmp


def test_the_html_report_is_one_file_without_scripts_or_network(browser_report) -> None:
    _, page, _ = browser_report
    html = page.read_text()
    assert "http://" not in html and "https://" not in html and "<script" not in html and "<link" not in html
    assert "src=" not in html  # nothing loaded from anywhere


def test_the_html_report_renders_in_a_real_browser_at_two_widths(browser_report) -> None:
    browser, page, tmp = browser_report
    flags = [*BROWSER_FLAGS, f"--user-data-dir={tmp / 'profile'}"]
    dom = subprocess.run([browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    for element in ('id="chart-states"', 'id="chart-classes"', 'id="chart-cost-dispatches"', 'id="table-tasks"',
                    'id="table-unresolved"'):
        assert element in dom.stdout
    # Colours follow meaning: the stopped state is the "halt" red, quarantine classes orange.
    assert 'class="bar tone-halt"' in dom.stdout and 'class="bar tone-bad"' in dom.stdout
    assert [line for line in dom.stderr.splitlines() if "CONSOLE" in line and "ERROR" in line.upper()] == []
    for width in (1100, 420):
        shot = tmp / f"report-{width}.png"
        subprocess.run([browser, *flags, f"--screenshot={shot}", f"--window-size={width},1400", page.as_uri()],
                       capture_output=True, timeout=120, check=True)
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
        assert int.from_bytes(data[16:20], "big") == width  # the PNG's own width: the page at that width


def test_nothing_in_the_html_report_scrolls_sideways_at_420_px(browser_report) -> None:
    browser, page, tmp = browser_report
    measure = page.with_name("measure.html")
    measure.write_text(MEASURE)
    flags = [*BROWSER_FLAGS, f"--user-data-dir={tmp / 'profile-measure'}", "--allow-file-access-from-files",
             "--window-size=1200,1000"]
    dom = subprocess.run([browser, *flags, "--dump-dom", measure.as_uri()], capture_output=True, text=True,
                         timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    for frame in ("w420", "w1100"):
        found = re.search(f'data-{frame}="([^"]*)"', dom.stdout)
        assert found is not None, dom.stdout[-2000:]
        scroll, width, *over = found.group(1).split(" ", 2)
        assert int(scroll) <= int(width), f"{frame}: content {scroll}px in {width}px; sticking out: {over}"


def test_progress_is_plain_lines_when_not_a_terminal(tmp_path: Path) -> None:
    stream = io.StringIO()
    ticks = iter([0.0, 1.5, 2.0])
    progress = LineProgress(stream, clock=lambda: next(ticks))
    progress.step("rr", "t1", "worktree")
    progress.step("rr", "t1", "seat", seat="implementer", attempt=1)
    progress.step("rr", "t1", "gate", attempt=1)
    assert stream.getvalue().splitlines() == [
        "[failres] rr/t1  worktree  0.0s",
        "[failres] rr/t1  seat  implementer  attempt 1  1.5s",
        "[failres] rr/t1  gate  attempt 1  2.0s",
    ]


def test_a_run_in_a_pipe_prints_progress_lines(tmp_path: Path) -> None:
    from conftest import run_failres

    project = Project.create(tmp_path)
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    proc = run_failres(project.top, "run", str(project.plan()))
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("[failres] rr/t1")]
    assert [line.split()[2] for line in lines] == ["worktree", "preflight", "seat", "gate", "commit", "committed"]
    assert proc.stdout.strip() == "rr/t1: committed"


def test_store_text_in_the_html_report_is_escaped() -> None:
    from failres.report.html import render_html

    hostile = '<script>alert("x")</script><img src=x>'
    lessons = [{"id": "a1", "slug": "s", "task": hostile, "failClass": hostile, "message": hostile, "ts": "t",
                "resolved_by": None}]
    html = render_html(build_report(known_events(), lessons, [], repository=hostile, branch="main"))
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


def test_quarantines_over_time_by_day_and_class_and_the_failures_that_come_back() -> None:
    same = "gate-not-green-after-fixer|gate tests still red"
    events = [
        ev("s", "t1", "quarantined", "2026-11-28T09:00:00Z", failClass="gate-not-green-after-fixer", signature=same,
           lesson="l1"),
        ev("s", "t2", "quarantined", "2026-11-28T10:00:00Z", failClass="seat-timeout", signature="seat-timeout|x",
           lesson="l2"),
        ev("s", "t1", "quarantined", "2026-11-30T09:00:00Z", failClass="gate-not-green-after-fixer", signature=same,
           lesson="l3"),
        ev("s", "t2", "quarantined", "2026-11-30T10:00:00Z", failClass="seat-timeout", signature="seat-timeout|x",
           lesson="l4"),
        ev("s", "t1", "stop-loss", "2026-11-30T11:00:00Z"),
        ev("s", "t1", "quarantined", "2026-11-30T11:00:00Z", failClass="repeated-failure-stop", signature="stop|x"),
    ]
    lessons = [{"id": "l1", "resolved_by": None}, {"id": "l3", "resolved_by": None},
               {"id": "l2", "resolved_by": ["binding-changed"]}, {"id": "l4", "resolved_by": ["binding-changed"]}]
    report = build_report(events, lessons, [])
    assert report["quarantines"]["byDay"] == [
        {"day": "2026-11-28", "total": 2, "byFailClass": [{"name": "gate-not-green-after-fixer", "count": 1},
                                                           {"name": "seat-timeout", "count": 1}]},
        {"day": "2026-11-30", "total": 2, "byFailClass": [{"name": "gate-not-green-after-fixer", "count": 1},
                                                           {"name": "seat-timeout", "count": 1}]}]
    assert [(r["signature"], r["count"], r["firstSeen"], r["lastSeen"], r["open"], r["tasks"])
            for r in report["recurring"]] == [
        ("seat-timeout|x", 2, "2026-11-28T10:00:00Z", "2026-11-30T10:00:00Z", False, ["s/t2"]),
        (same, 2, "2026-11-28T09:00:00Z", "2026-11-30T09:00:00Z", True, ["s/t1"])]


def test_the_page_names_the_repository_and_has_print_and_dark_styles() -> None:
    from failres.report.html import render_html

    report = build_report(known_events(), [], [], repository="/home/me/src/billing", branch="main")
    page = render_html(report)
    assert "<title>failres report — billing (main)</title>" in page
    assert "<h1>failres report — billing (main)</h1>" in page
    assert "@media print{" in page and "@media (prefers-color-scheme:dark){" in page
    assert 'id="chart-days"' in page and 'id="table-recurring"' in page
    assert '<code class="cmd">git failres logs s t1</code>' in page


def test_report_html_writes_the_page_and_prints_one_line_saying_where(kept_demo: Path, tmp_path: Path) -> None:
    from conftest import run_failres

    page = tmp_path / "week.html"
    proc = run_failres(kept_demo, "report", "--html", str(page))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"wrote {page}\n", "")
    assert "<title>failres report — demo (main)</title>" in page.read_text()
    both = run_failres(kept_demo, "report", "--html", str(page), "--json")
    assert json.loads(both.stdout)["header"]["repository"] == str(kept_demo)
    assert both.stderr == f"wrote {page}\n"
