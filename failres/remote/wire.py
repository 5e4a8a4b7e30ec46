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

from failres.errors import UsageError

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
