"""Checks on single configuration values that could hurt the person's repository.

Each is a pure function from the value (and, for paths, where the repository
lies) to the problem a person reads, or None. The reader (`failres.config.model`) turns
a problem into the one-line error naming the file and the key; other parts of
failres call the same functions where they decide (the loop, before it makes a
workspace directory).

What they prevent: a store ref that is a branch (`refs/heads/main`: every record
committed onto the checked-out branch), a workspace directory at `/`, inside the
tracked tree (git lists every workspace as untracked, `git clean -fdx` deletes
them mid-run), or inside a git directory (git's own files, or another
repository's).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath

STORE_REF_PREFIX = "refs/failres/"
# Refs failres writes beside the store; a store there would be mixed up with them.
RESERVED_REF_PREFIXES = ("refs/failres/snapshots/",)


def _ref_flaw(name: str) -> str | None:
    """What git's check-ref-format would object to in the full ref `name`, or None."""
    if name == "@" or "@{" in name:
        return 'it may not be "@" or contain "@{"'
    if name.startswith("/") or name.endswith("/") or "//" in name or name.endswith("."):
        return 'it may not start or end with "/", contain "//" or end with "."'
    if ".." in name:
        return 'it may not contain ".."'
    if any(ord(char) < 0x20 or ord(char) == 0x7F or char in " ~^:?*[\\" for char in name):
        return "it may not contain spaces, control characters or any of ~^:?*[\\"
    if any(part.startswith(".") or part.endswith(".lock") for part in name.split("/")):
        return 'no part of it may start with "." or end with ".lock"'
    return None


def ref_name_problem(name: str) -> str | None:
    """Why git would refuse `name` as a full ref name, or None."""
    flaw = _ref_flaw(name)
    return f'"{name}" is not a valid ref name: {flaw}' if flaw else None


def branch_name_problem(name: str) -> str | None:
    """Why git would refuse `name` as a branch name, or None."""
    flaw = 'it may not start with "-"' if name.startswith("-") else _ref_flaw(f"refs/heads/{name}")
    return f'"{name}" is not a valid branch name: {flaw}' if flaw else None


def store_ref_problem(ref: str) -> str | None:
    """Why `ref` may not hold the store: only a ref of failres's own namespace may.

    Every store write is a commit on the ref; on `refs/heads/main` that is a commit
    on the person's branch, on `refs/tags/v1` a moved tag.
    """
    if not ref.startswith(STORE_REF_PREFIX) or ref == STORE_REF_PREFIX:
        return f'must be a ref under "{STORE_REF_PREFIX}" (such as "refs/failres/store"), got "{ref}"'
    for reserved in RESERVED_REF_PREFIXES:
        if ref.startswith(reserved):
            return f'"{ref}" is under "{reserved}", where failres keeps other refs'
    return ref_name_problem(ref)


# Where `run --remote` may not keep task branches: refs failres (or git) writes for other things.
_NOT_FOR_TASK_BRANCHES = ("refs/failres/claims", "refs/failres/store", "refs/failres/snapshots", "refs/remotes",
                          "refs/tags")


def task_branches_problem(prefix: str) -> str | None:
    """Why `[remote] branches` cannot hold task branches (`<prefix>/<slug>/<task>` on the remote), or None."""
    if not prefix.startswith("refs/") or prefix.count("/") < 1 or prefix == "refs/":
        return f'must be a ref prefix under "refs/" (such as "refs/failres/tasks"), got "{prefix}"'
    for reserved in _NOT_FOR_TASK_BRANCHES:
        if prefix == reserved or prefix.startswith(reserved + "/") or reserved.startswith(prefix + "/"):
            return f'"{prefix}" overlaps "{reserved}", where other refs are kept'
    return ref_name_problem(prefix)


def remote_problem(remote: str) -> str | None:
    # A leading "-" would reach `git fetch` as an option rather than a remote name.
    if remote.startswith("-") or any(char.isspace() for char in remote):
        return f'"{remote}" is not a usable remote name'
    return None


def _within(path: PurePath, root: PurePath) -> bool:
    return path == root or root in path.parents


def workspace_dir_problem(path: Path | str, repo_top: Path | str, git_dir: Path | str) -> str | None:
    """Why task workspaces may not go in `path`, or None (pure: paths as given, normalised).

    `path` is absolute (see `resolve_workspace_dir`); `repo_top` is the repository's
    main worktree and `git_dir` its common git directory, both as the caller resolved
    them. Allowed: anywhere outside the working tree and outside any git directory,
    and `<git_dir>/failres/` (failres's own part of the git directory).
    """
    where, top, git = (PurePath(os.path.normpath(os.fspath(p))) for p in (path, repo_top, git_dir))
    if not where.is_absolute():
        return f'"{where}" is not an absolute path'
    if where == PurePath(where.anchor):
        return f'"{where}" is the root directory: workspaces would be made among the machine\'s own files'
    if _within(where, git):
        if _within(where, git / "failres"):
            return None
        return (f'"{where}" is inside the repository\'s git directory, where git keeps its own files '
                f'(only "{git / "failres"}" there is failres\'s)')
    if _within(where, top):
        return (f'"{where}" is inside the repository\'s working tree: git would list every workspace as '
                "untracked, and `git clean` could delete one mid-run")
    if any(part == ".git" or part.endswith(".git") for part in where.parts):
        return f'"{where}" is inside another repository\'s git directory'
    return None


def resolve_workspace_dir(value: str, repo_top: Path) -> Path:
    """The absolute, symlink-resolved directory `worktrees.dir = value` names ("~" is home,
    a relative path is relative to the repository top)."""
    return Path(os.path.realpath(repo_top / Path(value).expanduser()))
