"""Task worktrees, the paths a seat changed, exact restore, and the scope match.

Every test works on a real repository made with the `git` program; the "seat" is
the test itself, doing to the files what an agent would.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failres import gitops
from failres.engine.scope import glob_matches, match_scope
from failres.errors import GitError, UsageError
from failres.gitops.status import parse_status

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


@pytest.fixture
def task(project: Path, tmp_path: Path) -> Path:
    """A linked task worktree on its own branch at main's tip."""
    return gitops.add_task_worktree(project, tmp_path / "worktrees" / "t1", BRANCH, "main")


def head(cwd: Path, rev: str = "HEAD") -> str:
    return git(cwd, "rev-parse", rev).strip()


def picture(worktree: Path) -> dict[str, object]:
    """Everything a restore must put back: HEAD, its branch, the index, status and every file."""
    files: dict[str, object] = {}
    for root, dirs, names in os.walk(worktree):
        if Path(root) == worktree:
            dirs[:] = [d for d in dirs if d != ".git"]
            names = [n for n in names if n != ".git"]
        for name in names + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            full = Path(root, name)
            rel = full.relative_to(worktree).as_posix()
            if full.is_symlink():
                files[rel] = ("link", os.readlink(full))
            else:
                files[rel] = (bool(full.stat().st_mode & stat.S_IXUSR), full.read_bytes())
    return {
        "head": head(worktree),
        "branch": git(worktree, "symbolic-ref", "-q", "HEAD", check=False).strip(),
        "index": git(worktree, "ls-files", "-s", "-z"),
        "status": git(worktree, "status", "--porcelain=v2", "-z", "--untracked-files=all"),
        "files": files,
    }


def changed(worktree: Path, baseline: gitops.Baseline) -> list[str]:
    return list(gitops.changed_paths(worktree, baseline).paths)


# ── worktrees ─────────────────────────────────────────────────────────


def test_task_worktree_is_on_its_branch_at_start(project: Path, task: Path) -> None:
    assert git(task, "symbolic-ref", "HEAD").strip() == f"refs/heads/{BRANCH}"
    assert head(task) == head(project, "main")
    assert (task / "src" / "a.py").read_text() == "a = 1\n"


def test_adding_a_task_worktree_again_starts_fresh_from_the_new_start(project: Path, task: Path, tmp_path: Path) -> None:
    write(task / "src" / "a.py", "dirty\n")
    git(task, "commit", "-q", "-am", "seat work")
    again = gitops.add_task_worktree(project, tmp_path / "worktrees" / "t1", BRANCH, "main~1")
    assert again == task
    assert head(again) == head(project, "main~1")
    assert head(project, BRANCH) == head(project, "main~1")
    assert (again / "src" / "a.py").read_text() == "a = 1\n"
    assert git(again, "status", "--porcelain") == ""


def test_adding_a_worktree_over_a_foreign_directory_is_refused(project: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "foreign"
    write(foreign / "keep.txt", "mine\n")
    with pytest.raises(GitError, match="not a worktree"):
        gitops.add_task_worktree(project, foreign, BRANCH, "main")
    assert (foreign / "keep.txt").read_text() == "mine\n"


def test_removing_a_task_worktree_keeps_its_branch(project: Path, task: Path) -> None:
    gitops.remove_task_worktree(project, task)
    assert not task.exists()
    assert str(task) not in git(project, "worktree", "list")
    assert head(project, BRANCH) == head(project, "main")
    gitops.remove_task_worktree(project, task)  # already gone: nothing to do, no error


def test_head_commit_reads_a_branch_tip_and_names_a_missing_branch(project: Path) -> None:
    assert gitops.head_commit(project, "main") == head(project, "main")
    assert gitops.head_commit(project, "refs/heads/main") == head(project, "main")
    with pytest.raises(GitError, match="branch nope does not exist"):
        gitops.head_commit(project, "nope")


# ── changed paths: one kind of change each ────────────────────────────


def test_a_fresh_worktree_has_a_clean_baseline_and_no_changes(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    assert baseline.clean
    assert baseline.branch == f"refs/heads/{BRANCH}"
    assert gitops.changed_paths(task, baseline).is_empty


def test_a_committed_file_is_reported_and_head_moved(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    write(task / "src" / "a.py", "a = 2\n")
    git(task, "commit", "-q", "-am", "seat commit")
    changes = gitops.changed_paths(task, baseline)
    assert changes.paths == ("src/a.py",)
    assert changes.head_moved and not changes.branch_changed


def test_a_committed_change_reverted_on_disk_is_still_reported(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    write(task / "docs" / "guide.md", "rewritten\n")
    git(task, "commit", "-q", "-am", "seat commit")
    write(task / "docs" / "guide.md", "guide\n")
    assert changed(task, baseline) == ["docs/guide.md"]


def test_an_amended_commit_reports_what_the_amend_changed(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    write(task / "docs" / "new.md", "new\n")
    git(task, "add", "docs/new.md")
    git(task, "commit", "-q", "--amend", "--no-edit")
    changes = gitops.changed_paths(task, baseline)
    assert changes.paths == ("docs/new.md",)
    assert changes.head_moved


def test_a_message_only_amend_moves_head_but_changes_no_path(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    git(task, "commit", "-q", "--amend", "-m", "reworded")
    changes = gitops.changed_paths(task, baseline)
    assert changes.paths == () and changes.head_moved


def test_a_reset_to_an_older_commit_reports_the_paths_it_undid(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    git(task, "reset", "-q", "--hard", "HEAD~1")
    assert changed(task, baseline) == ["src/later.py"]


def test_a_soft_reset_reports_the_paths_history_lost(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    git(task, "reset", "-q", "--soft", "HEAD~1")
    assert changed(task, baseline) == ["src/later.py"]


def test_switching_branch_is_reported_even_at_the_same_commit(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    git(task, "switch", "-q", "-c", "elsewhere")
    changes = gitops.changed_paths(task, baseline)
    assert changes.branch_changed and not changes.head_moved and changes.paths == ()


def test_switching_to_a_branch_with_other_files_reports_them(project: Path, task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    git(task, "switch", "-q", "--detach", "main~1")
    changes = gitops.changed_paths(task, baseline)
    assert changes.paths == ("src/later.py",)
    assert changes.branch_changed and changes.head_moved


def test_a_staged_change_is_reported(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    write(task / "src" / "b.py", "b = 2\n")
    git(task, "add", "src/b.py")
    assert changed(task, baseline) == ["src/b.py"]


def test_an_unstaged_change_is_reported(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    write(task / "src" / "b.py", "b = 3\n")
    assert changed(task, baseline) == ["src/b.py"]


def test_a_deleted_file_is_reported(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    (task / "README.md").unlink()
    assert changed(task, baseline) == ["README.md"]


def test_a_staged_rename_reports_old_and_new_path(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    git(task, "mv", "src/a.py", "src/renamed.py")
    assert changed(task, baseline) == ["src/a.py", "src/renamed.py"]


def test_a_rename_on_disk_reports_old_and_new_path(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    (task / "src" / "a.py").rename(task / "docs" / "moved.py")
    assert changed(task, baseline) == ["docs/moved.py", "src/a.py"]


def test_a_mode_change_is_reported(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    (task / "src" / "a.py").chmod(0o755)
    assert changed(task, baseline) == ["src/a.py"]


def test_a_new_symlink_out_of_the_repository_is_reported_by_its_own_path(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    (task / "src" / "etc").symlink_to("/etc")
    assert changed(task, baseline) == ["src/etc"]


def test_untracked_files_are_reported_one_by_one(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    write(task / "notes.txt", "n\n")
    write(task / "new" / "deep" / "x.py", "x\n")
    write(task / "new" / "deep" / "y.py", "y\n")
    assert changed(task, baseline) == ["new/deep/x.py", "new/deep/y.py", "notes.txt"]


def test_a_nested_repository_is_reported_as_its_directory(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    git(task, "init", "-q", "vendored")
    write(task / "vendored" / "lib.py", "lib\n")
    assert changed(task, baseline) == ["vendored"]


def test_ignored_files_are_not_changes(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    write(task / "debug.log", "noise\n")
    write(task / "build" / "out" / "bin.o", "obj\n")
    assert gitops.changed_paths(task, baseline).is_empty


def test_unicode_and_space_names_are_reported_verbatim(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    write(task / "ünï códe.txt", "u\n")
    write(task / "dir with space" / "ä b.md", "a\n")
    (task / "src" / "a.py").rename(task / "src" / "a copy.py")
    assert changed(task, baseline) == ["dir with space/ä b.md", "src/a copy.py", "src/a.py", "ünï códe.txt"]


# ── submodules ────────────────────────────────────────────────────────


@pytest.fixture
def with_submodule(project: Path, tmp_path: Path) -> tuple[Path, str, str]:
    """`project` gains a submodule `lib` (two commits, pinned at the second); returns (task, old, new)."""
    lib = tmp_path / "libsource"
    git(tmp_path, "init", "-q", "-b", "main", str(lib))
    write(lib / "lib.py", "v1\n")
    git(lib, "add", "-A")
    git(lib, "commit", "-q", "-m", "v1")
    old = head(lib)
    write(lib / "lib.py", "v2\n")
    git(lib, "commit", "-q", "-am", "v2")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(project, "commit", "-q", "-m", "add lib")
    worktree = gitops.add_task_worktree(project, tmp_path / "worktrees" / "sub", BRANCH, "main")
    git(worktree, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init")
    return worktree, old, head(lib)


def test_a_moved_submodule_pointer_is_reported(with_submodule: tuple[Path, str, str]) -> None:
    worktree, old, _new = with_submodule
    baseline = gitops.capture_baseline(worktree)
    git(worktree / "lib", "checkout", "-q", old)
    assert changed(worktree, baseline) == ["lib"]


def test_restore_moves_a_submodule_back_to_its_recorded_commit(with_submodule: tuple[Path, str, str]) -> None:
    worktree, old, new = with_submodule
    baseline = gitops.capture_baseline(worktree)
    git(worktree / "lib", "checkout", "-q", old)
    gitops.restore_baseline(worktree, baseline)
    assert head(worktree / "lib") == new
    assert gitops.changed_paths(worktree, baseline).is_empty


def test_a_worktree_with_a_submodule_can_be_removed(project: Path, with_submodule: tuple[Path, str, str]) -> None:
    worktree, _old, _new = with_submodule
    gitops.remove_task_worktree(project, worktree)
    assert not worktree.exists()
    assert str(worktree) not in git(project, "worktree", "list")


# ── baselines that were not clean ─────────────────────────────────────


def dirty_the_baseline(worktree: Path) -> None:
    write(worktree / "scratch.txt", "untracked at baseline\n")
    write(worktree / "src" / "a.py", "a = 'unstaged at baseline'\n")
    write(worktree / "src" / "b.py", "b = 'staged at baseline'\n")
    git(worktree, "add", "src/b.py")


def test_a_dirty_baseline_reports_nothing_until_the_seat_acts(task: Path) -> None:
    dirty_the_baseline(task)
    index_before = (Path(git(task, "rev-parse", "--git-path", "index").strip())).read_bytes()
    baseline = gitops.capture_baseline(task)
    assert not baseline.clean
    assert gitops.changed_paths(task, baseline).is_empty
    assert Path(git(task, "rev-parse", "--git-path", "index").strip()).read_bytes() == index_before


def test_a_dirty_baseline_reports_only_what_the_seat_changed(task: Path) -> None:
    dirty_the_baseline(task)
    baseline = gitops.capture_baseline(task)
    (task / "scratch.txt").unlink()
    write(task / "docs" / "guide.md", "seat\n")
    assert changed(task, baseline) == ["docs/guide.md", "scratch.txt"]


def test_restore_of_a_dirty_baseline_keeps_untracked_unstaged_and_staged_as_they_were(task: Path) -> None:
    dirty_the_baseline(task)
    before = picture(task)
    baseline = gitops.capture_baseline(task)
    write(task / "scratch.txt", "seat edit\n")
    write(task / "src" / "b.py", "seat\n")
    git(task, "add", "-A")
    git(task, "commit", "-q", "-m", "seat takes it all")
    write(task / "stray.py", "stray\n")
    gitops.restore_baseline(task, baseline)
    assert picture(task) == before
    assert gitops.changed_paths(task, baseline).is_empty


# ── restore ───────────────────────────────────────────────────────────


def test_restore_undoes_every_kind_of_change_at_once(task: Path) -> None:
    before = picture(task)
    baseline = gitops.capture_baseline(task)
    write(task / "src" / "a.py", "committed by seat\n")
    git(task, "commit", "-q", "-am", "seat commit")
    git(task, "switch", "-q", "-c", "seat-branch")
    write(task / "docs" / "guide.md", "staged\n")
    git(task, "add", "docs/guide.md")
    write(task / "src" / "b.py", "unstaged\n")
    (task / "README.md").unlink()
    (task / "src" / "later.py").chmod(0o755)
    (task / "etc").symlink_to("/etc")
    write(task / "ünï dir" / "deep" / "x.txt", "x\n")
    git(task, "init", "-q", "nested")
    gitops.restore_baseline(task, baseline)
    assert picture(task) == before
    assert head(task, BRANCH) == baseline.head
    assert gitops.changed_paths(task, baseline).is_empty


def test_restore_recreates_a_branch_the_seat_deleted(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    git(task, "switch", "-q", "--detach", "HEAD~1")
    git(task, "branch", "-q", "-D", BRANCH)
    gitops.restore_baseline(task, baseline)
    assert git(task, "symbolic-ref", "HEAD").strip() == f"refs/heads/{BRANCH}"
    assert head(task) == baseline.head
    assert gitops.changed_paths(task, baseline).is_empty


def test_restore_clears_a_rebase_stopped_on_a_conflict(project: Path, task: Path) -> None:
    git(project, "switch", "-q", "-c", "side", "main")
    write(project / "src" / "a.py", "side\n")
    git(project, "commit", "-q", "-am", "side change")
    git(project, "switch", "-q", "main")
    baseline = gitops.capture_baseline(task)
    write(task / "src" / "a.py", "task\n")
    git(task, "commit", "-q", "-am", "task change")
    git(task, "rebase", "side", check=False)  # stops on the conflict in src/a.py
    assert Path(git(task, "rev-parse", "--git-path", "rebase-merge").strip()).exists()
    gitops.restore_baseline(task, baseline)
    assert not Path(git(task, "rev-parse", "--git-path", "rebase-merge").strip()).exists()
    assert git(task, "symbolic-ref", "HEAD").strip() == f"refs/heads/{BRANCH}"
    assert git(task, "status", "--porcelain=v2", "-z", "--untracked-files=all") == ""
    assert gitops.changed_paths(task, baseline).is_empty


def test_restore_keeps_ignored_files(task: Path) -> None:
    baseline = gitops.capture_baseline(task)
    write(task / "build" / "cache.bin", "cache\n")
    write(task / "untracked.txt", "debris\n")
    gitops.restore_baseline(task, baseline)
    assert (task / "build" / "cache.bin").read_text() == "cache\n"
    assert not (task / "untracked.txt").exists()


# ── snapshots, commits, patches ───────────────────────────────────────


def test_snapshot_commit_holds_the_whole_state_and_leaves_the_index_alone(task: Path) -> None:
    write(task / "untracked.txt", "u\n")
    write(task / "src" / "a.py", "modified\n")
    (task / "src" / "b.py").unlink()
    index_before = git(task, "ls-files", "-s")
    commit = gitops.snapshot_commit(task, "snapshot", parent=head(task))
    assert git(task, "show", f"{commit}:untracked.txt") == "u\n"
    assert git(task, "show", f"{commit}:src/a.py") == "modified\n"
    assert "src/b.py" not in git(task, "ls-tree", "-r", "--name-only", commit)
    assert head(task, f"{commit}^") == head(task)
    assert git(task, "branch", "--contains", commit) == ""
    assert git(task, "ls-files", "-s") == index_before


def test_commit_task_commits_everything_with_the_trailer(task: Path) -> None:
    write(task / "src" / "a.py", "green\n")
    write(task / "new.py", "new\n")
    commit = gitops.commit_task(task, "failres: s/t1 fix dates", gitops.task_trailer("s", "t1"))
    assert head(task, BRANCH) == commit
    trailers = git(task, "log", "-1", "--format=%(trailers:key=Failres-Task,valueonly)", commit)
    assert trailers.strip() == "s/t1"
    assert git(task, "status", "--porcelain") == ""


def test_commit_task_with_base_folds_seat_commits_into_one(task: Path) -> None:
    start = head(task)
    write(task / "src" / "a.py", "seat commit\n")
    git(task, "commit", "-q", "-am", "a seat's own commit")
    write(task / "src" / "b.py", "uncommitted\n")
    commit = gitops.commit_task(task, "failres: s/t1", "Failres-Task: s/t1", base=start)
    assert head(task, f"{commit}^") == start
    assert git(task, "diff", "--name-only", start, commit).split() == ["src/a.py", "src/b.py"]


def test_commit_task_works_without_any_git_identity(task: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in IDENTITY:
        monkeypatch.delenv(key)
    # useConfigOnly stops git guessing user@hostname, as on a machine whose host
    # name has no domain: no identity at all, whatever this machine is called.
    Path(os.environ["GIT_CONFIG_GLOBAL"]).write_text("[user]\n\tuseConfigOnly = true\n")
    write(task / "src" / "a.py", "anonymous\n")
    commit = gitops.commit_task(task, "failres: s/t1", "s/t1")
    assert git(task, "log", "-1", "--format=%an <%ae>|%cn", commit).strip() == "failres <failres@localhost>|failres"
    assert "Failres-Task: s/t1" in git(task, "log", "-1", "--format=%B", commit)


def test_a_message_that_ends_in_trailers_gets_the_task_trailer_in_the_same_block() -> None:
    message = "subject\n\nbody\n\nCo-authored-by: A <a@x>"
    assert gitops.message_with_trailer(message, "Failres-Task: s/t") == (
        "subject\n\nbody\n\nCo-authored-by: A <a@x>\nFailres-Task: s/t\n"
    )
    assert gitops.message_with_trailer("subject", "Failres-Task: s/t") == "subject\n\nFailres-Task: s/t\n"
    once = gitops.message_with_trailer("subject", "Failres-Task: s/t")
    assert gitops.message_with_trailer(once, "Failres-Task: s/t") == once


def test_a_patch_applies_to_files_and_index(task: Path, tmp_path: Path) -> None:
    write(task / "src" / "a.py", "patched\n")
    patch = tmp_path / "change.patch"
    patch.write_text(git(task, "diff"))
    git(task, "checkout", "--", "src/a.py")
    gitops.apply_patch(task, patch)
    assert (task / "src" / "a.py").read_text() == "patched\n"
    assert git(task, "diff", "--cached", "--name-only").split() == ["src/a.py"]


def test_a_patch_that_does_not_apply_is_a_usage_error_and_changes_nothing(task: Path, tmp_path: Path) -> None:
    write(task / "src" / "a.py", "patched\n")
    patch = tmp_path / "stale.patch"
    patch.write_text(git(task, "diff"))
    write(task / "src" / "a.py", "moved on\n")
    git(task, "commit", "-q", "-am", "moved on")
    with pytest.raises(UsageError) as raised:
        gitops.apply_patch(task, patch)
    assert "does not apply" in str(raised.value) and "src/a.py" in str(raised.value)
    assert raised.value.hint and "git apply --check" in raised.value.hint
    assert git(task, "status", "--porcelain") == ""


def test_reset_hard_moves_branch_index_and_files(project: Path, task: Path) -> None:
    write(task / "src" / "a.py", "dirty\n")
    gitops.reset_hard(task, "main~1")
    assert head(task, BRANCH) == head(project, "main~1")
    assert not (task / "src" / "later.py").exists()
    assert git(task, "status", "--porcelain") == ""


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
