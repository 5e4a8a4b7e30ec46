"""Finding what git cannot record in a workspace by re-reading only the directories that changed.

`workspace_files.odd_entries` walks the whole tree (every directory read) to find a
nested `.git` or a FIFO, socket or device: on 50,000 files that walk costs a third
of the `git status` beside it. But an entry can only appear in, vanish from or be
swapped in a directory by changing that directory, and every such change sets the
directory's ctime to the current time, which no unprivileged process can set back
(`utime` rewinds the mtime and moves the ctime forward). So after one full walk the
directories are remembered with their inode and ctime, and the next scan lstats each
of them, reads only those whose inode or ctime differs, and walks in full only the
directories that are new.

A directory changed within the same clock tick as the walk could keep the ctime the
walk saw ("racy", as git calls the same case for its index): the filesystem's own
clock is read right after the walk (the ctime of a file made for it, on the same
filesystem), and a directory whose ctime is not older than that mark is read again
every time, never trusted.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from lessons.frozen import record
from failres.gitops.workspace_files import odd_entries

_MOST_NEW_WALKED = 8  # new directories walked one by one; past this, the whole tree at once
_MARK = ".failres-scan-mark"  # made and removed in the seat's `.git` (on the workspace's filesystem)


@record
class Scanned:
    """The directories below a workspace's top as a full walk found them: path -> (inode, ctime)."""

    dirs: dict[str, tuple[int, int]]


def odd_walk(top: Path, scanned: Scanned | None) -> tuple[dict[str, str], Scanned | None]:
    """The odd entries below `top`, and what to compare with next time: from `scanned` when there is one."""
    if scanned is None:
        return full_scan(top)
    return scan_since(top, scanned), scanned


def full_scan(top: Path) -> tuple[dict[str, str], Scanned | None]:
    """Every odd entry below `top`, and the directories to compare later (None when there is none to trust)."""
    finder = shutil.which("find")
    if finder is None:
        return odd_entries(top), None
    from failres.processes.reaper import run_owned

    # One walk: the odd entries (as `odd_entries` finds them) and every directory's
    # inode and ctime, relative to the top (the top itself as ".").
    completed = run_owned([finder, str(top), "-path", str(top / ".git"), "-prune", "-o",
                           "-name", ".git", "-prune", "-printf", "o%P\\0", "-o",
                           "-type", "d", "-printf", "d%i %C@ %P\\0", "-o",
                           "(", "-type", "p", "-o", "-type", "s", "-o", "-type", "b", "-o", "-type", "c", ")",
                           "-printf", "o%P\\0"])
    if completed.returncode != 0:
        return odd_entries(top), None
    dirs: dict[str, tuple[int, int]] = {}
    odd_paths = []
    for raw in completed.stdout.split(b"\0"):
        if raw[:1] == b"o":
            odd_paths.append(raw[1:])
        elif raw[:1] == b"d":
            inode, ctime, name = raw[1:].split(b" ", 2)
            dirs[os.fsdecode(name) or "."] = (int(inode), _ns(ctime))
    if odd_paths:
        return odd_entries(top), None  # classified by the one walk that names them, nothing remembered
    mark = _clock_mark(top)
    if mark is None or "." not in dirs:
        return {}, None
    # A racy directory is remembered with a ctime no directory has: it is read every time.
    return {}, Scanned({path: seen if seen[1] < mark else (seen[0], -1) for path, seen in dirs.items()})


def scan_since(top: Path, scanned: Scanned) -> dict[str, str]:
    """Every odd entry below `top`, reading only what changed since the walk that made `scanned`."""
    found: dict[str, str] = {}
    new_dirs: list[str] = []
    for path, seen in scanned.dirs.items():
        full = top if path == "." else top / path
        try:
            info = os.lstat(full)
        except OSError:
            continue  # gone: its parent changed, and is read
        if not stat.S_ISDIR(info.st_mode):
            continue  # a link or file in its place: its parent changed, and is read
        if (info.st_ino, info.st_ctime_ns) == seen:
            continue
        try:
            _read_one(top, path, scanned, found, new_dirs)
        except OSError:
            return odd_entries(top)  # unreadable: the whole walk decides, as without a record
    if len(new_dirs) > _MOST_NEW_WALKED:
        return odd_entries(top)  # one walk of everything beats a walk per new directory
    if new_dirs:
        found.update(_walk_new(top, new_dirs))
    return found


def _read_one(top: Path, path: str, scanned: Scanned, found: dict[str, str], new_dirs: list[str]) -> None:
    """The entries of one changed directory: odd ones noted, directories the walk did not know queued."""
    full = top if path == "." else top / path
    with os.scandir(full) as entries:
        for entry in entries:
            relative = entry.name if path == "." else f"{path}/{entry.name}"
            if entry.name == ".git":
                if path != ".":
                    found[path] = "a nested git repository"
                continue
            if entry.is_symlink() or entry.is_file(follow_symlinks=False):
                continue
            if entry.is_dir(follow_symlinks=False):
                if relative not in scanned.dirs:
                    new_dirs.append(relative)
                continue
            what = _odd_kind(entry.stat(follow_symlinks=False).st_mode)
            if what is not None:
                found[relative] = what


def _walk_new(top: Path, new_dirs: list[str]) -> dict[str, str]:
    """The odd entries of directories no walk has seen, each walked in full."""
    found: dict[str, str] = {}
    for path in new_dirs:
        if os.path.lexists(top / path / ".git"):
            found[path] = "a nested git repository"
        below = odd_entries(top / path)
        for inner, what in below.items():
            found[path if inner == "." else f"{path}/{inner}"] = what
    return found


def _odd_kind(mode: int) -> str | None:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISBLK(mode) or stat.S_ISCHR(mode):
        return "a device"
    return None


def _clock_mark(top: Path) -> int | None:
    """The filesystem's clock now, as the ctime of a file made for it in the seat's `.git`."""
    mark = top / ".git" / _MARK
    try:
        if stat.S_ISLNK(os.lstat(top / ".git").st_mode):
            return None
        descriptor = os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None
    try:
        return os.fstat(descriptor).st_ctime_ns
    finally:
        os.close(descriptor)
        try:
            os.unlink(mark)
        except OSError:
            pass


def _ns(printed: bytes) -> int:
    """find's `%C@` (seconds, a point, up to ten digits of fraction) as nanoseconds, exactly."""
    whole, _, fraction = printed.partition(b".")
    return int(whole) * 1_000_000_000 + int((fraction + b"000000000")[:9] or b"0")
