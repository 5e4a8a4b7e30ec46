"""A workspace that outlives its run is left inert: the person's own git there runs nothing of a seat's.

A seat (or a gate running the seat's code) can write into the workspace's `.git` what
the person's git would run there: a quarantined workspace kept a gate-written
`core.fsmonitor`, and the person's `git status` in it ran the seat's code. A run that
ends on purpose (a quarantine, `[worktrees] keep`, an interruption, an internal error)
rebuilds that `.git` as it leaves (`leave_for_person`). A run that is killed cannot: its
workspace is found by whatever next sees the run dead (`git failres status` or `gc`, the
next `run` of its plan, a `--remote` runner taking its task), which stops what is left of its
seat first and then rebuilds the `.git` the same way (`leave_lost_workspace`).

The rebuilt `.git` is failres's own content only: the config from the person's settings
that decide which files git sees as changed (`seat_config`), no hooks, no `commondir`,
no `info/attributes`, HEAD on the task branch at its start, the start's index. What the
seat changed stays, as working-tree changes. A replaced workspace (a link in its place,
or a path that now leads into the person's repository) is not followed: the link is
removed, and nothing it points to is touched.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pygit2

from failres import beneath
from failres.errors import GitError
from failres.gitops.workspace import Workspace
from failres.gitops.workspace_files import seat_config

log = logging.getLogger("failres.containment.left")

# In the task's state directory (inside the person's git dir, never the seat's): written once
# the workspace there was rebuilt for the person, so a later look does not rebuild it again.
LEFT = "left"


def leave_for_person(workspace: Workspace) -> None:
    """Rebuild the workspace's `.git` from failres's own content and note it as left."""
    if workspace.replaced() is not None:
        workspace.remove()
        return
    workspace.reset_seat_git()
    beneath.write_file(workspace.git_dir, workspace._state(LEFT), b"rebuilt for the person\n")


def leave_lost_workspace(git_dir: Path, slug: str, task: str) -> Path | None:
    """Make the workspace a dead run of `slug/task` left inert; its path, or None when there is
    none to make inert (no workspace, or one already left). Never raises: a look at a status
    must not fail because a dead run's leftovers could not be tidied; it is logged, and the
    next look tries again."""
    state_dir = git_dir / "failres" / "workspaces" / slug / task
    try:
        if (state_dir / LEFT).exists():
            return None
        path = Path((state_dir / "path").read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError):
        return None
    if not path.is_absolute() or not (path.is_dir() or path.is_symlink()):
        return None
    try:
        workspace = _rebuilt_view(git_dir, state_dir, path, slug, task)
        if workspace is None:
            return None
        leave_for_person(workspace)
    except (OSError, GitError, pygit2.GitError, KeyError, ValueError) as error:
        log.warning("the workspace %s a dead run left could not be made inert: %s", path, error)
        return None
    return path


def leave_lost_workspaces(git_dir: Path) -> list[Path]:
    """`leave_lost_workspace` for every task workspace whose run no live process holds
    (`git failres gc`, which looks at every plan); the paths made inert."""
    from failres.containment.locks import live_holder, lost_holder, stop_lost_seat

    made: list[Path] = []
    root = git_dir / "failres" / "workspaces"
    for path_file in sorted(root.glob("*/*/path")):
        slug, task = path_file.parent.parent.name, path_file.parent.name
        if live_holder(git_dir, slug, task) is None:
            gone = lost_holder(git_dir, slug, task)
            if gone is not None:
                stop_lost_seat(gone)  # what is left of its seat could poison the `.git` again
            left = leave_lost_workspace(git_dir, slug, task)
            if left is not None:
                made.append(left)
    return made


def _rebuilt_view(git_dir: Path, state_dir: Path, path: Path, slug: str, task: str) -> Workspace | None:
    """The Workspace failres had for `path`, made again from what outlives a run: the task
    branch (still at the task's start: a run that died committed nothing) and its tree."""
    branch = f"failres/{slug}/{task}"  # `landing.land.task_branch`, which stands on this room
    repo = pygit2.Repository(str(git_dir))
    try:
        start = repo.references[f"refs/heads/{branch}"].peel(pygit2.Commit)
    except (KeyError, pygit2.InvalidSpecError):
        return None  # no branch to put HEAD on: nothing of failres's to rebuild it from
    workspace = Workspace(path, git_dir, state_dir, branch, str(start.id))
    scratch = workspace._state("left-index")
    beneath.remove_file(git_dir, scratch)
    try:
        # The start's index, written by failres's own git (its trusted configuration) into a
        # file of the state directory: nothing of the workspace's `.git` is read.
        workspace.git(["read-tree", str(start.tree_id)], index=git_dir / scratch)
        workspace._base_index_bytes = (git_dir / scratch).read_bytes()
    finally:
        beneath.remove_file(git_dir, scratch)
    workspace._seat_config = seat_config(git_dir)
    return workspace
