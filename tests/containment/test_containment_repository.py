"""The rest of the person's repository around a dispatch: ignored files of the checkout, the
global excludes file, a submodule's git dir and a linked worktree's checkout are recorded
and put back like the rest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project
from test_containment import TOP, quarantined, run

FIX = {"write": {"src/calc.py": FIXED}}


# Each attack with the seat world off (the tamper check alone) and on (`seat_world`).
pytestmark = pytest.mark.usefixtures("seat_world")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def test_ignored_files_of_the_checkout_are_put_back(project: Project, cli, seat_world: bool):
    (project.top / ".gitignore").write_text(".env\n__pycache__/\n")
    git(project.top, "add", ".gitignore")
    git(project.top, "commit", "-q", "-m", "ignores")
    (project.top / ".env").write_text("API_URL=https://example.com\n")
    cache = project.top / "src" / "__pycache__"
    cache.mkdir()
    (cache / "calc.cpython-311.pyc").write_bytes(b"the person's bytecode")
    project.configure(implementer=[{**FIX, "shell": [
        f'{TOP}; echo "API_URL=https://evil.example" > "$top/.env"; '
        'printf seat > "$top/src/__pycache__/calc.cpython-311.pyc"']}])
    run(cli, project)
    assert (project.top / ".env").read_text() == "API_URL=https://example.com\n"
    assert (cache / "calc.cpython-311.pyc").read_bytes() == b"the person's bytecode"
    if not seat_world:  # inside the world the person's files are not there to write
        assert quarantined(project)["failClass"] == "seat-tamper"


def test_a_conftest_hidden_through_the_global_excludes_file_is_removed(project: Project, cli, seat_world: bool):
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text(f"[core]\n\texcludesFile = {home}/.gitignore_global\n")
    excludes = home / ".gitignore_global"
    excludes.write_text("*.log\n")
    project.configure(implementer=[{**FIX, "shell": [
        f'{TOP}; echo conftest.py >> {excludes}; echo "import os" > "$top/conftest.py"']}])
    run(cli, project)
    assert excludes.read_text() == "*.log\n"
    assert not (project.top / "conftest.py").exists()
    if not seat_world:  # inside the world the person's files are not there to write
        assert quarantined(project)["failClass"] == "seat-tamper"


def test_a_submodules_config_in_the_persons_git_dir_is_put_back(project: Project, cli, seat_world: bool):
    config = project.top / ".git" / "modules" / "lib" / "config"
    config.parent.mkdir(parents=True)
    (config.parent / "HEAD").write_text("ref: refs/heads/main\n")
    config.write_text("[core]\n\tbare = false\n")
    project.configure(implementer=[{**FIX, "shell": [
        f'{TOP}; printf "[core]\\n\\tfsmonitor = touch /tmp/owned\\n" >> "$top/.git/modules/lib/config"']}])
    run(cli, project)
    assert config.read_text() == "[core]\n\tbare = false\n"
    if not seat_world:  # inside the world the person's files are not there to write
        assert quarantined(project)["failClass"] == "seat-tamper"


def test_a_linked_worktree_of_the_persons_is_put_back(project: Project, cli, seat_world: bool):
    linked = project.top.parent / "feature"
    git(project.top, "worktree", "add", "-q", "-b", "feature", str(linked))
    (linked / "wip.txt").write_text("the person's work in progress\n")
    project.configure(implementer=[{**FIX, "shell": [
        f'{TOP}; for d in "$top"/.git/worktrees/*; do w=$(dirname "$(cat "$d/gitdir")"); '
        'echo seat > "$w/wip.txt"; echo "print(1)" > "$w/src/calc.py"; done']}])
    run(cli, project)
    assert (linked / "wip.txt").read_text() == "the person's work in progress\n"
    assert git(linked, "status", "--porcelain") == "?? wip.txt\n"
    if not seat_world:  # inside the world the person's files are not there to write
        assert quarantined(project)["failClass"] == "seat-tamper"
