"""Task branches and commits, exact patches, status parsing, and the scope match.

Every test works on a real repository made with the `git` program. Workspaces (what a
seat changed, putting the files back) have their own tests in test_workspace.py.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failres import gitops
from failres.gitops.scope import glob_matches, match_scope
from failres.containment.tamper import OwnMoves
from failres.errors import GitError, UsageError
from failres.gitops.status import parse_status
from failres.gitops.task_objects import TaskObjects

IDENTITY = {
    "GIT_AUTHOR_NAME": "Seat Tester",
    "GIT_AUTHOR_EMAIL": "seat@example.com",
    "GIT_COMMITTER_NAME": "Seat Tester",
    "GIT_COMMITTER_EMAIL": "seat@example.com",
}
BRANCH = "failres/s/t1"


@pytest.fixture(autouse=True)
def git_identity(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A known identity and an empty home: nothing of the machine's git config is used."""
    home = tmp_path_factory.mktemp("gitops-home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)


def git(cwd: Path, *args: str, check: bool = True) -> str:
    completed = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    if check and completed.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {completed.stderr.decode()}")
    return completed.stdout.decode("utf-8", "surrogateescape")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository on main with two commits, an ignore file and a few directories."""
    top = tmp_path / "project"
    git(tmp_path, "init", "-q", "-b", "main", str(top))
    write(top / ".gitignore", "*.log\nbuild/\n")
    write(top / "README.md", "readme\n")
    write(top / "src" / "a.py", "a = 1\n")
    write(top / "src" / "b.py", "b = 1\n")
    write(top / "docs" / "guide.md", "guide\n")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "first")
    write(top / "src" / "later.py", "later = 1\n")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "second")
    return top


def head(cwd: Path, rev: str = "HEAD") -> str:
    return git(cwd, "rev-parse", rev).strip()


# ── task branches, commits and patches ────────────────────────────────


def test_head_commit_reads_a_branch_tip_and_names_a_missing_branch(project: Path) -> None:
    assert gitops.head_commit(project, "main") == head(project, "main")
    assert gitops.head_commit(project, "refs/heads/main") == head(project, "main")
    with pytest.raises(GitError, match="branch nope does not exist"):
        gitops.head_commit(project, "nope")


# ── changed paths: one kind of change each ────────────────────────────


def test_a_task_commit_holds_exactly_the_tree_with_the_trailer_and_runs_no_hook(project: Path) -> None:
    hook = project / ".git" / "hooks" / "post-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch {project}/hook-ran\n")
    hook.chmod(0o755)
    start = head(project)
    tree = git(project, "rev-parse", "HEAD^{tree}").strip()
    commit = gitops.commit_tree(project / ".git", tree, start, "failres: s/t1 a title", "Failres-Task: s/t1")
    assert git(project, "log", "-1", "--format=%B", commit) == "failres: s/t1 a title\n\nFailres-Task: s/t1\n\n"
    assert head(project, f"{commit}^") == start and head(project, f"{commit}^{{tree}}") == tree
    assert not (project / "hook-ran").exists()


def test_a_task_commit_needs_no_git_identity(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in IDENTITY:
        monkeypatch.delenv(key)
    commit = gitops.commit_tree(project / ".git", git(project, "rev-parse", "HEAD^{tree}").strip(), head(project),
                                "failres: s/t1", "Failres-Task: s/t1")
    assert git(project, "log", "-1", "--format=%an <%ae>", commit).strip() == "failres <failres@localhost>"


def test_a_task_branch_moves_only_from_where_failres_left_it(project: Path) -> None:
    first, second = head(project, "HEAD~1"), head(project)
    own = OwnMoves()
    gitops.ensure_task_branch(project, project / ".git", BRANCH, first, known=set(), own=own)
    assert head(project, BRANCH) == first and own.allows(f"refs/heads/{BRANCH}", first)
    gitops.ensure_task_branch(project, project / ".git", BRANCH, second, known={first}, own=own)
    assert head(project, BRANCH) == second
    with pytest.raises(GitError, match="a commit this task never made"):
        gitops.ensure_task_branch(project, project / ".git", BRANCH, first, known={first}, own=own)
    assert head(project, BRANCH) == second


def test_a_task_branch_someone_has_checked_out_is_never_moved(project: Path, tmp_path: Path) -> None:
    first = head(project, "HEAD~1")
    git(project, "branch", BRANCH, first)
    git(project, "worktree", "add", "-q", str(tmp_path / "inspect"), BRANCH)
    write(tmp_path / "inspect" / "my-notes.txt", "uncommitted notes\n")
    with pytest.raises(GitError, match="is checked out in"):
        gitops.ensure_task_branch(project, project / ".git", BRANCH, head(project), known={first}, own=None)
    assert head(project, BRANCH) == first
    assert (tmp_path / "inspect" / "my-notes.txt").read_text() == "uncommitted notes\n"


def test_moving_a_branch_that_moved_meanwhile_is_refused(project: Path) -> None:
    first, second = head(project, "HEAD~1"), head(project)
    git(project, "branch", BRANCH, second)
    with pytest.raises(GitError, match="is at .* but expected") as refused:
        gitops.move_branch(project, project / ".git", BRANCH, first, expected=first, own=None)
    assert refused.value.hint == "another process moved it meanwhile; run again"
    assert head(project, BRANCH) == second


def test_an_exact_patch_becomes_a_tree_without_touching_any_checkout(project: Path, tmp_path: Path) -> None:
    start = head(project)
    write(project / "src" / "a.py", "a = 99\n")
    patch = tmp_path / "p.diff"
    patch.write_text(git(project, "diff"))
    git(project, "checkout", "-q", "--", ".")
    objects = TaskObjects(project / ".git", tmp_path / "task-objects")
    tree = gitops.patch_tree(project, start, patch.read_bytes(), objects, name=patch)
    shown = subprocess.run(["git", "show", f"{tree}:src/a.py"], cwd=project, capture_output=True, text=True,
                           env={**os.environ, **objects.env()})
    assert shown.stdout == "a = 99\n"
    assert gitops.changed_between(project, head(project, "HEAD^{tree}"), tree, objects) == ["src/a.py"]
    assert git(project, "status", "--porcelain") == ""
    # The tree and the patch's blob are the task's alone until it commits: the person's database has neither.
    blob = subprocess.run(["git", "hash-object", "--stdin"], cwd=project, input="a = 99\n", capture_output=True,
                          text=True).stdout.strip()
    for oid in (tree, blob):
        assert subprocess.run(["git", "cat-file", "-e", oid], cwd=project, capture_output=True).returncode != 0


def test_a_patch_that_does_not_apply_is_a_usage_error_with_gits_reason(project: Path, tmp_path: Path) -> None:
    patch = tmp_path / "bad.diff"
    patch.write_text("--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-not there\n+x\n")
    with pytest.raises(UsageError, match="does not apply to the task's start .*patch failed"):
        gitops.patch_tree(project, head(project), patch.read_bytes(), TaskObjects(project / ".git", tmp_path / "o"),
                          name=patch)


def test_a_message_that_ends_in_trailers_gets_the_task_trailer_in_the_same_block() -> None:
    message = "subject\n\nbody\n\nCo-authored-by: A <a@x>"
    assert gitops.message_with_trailer(message, "Failres-Task: s/t") == (
        "subject\n\nbody\n\nCo-authored-by: A <a@x>\nFailres-Task: s/t\n"
    )
    assert gitops.message_with_trailer("subject", "Failres-Task: s/t") == "subject\n\nFailres-Task: s/t\n"
    once = gitops.message_with_trailer("subject", "Failres-Task: s/t")
    assert gitops.message_with_trailer(once, "Failres-Task: s/t") == once


# ── status parsing ────────────────────────────────────────────────────


def test_status_parsing_reads_renames_conflicts_submodules_and_branch() -> None:
    zero = "0" * 40
    raw = (
        f"# branch.oid {'a' * 40}\0# branch.head (detached)\0"
        f"2 R. N... 100644 100644 100644 {zero} {zero} R100 new name.py\0old name.py\0"
        f"u UU N... 100644 100644 100644 100644 {zero} {zero} {zero} both.py\0"
        f"1 .M SC.. 160000 160000 160000 {zero} {zero} lib\0"
        "? dir/\0"
    ).encode()
    report = parse_status(raw)
    assert report.head == "a" * 40 and report.branch is None
    assert [(e.path, e.original_path, e.submodule) for e in report.entries] == [
        ("new name.py", "old name.py", False),
        ("both.py", None, False),
        ("lib", None, True),
        ("dir", None, False),
    ]


# ── match_scope ───────────────────────────────────────────────────────


def test_scope_globs_follow_git_pathspec_rules() -> None:
    cases = {
        ("src/*.py", "src/a.py"): True,
        ("src/*.py", "src/x/a.py"): False,
        ("src/**", "src/x/a.py"): True,
        ("**/conf.py", "conf.py"): True,
        ("**/conf.py", "a/b/conf.py"): True,
        ("a/**/b", "a/b"): True,
        ("docs/", "docs/deep/x.md"): True,
        ("docs/", "docsx/y.md"): False,
        ("src", "src/a.py"): True,
        ("a[1].txt", "a[1].txt"): True,
        ("*", "a/b"): False,
        ("", "a"): False,
    }
    assert {case: glob_matches(*case) for case in cases} == cases


def test_protected_wins_over_allowed() -> None:
    allowed, rejected = match_scope(["src/a.py", "src/secret.key", "README.md"], ["src/"], ["**/*.key"])
    assert allowed == ("src/a.py",)
    assert rejected == ("src/secret.key", "README.md")


# Path segments as git reports them: any characters but "/" and NUL, never "." or "..".
segment = st.text(
    alphabet=st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)), min_size=1, max_size=8
).filter(lambda s: s not in (".", ".."))
plain_segment = st.text(alphabet="abcxyz.-_ ü", min_size=1, max_size=6).filter(lambda s: s not in (".", ".."))
paths = st.lists(segment, min_size=1, max_size=4).map("/".join)
globs = st.lists(st.sampled_from(["*", "**", "?", "src", "a*", "[a-c]", "x.py"]) | plain_segment, min_size=1, max_size=3).map("/".join)


@given(path=paths)
def test_an_exact_path_always_matches_itself(path: str) -> None:
    assert match_scope([path], [path], []) == ((path,), ())


@given(path=paths, allow=st.lists(globs, max_size=3), protected=st.lists(globs, min_size=1, max_size=3))
def test_a_path_matching_a_protected_glob_is_always_rejected(path: str, allow: list[str], protected: list[str]) -> None:
    allowed, rejected = match_scope([path], [*allow, "**", path], protected)
    if any(glob_matches(glob, path) for glob in protected):
        assert rejected == (path,)
    else:
        assert allowed == (path,)


@given(candidates=st.lists(paths, max_size=6), allow=st.lists(globs, max_size=3), protected=st.lists(globs, max_size=3))
def test_every_path_is_either_allowed_or_rejected(candidates: list[str], allow: list[str], protected: list[str]) -> None:
    allowed, rejected = match_scope(candidates, allow, protected)
    assert sorted(allowed + rejected) == sorted(candidates)


@given(directory=st.lists(plain_segment, min_size=1, max_size=3).map("/".join), rest=paths)
def test_a_directory_glob_matches_everything_under_it(directory: str, rest: str) -> None:
    assert glob_matches(directory + "/", f"{directory}/{rest}")
    assert glob_matches(directory + "/**", f"{directory}/{rest}")


@given(first=plain_segment, second=plain_segment)
def test_a_single_star_never_crosses_a_slash_and_a_double_star_does(first: str, second: str) -> None:
    assert not glob_matches("*", f"{first}/{second}")
    assert glob_matches("**", f"{first}/{second}")
