"""The repository's worktrees as `git worktree list` reports them.

failres makes no linked worktrees of its own (a seat works in a workspace, see
`workspace`); it reads this list to leave alone a branch someone has checked out.
"""

from __future__ import annotations

import os
from pathlib import Path

from lessons.frozen import record
from failres.gitops.git import run_git, try_git

BRANCH_PREFIX = "refs/heads/"


@record
class RegisteredWorktree:
    """One entry of `git worktree list`."""

    path: Path
    branch: str | None  # "refs/heads/..."; None when detached
    main: bool


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
