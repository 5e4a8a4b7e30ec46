"""The gate's preflight at the integration head runs once per head, gate configuration and environment:
every other task of the plan with the same key reuses its verdict, journaled as reused."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import git
from failres.engine.entry import engine_for, run_plan_file
from failres.cli.common import open_context
from project import FIXED, Project

# The check, and a line per run in a file outside the repository: which task, which attempt
# (0 is the preflight at the head).
GATE = (
    "import os, sys\n"
    "with open(sys.argv[1], 'a') as runs:\n"
    "    runs.write(os.environ['FAILRES_TASK'] + ' ' + os.environ['FAILRES_ATTEMPT'] + '\\n')\n"
    "sys.path.insert(0, 'src')\nfrom calc import add\n"
    "if add(2, 3) != 5:\n    print('FAILED add', add(2, 3))\n    sys.exit(1)\nprint('1 passed')\n"
)


def configure(project: Project, tasks: dict[str, str], gates: dict[str, str]) -> Path:
    """Gates by name (each with its own `env` value), one implementer that writes the fix, a plan of `tasks`."""
    script = project.agents / "gate.py"
    script.write_text(GATE)
    runs = project.agents / "gate-runs"
    lines = []
    for name, value in gates.items():
        lines += [f"[gates.{name}]", f"command = {json.dumps([sys.executable, str(script), str(runs)])}",
                  'cwd = "worktree"', 'timeout = "60s"', f'env = {{ MARK = "{value}" }}']
    implementer = project.agent("impl", [{"write": {"src/calc.py": FIXED}}] * len(tasks))
    lines += ["[bindings.impl]", f"command = {json.dumps(implementer)}", 'timeout = "60s"',
              "[seats]", 'implementer = "impl"', "[repair]", "max_attempts = 0",
              # The gate appends to a file outside the workspace: no world (it would refuse the write).
              "[sandbox]", 'mode = "off"']
    (project.top / ".failres.toml").write_text("\n".join(lines) + "\n")
    from failres.initialise import init_repository

    init_repository(project.top, hooks=False)
    plan = project.agents.parent / "plan.toml"
    plan.write_text(f'slug = "{project.slug}"\n' + "".join(
        f'[[tasks]]\nid = "{task}"\nprompt = "Fix add."\nfiles = ["src/calc.py"]\ngate = "{gate}"\n'
        for task, gate in tasks.items()))
    return runs


def run(project: Project, plan: Path, jobs: int = 1) -> list[str]:
    import os

    cwd = os.getcwd()
    os.chdir(project.top)
    try:
        outcomes = run_plan_file(engine_for(open_context()), plan, jobs=jobs)
    finally:
        os.chdir(cwd)
    return [outcome.state for outcome in outcomes]


def preflights(project: Project, task: str) -> list[dict]:
    return [e for e in project.events(task) if e["type"] == "gate-result" and e.get("preflight")]


def test_three_tasks_at_one_head_run_the_gates_preflight_once(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    runs = configure(project, {"t1": "check", "t2": "check", "t3": "check"}, {"check": "a"})
    plan = project.agents.parent / "plan.toml"
    assert run(project, plan) == ["committed", "committed", "committed"]
    lines = runs.read_text().splitlines()
    assert [line for line in lines if line.endswith(" 0")] == ["t1 0"]  # one preflight, t1's
    assert sorted(line for line in lines if not line.endswith(" 0")) == ["t1 1", "t2 1", "t3 1"]
    first = preflights(project, "t1")
    assert len(first) == 1 and "reused" not in first[0] and first[0]["verdict"] == "red"
    for task in ("t2", "t3"):
        [event] = preflights(project, task)
        assert event["reused"] == first[0]["id"] and event["reusedFrom"] == "t1"
        assert (event["verdict"], event["passed"], event["exitCode"], event["durationMs"]) == ("red", False, 1, 0)
        assert event["preflightKey"] == first[0]["preflightKey"] and event["gate"] == "check"
    # The fixer-facing words are the head's, as if it had run: the summary t1's preflight recorded.
    assert preflights(project, "t3")[0]["summary"] == first[0]["summary"]


def test_a_task_with_another_gate_configuration_gets_its_own_preflight(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    runs = configure(project, {"t1": "check", "t2": "other", "t3": "check"}, {"check": "a", "other": "b"})
    plan = project.agents.parent / "plan.toml"
    assert run(project, plan) == ["committed", "committed", "committed"]
    assert [line for line in runs.read_text().splitlines() if line.endswith(" 0")] == ["t1 0", "t2 0"]
    assert "reused" not in preflights(project, "t2")[0]
    assert preflights(project, "t3")[0]["reused"] == preflights(project, "t1")[0]["id"]


def test_a_new_integration_head_runs_the_preflight_again(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    runs = configure(project, {"t1": "check"}, {"check": "a"})
    plan = project.agents.parent / "plan.toml"
    assert run(project, plan) == ["committed"]
    (project.top / "docs" / "notes.md").write_text("more notes\n")
    git(project.top, "commit", "-q", "-am", "the head moves")
    configure(project, {"t1": "check", "t2": "check"}, {"check": "a"})
    assert run(project, plan) == ["committed", "committed"]  # t1 is committed already: skipped
    assert [line for line in runs.read_text().splitlines() if line.endswith(" 0")] == ["t1 0", "t2 0"]


def test_a_red_that_turned_on_one_tasks_files_is_not_reused_for_a_task_without_them(tmp_path: Path) -> None:
    """t1 is to write the test the gate runs, so its head verdict is red; for t2, whose files do not hold
    that test, the same head is a gate that cannot run: it runs its own preflight and no seat is paid."""
    project = Project.create(tmp_path)
    gate = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_new.py"]
    new_test = "def test_new():\n    assert 2 + 2 == 4\n"
    implementer = project.agent("impl", [{"write": {"tests/test_new.py": new_test}}] * 2)
    (project.top / ".failres.toml").write_text("\n".join([
        "[gates.check]", f"command = {json.dumps(gate)}", 'cwd = "worktree"', 'timeout = "60s"',
        "[bindings.impl]", f"command = {json.dumps(implementer)}", 'timeout = "60s"',
        "[seats]", 'implementer = "impl"', "[repair]", "max_attempts = 0", "[sandbox]", 'mode = "off"', ""]))
    from failres.initialise import init_repository

    init_repository(project.top, hooks=False)
    plan = project.agents.parent / "plan.toml"
    plan.write_text(f'slug = "{project.slug}"\n'
                    '[[tasks]]\nid = "t1"\nprompt = "Write the test."\nfiles = ["tests/test_new.py"]\n'
                    '[[tasks]]\nid = "t2"\nprompt = "Fix add."\nfiles = ["src/calc.py"]\n')
    assert run(project, plan) == ["committed", "quarantined"]
    [first] = preflights(project, "t1")
    assert first["verdict"] == "red" and first["scoped"] is True
    [own] = preflights(project, "t2")
    assert "reused" not in own and own["verdict"] == "unavailable"
    assert project.calls("impl") == 1  # t2's seat was never dispatched


def test_tasks_run_at_once_wait_for_the_first_preflight_of_their_key(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    runs = configure(project, {"t1": "check", "t2": "check", "t3": "check"}, {"check": "a"})
    plan = project.agents.parent / "plan.toml"
    assert run(project, plan, jobs=3) == ["committed", "committed", "committed"]
    preflight_runs = [line for line in runs.read_text().splitlines() if line.endswith(" 0")]
    assert len(preflight_runs) == 1, preflight_runs
    judged = preflight_runs[0].split()[0]
    for task in {"t1", "t2", "t3"} - {judged}:
        assert preflights(project, task)[0]["reusedFrom"] == judged


def test_the_environment_fingerprint_changes_with_the_environment_and_not_with_bytecode(tmp_path: Path) -> None:
    from failres.engine.preflight_steps import environment_fingerprint

    site = tmp_path / ".venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "dep.py").write_text("VERSION = 1\n")
    before = environment_fingerprint(tmp_path, (".venv",), None)
    (site / "__pycache__").mkdir()
    (site / "__pycache__" / "dep.cpython-311.pyc").write_bytes(b"cache")
    assert environment_fingerprint(tmp_path, (".venv",), None) == before
    (site / "other.py").write_text("NEW = 1\n")  # a package installed
    assert environment_fingerprint(tmp_path, (".venv",), None) != before
