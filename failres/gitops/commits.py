"""Commits, patches and resets on a task branch."""

from __future__ import annotations

import re
from pathlib import Path

from failres.errors import GitError, UsageError
from failres.gitops.git import first_error_line, identity_config, run_git, try_git

TASK_TRAILER_KEY = "Failres-Task"
_TRAILER_LINE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*: ")


def task_trailer(slug: str, task: str) -> str:
    """The trailer line every task commit carries: `Failres-Task: <slug>/<task>`."""
    return f"{TASK_TRAILER_KEY}: {slug}/{task}"


def message_with_trailer(message: str, trailer: str) -> str:
    """`message` ending in a trailer block that holds `trailer` exactly once.

    A message that already ends in trailers (e.g. `Co-authored-by:`) gets the line
    added to that block, since git reads only the last paragraph as trailers.
    """
    body = message.strip("\n").rstrip()
    if not body:
        msg = "a task commit needs a message"
        raise ValueError(msg)
    lines = body.split("\n")
    if trailer in lines:
        return body + "\n"
    paragraphs = body.split("\n\n")
    last = paragraphs[-1].split("\n")
    ends_in_trailers = len(paragraphs) > 1 and all(_TRAILER_LINE.match(line) for line in last)
    separator = "\n" if ends_in_trailers else "\n\n"
    return f"{body}{separator}{trailer}\n"


def commit_task(worktree: Path, message: str, trailer: str, *, base: str | None = None) -> str:
    """Stage everything and commit it on the task branch with `trailer`; return the commit id.

    `trailer` is the whole line, `Failres-Task: <slug>/<task>` (see `task_trailer`);
    a bare `<slug>/<task>` is given the key. With `base` (the commit the task
    started from), the task commit's parent is `base`: commits a seat made on the
    branch are folded into it, so every commit the task adds carries the trailer.
    """
    line = trailer if _TRAILER_LINE.match(trailer) else f"{TASK_TRAILER_KEY}: {trailer}"
    text = message_with_trailer(message, line)
    if base is not None:
        current, wanted = run_git(worktree, ["rev-parse", "HEAD", f"{base}^{{commit}}"]).split()
        if current != wanted:
            # --soft moves only the branch: files stay as the seat left them and all
            # of them go into the one commit below.
            run_git(worktree, ["reset", "-q", "--soft", wanted.decode()])
    run_git(worktree, ["add", "-A"])
    run_git(
        worktree,
        [
            "commit",
            "-q",
            # The gate already judged this state; a person's pre-commit or commit-msg
            # hook must not veto or rewrite a task commit mid-loop. Their hooks still
            # run when the task branch is merged.
            "--no-verify",
            # A green task that needed no change still gets its trailer-bearing
            # commit, so labelling and the audit trail see it like any other.
            "--allow-empty",
            # Keep the message byte for byte: "#" lines are content here, not comments.
            "--cleanup=verbatim",
            "-F",
            "-",
        ],
        stdin=text.encode(),
        config=identity_config(worktree),
    )
    return run_git(worktree, ["rev-parse", "HEAD"]).decode().strip()


def head_commit(repo_top: Path, branch: str) -> str:
    """The commit id `branch` (short name or full ref) points at."""
    ref = branch if branch.startswith("refs/") else f"refs/heads/{branch}"
    completed = try_git(repo_top, ["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"])
    if completed.returncode != 0:
        msg = f"branch {branch} does not exist in {repo_top}"
        raise GitError(msg, hint="`git branch --list` shows the branches there")
    return completed.stdout.decode().strip()


def reset_hard(worktree: Path, commit: str) -> None:
    """Move the current branch, index and files of `worktree` to `commit`."""
    run_git(worktree, ["reset", "-q", "--hard", commit])


def apply_patch(worktree: Path, patch_file: Path) -> None:
    """Apply `patch_file` to the files and index of `worktree`, or change nothing.

    `git apply` is all-or-nothing, so a patch that fails leaves the worktree as it was.
    """
    completed = try_git(worktree, ["apply", "--index", str(Path(patch_file).resolve())])
    if completed.returncode != 0:
        reason = first_error_line(completed.stderr).removeprefix("error: ")
        msg = f"patch {patch_file} does not apply in {worktree}: {reason}"
        hint = f"make the patch against the task's start commit; `git apply --check {patch_file}` shows why"
        raise UsageError(msg, hint=hint)
