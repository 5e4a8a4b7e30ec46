"""A port of its own for each live workspace: `FAILRES_PORT` in the seat's and the gate's environment.

Two workspaces that each start the project's dev server on the project's one port
collide, and the second gate fails for a reason that has nothing to do with its task.
Each task run leases a port for as long as it runs: an exclusive `flock` on
`<cache>/failres/ports/<port>.lock`, which the kernel drops when the holder exits or
dies, so a killed run never leaks its port and no lock file has to be cleaned up. A
`flock` belongs to one open file, so two threads of one `--jobs` run exclude each other
exactly as two processes do. A port some other program already listens on is skipped
(a bind test on 127.0.0.1), and so is one another run holds.
"""

from __future__ import annotations

import errno
import fcntl
import os
import random
import socket
from dataclasses import dataclass
from pathlib import Path

# Above the usual development servers' ports (3000, 5000, 8000, 8080 ...) and below
# Linux's ephemeral range (32768+), so an outgoing connection never takes a leased port.
LOW = 20000
SPAN = 10000


@dataclass
class PortLease:
    port: int
    fd: int

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing the file drops the lock
            self.fd = -1


def ports_dir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "failres" / "ports"


def lease_port(directory: Path | None = None, *, rng: random.Random | None = None) -> PortLease | None:
    """A port no other live workspace holds and nothing listens on; None when none is free."""
    directory = directory or ports_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    start = (rng or random.SystemRandom()).randrange(SPAN)
    for step in range(SPAN):
        port = LOW + (start + step) % SPAN
        try:
            fd = os.open(directory / f"{port}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                continue
            return None
        if _free(port):
            return PortLease(port, fd)
        os.close(fd)
    return None


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
