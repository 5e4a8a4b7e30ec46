"""`git status --porcelain=v2 -z`: run it the fast way and parse it as plain data.

git's status is the cheapest faithful answer to "what differs from the index":
it trusts the index's stat cache, uses the untracked cache and fsmonitor when
configured, and never hashes an unchanged file. pygit2's status uses neither
cache and is several times slower on a large tree, so gitops asks git itself and
only parses the answer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from lessons.frozen import record
from failres.gitops.git import run_git

DETACHED = "(detached)"
UNBORN = "(initial)"

STATUS_ARGS = (
    "status",
    "--porcelain=v2",
    "--branch",
    # Ahead/behind counting walks history when an upstream is set; never needed here.
    "--no-ahead-behind",
    "-z",
    # Every untracked file by name, not just its top directory: scope is per file.
    "--untracked-files=all",
    # A rename is reported as its two halves (deleted old path, added new path),
    # which is exactly the pair of paths the scope check needs.
    "--no-renames",
    # A user's diff.ignoreSubmodules must not hide a moved submodule pointer.
    "--ignore-submodules=none",
)


@dataclass(frozen=True)
class StatusEntry:
    """One path git status reports, and on which side it differs."""

    path: str
    staged: bool  # the index differs from HEAD
    unstaged: bool  # the files differ from the index, or the path is untracked
    submodule: bool = False
    original_path: str | None = None  # the other half of a rename or copy
    ignored: bool = False  # listed only when status is asked for ignored files


@record
class StatusReport:
    """HEAD, the branch it points to, and every path that differs."""

    head: str | None  # None on an unborn branch
    branch: str | None  # short branch name; None when HEAD is detached
    entries: tuple[StatusEntry, ...]

    @property
    def clean(self) -> bool:
        return not self.entries


def read_status(worktree: Path, *, index_file: Path | None = None, config: tuple[str, ...] = ()) -> StatusReport:
    """Status of `worktree`, against `index_file` instead of the real index when given."""
    # GIT_OPTIONAL_LOCKS=0: status must not rewrite the index behind a seat that
    # may still be running, and a read must never contend for index.lock.
    env = {"GIT_OPTIONAL_LOCKS": "0"}
    if index_file is not None:
        env["GIT_INDEX_FILE"] = str(index_file)
    return parse_status(run_git(worktree, STATUS_ARGS, env=env, config=config))


def parse_status(raw: bytes) -> StatusReport:
    """Parse `git status --porcelain=v2 --branch -z` output."""
    head: str | None = None
    branch: str | None = None
    entries: list[StatusEntry] = []
    records = raw.split(b"\0")
    index = 0
    while index < len(records):
        record = records[index]
        index += 1
        if not record:
            continue
        kind = record[:1]
        if kind == b"#":
            key, _, value = record[2:].partition(b" ")
            if key == b"branch.oid":
                head = None if value == UNBORN.encode() else value.decode()
            elif key == b"branch.head":
                branch = None if value == DETACHED.encode() else os.fsdecode(value)
        elif kind == b"1":
            entries.append(_changed_entry(record.split(b" ", 8)))
        elif kind == b"2":
            # A rename or copy carries its original path as the next NUL field.
            fields = record.split(b" ", 9)
            original = os.fsdecode(records[index])
            index += 1
            entry = _changed_entry([*fields[:8], fields[9]])
            entries.append(
                StatusEntry(entry.path, entry.staged, entry.unstaged, entry.submodule, original)
            )
        elif kind == b"u":
            fields = record.split(b" ", 10)
            entries.append(
                StatusEntry(
                    os.fsdecode(fields[10]),
                    staged=True,
                    unstaged=True,
                    submodule=fields[2].startswith(b"S"),
                )
            )
        elif kind == b"?":
            entries.append(StatusEntry(_untracked_path(record[2:]), staged=False, unstaged=True))
        elif kind == b"!":
            entries.append(StatusEntry(_untracked_path(record[2:]), staged=False, unstaged=True, ignored=True))
        # Anything else is a format this git does not produce; skipping it keeps an
        # older parser from crashing.
    return StatusReport(head=head, branch=branch, entries=tuple(entries))


def _changed_entry(fields: list[bytes]) -> StatusEntry:
    xy = fields[1]
    return StatusEntry(
        path=os.fsdecode(fields[8]),
        staged=xy[:1] != b".",
        unstaged=xy[1:2] != b".",
        submodule=fields[2].startswith(b"S"),
    )


def _untracked_path(raw: bytes) -> str:
    # With --untracked-files=all git still stops at a nested repository and names it
    # as "dir/": it is one unit (`git add -A` would record it as a gitlink), so it is
    # reported as the one path "dir".
    return os.fsdecode(raw[:-1] if raw.endswith(b"/") else raw)
