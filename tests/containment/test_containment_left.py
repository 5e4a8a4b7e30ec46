"""What is left for the person is inert: a quarantined workspace kept for a look runs nothing
of the seat's when the person's own git runs there.

Incident: a quarantined workspace left for the person kept a gate-written `core.fsmonitor`;
the person's `git status` there ran the seat's code.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import git
from project import Project

# Each attack with the seat world off (the tamper check alone) and on (`seat_world`).
pytestmark = pytest.mark.usefixtures("seat_world")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def poisoning(agents: Path) -> str:
    """Python that makes the workspace's `.git` run a marker-writing script at the person's next git command."""
    return (f"import os, pathlib\n"
            f"script = pathlib.Path({str(agents / 'ran.sh')!r})\n"
            f"script.write_text('#!/bin/sh\\necho \"$0 $*\" >> {agents / 'marker'}\\n')\n"
            f"script.chmod(0o755)\n"
            f"with open('.git/config', 'a') as config:\n"
            f"    config.write('[core]\\n\\tfsmonitor = %s\\n\\thooksPath = %s\\n[alias]\\n\\tst = !%s\\n'\n"
            f"                 '[include]\\n\\tpath = %s\\n' % (script, script.parent, script, script.parent / 'more'))\n"
            f"pathlib.Path({str(agents / 'more')!r}).write_text('[core]\\n\\tpager = %s\\n' % script)\n"
            f"os.makedirs('.git/hooks', exist_ok=True)\n"
            f"for hook in ('pre-commit', 'post-commit', 'post-index-change'):\n"
            f"    pathlib.Path('.git/hooks', hook).write_text(script.read_text())\n"
            f"    os.chmod('.git/hooks/' + hook, 0o755)\n")


def test_a_left_workspace_whose_seat_and_gate_poisoned_its_git_runs_nothing_for_the_person(project: Project, cli):
    attack = poisoning(project.agents)
    # The seat poisons `.git` itself, and leaves a calc.py whose import (by the gate) poisons it again.
    calc = attack + "def add(a, b):\n    return a * b\n"
    project.configure(implementer=[{"write": {"src/calc.py": calc, "poison.py": attack},
                                    "shell": ["python3 poison.py && rm poison.py"]}],
                      extra="[repair]\nrollback = false\n")
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 1, result.out + result.err
    assert "quarantined" in project.types()
    left = project.workspace()
    assert (left / "src" / "calc.py").read_text() == calc  # what the seat did is there to look at
    (project.agents / "marker").unlink(missing_ok=True)  # what the seat's own runs wrote

    person = {k: v for k, v in os.environ.items() if not k.startswith("GIT_DIR")}
    status = subprocess.run(["git", "status", "--porcelain"], cwd=left, capture_output=True, text=True, env=person)
    assert status.returncode == 0, status.stderr
    assert " M src/calc.py" in status.stdout.splitlines()
    for command in (["add", "-A"], ["commit", "-q", "-m", "the person's look"], ["log", "-1", "-p"], ["st"]):
        subprocess.run(["git", *command], cwd=left, capture_output=True, env=person)
    assert not (project.agents / "marker").exists(), (project.agents / "marker").read_text()
    config = (left / ".git" / "config").read_text()
    for word in ("fsmonitor", "hooksPath", "alias", "include", "pager"):
        assert word not in config
    assert not any((left / ".git" / "hooks").glob("*"))
    assert git(project.top, "rev-parse", "main") == git(project.top, "rev-parse", "main^{commit}")
