"""The working state of a checkout as a tree: what `git add -A` would record, written
without touching the real index.

The tamper check records the person's checkout this way before and after a dispatch:
tracked files as they are on disk plus untracked files that are not ignored, as one
tree object, so "did anything change" is a comparison of two ids and "put it back" a
diff of two trees.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from failres.gitops.git import git_failure, run_git, try_git
from failres.gitops.status import read_status

BRANCH_PREFIX = "refs/heads/"


def working_state_tree(worktree: Path, *, config: tuple[str, ...] = ()) -> str:
    """The full working state of `worktree` written as a tree object; the real index is untouched.

    `config` adds `-c` settings to every git call (the tamper check turns hooks and
    fsmonitor off, since it runs right after a seat that may have planted them).
    """
    status = read_status(worktree, config=config)
    if status.clean and status.head is not None:
        return _head_tree_and_branch(worktree, status.head)[0]
    with scratch_index(worktree) as index_file:
        env = {"GIT_INDEX_FILE": str(index_file)}
        run_git(worktree, ["add", "-A"], env=env, config=config)
        return _write_tree(worktree, index_file)


def git_dir(worktree: Path) -> Path:
    """The administrative directory of `worktree` (`.git`, or `.git/worktrees/<name>`)."""
    dot_git = worktree / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():
        # A linked worktree's .git is a one-line file naming its directory; reading
        # it here saves a process on every scope check.
        text = dot_git.read_text(encoding="utf-8", errors="surrogateescape").strip()
        if text.startswith("gitdir:"):
            return (worktree / text.removeprefix("gitdir:").strip()).resolve()
    output = run_git(worktree, ["rev-parse", "--absolute-git-dir"])
    return Path(output.decode().strip())


@contextmanager
def scratch_index(worktree: Path, *, load_tree: str | None = None) -> Iterator[Path]:
    """A throw-away copy of `worktree`'s index, optionally reset to `load_tree`.

    Copying (with its timestamps, which git's racy-entry check relies on) keeps
    the stat cache, so git re-hashes only files that changed; an index built from
    scratch with `read-tree` would make git hash all of them.
    """
    with tempfile.TemporaryDirectory(prefix="failres-index-") as directory:
        scratch = Path(directory) / "index"
        real = git_dir(worktree) / "index"
        if real.exists():
            shutil.copy2(real, scratch)
        if load_tree is not None:
            # A one-tree read keeps the stat data of every entry whose content matches.
            run_git(
                worktree,
                ["read-tree", "--reset", load_tree],
                env={"GIT_INDEX_FILE": str(scratch)},
            )
        yield scratch


def _head_tree_and_branch(worktree: Path, head: str) -> tuple[str, str | None]:
    output = run_git(worktree, ["rev-parse", f"{head}^{{tree}}", "--symbolic-full-name", "HEAD"])
    lines = output.decode().split("\n")
    tree, symbolic = lines[0], lines[1]
    return tree, (symbolic if symbolic.startswith("refs/") else None)


def _write_tree(worktree: Path, index_file: Path) -> str:
    completed = try_git(worktree, ["write-tree"], env={"GIT_INDEX_FILE": str(index_file)})
    if completed.returncode != 0:
        # The usual cause is a conflict left half-resolved: an index with unmerged
        # entries has no single tree.
        error = git_failure(worktree, ["write-tree"], completed.stderr)
        error.hint = f"finish or abort the merge in {worktree} (git status shows the paths)"
        raise error
    return completed.stdout.decode().strip()


