"""A suite that grows by one test between runs is the same failure to the stop-loss, and
quarantines recorded before test counts were normalised still count towards it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from failres.engine.state import quarantines
from lessons.recall.signature import signature
from project import Project


def growing_gate(tmp_path: Path) -> Path:
    """A red gate that reports one more passing test each time it runs (a counter outside the repository)."""
    script = tmp_path / "growing_gate.py"
    counter = tmp_path / "gate-runs"
    script.write_text(
        "import pathlib, sys\n"
        f"counter = pathlib.Path({str(counter)!r})\n"
        "n = int(counter.read_text()) if counter.exists() else 0\n"
        "counter.write_text(str(n + 1))\n"
        "print(f'=== 1 failed, {276 + n} passed in 0.{n + 1}s ===')\n"
        "sys.exit(1)\n")
    return script


def test_one_more_passing_test_between_runs_does_not_reset_the_stop_loss(tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    gate = growing_gate(tmp_path)
    project.configure(implementer=[{"print": "looked around, changed nothing"}])
    config = project.top / ".failres.toml"
    judge = f"command = {json.dumps([sys.executable, 'tests/check.py'])}"
    assert judge in config.read_text()
    config.write_text(config.read_text().replace(judge, f"command = {json.dumps([sys.executable, str(gate)])}"))
    plan = project.plan()
    for _ in range(2):
        assert cli(project.top, "run", str(plan), "--quiet").code == 1
    assert project.calls("impl") == 2
    assert cli(project.top, "run", str(plan), "--quiet").code == 1
    assert project.calls("impl") == 2  # the third, identical run was not dispatched
    assert [e["count"] for e in project.events() if e["type"] == "stop-loss"] == [2]


def test_a_quarantine_recorded_with_raw_test_counts_reads_in_the_current_form() -> None:
    older = {"type": "quarantined", "signature": "gate-not-green-after-fixer|=== 1 failed, 276 passed in <dur> ==="}
    fresh = signature("gate-not-green-after-fixer", "=== 1 failed, 277 passed in 0.4s ===")
    assert [facts.signature for facts in quarantines([older])] == [fresh]
