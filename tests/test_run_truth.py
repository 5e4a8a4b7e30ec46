"""What `run` tells a person and a script: a stop's reasons in full, and exit codes as documented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from project import FIXED, Project

NOTHING = {"print": "looked around, changed nothing"}
ASKS = {"write": {"src/calc.py": FIXED, "docs/notes.md": "mine\n"},
        "print": "SCOPE-REQUEST: docs/notes.md — the notes describe add"}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def run(cli, project: Project, *args: str):
    return cli(project.top, "run", str(project.plan()), "--quiet", *args)


def test_a_stop_loss_stop_prints_its_whole_reason_and_what_would_change_the_outcome(project: Project, cli) -> None:
    project.configure(implementer=[NOTHING])
    assert run(cli, project).code == 1
    assert run(cli, project).code == 1
    stopped = run(cli, project)
    assert stopped.code == 1
    signature = [e for e in project.events() if e["type"] == "stop-loss"][0]["signature"]
    lines = stopped.out.splitlines()
    assert lines[0] == ("rr/t1: stopped (repeated-failure-stop): stopped before dispatch: the last 2 runs failed the "
                        f"same way under the same conditions ({signature})")
    assert lines[1:] == [
        "  what would change the outcome:",
        "    - move the integration head",
        "    - change the task's files (its scope)",
        "    - change the binding",
        '    - set stop_loss.mode = "off"',
    ]
    assert "decision" not in stopped.out  # none is open: nothing to answer
    doc = json.loads(run(cli, project, "--json").out)
    assert doc[0]["advice"] == [line.removeprefix("    - ") for line in lines[2:]]


def test_a_stop_names_the_open_decision_that_would_change_its_outcome(project: Project, cli) -> None:
    project.configure(implementer=[ASKS])
    assert run(cli, project).code == 1
    assert run(cli, project).code == 1
    stopped = run(cli, project, "--json")
    decisions = json.loads(cli(project.top, "decisions", "--open", "--json").out)
    assert len(decisions) == 2
    advice = json.loads(stopped.out)[0]["advice"]
    assert [a for a in advice if "decision" in a] == [
        f"answer the open decision {d['id'][:8]} (git failres decisions --open)" for d in decisions]


def test_a_run_that_leaves_a_task_pending_exits_1(project: Project, cli) -> None:
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    plan = project.agents.parent / "after.toml"
    plan.write_text('slug = "rr"\n'
                    '[[tasks]]\nid = "t1"\ntitle = "one"\nprompt = "p"\nfiles = ["src/calc.py"]\n'
                    '[[tasks]]\nid = "t2"\ntitle = "two"\nprompt = "p"\nfiles = ["src/calc.py"]\nafter = ["t1"]\n')
    result = cli(project.top, "run", str(plan), "--quiet", "--task", "t2")
    assert result.code == 1
    assert result.out.startswith("rr/t2: pending (waits for t1 to land")
    assert project.events("t2") == []


@pytest.mark.parametrize("args", [("journal", "demo"), ("journal", "demo", "--json"), ("status",),
                                  ("prompt", "demo", "t4")], ids=["table", "json", "status", "text"])
def test_output_into_a_closed_pipe_is_quiet_and_exits_141(kept_demo: Path, args: tuple[str, ...]) -> None:
    """`git failres journal demo | head -1`, with the reader gone before the first write."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader is gone: every write meets a closed pipe
    try:
        proc = subprocess.run([sys.executable, "-m", "failres", *args], cwd=kept_demo, stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (141, "")
