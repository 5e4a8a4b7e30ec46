"""Where the repository is: the main worktree's top and the shared git directory.

failres keeps one configuration and one set of task worktrees per repository, so
every command resolves the *main* worktree, also when it is started from a linked
worktree (a task's own, for instance) or from any subdirectory.
"""

from __future__ import annotations

import os
import re
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
    largest wait after Python's own start; libgit2 is not loaded for it either, since a
    look at a remote needs none. git names the main worktree after the shared git dir,
    less its `/.git`; so does this. Anything else (a submodule, a separate git dir,
    `core.worktree`, a bare repository, a config that includes others, one owned by
    someone else, a walk that would cross a file system) is git's to answer.
    """
    if "GIT_DISCOVERY_ACROSS_FILESYSTEM" in os.environ:
        return None
    try:
        found = _discover_git_dir(os.path.realpath(start))
        if found is None:
            return None
        common = Path(os.path.realpath(shared_git_dir(found)))
        if common.name != ".git" or common.stat().st_uid != os.geteuid() or not _plain_config(common):
            return None
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return RepoPaths(top=common.parent, common_dir=common)


def _is_git_dir(path: str) -> bool:
    """As git tells one: a HEAD of its own, objects and refs where it shares them (a linked worktree's are the main one's)."""
    shared = shared_git_dir(path)
    return (os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(shared / "objects")
            and os.path.isdir(shared / "refs"))


def _discover_git_dir(start: str) -> str | None:
    """The git dir git would find from `start`, walking up as git does: `<dir>/.git` (a directory, or
    a file saying `gitdir: ...`), else `<dir>` itself; never into a `GIT_CEILING_DIRECTORIES` entry."""
    ceilings = {os.path.realpath(p) for p in os.environ.get("GIT_CEILING_DIRECTORIES", "").split(os.pathsep) if p}
    here, device = start, os.stat(start).st_dev
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git):
            return dot_git if _is_git_dir(dot_git) else None
        if os.path.isfile(dot_git):
            with open(dot_git, encoding="utf-8") as pointer:
                line = pointer.readline().strip()
            if not line.startswith("gitdir: "):
                return None
            target = os.path.realpath(os.path.join(here, line.removeprefix("gitdir: ")))
            return target if _is_git_dir(target) else None
        if _is_git_dir(here):
            return here
        parent = os.path.dirname(here)
        if parent == here or parent in ceilings or os.stat(parent).st_dev != device:
            return None
        here = parent


_BARE_OR_ELSEWHERE = re.compile(r"^\s*(worktree\s*=|bare\s*(=\s*(true|yes|on|1)\s*)?([;#].*)?$)|^\s*\[\s*include",
                                re.IGNORECASE | re.MULTILINE)


def _plain_config(common: Path) -> bool:
    """Whether the repository's config plainly has its worktree at the git dir's parent: no
    `worktree` key, no `bare` that is true, nothing included (any of them, in any section, is
    git's to read)."""
    try:
        text = (common / "config").read_text(encoding="utf-8")
    except FileNotFoundError:
        return True
    return _BARE_OR_ELSEWHERE.search(text) is None


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
