"""A seat that replaces its own workspace: by a symlink to the person's checkout, or by
swapping a directory on the way to it. failres must notice before it reads, cleans or
removes anything there, and the person's repository (files, git dir, refs) stays whole."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project
from test_containment import quarantined, refs, run


# Each attack with the seat world off (the tamper check alone) and on (`seat_world`).
pytestmark = pytest.mark.usefixtures("seat_world")


FIX = {"write": {"src/calc.py": FIXED}}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    found = Project.create(tmp_path)
    (found.top / ".gitignore").write_text(".env\n.failres.toml\n")
    git(found.top, "add", ".gitignore")
    git(found.top, "commit", "-q", "-m", "ignore")
    return found


def persons_work(top: Path) -> dict[str, str]:
    """Everything of the person's that a workspace clean-up could destroy: untracked,
    ignored and uncommitted files, and every file of the git dir but failres's own state
    and refs (which `persons_refs` compares)."""
    (top / "notes.txt").exists() or (top / "notes.txt").write_text("my notes, not committed\n")
    (top / ".env").exists() or (top / ".env").write_text("SECRET=person\n")
    found = {}
    for path in sorted(top.rglob("*")):
        relative = path.relative_to(top).as_posix()
        ours = relative.startswith((".git/failres/", ".git/logs/", ".git/refs/failres/", ".git/refs/heads/failres/"))
        if path.is_file() and not ours:
            found[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def assert_all_kept(before: dict[str, str], after: dict[str, str]) -> None:
    """Every file the person had is there with the same bytes (the store's writes may add objects)."""
    lost = sorted(path for path in before if path not in after)
    changed = sorted(path for path in before if path in after and after[path] != before[path])
    assert (lost, changed) == ([], [])
    assert "t1/keep.txt" not in before or "t1/keep.txt" in after


def persons_refs(top: Path) -> dict[str, str]:
    return {name: value for name, value in refs(top).items() if not name.startswith("refs/failres/")
            and not name.startswith("refs/heads/failres/")}


def swapped_and_kept(project: Project, cli, swap: str, world: bool) -> dict[str, str]:
    """Run a seat that fixes the task and then runs `swap`; assert the person's files and refs
    are whole and, without the world, the task quarantined as tamper (inside it the seat's
    moves reach only the world's own paths). Returns the person's files as they were."""
    project.configure(implementer=[{**FIX, "shell": [swap]}])
    before, before_refs = persons_work(project.top), persons_refs(project.top)
    result = run(cli, project)
    assert_all_kept(before, persons_work(project.top))
    assert persons_refs(project.top) == before_refs
    if not world:
        assert result.code == 1
        assert quarantined(project)["failClass"] == "seat-tamper"
    return before


def test_a_workspace_replaced_by_a_symlink_to_the_checkout_is_never_cleaned_or_removed(
        project: Project, cli, seat_world: bool):
    (project.top / "src" / "other.py").write_text("VALUE = 1\n# the person's edit in progress\n")
    swap = ('top=$(dirname "$(dirname "$(head -1 .git/objects/info/alternates)")"); ws="$PWD"; cd /; '
            'mv "$ws" "$ws.moved" && ln -s "$top" "$ws"')
    swapped_and_kept(project, cli, swap, seat_world)
    assert git(project.top, "rev-parse", "refs/failres/store")  # the store is there, with its records
    assert not project.workspace().is_symlink()
    if seat_world:
        return
    tamper = [e for e in project.events() if e["type"] == "seat-tamper"][-1]
    assert any("replaced by a symlink" in line for line in tamper["what"])
    assert not project.workspace().is_symlink()  # the symlink itself is gone, never what it points to
    assert project.types()[-1] == "quarantined"


def test_a_directory_swapped_on_the_way_to_the_workspace_leads_nowhere_of_the_persons(
        project: Project, cli, seat_world: bool):
    # The person's checkout has a directory named like the task: after the swap the
    # workspace path leads right into it.
    (project.top / "t1").mkdir()
    (project.top / "t1" / "keep.txt").write_text("the person's\n")
    swap = ('top=$(dirname "$(dirname "$(head -1 .git/objects/info/alternates)")"); up=$(dirname "$PWD"); cd /; '
            'mv "$up" "$up.moved" && ln -s "$top" "$up"')
    before = swapped_and_kept(project, cli, swap, seat_world)
    # A later run refuses the poisoned path, in one line, and still touches nothing.
    again = run(cli, project)
    if not seat_world:
        assert again.code == 2 and "leads into" in again.err
    assert_all_kept(before, persons_work(project.top))
