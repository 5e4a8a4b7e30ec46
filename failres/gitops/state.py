"""The working state of a task worktree: capture it, diff against it, snapshot it.

The *working state* is what `git add -A` would record: tracked files as they are
on disk, plus untracked files that are not ignored. A baseline records it as a
real tree object, so "what did the seat change" and "put it back" are both
questions about two trees, answered by git.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from failres.errors import GitError
from failres.gitops.git import git_failure, identity_config, run_git, split_nul, try_git
from failres.gitops.status import read_status

BRANCH_PREFIX = "refs/heads/"


@dataclass(frozen=True)
class Baseline:
    """Enough to tell what changed after this point, and to undo it."""

    head: str  # the commit HEAD pointed at
    branch: str | None  # the ref HEAD pointed to ("refs/heads/..."); None when detached
    head_tree: str  # HEAD's tree
    index_tree: str  # the index as a tree (staged state), so a restore keeps staging exact
    state_tree: str  # the whole working state as a tree

    @property
    def clean(self) -> bool:
        """Nothing staged, modified or untracked: the state is HEAD's tree."""
        return self.state_tree == self.head_tree == self.index_tree


@dataclass(frozen=True)
class ChangeSet:
    """Every path that differs from a baseline, and whether HEAD or its branch moved."""

    paths: tuple[str, ...]  # sorted, each once
    head_moved: bool
    branch_changed: bool

    @property
    def is_empty(self) -> bool:
        return not self.paths and not self.head_moved and not self.branch_changed


def capture_baseline(worktree: Path) -> Baseline:
    """Record HEAD, its branch, the index and the full working state of `worktree`."""
    status = read_status(worktree)
    if status.head is None:
        msg = f"cannot capture a baseline in {worktree}: its branch has no commit yet"
        raise GitError(msg, hint="a task worktree starts from a commit; create it with one")
    head_tree, branch = _head_tree_and_branch(worktree, status.head)
    if status.clean:
        # The common case, a fresh worktree at the branch tip: the state is HEAD's
        # tree, and no index copy, hashing or tree writing is needed.
        return Baseline(status.head, branch, head_tree, head_tree, head_tree)
    with scratch_index(worktree) as index_file:
        index_tree = _write_tree(worktree, index_file)
        state_tree = _add_all_and_write_tree(worktree, index_file)
    return Baseline(status.head, branch, head_tree, index_tree, state_tree)


def changed_paths(worktree: Path, baseline: Baseline) -> ChangeSet:
    """Every path whose content, mode or existence differs now from `baseline`.

    Two kinds of change are reported, because a seat can make either:
    - in the files: the working state differs from the baseline state (edits,
      deletions, both halves of a rename, chmod, symlinks (never followed),
      untracked files one by one, submodule pointers);
    - in history: HEAD moved (commit, amend, reset, branch switch) and its tree
      differs from the baseline HEAD's tree at that path, even if the files on disk
      were put back afterwards.
    Ignored files are never changes. When in doubt a path is reported: from a clean
    baseline, a file staged and then put back on disk still counts.
    """
    if baseline.clean:
        # The index was HEAD's tree at baseline, so every difference from the
        # baseline state shows in one plain status: staged, unstaged or untracked.
        status = read_status(worktree)
        entries = status.entries
    else:
        # The baseline had its own edits and untracked files: compare the files
        # against the baseline state itself, loaded into a scratch index (its stat
        # cache copied from the real one, so unchanged files are not re-hashed).
        with scratch_index(worktree, load_tree=baseline.state_tree) as index_file:
            status = read_status(worktree, index_file=index_file)
        # Only the files-versus-scratch-index side counts; the other side compares
        # the baseline state to HEAD, which is the baseline's own dirt.
        entries = tuple(entry for entry in status.entries if entry.unstaged)
    paths = {entry.path for entry in entries}
    paths |= {entry.original_path for entry in entries if entry.original_path}
    head_moved = status.head != baseline.head
    if head_moved:
        paths |= _paths_differing_from(worktree, baseline.head_tree, status.head)
    return ChangeSet(
        paths=tuple(sorted(paths)),
        head_moved=head_moved,
        branch_changed=_short_branch(baseline.branch) != status.branch,
    )


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


def snapshot_commit(worktree: Path, message: str, parent: str) -> str:
    """A commit on no branch holding the full working state now; returns its id.

    The caller keeps it reachable (under a ref) or gc will eventually take it.
    """
    tree = working_state_tree(worktree)
    output = run_git(
        worktree,
        ["commit-tree", tree, "-p", parent, "-F", "-"],
        stdin=message.encode(),
        config=identity_config(worktree),
    )
    return output.decode().strip()


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


def _add_all_and_write_tree(worktree: Path, index_file: Path) -> str:
    env = {"GIT_INDEX_FILE": str(index_file)}
    run_git(worktree, ["add", "-A"], env=env)
    return _write_tree(worktree, index_file)


def _write_tree(worktree: Path, index_file: Path) -> str:
    completed = try_git(worktree, ["write-tree"], env={"GIT_INDEX_FILE": str(index_file)})
    if completed.returncode != 0:
        # The usual cause is a conflict left half-resolved: an index with unmerged
        # entries has no single tree.
        error = git_failure(worktree, ["write-tree"], completed.stderr)
        error.hint = f"finish or abort the merge in {worktree} (git status shows the paths)"
        raise error
    return completed.stdout.decode().strip()


def _paths_differing_from(worktree: Path, old_tree: str, new_head: str | None) -> set[str]:
    if new_head is None:
        # HEAD is now an unborn branch: everything the old tree had is gone from history.
        return set(split_nul(run_git(worktree, ["ls-tree", "-r", "-z", "--name-only", old_tree])))
    output = run_git(
        worktree,
        ["diff-tree", "-r", "-z", "--name-only", "--no-renames", old_tree, new_head],
    )
    return set(split_nul(output))


def _short_branch(ref: str | None) -> str | None:
    if ref is None:
        return None
    return ref.removeprefix(BRANCH_PREFIX)
