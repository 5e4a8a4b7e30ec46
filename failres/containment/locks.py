"""One live run per task: a lock held for the run's lifetime, and what it records.

A task's lock is an `flock` on `<git dir>/failres/locks/<slug>/<task>.lock`, held by
the process running the task. The kernel releases it when that process dies, however
it dies, so "the journal says running but nobody holds the lock" means the run was
lost (a hard kill, a power cut). The lock file's content says who holds it and which
seat process group is running, so that:

- a second `run` of a live task refuses at once (`already running, pid N`) and writes
  nothing;
- `cancel` from another terminal asks the holder to stop (a request file beside the
  lock, which the running loop polls), and signals it only when it does not answer;
- the next `run` or `status` after a hard kill finds the lost run and stops the seat
  it left (the supervisor normally takes it down with its parent; this is the second
  line), recognising the seat's processes by the dispatch marker in their environment
  so that a re-used process id is never signalled.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from failres.errors import UsageError

DISPATCH_MARKER = "FAILRES_DISPATCH"


class AlreadyRunning(UsageError):
    """Another live process is running this task."""


@dataclass(frozen=True)
class Holder:
    """What a lock file says about the run holding it."""

    pid: int | None
    started: str
    seat: int | None  # the running seat's process (and group) id, while one runs
    marker: str  # the dispatch marker in that seat's environment


def lock_path(git_dir: Path, slug: str, task: str) -> Path:
    return git_dir / "failres" / "locks" / slug / f"{task}.lock"


def cancel_path(lock: Path) -> Path:
    return lock.with_name(lock.name + ".cancel")


class TaskLock:
    """The lock of one task, held from `acquire` to `release`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None
        self.info: dict[str, object] = {}

    def acquire(self, slug: str, task: str) -> Holder | None:
        """Take the lock; AlreadyRunning when a live process holds it.

        Returns what the previous holder recorded when it was left behind by a run that
        died (its seat may still need stopping), else None.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            holder = read_holder(self.path)
            pid = f", pid {holder.pid}" if holder and holder.pid else ""
            msg = f"{slug}/{task} is already running{pid}"
            raise AlreadyRunning(msg, hint=f"wait for it, or stop it with `git failres cancel {slug} {task}`") from None
        self.fd = fd
        left = _parse(os.pread(fd, 65536, 0))
        cancel_path(self.path).unlink(missing_ok=True)  # a request for a run that is gone
        self.info = {"pid": os.getpid(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self._write()
        return left if left is not None and left.pid is not None else None

    def record_seat(self, seat: int | None, marker: str = "") -> None:
        self.info["seat"] = seat
        self.info["marker"] = marker
        self._write()

    def cancel_requested(self) -> str | None:
        """The reason of a pending cancel request, or None."""
        try:
            return cancel_path(self.path).read_text(encoding="utf-8").strip() or "cancel"
        except OSError:
            return None

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.ftruncate(self.fd, 0)
        except OSError:
            pass
        os.close(self.fd)  # closing releases the flock
        self.fd = None
        cancel_path(self.path).unlink(missing_ok=True)

    def _write(self) -> None:
        if self.fd is None:
            return
        data = json.dumps(self.info, sort_keys=True).encode() + b"\n"
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)


def _parse(raw: bytes) -> Holder | None:
    try:
        data = json.loads(raw.decode("utf-8") or "null")
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pid, seat = data.get("pid"), data.get("seat")
    return Holder(pid=pid if isinstance(pid, int) else None, started=str(data.get("started", "")),
                  seat=seat if isinstance(seat, int) else None, marker=str(data.get("marker", "")))


def read_holder(path: Path) -> Holder | None:
    try:
        return _parse(path.read_bytes())
    except OSError:
        return None


def is_held(path: Path) -> bool:
    """Whether a live process holds the lock at `path` (probing never takes it for long)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def live_holder(git_dir: Path, slug: str, task: str) -> Holder | None:
    """The run holding this task's lock right now, or None when no live process does."""
    path = lock_path(git_dir, slug, task)
    if not is_held(path):
        return None
    return read_holder(path) or Holder(None, "", None, "")


def lost_holder(git_dir: Path, slug: str, task: str) -> Holder | None:
    """What a dead run left in this task's lock file, or None (no file, or a live holder)."""
    path = lock_path(git_dir, slug, task)
    if not path.exists() or is_held(path):
        return None
    holder = read_holder(path)
    return holder if holder is not None and holder.pid is not None else None


def stop_lost_seat(holder: Holder) -> list[int]:
    """Kill what is left of a dead run's seat; returns the pids signalled.

    Only processes whose environment carries the run's dispatch marker are touched: a
    process id or group id alone may have been re-used by something else meanwhile.
    """
    if not holder.marker:
        return []
    needle = f"{DISPATCH_MARKER}={holder.marker}".encode()
    killed = []
    for pid in _all_pids():
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except (ProcessLookupError, PermissionError):
                pass
    return killed


def _all_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def request_cancel(git_dir: Path, slug: str, task: str, reason: str = "cancel") -> Holder | None:
    """Ask the live run of a task to stop; returns its holder, or None when it is not running."""
    path = lock_path(git_dir, slug, task)
    holder = live_holder(git_dir, slug, task)
    if holder is None:
        return None
    cancel_path(path).write_text(reason + "\n", encoding="utf-8")
    return holder


def wait_released(git_dir: Path, slug: str, task: str, seconds: float) -> bool:
    give_up = time.monotonic() + seconds
    path = lock_path(git_dir, slug, task)
    while time.monotonic() < give_up:
        if not is_held(path):
            return True
        time.sleep(0.1)
    return not is_held(path)


def locked_tasks(git_dir: Path, slug: str) -> list[str]:
    """Tasks of `slug` that have a lock file (live or left behind)."""
    directory = git_dir / "failres" / "locks" / slug
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(name.removesuffix(".lock") for name in names if name.endswith(".lock"))
