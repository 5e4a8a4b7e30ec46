"""Running the `git` program: one place that decides environment, quoting and errors.

Every other gitops module calls `run_git`; none builds a command line of its own.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from failres.processes import reaper
from failres.errors import GitError

FALLBACK_NAME = "failres"
FALLBACK_EMAIL = "failres@localhost"

# Variables that tell git *which* repository, index or object store to use. A hook
# or an outer git command exports them (a post-merge hook runs with GIT_DIR set);
# left in place they would make `git -C <worktree>` act on some other repository.
REPOSITORY_LOCATING_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
)

# core.quotepath=off and -z on every listing: file names come back as raw bytes,
# whatever characters they hold. gc.auto=0 and maintenance.auto=false: a fetch, commit or
# merge of failres's never starts git's automatic collection, which packs the person's loose
# objects, deletes their files and prunes what is unreachable; the person's own git still
# collects when they run it (and it saves a process after each such command).
_ALWAYS = ("-c", "core.quotepath=off", "-c", "gc.auto=0", "-c", "maintenance.auto=false")


def git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a git child: ours, minus repository-locating variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in REPOSITORY_LOCATING_VARIABLES}
    if extra:
        env.update(extra)
    return env


def run_git(
    cwd: Path,
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    config: Sequence[str] = (),
) -> bytes:
    """Run `git <args>` in `cwd` and return stdout; a non-zero exit raises `GitError`.

    `env` adds variables to the scrubbed environment; `config` adds `-c key=value` pairs.
    """
    completed = _spawn(cwd, args, env=env, stdin=stdin, config=config)
    if completed.returncode != 0:
        raise git_failure(cwd, args, completed.stderr)
    return completed.stdout


def try_git(
    cwd: Path,
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    config: Sequence[str] = (),
) -> subprocess.CompletedProcess[bytes]:
    """Run git and hand back the completed process whatever its exit code."""
    return _spawn(cwd, args, env=env, stdin=stdin, config=config)


def _spawn(
    cwd: Path,
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    stdin: bytes | None,
    config: Sequence[str],
) -> subprocess.CompletedProcess[bytes]:
    command = ["git", *_ALWAYS]
    for pair in config:
        command += ["-c", pair]
    command += list(args)
    try:
        # Through the reaper: a git child is failres's own, never mistaken for a
        # seat's leftover by a sweep running in another task's thread.
        return reaper.run_owned(command, input=stdin, cwd=cwd, env=git_environment(env))
    except FileNotFoundError as error:
        msg = f"cannot run git in {cwd}: {error.strerror}"
        raise GitError(msg, hint="install git and make sure it is on PATH") from error


def first_error_line(stderr: bytes) -> str:
    """The first non-empty line git wrote to stderr, decoded for a person to read."""
    for line in stderr.decode("utf-8", "replace").splitlines():
        if line.strip():
            return line.strip()
    return "no message"


def git_failure(cwd: Path, args: Sequence[str], stderr: bytes) -> GitError:
    """The `GitError` for a failed git command: which command, where, and git's own words."""
    verb = next((a for a in args if not a.startswith("-")), "")
    msg = f"git {verb} failed in {cwd}: {first_error_line(stderr)}"
    return GitError(msg)


def identity_config(cwd: Path) -> tuple[str, ...]:
    """`-c` pairs that give a commit an author and committer when git knows none.

    Fresh machines and CI containers often have no user.name/user.email; failres
    must still commit there, so it signs as itself rather than failing the task.
    When the person's identity is known (config or GIT_* variables) it is used as is.
    """
    for variable in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
        if try_git(cwd, ["var", variable]).returncode != 0:
            return (f"user.name={FALLBACK_NAME}", f"user.email={FALLBACK_EMAIL}")
    return ()


def split_nul(raw: bytes) -> list[str]:
    """Split `-z` output into file names; undecodable bytes survive via surrogateescape."""
    return [os.fsdecode(part) for part in raw.split(b"\0") if part]
