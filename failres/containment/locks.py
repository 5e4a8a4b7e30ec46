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
- a seat, running as the same user, may replace the lock file by absolute path (a
  copy with a new inode): the flock stays on the old inode, and every other process
  would then find the task unlocked. So the holder records its lock's inode in the
  file, and a prober that finds the file unlocked still counts the run as live when
  the recorded process holds an flock on that inode (`/proc/locks`); the holder
  itself checks, each time it polls for a cancel request, that the name still
  names its inode, and puts its own lock file back when not, reporting the swap as
  tamper. A lock file that is a link, or has a second name, is never trusted to
  show that no run is live.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
from pathlib import Path, PurePath

from lessons.frozen import record
from failres import beneath
from failres.errors import UsageError

DISPATCH_MARKER = "FAILRES_DISPATCH"


class AlreadyRunning(UsageError):
    """Another live process is running this task."""


@record
class Holder:
    """What a lock file says about the run holding it."""

    pid: int | None
    started: str
    seat: int | None  # the running seat's process (and group) id, while one runs
    marker: str  # the dispatch marker in that seat's environment
    inode: int | None = None  # the inode the holder's flock is on


def lock_relative(slug: str, task: str) -> PurePath:
    return PurePath("failres", "locks", slug, f"{task}.lock")


def lock_path(git_dir: Path, slug: str, task: str) -> Path:
    return git_dir / lock_relative(slug, task)


def _cancel_relative(lock: PurePath) -> PurePath:
    return lock.with_name(lock.name + ".cancel")


class TaskLock:
    """The lock of one task, held from `acquire` to `release`."""

    def __init__(self, git_dir: Path, slug: str, task: str) -> None:
        self.git_dir = git_dir
        self.slug = slug
        self.task = task
        self.relative = lock_relative(slug, task)
        self.path = git_dir / self.relative
        self.fd: int | None = None
        self.info: dict[str, object] = {}
        self.problems: list[str] = []  # swaps of the lock file seen while held, for the tamper report

    def acquire(self) -> Holder | None:
        """Take the lock; AlreadyRunning when a live process holds it.

        Returns what the previous holder recorded when it was left behind by a run that
        died (its seat may still need stopping), else None.
        """
        try:
            fd = beneath.open_file(self.git_dir, self.relative, os.O_RDWR | os.O_CREAT)
        except beneath.Planted as error:
            msg = f"{self.slug}/{self.task}'s lock file is not one failres made ({error})"
            raise AlreadyRunning(msg, hint="a seat may have planted it; remove it once no run of the task is "
                                 "live") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            self._refuse(_read_holder(self.git_dir, self.relative))
        left = _parse(os.pread(fd, 65536, 0))
        if left is not None and _holds_elsewhere(left):
            os.close(fd)  # the live run's lock file was replaced under it: it is still live
            self._refuse(left)
        self.fd = fd
        beneath.remove_file(self.git_dir, _cancel_relative(self.relative))  # a request for a run that is gone
        self.info = {"pid": os.getpid(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                     "inode": os.fstat(fd).st_ino}
        self._write()
        return left if left is not None and left.pid is not None else None

    def _refuse(self, holder: Holder | None) -> None:
        pid = f", pid {holder.pid}" if holder and holder.pid else ""
        msg = f"{self.slug}/{self.task} is already running{pid}"
        raise AlreadyRunning(msg, hint=f"wait for it, or stop it with `git failres cancel {self.slug} {self.task}`")

    def record_seat(self, seat: int | None, marker: str = "") -> None:
        self.info["seat"] = seat
        self.info["marker"] = marker
        self._write()

    def cancel_requested(self) -> str | None:
        """The reason of a pending cancel request, or None."""
        try:
            fd = beneath.open_file(self.git_dir, _cancel_relative(self.relative), os.O_RDONLY)
        except beneath.Planted:
            return "cancel"  # something is there, whatever it is: a request
        except OSError:
            return None
        try:
            return os.read(fd, 4096).decode("utf-8", "replace").strip() or "cancel"
        finally:
            os.close(fd)

    def keep_held(self) -> None:
        """Put this run's lock file back when its name no longer names the inode held (a seat replaced it)."""
        if self.fd is None or self._still_named():
            return
        shown = f"$GIT_DIR/{self.relative}"
        try:
            taken = self._put_back()
        except OSError as error:
            self.problems.append(f"{shown} was replaced and could not be put back: {error}")
            return
        if taken:
            self.problems.append(f"{shown} was replaced, and another run has taken the task meanwhile")
        else:
            self.problems.append(f"{shown} was replaced: put back")

    def take_problems(self) -> list[str]:
        taken, self.problems = self.problems, []
        return taken

    def _still_named(self) -> bool:
        held = os.fstat(self.fd) if self.fd is not None else None
        try:
            with beneath.opened_dir(self.git_dir, self.relative.parent, create=False) as parent:
                now = os.stat(self.relative.name, dir_fd=parent, follow_symlinks=False)
        except OSError:
            return False
        return held is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)

    def _put_back(self) -> bool:
        """A fresh lock file, locked before it gets the name; True when another run holds the name now."""
        # os.urandom(6).hex() is secrets.token_hex(6), without what `secrets` imports at every start.
        fresh = self.relative.with_name(f".{self.relative.name}.{os.urandom(6).hex()}")
        fd = beneath.open_file(self.git_dir, fresh, os.O_RDWR | os.O_CREAT | os.O_EXCL)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # new: nobody else can hold it
        with beneath.opened_dir(self.git_dir, self.relative.parent) as parent:
            if _flocked(parent, self.relative.name):
                os.close(fd)
                os.unlink(fresh.name, dir_fd=parent)
                return True
            old, self.fd = self.fd, fd
            self.info["inode"] = os.fstat(fd).st_ino
            self._write()
            os.replace(fresh.name, self.relative.name, src_dir_fd=parent, dst_dir_fd=parent)
        if old is not None:
            os.close(old)
        return False

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.ftruncate(self.fd, 0)
        except OSError:
            pass
        os.close(self.fd)  # closing releases the flock
        self.fd = None
        try:
            beneath.remove_file(self.git_dir, _cancel_relative(self.relative))
        except OSError:
            pass

    def _write(self) -> None:
        if self.fd is None:
            return
        data = json.dumps(self.info, sort_keys=True).encode() + b"\n"
        # Never empty, not even for an instant: `status` reads this file while the run
        # rewrites it (when a seat starts), and an empty read showed a live run without its
        # pid. The new text goes over the old in one write, padded to the old length with
        # whitespace JSON ignores, and only then is the file cut to it.
        old = os.fstat(self.fd).st_size
        os.pwrite(self.fd, data.ljust(old, b" "), 0)
        if old > len(data):
            os.ftruncate(self.fd, len(data))


def _flocked(parent: int, name: str) -> bool:
    """Whether some process holds an flock on the regular file `name` in the directory `parent`."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _parse(raw: bytes) -> Holder | None:
    try:
        data = json.loads(raw.decode("utf-8") or "null")
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pid, seat, inode = data.get("pid"), data.get("seat"), data.get("inode")
    return Holder(pid=pid if isinstance(pid, int) else None, started=str(data.get("started", "")),
                  seat=seat if isinstance(seat, int) else None, marker=str(data.get("marker", "")),
                  inode=inode if isinstance(inode, int) else None)


def _read_holder(git_dir: Path, relative: PurePath) -> Holder | None:
    try:
        fd = beneath.open_file(git_dir, relative, os.O_RDONLY)
    except OSError:
        return None
    try:
        for _ in range(3):  # a read that met a rewrite half done is read again
            holder = _parse(os.pread(fd, 65536, 0))
            if holder is not None:
                return holder
        return None
    finally:
        os.close(fd)


def _holds_elsewhere(holder: Holder) -> bool:
    """Whether the process a lock file names still holds an flock on the inode it names.

    True only when the file was replaced under a live holder: otherwise that flock
    would be on this very file, and taking it would have failed.
    """
    if holder.pid is None or holder.inode is None or holder.pid == os.getpid():
        return False
    try:
        text = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return (holder.pid, holder.inode) in flock_owners(text)


def flock_owners(proc_locks: str) -> set[tuple[int, int]]:
    """(pid, inode) of every flock held in a `/proc/locks` text (pure).

    Matched by inode number alone: the device `/proc/locks` names is the superblock's,
    which on an overlay differs from what `stat` reports. Waiting requests (`->`) hold nothing.
    """
    owners = set()
    for line in proc_locks.splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1] != "FLOCK":
            continue
        try:
            owners.add((int(fields[4]), int(fields[5].rsplit(":", 1)[-1])))
        except ValueError:
            continue
    return owners


def is_held(git_dir: Path, relative: PurePath) -> bool:
    """Whether a live process holds the lock at `relative` (probing never takes it for long)."""
    try:
        fd = beneath.open_file(git_dir, relative, os.O_RDONLY)
    except beneath.Planted:
        return True  # not a file failres made: nothing shows that no run is live
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        holder = _parse(os.pread(fd, 65536, 0))
        return holder is not None and _holds_elsewhere(holder)
    finally:
        os.close(fd)


def live_holder(git_dir: Path, slug: str, task: str) -> Holder | None:
    """The run holding this task's lock right now, or None when no live process does."""
    relative = lock_relative(slug, task)
    if not is_held(git_dir, relative):
        return None
    return _read_holder(git_dir, relative) or Holder(None, "", None, "")


def lost_holder(git_dir: Path, slug: str, task: str) -> Holder | None:
    """What a dead run left in this task's lock file, or None (no file, or a live holder)."""
    relative = lock_relative(slug, task)
    if is_held(git_dir, relative):
        return None
    holder = _read_holder(git_dir, relative)
    return holder if holder is not None and holder.pid is not None else None


def stop_lost_seat(holder: Holder) -> list[int]:
    """Kill what is left of a dead run's seat; returns the pids signalled.

    Only processes whose environment carries the run's dispatch marker are touched: a
    process id or group id alone may have been re-used by something else meanwhile.
    """
    if not holder.marker:
        return []
    import signal  # a status that finds nothing lost never signals

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
    holder = live_holder(git_dir, slug, task)
    if holder is None:
        return None
    try:
        beneath.write_file(git_dir, _cancel_relative(lock_relative(slug, task)), (reason + "\n").encode())
    except OSError as error:
        msg = f"cannot ask {slug}/{task} to stop: {error}"
        raise UsageError(msg, hint="a seat may have planted that file; remove it and cancel again") from None
    return holder


def wait_released(git_dir: Path, slug: str, task: str, seconds: float) -> bool:
    give_up = time.monotonic() + seconds
    relative = lock_relative(slug, task)
    while time.monotonic() < give_up:
        if not is_held(git_dir, relative):
            return True
        time.sleep(0.1)
    return not is_held(git_dir, relative)


def locked_tasks(git_dir: Path, slug: str) -> list[str]:
    """Tasks of `slug` that have a lock file (live or left behind)."""
    directory = git_dir / "failres" / "locks" / slug
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(name.removesuffix(".lock") for name in names if name.endswith(".lock") and not name.startswith("."))
