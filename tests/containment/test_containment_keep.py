"""What a gate keeps between dispatches cannot fool it: a seat that replaces `.venv/bin/python`
with a script that prints "1 passed" gets a gate that judges with the setup's own interpreter."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import git
from project import BROKEN, Project
from test_containment import run

SETUP = ("import os, sys; os.makedirs('.venv/bin', exist_ok=True); "
         "os.path.lexists('.venv/bin/python') or os.symlink(sys.executable, '.venv/bin/python')")
FAKE = "#!/bin/sh\necho '1 passed'\n"


# Each attack with the seat world off (the tamper check alone) and on (`seat_world`).
pytestmark = pytest.mark.usefixtures("seat_world")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def with_venv_gate(project: Project) -> None:
    (project.top / ".gitignore").write_text(".venv/\n")
    git(project.top, "add", ".gitignore")
    git(project.top, "commit", "-q", "-m", "ignore the environment")
    toml = project.top / ".failres.toml"
    text = toml.read_text().replace(
        f"command = {json.dumps([sys.executable, 'tests/check.py'])}",
        f"command = {json.dumps(['.venv/bin/python', 'tests/check.py'])}\n"
        f"setup = {json.dumps([sys.executable, '-c', SETUP])}\nkeep = [\".venv/\"]")
    toml.write_text(text)


def test_a_seat_that_replaces_the_kept_interpreter_does_not_turn_the_gate_green(project: Project, cli):
    replace = (f"rm -f .venv/bin/python && printf {FAKE!r} > .venv/bin/python "
               "&& chmod +x .venv/bin/python")
    project.configure(implementer=[{"shell": [replace]}], fixer=[{"shell": [replace]}])
    with_venv_gate(project)
    result = run(cli, project)
    assert result.code == 1, result.out + result.err
    branch = f"failres/{project.slug}/t1"
    if git(project.top, "branch", "--list", branch).strip():
        assert git(project.top, "show", f"{branch}:src/calc.py") == BROKEN
    assert "task-committed" not in project.types()
    results = [e for e in project.events() if e["type"] == "gate-result"]
    assert results and not any(e["passed"] for e in results), project.types()
