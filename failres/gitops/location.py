"""Where the repository is: the main worktree's top and the shared git directory.

failres keeps one configuration and one set of task worktrees per repository, so
every command resolves the *main* worktree, also when it is started from a linked
worktree (a task's own, for instance) or from any subdirectory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from lessons.frozen import record
from lessons.storage.shared_dir import shared_git_dir
from failres.errors import GitError, NotARepository, UsageError

if TYPE_CHECKING:
    import subprocess


@record
class RepoPaths:
    """The main worktree's top and the git directory all worktrees share."""

    top: Path
    common_dir: Path


def _git(start: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # The caller asked about `start`: variables that point git elsewhere (set inside
    # hooks, for instance) must not answer for a different repository.
    env = {key: value for key, value in os.environ.items()
           if key not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE")}
    import subprocess  # the common layout is found without starting git (`_located_in_process`)

    try:
        # Through the reaper: with --jobs this runs beside seats, and a sweep must know it.
        from failres.processes.reaper import run_owned

        done = run_owned(["git", "-C", str(start), *args], env=env)
        return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode("utf-8", "replace"),
                                           done.stderr.decode("utf-8", "replace"))
    except FileNotFoundError:
        msg = "git was not found on PATH"
        raise GitError(msg, hint="install git, then run this again") from None


def locate_repo(start: Path) -> RepoPaths:
    """The repository around `start`, seen from its main worktree (also from a linked one)."""
    if not start.is_dir():
        msg = f"{start}: no such directory"
        raise UsageError(msg)
    return _located_in_process(start) or _located_by_git(start)


def _located_in_process(start: Path) -> RepoPaths | None:
    """The common layout (a `.git` directory, linked worktrees in it) found without starting git.

    Every command asks where it is first, and two git processes were a read command's
    largest wait after Python's own start. git names the main worktree after the shared
    git dir, less its `/.git`; so does this. Anything else (a submodule, a separate git
    dir, `core.worktree`, a bare repository, one libgit2 will not open) is git's to answer.
    """
    if "GIT_DISCOVERY_ACROSS_FILESYSTEM" in os.environ:
        return None
    import pygit2

    try:
        ceiling = os.environ.get("GIT_CEILING_DIRECTORIES")
        found = pygit2.discover_repository(str(start), False, *([ceiling] if ceiling is not None else []))
        if not found:
            return None
        common = Path(os.path.realpath(shared_git_dir(os.path.realpath(found))))
        if common.name != ".git":
            return None
        repo = pygit2.Repository(str(common))
        if repo.is_bare or "core.worktree" in repo.config:
            return None
    except (pygit2.GitError, OSError, ValueError):
        return None
    return RepoPaths(top=common.parent, common_dir=common)


def _located_by_git(start: Path) -> RepoPaths:
    common = _git(start, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if common.returncode != 0:
        msg = f"{start} is not inside a git repository"
        raise NotARepository(msg, hint="run inside a git repository, or `git init` one")
    common_dir = Path(common.stdout.strip())
    # The first entry of `git worktree list` is always the main worktree, wherever the
    # git directory itself lives (a plain `.git`, or --separate-git-dir).
    listing = _git(start, "worktree", "list", "--porcelain", "-z")
    main_entry = listing.stdout.split("\0\0", 1)[0].split("\0")
    if listing.returncode != 0 or not main_entry[0].startswith("worktree "):
        msg = f"cannot list the worktrees of the repository at {common_dir}: {listing.stderr.strip()}"
        raise GitError(msg)
    if "bare" in main_entry:
        msg = f"{common_dir} is a bare repository; failres needs its main worktree"
        raise NotARepository(msg, hint="run inside a clone that has a working tree")
    return RepoPaths(top=Path(main_entry[0].removeprefix("worktree ")), common_dir=common_dir)


def find_repo_top(start: Path) -> Path:
    """The top of the main worktree of the repository around `start`."""
    return locate_repo(start).top
