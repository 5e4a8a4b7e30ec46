"""The stop-loss compares what decides the outcome: a fixed gate is a new experiment.

Found on a real project: two `gate-unavailable` quarantines (a wrong gate command, no seat
dispatched) stopped the task, fixing the command in `.failres.toml` did not count as a
change, and `stop_loss.mode = "off"` was the only way on. Those configuration failures were
then shown to the implementer as "earlier attempts at this task failed" and stamped
`resolved by unknown` on landing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import git
from failres.engine.ladder import is_configuration_failure
from failres.engine.state import configuration_key, prior_failure_reasons, task_quarantines
from failres.knowledge.advisory import distinct_outcomes
from failres.landing.outcome_labels import resolved_by_from_journal
from lessons.recall.lesson import read_lessons
from lessons.storage.store import Store
from project import FIXED, Project

WRONG_GATE = '"/nonexistent/bin/run-the-checks"'


def test_a_fixed_gate_runs_again_past_the_stop_loss_and_its_configuration_lessons_stay_the_configuration_s(
        tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    keep = f'cp "$FAILRES_PROMPT_FILE" {project.agents}/implementer-prompt.md'
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}, "shell": [keep]}])
    config = project.top / ".failres.toml"
    right = config.read_text()
    good_gate = json.dumps([sys.executable, "tests/check.py"])
    config.write_text(right.replace(f"command = {good_gate}", f"command = [{WRONG_GATE}]", 1))
    plan = str(project.plan())

    for _ in range(2):
        assert cli(project.top, "run", plan, "--quiet").code == 1
    quarantined = [e for e in project.events() if e["type"] == "quarantined"]
    assert [q["failClass"] for q in quarantined] == ["gate-unavailable", "gate-unavailable"]
    assert all(q["configuration"] is True and q["configKey"] for q in quarantined)
    assert project.calls("impl") == 0

    # The same configuration again: refused, nothing dispatched, and the advice names the gate.
    stopped = cli(project.top, "run", plan, "--json")
    assert stopped.code == 1
    assert json.loads(stopped.out)[0]["state"] == "stopped"
    assert any("change the gate" in advice for advice in json.loads(stopped.out)[0]["advice"])
    assert project.calls("impl") == 0

    # The person fixes the gate: the next run is a new experiment, runs and commits.
    config.write_text(right)
    ran = cli(project.top, "run", plan, "--quiet")
    assert ran.code == 0, ran.err
    assert project.types()[-1] == "task-committed"
    assert project.calls("impl") == 1
    assert project.branch_file("src/calc.py") == FIXED

    # The implementer was not told that earlier attempts at the task failed: none did.
    prompt = (project.agents / "implementer-prompt.md").read_text(encoding="utf-8")
    assert "Earlier attempts" not in prompt
    assert "gate-unavailable" not in prompt and "run-the-checks" not in prompt

    landed = cli(project.top, "land", "rr", "t1", "--json")
    assert landed.code == 0, landed.err
    assert json.loads(landed.out)["stamp"]["resolvedBy"] == ["configuration-changed"]
    lessons, _ = read_lessons(Store(project.top))
    assert len(lessons) == 2
    assert all(lesson["resolved_by"] == ["configuration-changed"] and lesson["configuration"] is True
               for lesson in lessons)
    assert git(project.top, "fsck", "--strict").strip() == ""


def test_only_a_gate_that_could_not_run_before_any_dispatch_is_the_configuration_s():
    """After a seat worked, the seat may have broken the gate: that one is the task's failure."""
    assert is_configuration_failure("gate-unavailable", 0)
    assert not is_configuration_failure("gate-unavailable", 1)
    assert not is_configuration_failure("gate-not-green-after-fixer", 0)


def quarantined(fail_class: str, message: str, **extra) -> dict:
    return {"type": "quarantined", "failClass": fail_class, "signature": f"{fail_class}|{message}",
            "message": message, "intHead": "h0", "scopeKey": "s", "bindingsKey": "b", "configKey": "c0", **extra}


def test_a_configuration_failure_is_never_an_earlier_attempt_nor_what_the_advisory_block_is_about():
    events = [quarantined("seat-timeout", "the implementer ran out of time"),
              quarantined("gate-unavailable", "gate check cannot run", configuration=True)]
    assert prior_failure_reasons(events) == ("seat-timeout: the implementer ran out of time",)
    assert [q.fail_class for q in task_quarantines(events)] == ["seat-timeout"]


def test_resolved_configuration_lessons_are_never_past_outcomes_shown_to_a_seat():
    lesson = {"slug": "rr", "task": "t1", "signature": "gate-unavailable|gate check cannot run",
              "resolved_by": ["configuration-changed"], "resolved_at": "2026-12-01T00:00:00Z"}
    assert distinct_outcomes([{**lesson, "configuration": True}], 3) == []
    assert len(distinct_outcomes([lesson], 3)) == 1


def test_a_changed_configuration_between_the_quarantine_and_the_landed_run_is_configuration_changed():
    events = [quarantined("gate-unavailable", "gate check cannot run", configuration=True),
              {"type": "task-started", "intHead": "h0", "configKey": "c1"}]
    assert resolved_by_from_journal(events, landed_int_head="h0") == ["configuration-changed"]
    same = [events[0], {"type": "task-started", "intHead": "h0", "configKey": "c0"}]
    assert resolved_by_from_journal(same, landed_int_head="h0") == ["unknown"]
    unrecorded = [events[0], {"type": "task-started", "intHead": "h0"}]
    assert resolved_by_from_journal(unrecorded, landed_int_head="h0") == ["unknown"]


def test_the_configuration_key_changes_with_the_gate_and_the_workspace_settings_and_nothing_else():
    from dataclasses import replace

    from failres.config.model import GateConfig, WorkspaceConfig

    gate = GateConfig(name="check", command=("pytest", "-q"))
    space = WorkspaceConfig()
    key = configuration_key("check", gate, space)
    assert configuration_key("check", GateConfig(name="check", command=("pytest", "-q")), WorkspaceConfig()) == key
    for changed in (replace(gate, command=("pytest",)), replace(gate, env={"A": "1"}), replace(gate, setup=("make",)),
                    replace(gate, cwd="worktree")):
        assert configuration_key("check", changed, space) != key
    assert configuration_key("check", gate, replace(space, include=(".env",))) != key
    assert configuration_key("other", gate, space) != key
