"""Git operations for task worktrees.

- `worktrees`: one linked worktree per task, on branch `failres/<slug>/<task>`.
- `state`: the working state as a tree: capture a baseline, list every path a seat
  changed since, snapshot the state as a commit.
- `restore`: put a worktree back exactly as its baseline was.
- `commits`: task commits with their trailer, patches, resets.
- `status` and `git`: how git is run and how its status is read.

The `git` program does the work wherever it is faster or more faithful than a
library (status uses the index stat cache and the untracked cache; worktree
checkout runs the person's filters and hooks). Every listing is read with `-z`
and `core.quotepath=off`, so any file name works.
"""

from failres.gitops.commits import (
    TASK_TRAILER_KEY,
    apply_patch,
    commit_task,
    head_commit,
    message_with_trailer,
    reset_hard,
    task_trailer,
)
from failres.gitops.branches import changed_between, commit_tree, ensure_task_branch, move_branch, patch_tree
from failres.gitops.restore import restore_baseline
from failres.gitops.state import (
    Baseline,
    ChangeSet,
    capture_baseline,
    changed_paths,
    snapshot_commit,
    working_state_tree,
)
from failres.gitops.worktrees import (
    RegisteredWorktree,
    add_task_worktree,
    list_worktrees,
    remove_task_worktree,
)

__all__ = [
    "TASK_TRAILER_KEY",
    "Baseline",
    "ChangeSet",
    "RegisteredWorktree",
    "add_task_worktree",
    "apply_patch",
    "capture_baseline",
    "changed_between",
    "changed_paths",
    "commit_tree",
    "ensure_task_branch",
    "move_branch",
    "patch_tree",
    "commit_task",
    "head_commit",
    "list_worktrees",
    "message_with_trailer",
    "remove_task_worktree",
    "reset_hard",
    "restore_baseline",
    "snapshot_commit",
    "task_trailer",
    "working_state_tree",
]
