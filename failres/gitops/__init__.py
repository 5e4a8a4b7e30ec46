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

from importlib import import_module

# Each name from the module that holds it, imported when first asked for: the package is
# entered by everything that needs only `location` (every command's start, a read's too),
# and the branch, commit and state modules bring pygit2's writing side and the reaper.
_FROM = {
    "changed_between": "branches", "commit_tree": "branches", "ensure_task_branch": "branches",
    "move_branch": "branches", "patch_tree": "branches", "checked_patch_tree": "branches", "read_patch": "branches",
    "TASK_TRAILER_KEY": "commits", "head_commit": "commits", "message_with_trailer": "commits",
    "task_trailer": "commits",
    "working_state_tree": "state",
    "RegisteredWorktree": "worktrees", "list_worktrees": "worktrees",
}


def __getattr__(name: str) -> object:
    if name not in _FROM:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(import_module(f"{__name__}.{_FROM[name]}"), name)
    globals()[name] = value
    return value


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
    "checked_patch_tree",
    "read_patch",
    "task_trailer",
    "working_state_tree",
]
