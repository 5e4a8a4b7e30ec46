"""The report: its JSON on a known store, the HTML in a real browser, progress lines."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from failres.engine.progress import LineProgress
from failres.report import build_report
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
        ev("s", "t1", "quarantined", "2026-11-30T00:00:03Z", failClass="gate-not-green-after-fixer"),
        ev("s", "t1", "task-started", "2026-11-30T00:10:00Z"),
        ev("s", "t1", "seat-dispatched", "2026-11-30T00:10:01Z", seat="fixer"),
        ev("s", "t1", "task-committed", "2026-11-30T00:10:02Z"),
        ev("s", "t1", "landed", "2026-11-30T00:20:03Z"),
        ev("s", "t2", "task-started", "2026-11-30T00:00:00Z"),
        ev("s", "t2", "seat-dispatched", "2026-11-30T00:00:01Z", seat="implementer"),
        ev("s", "t2", "quarantined", "2026-11-30T00:00:02Z", failClass="seat-crashed"),
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
    assert report["quarantines"]["byPackage"] == [{"name": "src", "count": 2}, {"name": "lib", "count": 1}]
    assert report["resolutions"]["byReason"] == [{"name": "scope-widened", "count": 1}]
    assert report["repair"] == {"runsWithFixer": 2, "repaired": 1, "rate": 0.5}
    assert report["stopLoss"] == {"runsStopped": 1, "dispatchesNotMade": 1}
    assert report["timeToLand"] == {"tasks": 1, "medianSeconds": 1200.0, "maxSeconds": 1200.0}
    assert [d["id"] for d in report["openDecisions"]] == ["d1"]


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


def test_the_html_report_renders_its_charts_in_a_real_browser(tmp_path: Path, cli) -> None:
    browser = chromium()
    if browser is None:
        pytest.skip("no chromium on this machine (CI installs Debian's chromium package)")
    project = Project.create(tmp_path)
    project.configure(implementer=[NOTHING])
    cli(project.top, "run", str(project.plan()), "--quiet")
    page = tmp_path / "report.html"
    assert cli(project.top, "report", "--html", str(page)).code == 0
    html = page.read_text()
    assert "http://" not in html and "https://" not in html and "<script" not in html
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0"]
    dom = subprocess.run([browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'id="chart-states"' in dom.stdout and 'id="chart-classes"' in dom.stdout
    assert dom.stdout.count('class="bar"') >= 2
    console_errors = [line for line in dom.stderr.splitlines() if "CONSOLE" in line and "ERROR" in line.upper()]
    assert console_errors == []
    shot = tmp_path / "report.png"
    subprocess.run([browser, *flags, f"--screenshot={shot}", "--window-size=1100,900", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


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
    assert [line.split()[2] for line in lines] == ["worktree", "seat", "gate", "commit", "done"]
    assert proc.stdout.strip() == "rr/t1: committed"
