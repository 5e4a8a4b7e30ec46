"""Task branches and task commits in the person's repository, made by failres alone.

- A task branch `failres/<slug>/<task>` is moved only by compare-and-swap, and only
  when it is failres's: absent, or at a commit the task's journal knows (a start or a
  task commit). A branch someone committed on, or one checked out in a worktree (a
  person inspecting it), is refused with a hint, never moved or removed.
- A task commit is written with pygit2 from a tree failres built: never `git
  commit`, so no hook of anybody's runs, and nothing but that tree is committed.
- An exact patch becomes a tree by applying it to the start commit's tree in a
  throw-away index: the patch is checked (and refused, with git's reason) before
  anything of the run is recorded.
"""

from __future__ import annotations

import tempfile
from collections.abc import Collection
from pathlib import Path

import pygit2

from failres.errors import GitError, UsageError
from failres.gitops.commits import message_with_trailer
from failres.gitops.git import first_error_line, run_git, split_nul, try_git
from failres.gitops.task_objects import TaskObjects
from failres.gitops.worktrees import list_worktrees

ZERO = "0" * 40
_NO_HOOKS = ("core.hooksPath=/dev/null",)


def full_ref(branch: str) -> str:
    return branch if branch.startswith("refs/") else f"refs/heads/{branch}"


def branch_tip(top: Path, branch: str) -> str | None:
    completed = try_git(top, ["rev-parse", "--verify", "-q", f"{full_ref(branch)}^{{commit}}"])
    return completed.stdout.decode().strip() if completed.returncode == 0 else None


def ensure_task_branch(top: Path, git_dir: Path, branch: str, start: str, *, known: Collection[str], own) -> None:
    """Point the task branch at `start`, if it is failres's to move; GitError otherwise."""
    ref = full_ref(branch)
    for worktree in list_worktrees(top):
        if worktree.branch == ref:
            msg = f"{branch.removeprefix('refs/heads/')} is checked out in {worktree.path}"
            hint = (f"failres will not move a branch someone has checked out; switch that worktree to another "
                    f"branch (`git -C {worktree.path} switch --detach`) or remove it, then run again")
            raise GitError(msg, hint=hint)
    current = branch_tip(top, branch)
    if current == start:
        return
    if current is not None and current not in known:
        msg = f"{branch.removeprefix('refs/heads/')} points at {current[:12]}, a commit this task never made"
        hint = (f"someone committed on it; keep that work on another branch (`git branch keep {current[:12]}`), "
                f"then delete the task branch (`git branch -D {branch.removeprefix('refs/heads/')}`) and run again")
        raise GitError(msg, hint=hint)
    move_branch(top, git_dir, branch, start, expected=current, own=own)


def move_branch(top: Path, git_dir: Path, branch: str, new: str, *, expected: str | None, own) -> None:
    """Move `branch` from `expected` (None: must not exist) to `new`, atomically; GitError when it moved meanwhile."""
    ref = full_ref(branch)
    if own is not None:
        # Noted before the move: the tamper check of another task running at the same
        # time may compare refs between the two, and must never put this one back.
        own.note(ref, new)
    completed = try_git(top, ["update-ref", "-m", "failres: task branch", ref, new, expected or ZERO],
                        env={"GIT_DIR": str(git_dir)}, config=_NO_HOOKS)
    if completed.returncode != 0:
        msg = f"could not move {ref} to {new[:12]}: {first_error_line(completed.stderr)}"
        raise GitError(msg, hint="another process moved it meanwhile; run again")


def commit_tree(git_dir: Path, tree: str, parent: str, message: str, trailer: str) -> str:
    """A commit of `tree` on `parent` with `trailer`, written by pygit2 (no hook runs); its id."""
    from lessons.storage.store import store_signature

    repo = pygit2.Repository(str(git_dir))
    signature = store_signature(repo)
    text = message_with_trailer(message, trailer)
    oid = repo.create_commit(None, signature, signature, text, pygit2.Oid(hex=tree), [pygit2.Oid(hex=parent)])
    return str(oid)


def tree_of(top: Path, commit: str) -> str:
    return run_git(top, ["rev-parse", f"{commit}^{{tree}}"]).decode().strip()


def read_patch(patch_file: Path) -> bytes:
    """The approved patch's bytes, read once: what is checked is what is applied, whatever the file holds later."""
    try:
        return Path(patch_file).read_bytes()
    except OSError as error:
        msg = f"patch {patch_file} cannot be read: {error.strerror or error}"
        raise UsageError(msg, hint="give the path of the patch file, e.g. one `git diff` wrote") from None


def patch_tree(top: Path, start: str, patch: bytes, objects: TaskObjects, *, name: Path) -> str:
    """The tree of `start` with `patch` (the bytes of the file `name`) applied exactly;
    UsageError with git's reason if it does not apply.

    The tree and the patch's blobs are written into `objects` (a task's own object
    directory, or a scratch one for a check), never into the person's database: an
    approved patch that leaves the gate red adds nothing there, as no red attempt does;
    what a task commits is brought in when it commits (`TaskObjects.bring_in`).
    """
    with tempfile.TemporaryDirectory(prefix="failres-patch-") as scratch:
        index, applied = Path(scratch) / "index", Path(scratch) / "approved.diff"
        applied.write_bytes(patch)
        objects.path.mkdir(parents=True, exist_ok=True)
        env = {"GIT_INDEX_FILE": str(index), **objects.env()}
        run_git(top, ["read-tree", start], env=env)
        completed = try_git(top, ["apply", "--cached", "--whitespace=nowarn", str(applied)], env=env)
        if completed.returncode != 0:
            reason = first_error_line(completed.stderr).removeprefix("error: ").replace(str(applied), str(name))
            msg = f"patch {name} does not apply to the task's start ({start[:12]}): {reason}"
            hint = f"make the patch against {start[:12]}; `git apply --check {name}` there shows why"
            raise UsageError(msg, hint=hint)
        return run_git(top, ["write-tree"], env=env).decode().strip()


def checked_patch_tree(top: Path, git_dir: Path, start: str, patch: bytes, *, name: Path) -> str:
    """`patch_tree` into a scratch object directory that goes with the check: whether the
    patch applies (UsageError if not) and the tree it makes, before any workspace exists."""
    with tempfile.TemporaryDirectory(prefix="failres-patch-objects-") as scratch:
        return patch_tree(top, start, patch, TaskObjects(git_dir, Path(scratch) / "objects"), name=name)


def changed_between(top: Path, old_tree: str, new_tree: str, objects: TaskObjects | None = None) -> list[str]:
    """Every path that differs between two trees (both halves of a rename); `objects`: a
    task's object directory, for a tree only it holds yet."""
    output = run_git(top, ["diff-tree", "-r", "-z", "--name-only", "--no-renames", old_tree, new_tree],
                     env=objects.env() if objects is not None else None)
    return sorted(set(split_nul(output)))
