"""What every conversation with a remote shares, apart from the code that writes: the protocol
settings of a fetch, where task branches go, the turn fetches take, the check of a remote's name.

Kept free of libgit2 so that a look at a remote (`status --remote`) loads none of it.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

from failres.errors import GitError, UsageError
from failres.gitops.git import first_error_line, try_git

NARROW = ("protocol.version=2",)  # whatever the person's protocol.version: only the refspecs' prefixes are listed
# Narrow listings whatever the person's own `protocol.version`; no reflog for refs re-read before every use.
FETCH_CONFIG = (*NARROW, "core.logAllRefUpdates=false")
DEFAULT_BRANCHES = "refs/heads/failres"


@contextmanager
def repo_turn(git_dir: Path, name: str):
    """Processes writing the same tracking refs of one repository take turns (`<git dir>/failres/<name>`):
    two fetches into them at once would fail on git's ref locks."""
    directory = git_dir / "failres"
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / name, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def remote_names(top: Path) -> list[str]:
    """The repository's remotes, as `git remote` lists them."""
    done = try_git(top, ["remote"])
    if done.returncode != 0:
        msg = f"git remote failed: {first_error_line(done.stderr)}"
        raise GitError(msg)
    return done.stdout.decode("utf-8", "surrogateescape").split()


def check_remote(top: Path, remote: str) -> None:
    """UsageError unless `remote` names one of the repository's remotes."""
    refuse_unknown_remote(remote, remote_names(top))


def upstream_remote(top: Path, branch: str) -> str | None:
    """The remote `branch` pulls from (`branch.<name>.remote`), if it has one."""
    done = try_git(top, ["config", "--get", f"branch.{branch}.remote"])
    found = done.stdout.decode("utf-8", "surrogateescape").strip() if done.returncode == 0 else ""
    return found or None


def refuse_unknown_remote(remote: str, names: Iterable[str]) -> None:
    """UsageError unless `remote` is one of `names`, the repository's remotes: a path or a URL
    given for a name would otherwise be fetched from and pushed to as if it were one."""
    if remote.startswith("-") or not remote.strip():
        msg = f'"{remote}" is not a usable remote name'
        raise UsageError(msg)
    if remote not in set(names):
        msg = f'no remote named "{remote}"'
        hint = "add one with `git remote add NAME URL`, or name one: git failres sync REMOTE"
        raise UsageError(msg, hint=hint)


def tip_in_ls_remote(listing: bytes, ref: str) -> str | None:
    """The object `ref` names in the output of `git ls-remote`, or None when it is not there."""
    for line in listing.decode("utf-8", "replace").splitlines():
        oid, _, name = line.partition("\t")
        if name.strip() == ref:
            return oid.strip()
    return None


def push_statuses(porcelain: str) -> dict[str, tuple[bool, str]]:
    """remote ref -> (accepted, git's summary) from `git push --porcelain` output."""
    out: dict[str, tuple[bool, str]] = {}
    for line in porcelain.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or len(parts[0]) != 1:
            continue
        flag, refs, summary = parts[0], parts[1], parts[2]
        out[refs.rsplit(":", 1)[-1]] = (flag != "!", summary.strip())
    return out


def tracking_ref(remote: str, ref: str) -> str:
    """Where a remote's `refs/X` is kept locally: `refs/remotes/<remote>/X`."""
    return f"refs/remotes/{remote}/{ref.removeprefix('refs/')}"
