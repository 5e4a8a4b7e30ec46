"""Task workspaces: what changed is read from the files, and the files go back exactly.

Every test works on a real repository; the "seat" is the test itself, doing to the
workspace what an agent would, git commands included.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from failres.errors import GitError
from failres.gitops.workspace import Workspace, claim_workspace_path, default_root, shown_name
from failres.gitops.workspace_files import SETTLE_WAIT_ENTRIES, settled_index_time
from test_gitops import git, write


@pytest.fixture
def project(tmp_path: Path) -> Path:
    top = tmp_path / "project"
    git(tmp_path, "init", "-q", "-b", "main", str(top))
    write(top / ".gitignore", "*.log\nbuild/\n")
    write(top / "src" / "a.py", "a = 1\n")
    write(top / "src" / "b.py", "b = 1\n")
    write(top / "docs" / "guide.md", "guide\n")
    (top / "run.sh").write_text("#!/bin/sh\n")
    (top / "run.sh").chmod(0o755)
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "first")
    return top


@pytest.fixture
def workspace(project: Path, tmp_path: Path) -> Workspace:
    start = git(project, "rev-parse", "HEAD").strip()
    return Workspace.create(path=tmp_path / "cache" / "ws" / "t1", git_dir=project / ".git",
                            state_dir=project / ".git" / "failres" / "workspaces" / "s" / "t1",
                            branch="failres/s/t1", base=start)


def files_of(top: Path) -> dict[str, object]:
    """Every file below `top` but its `.git`: content and executable bit, or a link's target."""
    found: dict[str, object] = {}
    for root, dirs, names in os.walk(top):
        if Path(root) == top:
            dirs[:] = [d for d in dirs if d != ".git"]
        for name in names + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            full = Path(root, name)
            rel = full.relative_to(top).as_posix()
            found[rel] = ("link", os.readlink(full)) if full.is_symlink() else (
                bool(full.stat().st_mode & stat.S_IXUSR), full.read_bytes())
    return found


def test_a_workspace_is_a_checkout_of_the_start_with_its_own_clean_git(workspace: Workspace, project: Path):
    assert files_of(workspace.path) == files_of(project)
    assert git(workspace.path, "status", "--porcelain") == ""
    assert git(workspace.path, "symbolic-ref", "HEAD").strip() == "refs/heads/failres/s/t1"
    assert git(workspace.path, "rev-parse", "HEAD").strip() == git(project, "rev-parse", "HEAD").strip()
    assert not workspace.path.is_relative_to(project)
    assert workspace.check().paths == ()


def test_every_kind_of_change_is_read_from_the_files(workspace: Workspace):
    ws = workspace.path
    write(ws / "src" / "a.py", "a = 2\n")
    (ws / "src" / "b.py").unlink()
    (ws / "docs" / "guide.md").rename(ws / "docs" / "moved.md")
    (ws / "run.sh").chmod(0o644)
    write(ws / "new" / "deep" / "c.py", "c\n")
    os.symlink("../src/a.py", ws / "docs" / "link.md")
    write(ws / "debug.log", "ignored\n")
    checked = workspace.check()
    assert checked.paths == ("docs/guide.md", "docs/link.md", "docs/moved.md", "new/deep/c.py", "run.sh",
                             "src/a.py", "src/b.py")
    assert checked.symlinks == {"docs/link.md": "../src/a.py"}


def test_what_the_seat_does_to_its_own_git_hides_nothing(workspace: Workspace):
    ws = workspace.path
    write(ws / "src" / "a.py", "a = 3\n")
    git(ws, "update-index", "--skip-worktree", "src/a.py")
    write(ws / "hidden.txt", "x\n")
    write(ws / ".git" / "info" / "exclude", "hidden.txt\n")
    git(ws, "-c", "user.name=s", "-c", "user.email=s@x", "commit", "-q", "-am", "seat commit", check=False)
    assert workspace.check().paths == ("hidden.txt", "src/a.py")


def test_a_forged_private_index_changes_nothing(workspace: Workspace):
    write(workspace.path / "src" / "a.py", "a = 4\n")
    git(workspace.path, "add", "src/a.py")
    workspace.index.write_bytes((workspace.path / ".git" / "index").read_bytes())  # the seat's, stat and all
    assert workspace.check().paths == ("src/a.py",)


def test_an_edit_in_the_same_clock_tick_as_the_checkout_is_still_seen(workspace: Workspace):
    # Same size, written at once: only the racy-git check against the index's own time sees it.
    for _ in range(20):
        workspace.handed_over()
        write(workspace.path / "src" / "b.py", "b = 9\n")
        assert workspace.check().paths == ("src/b.py",)
        workspace.purify(workspace.tree)


def test_an_edit_that_sets_its_time_back_is_seen_before_and_after_the_clock_leaves_the_index_second(
        workspace: Workspace):
    # Same size, and the modification time put back: only the ctime, or the racy-git
    # check against the index's own second, can tell. Once the clock has left that
    # second, the index takes a later time, and the ctime alone must still tell.
    path = workspace.path / "src" / "b.py"
    for settle in [False] * 10 + [True] * 2:
        if settle:
            time.sleep(1.05 - time.time() % 1)  # into the next second, where the index settles
        workspace.handed_over()
        before = path.stat()
        path.write_text("b = 8\n")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert workspace.check().paths == ("src/b.py",)
        workspace.purify(workspace.tree)
        assert path.read_text() == "b = 1\n"
        assert workspace.check().paths == ()


def index_of(entries: int) -> bytes:
    return b"DIRC" + (2).to_bytes(4, "big") + entries.to_bytes(4, "big")  # what the header says is all that is read


def test_a_big_checkout_handed_over_in_its_own_second_waits_for_the_next(monkeypatch: pytest.MonkeyPatch):
    waits: list[float] = []
    real_sleep = time.sleep
    monkeypatch.setattr(time, "sleep", lambda seconds: (waits.append(seconds), real_sleep(seconds)))
    written = time.time_ns()
    settled = settled_index_time(written, index_of(SETTLE_WAIT_ENTRIES), checkout=True)
    assert settled // 10**9 > written // 10**9  # a later second: git trusts every file's stat data now
    assert time.time_ns() // 10**9 > written // 10**9
    assert len(waits) <= 1 and all(0 < w <= 1.001 for w in waits)
    # A small checkout, or an index a put back wrote, never waits: it keeps its time while its second lasts.
    for index, checkout in ((index_of(SETTLE_WAIT_ENTRIES - 1), True), (index_of(SETTLE_WAIT_ENTRIES), False)):
        waits.clear()
        written = time.time_ns()
        settled = settled_index_time(written, index, checkout=checkout)
        assert waits == []
        assert settled == written or settled // 10**9 > written // 10**9


def test_names_that_are_not_utf8_are_reported_escaped(workspace: Workspace):
    raw = os.fsencode(workspace.path / "src") + b"/bad\xff.py"
    with open(raw, "wb") as handle:
        handle.write(b"x\n")
    checked = workspace.check()
    assert checked.undecodable == ("src/bad\\xff.py",)
    assert shown_name(os.fsdecode(b"src/bad\xff.py")) == "src/bad\\xff.py"


def test_accept_takes_exactly_the_given_paths_into_the_tree(workspace: Workspace, project: Path):
    ws = workspace.path
    write(ws / "src" / "a.py", "a = 5\n")
    write(ws / "src" / "new.py", "new\n")
    write(ws / "docs" / "guide.md", "rewritten\n")
    tree = workspace.accept(["src/a.py", "src/new.py"])
    listing = workspace.git(["ls-tree", "-r", "--name-only", tree]).decode().split()
    assert "src/new.py" in listing
    assert workspace.git(["show", f"{tree}:src/a.py"]).decode() == "a = 5\n"
    assert workspace.git(["show", f"{tree}:docs/guide.md"]).decode() == "guide\n"


def test_what_accept_hashes_stays_out_of_the_persons_database_until_it_is_brought_in(
        workspace: Workspace, project: Path):
    write(workspace.path / "src" / "a.py", "a = 'only this task'\n")
    tree = workspace.accept(["src/a.py"])
    blob = workspace.git(["rev-parse", f"{tree}:src/a.py"]).decode().strip()
    assert subprocess.run(["git", "cat-file", "-e", blob], cwd=project).returncode != 0
    assert workspace.objects.bring_in(tree) >= 2  # the blob and the trees on the way to it
    assert git(project, "show", f"{tree}:src/a.py") == "a = 'only this task'\n"
    git(project, "fsck", "--strict", "--no-dangling")
    assert workspace.objects.bring_in(tree) == 0


def test_purify_puts_back_every_file_and_removes_untracked_ignored_and_nested_things(workspace: Workspace,
                                                                                   project: Path):
    ws = workspace.path
    before = files_of(ws)
    workspace.handed_over()
    write(ws / "src" / "a.py", "changed\n")
    (ws / "docs" / "guide.md").unlink()
    write(ws / "build" / "out.bin", "ignored build output\n")
    write(ws / "stray.txt", "untracked\n")
    git(ws / "src", "init", "-q", "nested")
    write(ws / "src" / "inner" / ".git" / "hooks" / "x", "planted below the top\n")
    (ws / "docs").chmod(0o500)
    workspace.purify(workspace.tree)
    assert files_of(ws) == before
    assert workspace.check().paths == ()
    assert git(ws, "status", "--porcelain") == ""


def test_purify_keeps_the_paths_a_gate_declares_it_needs(workspace: Workspace):
    workspace.handed_over()
    write(workspace.path / "node_modules" / "dep" / "index.js", "module\n")
    write(workspace.path / "stray.txt", "untracked\n")
    workspace.purify(workspace.tree, keep=("node_modules/",))
    assert (workspace.path / "node_modules" / "dep" / "index.js").exists()
    assert not (workspace.path / "stray.txt").exists()


def test_the_seats_git_is_rebuilt_whatever_it_was_replaced_with(workspace: Workspace, project: Path):
    dot_git = workspace.path / ".git"
    workspace.handed_over()
    for root, dirs, names in os.walk(dot_git, topdown=False):
        for name in names:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            os.rmdir(os.path.join(root, name))
    dot_git.rmdir()
    os.symlink(project / ".git", dot_git)  # a seat pointing its git at the person's repository
    config = (project / ".git" / "config").read_bytes()
    workspace.purify(workspace.tree)
    assert not dot_git.is_symlink() and dot_git.is_dir()
    assert (project / ".git" / "config").read_bytes() == config
    assert (project / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert git(workspace.path, "status", "--porcelain") == ""


def test_progress_shows_to_the_next_seat_as_changes_against_the_start(workspace: Workspace):
    workspace.handed_over()
    write(workspace.path / "src" / "a.py", "accepted\n")
    tree = workspace.accept(["src/a.py"])
    workspace.purify(tree)
    assert git(workspace.path, "status", "--porcelain") == " M src/a.py\n"


def test_a_directory_failres_did_not_make_is_never_removed(tmp_path: Path, project: Path):
    theirs = tmp_path / "someone"
    write(theirs / "notes.txt", "keep me\n")
    with pytest.raises(GitError, match="something that failres did not make is there"):
        claim_workspace_path(theirs, project / ".git", project / ".git" / "failres" / "workspaces" / "s" / "t9")
    assert (theirs / "notes.txt").read_text() == "keep me\n"


def test_workspaces_of_two_repositories_never_share_a_directory(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    one = default_root(tmp_path / "a" / "app" / ".git", tmp_path / "a" / "app")
    two = default_root(tmp_path / "b" / "app" / ".git", tmp_path / "b" / "app")
    assert one != two and one.parent == two.parent == tmp_path / "cache" / "failres" / "workspaces"


def test_a_workspace_nobody_ran_in_is_not_put_back_again(workspace: Workspace):
    (workspace.path / "marker").write_text("a file written behind failres's back\n")
    workspace.purify(workspace.tree)  # pristine: nothing has run there since it was made
    assert (workspace.path / "marker").exists()
    workspace.handed_over()
    workspace.purify(workspace.tree)
    assert not (workspace.path / "marker").exists()


def _rewound(directory: Path) -> None:
    """The directory's mtime set back a minute, as a seat hiding its change would (its ctime still moves)."""
    info = directory.stat()
    os.utime(directory, ns=(info.st_atime_ns - 60 * 10**9, info.st_mtime_ns - 60 * 10**9))


def test_what_git_cannot_record_is_found_in_a_tracked_directory_whose_mtime_was_set_back(workspace: Workspace):
    ws = workspace.path
    assert workspace.check().odd == {}  # the directories are now remembered
    (ws / "src" / ".git").mkdir()
    (ws / "src" / ".git" / "config").write_text("[core]\n\tfsmonitor = ./spy\n")
    _rewound(ws / "src")
    os.mkfifo(ws / "docs" / "pipe")
    _rewound(ws / "docs")
    os.mkfifo(ws / "fifo-at-top")
    assert workspace.check().odd == {"src": "a nested git repository", "docs/pipe": "a FIFO",
                                     "fifo-at-top": "a FIFO"}
    assert workspace.check().odd == {"src": "a nested git repository", "docs/pipe": "a FIFO",
                                     "fifo-at-top": "a FIFO"}  # a second look does not forget


def test_what_git_cannot_record_in_a_new_directory_tree_is_found(workspace: Workspace):
    ws = workspace.path
    workspace.check()
    (ws / "new" / "deep" / ".git").mkdir(parents=True)
    os.mkfifo(ws / "new" / "pipe")
    (ws / "src" / "sub" / "deeper").mkdir(parents=True)
    os.mkfifo(ws / "src" / "sub" / "deeper" / "pipe")
    for directory in ("new/deep", "new", "src/sub/deeper", "src/sub", "src"):
        _rewound(ws / directory)
    assert workspace.check().odd == {"new/deep": "a nested git repository", "new/pipe": "a FIFO",
                                     "src/sub/deeper/pipe": "a FIFO"}


def test_a_change_right_after_the_checkout_is_found_without_waiting_for_the_clock(project: Path, tmp_path: Path):
    start = git(project, "rev-parse", "HEAD").strip()
    for round_ in range(5):
        made = Workspace.create(path=tmp_path / "quick" / str(round_), git_dir=project / ".git",
                                state_dir=project / ".git" / "failres" / "quick" / str(round_),
                                branch=f"failres/q/{round_}", base=start)
        os.mkfifo(made.path / "src" / "pipe")  # as soon as possible: often the same clock tick as the walk
        (made.path / "docs" / ".git").mkdir()
        assert made.check().odd == {"src/pipe": "a FIFO", "docs": "a nested git repository"}
        made.remove()


def test_a_directory_swapped_for_a_link_or_another_directory_is_read_again(workspace: Workspace, tmp_path: Path):
    ws = workspace.path
    workspace.check()
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".git").mkdir(parents=True)
    os.rename(ws / "docs", tmp_path / "old-docs")
    os.symlink(elsewhere, ws / "docs")  # never followed: a link is recorded as a link
    replacement = tmp_path / "replacement"
    (replacement / ".git").mkdir(parents=True)
    os.mkfifo(replacement / "pipe")
    for name in os.listdir(ws / "src"):
        os.unlink(ws / "src" / name)
    os.rmdir(ws / "src")
    os.rename(replacement, ws / "src")
    _rewound(ws)
    assert workspace.check().odd == {"src": "a nested git repository", "src/pipe": "a FIFO"}
