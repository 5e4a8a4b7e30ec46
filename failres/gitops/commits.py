"""Reading branch tips, and the trailer every task commit carries."""

from __future__ import annotations

import re
from pathlib import Path

from failres.errors import GitError
from failres.gitops.git import try_git

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


def head_commit(repo_top: Path, branch: str) -> str:
    """The commit id `branch` (short name or full ref) points at."""
    ref = branch if branch.startswith("refs/") else f"refs/heads/{branch}"
    completed = try_git(repo_top, ["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"])
    if completed.returncode != 0:
        msg = f"branch {branch} does not exist in {repo_top}"
        raise GitError(msg, hint="`git branch --list` shows the branches there")
    return completed.stdout.decode().strip()
