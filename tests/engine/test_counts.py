"""`status` and `report` count from one definition (`engine.tally`): the same numbers in both views."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from conftest import run_failres
from failres.engine.tally import resolution_of, runs_of, summary_line, tally_task, totals
from project import Project


def ev(kind: str, n: int, **fields) -> dict:
    return {"slug": "s", "task": "t", "type": kind, "ts": f"2026-11-30T00:00:{n:02d}Z", "id": f"{n:016x}", **fields}


def json_of(cwd: Path, *args: str):
    proc = run_failres(cwd, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_stop_is_a_run_and_a_stop_never_a_quarantine() -> None:
    events = [ev("task-started", 1), ev("seat-dispatched", 2), ev("quarantined", 3, failClass="unknown"),
              ev("task-started", 4), ev("seat-dispatched", 5), ev("quarantined", 6, failClass="unknown"),
              ev("stop-loss", 7), ev("quarantined", 8, failClass="repeated-failure-stop")]
    counted = tally_task(events, live=False)
    assert (counted.state, counted.runs, counted.quarantines, counted.stops, counted.dispatches) == (
        "stopped", 3, 2, 1, 2)
    assert [r["outcome"] for r in runs_of(events)] == ["unknown", "unknown", "repeated-failure-stop"]


def test_a_run_nobody_holds_is_interrupted_not_running() -> None:
    events = [ev("task-started", 1), ev("seat-dispatched", 2)]
    assert tally_task(events, live=False).state == "interrupted"
    assert tally_task(events, live=True).state == "running"
    assert [r["outcome"] for r in runs_of(events, live=False)] == ["interrupted"]
    # A run that died before the next one began ended there, whatever came after.
    resumed = [*events, ev("interrupted", 3, reason="lost"), ev("task-started", 4), ev("task-committed", 5)]
    assert [r["outcome"] for r in runs_of(resumed)] == ["interrupted", "committed"]


def test_what_resolved_the_lessons_adds_up_to_the_lessons_resolved() -> None:
    lessons = [{"resolved_by": ["scope-widened", "decision-answered"]}, {"resolved_by": ["binding-changed"]},
               {"resolved_by": None}]
    assert [resolution_of(lesson) for lesson in lessons] == [
        "decision-answered + scope-widened", "binding-changed", None]
    found = totals([], lessons)
    assert (found.lessons, found.resolved, found.unresolved) == (3, 2, 1)
    assert summary_line(found) == "0 tasks; 0 runs, 0 quarantines, 0 stops; 3 lessons, 1 unresolved"


def test_status_and_report_count_the_demo_the_same_way(kept_demo: Path) -> None:
    rows = json_of(kept_demo, "status")
    report = json_of(kept_demo, "report")
    states = Counter(row["state"] for row in rows)
    assert {r["name"]: r["count"] for r in report["tasks"]["byState"]} == {
        name: states.get(name, 0) for name in ("pending", "running", "interrupted", "committed", "quarantined",
                                                "stopped", "landed")}
    table = {(r["slug"], r["task"]): r for r in report["tasks"]["table"]}
    for row in rows:
        mine = table[(row["slug"], row["task"])]
        assert (row["state"], row["runs"], row["quarantines"], row["stops"], row["lastFailClass"]) == (
            mine["state"], mine["runs"], mine["quarantines"], mine["stops"], mine["lastFailClass"])
    assert sum(row["quarantines"] for row in rows) == report["quarantines"]["total"] == sum(
        r["count"] for r in report["quarantines"]["byFailClass"]) == sum(
        r["count"] for r in report["quarantines"]["byPackage"])
    assert sum(row["stops"] for row in rows) == report["quarantines"]["stops"] == report["stopLoss"]["runsStopped"]
    assert sum(row["runs"] for row in rows) == sum(r["runs"] for r in report["cost"]["byOutcome"]) == sum(
        r["runs"] for r in report["tasks"]["table"])
    resolutions = report["resolutions"]
    assert sum(r["count"] for r in resolutions["byResolution"]) == resolutions["resolvedLessons"]
    lessons = json_of(kept_demo, "lessons", "list", "--limit", "1000")
    assert resolutions["resolvedLessons"] == sum(1 for lesson in lessons if lesson["resolved_by"])
    assert resolutions["unresolvedLessons"] == sum(1 for lesson in lessons if not lesson["resolved_by"])
    # The people's views print the one summary line the same.
    status_text = run_failres(kept_demo, "status").stderr.splitlines()  # stdout: one line per task
    report_text = run_failres(kept_demo, "report").stdout.splitlines()
    assert status_text[-1] == report_text[1] == report["summary"]


def test_a_run_killed_hard_reads_interrupted_in_status_and_report_alike(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[{"sleep": 120}])
    log = tmp_path / "run.log"
    with log.open("w") as sink:
        child = subprocess.Popen([sys.executable, "-m", "failres", "run", str(project.plan())], cwd=project.top,
                                 stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 300
        # The progress line can be printed a moment before the dispatch is journaled: the kill
        # waits for both, or a loaded machine kills the run between the two.
        while time.monotonic() < deadline and not (
                "seat  implementer" in log.read_text() and project.types()[-1:] == ["seat-dispatched"]):
            time.sleep(0.1)
        os.kill(child.pid, signal.SIGKILL)  # failres itself dies: nothing journals the end
        child.wait(timeout=300)
    assert project.types()[-1] == "seat-dispatched"  # the journal still says it runs
    rows = json_of(project.top, "status")
    report = json_of(project.top, "report")
    assert [row["state"] for row in rows] == ["interrupted"]
    assert [(r["name"], r["count"]) for r in report["tasks"]["byState"] if r["count"]] == [("interrupted", 1)]
    assert [r["name"] for r in report["cost"]["byOutcome"]] == ["interrupted"]
    with contextlib.suppress(ProcessLookupError):  # nothing of the dead run's group may outlive the test
        os.killpg(child.pid, signal.SIGKILL)
