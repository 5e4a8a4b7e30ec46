"""The git dir every worktree of a repository shares, from the git dir of any one of them.

A linked worktree has a git dir of its own (`.git/worktrees/<name>/`) holding its HEAD
and index, and a `commondir` file naming the shared one, where refs, objects, the store's
lock and index live. pygit2 opened at a linked worktree gives the worktree's own.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["shared_git_dir"]


def shared_git_dir(git_dir: str | os.PathLike[str]) -> Path:
    """The shared git dir of the worktree whose own git dir is `git_dir` (itself for the main one)."""
    found = Path(git_dir)
    pointer = found / "commondir"
    if not pointer.is_file():
        return found
    return Path(os.path.normpath(found / pointer.read_text(encoding="utf-8").strip()))
