"""Git operations for tasks.

- `workspace`: a seat's workspace outside the person's repository, with a git dir of
  its own; what changed, read from the files through a private index; the task's
  tree built from exactly the accepted paths; the files put back exactly.
- `branches`: task branches moved by compare-and-swap, task commits written with
  pygit2 (no hook runs), exact patches turned into trees.
- `state`: a checkout's working state as a tree (the tamper check's record).
- `commits`: branch tips and the `Failres-Task:` trailer.
- `worktrees`: the repository's worktrees, to leave a checked-out branch alone.
- `status` and `git`: how git is run and how its status is read.

The `git` program does the work wherever it is faster or more faithful than a
library (status uses the index stat cache; checkout runs the person's filters).
Every listing is read with `-z` and `core.quotepath=off`, so any file name works.
"""

from failres.gitops.branches import changed_between, commit_tree, ensure_task_branch, move_branch, patch_tree
from failres.gitops.commits import TASK_TRAILER_KEY, head_commit, message_with_trailer, task_trailer
from failres.gitops.state import working_state_tree
from failres.gitops.worktrees import RegisteredWorktree, list_worktrees

__all__ = [
    "TASK_TRAILER_KEY",
    "RegisteredWorktree",
    "changed_between",
    "commit_tree",
    "ensure_task_branch",
    "head_commit",
    "list_worktrees",
    "message_with_trailer",
    "move_branch",
    "patch_tree",
    "task_trailer",
    "working_state_tree",
]
