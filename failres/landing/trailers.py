"""The `Failres-Task:` trailer: how a task commit is recognised on any road it travels.

A merge keeps the task commit and its message; a rebase rewrites the commit but
keeps the message; a squash keeps neither the commit nor the message's shape but
copies every squashed message into its own, indented. The trailer line survives
all three, so landings are found by reading messages, never by commit ids.

Standard library only: the merge hook imports this on every merge.
"""

from __future__ import annotations

import re

TASK_TRAILER_KEY = "Failres-Task"

# Slug and task ids are held to this spelling when a plan is read (they become a
# branch name), so anything else after the key is not a failres task.
_ID = r"[a-z0-9][a-z0-9._-]*"
# Leading whitespace is allowed because a squash commit's default message quotes
# the squashed messages indented by four spaces.
_TRAILER = re.compile(rf"^[ \t]*{TASK_TRAILER_KEY}:[ \t]*({_ID})/({_ID})[ \t]*$", re.MULTILINE)
_TASK_BRANCH = re.compile(rf"(?:^|[\s/])failres/({_ID})/({_ID})(?:$|[\s~^])")

# What `git log --grep -E` matches to pick the candidate commits; the regex above decides.
GREP_PATTERN = rf"^[[:space:]]*{TASK_TRAILER_KEY}:"


def tasks_in_message(message: str) -> list[tuple[str, str]]:
    """Every (slug, task) a commit message names in a trailer line, first seen first, each once."""
    found: list[tuple[str, str]] = []
    for match in _TRAILER.finditer(message):
        key = (match.group(1), match.group(2))
        if key not in found:
            found.append(key)
    return found


def task_of_branch_name(text: str) -> tuple[str, str] | None:
    """The (slug, task) of a task branch named in `text` (e.g. GIT_REFLOG_ACTION "merge failres/s/t1")."""
    match = _TASK_BRANCH.search(text)
    return (match.group(1), match.group(2)) if match else None
