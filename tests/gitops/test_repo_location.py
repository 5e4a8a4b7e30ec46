"""Finding the repository: the main worktree's top from anywhere inside it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from failres.config.model import RepoPaths, find_repo_top, locate_repo
from failres.errors import NotARepository, UsageError


@pytest.fixture
def git_env(tmp_path, monkeypatch):
    """A git that knows who commits and cannot see the real home or repositories above tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Failres Test")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@failres.invalid")
    for variable in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"):
        monkeypatch.delenv(variable, raising=False)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path, git_env) -> Path:
    top = tmp_path / "project"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / "src").mkdir()
    (top / "src" / "a.py").write_text("x = 1\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "first")
    return top.resolve()


def test_the_top_is_found_from_a_subdirectory(repo):
    assert find_repo_top(repo / "src") == repo


def test_the_main_top_is_found_from_inside_a_linked_worktree(repo, tmp_path):
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    (linked / "src" / "deep").mkdir()
    assert find_repo_top(linked) == repo
    assert find_repo_top(linked / "src" / "deep") == repo


def test_the_shared_git_directory_is_found_from_a_linked_worktree(repo, tmp_path):
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    assert locate_repo(linked) == RepoPaths(top=repo, common_dir=repo / ".git")


def test_git_dir_in_the_environment_does_not_redirect_the_search(repo, tmp_path, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    assert find_repo_top(repo / "src") == repo


def test_outside_a_repository_is_not_a_repository(tmp_path, git_env):
    outside = tmp_path / "plain"
    outside.mkdir()
    with pytest.raises(NotARepository) as caught:
        find_repo_top(outside)
    assert caught.value.hint == "run inside a git repository, or `git init` one"


def test_a_bare_repository_is_not_a_repository_for_failres(tmp_path, git_env):
    bare = tmp_path / "bare.git"
    bare.mkdir()
    git(bare, "init", "-q", "--bare")
    with pytest.raises(NotARepository):
        find_repo_top(bare)


def test_a_start_that_is_not_a_directory_is_refused(tmp_path, git_env):
    with pytest.raises(UsageError):
        find_repo_top(tmp_path / "missing")
