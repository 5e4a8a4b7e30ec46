"""Put a task worktree back exactly as a baseline recorded it.

Used after a scope violation: whatever the seat did — edits, commits, resets, a
branch switch, a half-finished rebase, new files, nested repositories — the
worktree ends with the baseline's branch, tip, index and files, and
`changed_paths` reports nothing. Ignored files the seat left are kept: they are
outside the working state by definition, and may be caches the person wants.
"""

from __future__ import annotations

import os
from pathlib import Path

from failres.errors import GitError
from failres.gitops.git import run_git, try_git
from failres.gitops.state import Baseline, changed_paths, git_dir
from failres.gitops.status import read_status

GITLINK_MODE = "160000"


def restore_baseline(worktree: Path, baseline: Baseline) -> None:
    """Restore branch, tip, index and files of `worktree` to `baseline`; raise if it cannot."""
    _quit_unfinished_operations(worktree)
    _point_head_back(worktree, baseline)
    # reset --hard moves the branch HEAD now points to back to the baseline tip,
    # makes index and files equal to its tree (trusting the stat cache, so only
    # touched files are rewritten), and drops MERGE_HEAD, CHERRY_PICK_HEAD & co.
    run_git(worktree, ["reset", "-q", "--hard", baseline.head])
    # -ff: also nested repositories the seat created; no -x: ignored files stay.
    run_git(worktree, ["clean", "-ffdq"])
    if baseline.state_tree != baseline.head_tree:
        # The baseline's own edits and untracked files come back from its state tree...
        run_git(worktree, ["read-tree", "--reset", "-u", baseline.state_tree])
    if baseline.index_tree != baseline.state_tree:
        # ...and the index goes back to what was staged, which leaves files that
        # were untracked untracked again and edits that were unstaged unstaged.
        run_git(worktree, ["read-tree", "--reset", baseline.index_tree])
    _reset_moved_submodules(worktree, baseline)
    remaining = changed_paths(worktree, baseline)
    if not remaining.is_empty:
        shown = ", ".join(remaining.paths[:5]) or "HEAD"
        msg = f"could not restore {worktree} to its baseline: it still differs at {shown}"
        raise GitError(msg, hint=f"inspect it with `git -C {worktree} status`")


def _quit_unfinished_operations(worktree: Path) -> None:
    # A seat may leave a rebase, am or cherry-pick sequence stopped half-way; its
    # state would survive reset --hard and derail the next commit. "--quit" drops
    # that state without moving HEAD (HEAD is set explicitly next).
    admin = git_dir(worktree)
    if (admin / "rebase-apply" / "applying").exists():
        run_git(worktree, ["am", "--quit"])
    elif (admin / "rebase-merge").exists() or (admin / "rebase-apply").exists():
        run_git(worktree, ["rebase", "--quit"])
    if (admin / "sequencer").exists():
        run_git(worktree, ["cherry-pick", "--quit"])


def _point_head_back(worktree: Path, baseline: Baseline) -> None:
    if baseline.branch is None:
        run_git(worktree, ["update-ref", "--no-deref", "HEAD", baseline.head])
        return
    current = try_git(worktree, ["symbolic-ref", "-q", "HEAD"])
    if current.stdout.decode().strip() != baseline.branch:
        # Only HEAD moves here; files follow with the reset. The branch may even
        # have been deleted: reset --hard recreates it at the baseline tip.
        run_git(worktree, ["symbolic-ref", "HEAD", baseline.branch])


def _reset_moved_submodules(worktree: Path, baseline: Baseline) -> None:
    # reset and read-tree record a submodule's commit but leave its checkout
    # alone; a seat that moved a submodule's HEAD must have it moved back too.
    moved = [entry.path for entry in read_status(worktree).entries if entry.submodule]
    for path, commit in _gitlinks(worktree, baseline.state_tree, moved).items():
        checkout = worktree / path
        if (checkout / ".git").exists():
            run_git(checkout, ["checkout", "-q", "-f", "--detach", commit])
            run_git(checkout, ["clean", "-ffdq"])


def _gitlinks(worktree: Path, tree: str, paths: list[str]) -> dict[str, str]:
    if not paths:
        return {}
    output = run_git(
        worktree,
        ["ls-tree", "-z", tree, "--", *paths],
        # The paths are file names, never patterns.
        env={"GIT_LITERAL_PATHSPECS": "1"},
    )
    links: dict[str, str] = {}
    for record in output.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, _kind, commit = meta.decode().split(" ")
        if mode == GITLINK_MODE:
            links[os.fsdecode(path)] = commit
    return links
