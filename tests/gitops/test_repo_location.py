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


def layouts(repo: Path, tmp_path: Path) -> dict[str, Path]:
    """Places to start from: the common layouts, and ones only git itself answers."""
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"), "-b", "side")
    (tmp_path / "through-a-link").symlink_to(repo)
    separate = tmp_path / "separate"
    git(tmp_path, "init", "-q", "--separate-git-dir", str(tmp_path / "separate.git"), str(separate))
    moved = tmp_path / "elsewhere"
    git(tmp_path, "init", "-q", str(moved))
    git(moved, "config", "core.worktree", str(tmp_path / "elsewhere-files"))
    (tmp_path / "elsewhere-files").mkdir()
    upstream = tmp_path / "upstream"
    git(tmp_path, "init", "-q", str(upstream))
    git(upstream, "commit", "-q", "--allow-empty", "-m", "first")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), "sub")
    # A worktree set in a file the config includes: only git reads includes.
    included = tmp_path / "included"
    git(tmp_path, "init", "-q", str(included))
    (tmp_path / "included-files").mkdir()
    (tmp_path / "worktree.inc").write_text(f"[core]\n\tworktree = {tmp_path / 'included-files'}\n")
    git(included, "config", "include.path", str(tmp_path / "worktree.inc"))
    return {"included config": included,
            "top": repo, "subdirectory": repo / "src", "inside .git": repo / ".git" / "refs",
            "linked worktree": tmp_path / "linked", "a symlink to the top": tmp_path / "through-a-link" / "src",
            "separate git dir": separate, "core.worktree": moved, "submodule": repo / "sub"}


@pytest.mark.parametrize("ceiling", ["set", "unset"])
def test_the_answer_without_git_is_the_answer_git_gives(repo, tmp_path, monkeypatch, ceiling):
    from failres.gitops.location import _located_by_git, _located_in_process

    starts = layouts(repo, tmp_path)
    if ceiling == "unset":
        monkeypatch.delenv("GIT_CEILING_DIRECTORIES")
    in_process = set()
    for name, start in starts.items():
        assert locate_repo(start) == _located_by_git(start), name
        if _located_in_process(start) is not None:
            in_process.add(name)
    # The common layouts are answered without a git process; the rest by git.
    assert in_process == {"top", "subdirectory", "inside .git", "linked worktree", "a symlink to the top"}
