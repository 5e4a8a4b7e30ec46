"""Linked worktrees, one per task, each on its own branch."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from failres.errors import GitError
from failres.gitops.git import run_git, try_git

BRANCH_PREFIX = "refs/heads/"


@dataclass(frozen=True)
class RegisteredWorktree:
    """One entry of `git worktree list`."""

    path: Path
    branch: str | None  # "refs/heads/..."; None when detached
    main: bool


def add_task_worktree(repo_top: Path, worktree_dir: Path, branch: str, start: str) -> Path:
    """Create a fresh linked worktree at `worktree_dir` on a new `branch` at commit `start`.

    An older worktree at that path, or one holding that branch, is removed first and
    the branch is re-pointed at `start`: a task that runs again starts clean.
    """
    target = Path(os.path.abspath(worktree_dir))
    ref = branch if branch.startswith(BRANCH_PREFIX) else BRANCH_PREFIX + branch
    for worktree in list_worktrees(repo_top):
        if worktree.main:
            continue  # never the person's own checkout
        if _same_path(worktree.path, target) or worktree.branch == ref:
            _remove_registered(repo_top, worktree.path)
    run_git(repo_top, ["worktree", "prune"])
    if target.exists() and any(target.iterdir()):
        msg = f"cannot create a task worktree at {target}: the directory exists and is not a worktree"
        raise GitError(msg, hint="move or delete it, then run again")
    completed = try_git(
        repo_top,
        # -B re-points a leftover branch of that name; --no-track keeps a start
        # given as a remote branch from becoming the task branch's upstream.
        ["worktree", "add", "--no-track", "-B", ref.removeprefix(BRANCH_PREFIX), str(target), start],
    )
    if completed.returncode != 0:
        stderr = completed.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = stderr[-1] if stderr else "no message"
        msg = f"cannot create a task worktree at {target} on {ref} from {start}: {reason}"
        raise GitError(msg, hint=f"is {ref.removeprefix(BRANCH_PREFIX)} checked out elsewhere?")
    return target


def remove_task_worktree(repo_top: Path, path: Path) -> None:
    """Remove the linked worktree at `path` (discarding its changes) and prune; the branch stays.

    Removing a worktree that is already gone is not an error.
    """
    target = Path(os.path.abspath(path))
    for worktree in list_worktrees(repo_top):
        if _same_path(worktree.path, target):
            if worktree.main:
                msg = f"refusing to remove {target}: it is the repository's main worktree"
                raise GitError(msg)
            _remove_registered(repo_top, worktree.path)
            break
    else:
        if target.exists():
            msg = f"cannot remove {target}: it is not a worktree of {repo_top}"
            raise GitError(msg, hint="failres removes only worktrees it created")
    run_git(repo_top, ["worktree", "prune"])


def list_worktrees(repo_top: Path) -> list[RegisteredWorktree]:
    """Every worktree of the repository, the main one first."""
    completed = try_git(repo_top, ["worktree", "list", "--porcelain", "-z"])
    if completed.returncode == 0:
        fields = completed.stdout.split(b"\0")
    else:
        # git before 2.36 has no -z here; its line format is the same, one field a
        # line (failres's own worktree paths never contain a newline).
        fields = run_git(repo_top, ["worktree", "list", "--porcelain"]).split(b"\n")
    worktrees: list[RegisteredWorktree] = []
    path: Path | None = None
    branch: str | None = None
    for field in [*fields, b""]:
        if not field:
            # An empty field ends one worktree's block.
            if path is not None:
                worktrees.append(RegisteredWorktree(path, branch, main=not worktrees))
            path, branch = None, None
            continue
        key, _, value = field.partition(b" ")
        if key == b"worktree":
            path = Path(os.fsdecode(value))
        elif key == b"branch":
            branch = os.fsdecode(value)
    return worktrees


def _remove_registered(repo_top: Path, path: Path) -> None:
    # --force twice: also a locked worktree, and any changes a seat left in it.
    completed = try_git(repo_top, ["worktree", "remove", "--force", "--force", str(path)])
    if completed.returncode != 0 and path.exists():
        # git refuses to remove a worktree with submodules checked out. It is a
        # worktree failres registered and is throwing away, so its files go directly.
        shutil.rmtree(path)
    run_git(repo_top, ["worktree", "prune"])


def _same_path(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)
