"""failres's own git commands never garbage-collect the person's repository.

A `git fetch`, `commit` or `merge` runs `git maintenance run --auto` (and through it `gc --auto`)
once the repository holds enough loose objects: that packs them and deletes their files, and
prunes unreachable objects past `gc.pruneExpire`. Run by the person, that is their git's choice;
run by failres (a task's commits, a sync's fetch), it would delete files under the person's
`objects/`, an unreachable blob they might still want among them. Here the repository is set to
collect at the first chance, in the foreground, pruning at once, and every loose object file
that was there before a run, a sync and a look at the remote is there after it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest

from conftest import git, run_failres
from project import FIXED, Project
from test_containment import run

# Collect whenever two loose objects share a fan-out directory, in the foreground, pruning
# every unreachable object at once: the first auto-collection any git command starts deletes.
EAGER = (("gc.auto", "1"), ("gc.autoDetach", "false"), ("gc.pruneExpire", "now"), ("gc.autoPackLimit", "1"),
         ("maintenance.auto", "true"))


def loose_files(top: Path) -> set[str]:
    objects = top / ".git" / "objects"
    return {str(path.relative_to(objects)) for path in objects.glob("??/*")}


def eager(top: Path) -> str:
    """The repository set to collect eagerly, with 600 loose blobs and one unreachable: its oid."""
    for key, value in EAGER:
        git(top, "config", key, value)
    repo = pygit2.Repository(str(top))
    for n in range(600):
        repo.create_blob(f"loose blob {n}\n".encode())
    return str(repo.create_blob(os.urandom(64)))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def test_a_bare_git_commit_would_collect_in_this_repository(tmp_path: Path) -> None:
    """What the guarantee is against: in a repository set like this, git's own commit deletes."""
    top = tmp_path / "plain"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    git(top, "commit", "-q", "--allow-empty", "-m", "first")
    unreachable = eager(top)
    before = loose_files(top)
    git(top, "commit", "-q", "--allow-empty", "-m", "second")
    assert not before <= loose_files(top)
    assert pygit2.Repository(str(top)).odb.exists(unreachable) is False


def test_a_run_a_sync_and_a_look_at_the_remote_delete_no_object_file(project: Project, cli, tmp_path: Path) -> None:
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(project.top, "remote", "add", "origin", str(bare))
    git(project.top, "push", "-q", "origin", "main")
    unreachable = eager(project.top)
    before = loose_files(project.top)

    assert run(cli, project).code == 0
    assert project.branch_file("src/calc.py") == FIXED
    for line in (("sync", "origin"), ("status", "--remote", "origin"), ("sync", "origin")):
        done = run_failres(project.top, *line)
        assert done.returncode == 0, done.stderr

    assert before <= loose_files(project.top)
    assert pygit2.Repository(str(project.top)).odb.exists(unreachable)
    git(project.top, "fsck", "--full", "--no-dangling")
