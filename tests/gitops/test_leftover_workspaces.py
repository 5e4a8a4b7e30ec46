"""A workspace a killed run left behind is recognised: cleared when its repository is gone or
was made anew at the same path, named when another repository's, and anything failres did
not make is never removed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import git
from failres.errors import GitError
from failres.gitops.workspace import claim_workspace_path
from project import Project


def wait_for(path: Path, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def killed_run(project: Project, tmp_path: Path) -> Path:
    """Run a task whose seat waits, then SIGKILL failres and its seat; returns the workspace left."""
    started, pid_file = tmp_path / "seat-started", tmp_path / "seat-pid"
    # The seat names its supervisor by the pid the host knows it by, so it runs as a plain
    # process: a seat world ends with failres anyway, and leaves the same workspace behind.
    project.sandbox_mode = "off"
    project.configure(implementer=[{"shell": [f"echo $PPID > {pid_file}; touch {started}"], "sleep": 120}])
    run = subprocess.Popen([sys.executable, "-m", "failres", "run", str(project.plan()), "--quiet"],
                           cwd=project.top, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    try:
        wait_for(started)
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass
    workspace = project.workspace()
    assert (workspace / "src" / "calc.py").exists()
    return workspace


def made_anew(project: Project) -> None:
    """The repository deleted and a new one made at the same path."""
    subprocess.run(["rm", "-rf", str(project.top)], check=True)
    (project.top / "src").mkdir(parents=True)
    (project.top / "tests").mkdir()
    (project.top / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (project.top / "tests" / "check.py").write_text("print('1 passed')\n")
    git(project.top, "init", "-q", "-b", "main")
    git(project.top, "add", ".")
    git(project.top, "commit", "-q", "-m", "a new project at the same path")


def test_a_workspace_left_by_a_killed_run_does_not_block_a_repository_made_anew_at_its_path(
        tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    workspace = killed_run(project, tmp_path)
    made_anew(project)
    project.configure(implementer=[{"write": {"src/calc.py": "def add(a, b):\n    return b + a\n"}}])
    done = cli(project.top, "run", str(project.plan()), "--quiet")
    assert done.code == 0, done.err
    assert "did not make" not in done.err
    assert git(project.top, "show", "failres/rr/t1:src/calc.py") == "def add(a, b):\n    return b + a\n"
    assert not (workspace / "src" / "other.py").exists()  # the old repository's files are gone


def workspace_shaped(directory: Path, objects: Path) -> Path:
    (directory / ".git" / "objects" / "info").mkdir(parents=True)
    (directory / ".git" / "description").write_text("a failres task workspace\n")
    (directory / ".git" / "objects" / "info" / "alternates").write_text(f"{objects}\n")
    (directory / "notes.txt").write_text("kept\n")
    return directory


def test_a_workspace_of_a_repository_that_is_gone_is_cleared(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    git(tmp_path, "init", "-q", str(mine))
    left = workspace_shaped(tmp_path / "ws" / "s" / "t1", tmp_path / "deleted" / ".git" / "objects")
    claim_workspace_path(left, mine / ".git", mine / ".git" / "failres" / "workspaces" / "s" / "t1")
    assert not left.exists()


def test_a_workspace_of_another_live_repository_is_named_and_kept(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    git(tmp_path, "init", "-q", str(mine))
    git(tmp_path, "init", "-q", str(theirs))
    left = workspace_shaped(tmp_path / "ws" / "s" / "t1", theirs / ".git" / "objects")
    with pytest.raises(GitError) as refused:
        claim_workspace_path(left, mine / ".git", mine / ".git" / "failres" / "workspaces" / "s" / "t1")
    assert str(theirs) in str(refused.value) and "git failres gc" in refused.value.hint
    assert (left / "notes.txt").read_text() == "kept\n"


@pytest.mark.parametrize("shape", ["no description", "another description", "description is a link", "git is a link"])
def test_a_directory_that_only_resembles_a_workspace_is_never_removed(shape: str, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    git(tmp_path, "init", "-q", str(mine))
    left = workspace_shaped(tmp_path / "ws" / "s" / "t1", mine / ".git" / "objects")
    description = left / ".git" / "description"
    if shape == "no description":
        description.unlink()
    elif shape == "another description":
        description.write_text("Unnamed repository; edit this file to name it.\n")
    elif shape == "description is a link":
        real = tmp_path / "elsewhere"
        real.write_text("a failres task workspace\n")
        description.unlink()
        description.symlink_to(real)
    else:
        real_git = tmp_path / "real-git"
        (left / ".git").rename(real_git)
        (left / ".git").symlink_to(real_git)
    with pytest.raises(GitError, match="did not make"):
        claim_workspace_path(left, mine / ".git", mine / ".git" / "failres" / "workspaces" / "s" / "t1")
    assert (left / "notes.txt").read_text() == "kept\n"
