"""A secret a failing seat wrote into its workspace never lands in the person's object database:
not in the snapshot, not in `git log -p --all`, not in an unreachable loose blob."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git
from project import Project
from test_containment import quarantined, run

TOKEN = "ghp_R4nd0mT0k3nV4lu3Zq8Wn2Lk5Pd7Xc9Vb1Mj4"


# Each attack with the seat world off (the tamper check alone) and on (`seat_world`).
pytestmark = pytest.mark.usefixtures("seat_world")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def every_object_text(top: Path) -> str:
    listing = git(top, "fsck", "--unreachable", "--no-reflogs", "--full", check=False)
    oids = [line.split()[2] for line in listing.splitlines() if line.startswith("unreachable")]
    texts = [git(top, "cat-file", "-p", oid, check=False) for oid in oids]
    return "\n".join(texts) + git(top, "log", "-p", "--all")


def test_a_secret_in_the_files_a_quarantined_seat_left_is_in_no_object_of_the_persons(project: Project, cli):
    leak = {"write": {"docs/notes.md": f"the key is {TOKEN}\n"}}
    project.configure(implementer=[leak])
    assert run(cli, project).code == 1
    assert quarantined(project)["failClass"] == "fixer-scope-violation"
    assert TOKEN not in every_object_text(project.top)
    for path in (project.top / ".git" / "failres").rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def test_a_secret_in_accepted_code_of_a_task_that_is_quarantined_is_in_no_object_of_the_persons(
        project: Project, cli):
    leak = {"write": {"src/calc.py": f"TOKEN = '{TOKEN}'\ndef add(a, b):\n    return a - b\n"}}
    project.configure(implementer=[leak], fixer=[leak])
    assert run(cli, project).code == 1
    assert quarantined(project)["failClass"] == "gate-not-green-after-fixer"
    assert TOKEN not in every_object_text(project.top)
    git(project.top, "fsck", "--full", "--no-dangling")


def test_the_version_a_fixer_replaced_leaves_and_the_committed_one_stays(project: Project, cli):
    from project import FIXED

    first = {"write": {"src/calc.py": f"TOKEN = '{TOKEN}'\ndef add(a, b):\n    return a - b\n"}}
    project.configure(implementer=[first], fixer=[{"write": {"src/calc.py": FIXED}}])
    assert run(cli, project).code == 0
    assert TOKEN not in every_object_text(project.top)
    git(project.top, "fsck", "--full", "--no-dangling")
    assert project.branch_file("src/calc.py") == FIXED
