"""Writing beneath a trusted directory without ever being sent somewhere else.

failres keeps its own state under `<git dir>/failres/` (dispatch logs, tamper
evidence, locks), and a seat runs as the same user: it can plant anything there by
absolute path before failres writes. A symlink at `.../seat.log` pointing at the
person's `.git/config`, or a directory on the way replaced by a link to `.git`,
would turn failres's own write into the seat's write to the person's repository.
A hard link to `.git/config` at a log's name would do the same through the inode.

So every such write starts from an fd of a trusted root (the person's git dir) and
walks one component at a time with `O_NOFOLLOW`; what it finds is never followed:

- a component that is a symlink, or not a directory, raises `Planted`;
- a file is only opened when it is a regular file with no other name (`st_nlink`
  1), and opened non-blocking, so a planted FIFO cannot hang the run;
- a whole-file write goes to a fresh, randomly named file created with `O_EXCL`
  and is renamed into place: rename replaces a directory entry, never follows one;
- a new file that must not exist yet (evidence) is created with `O_EXCL`, so a
  name planted in advance is refused, not reused.

`Planted` is an `OSError`: a caller that only knows "writing failed" still skips
the write, and one that can record tamper catches it first.

Standard library only, and a single module at the top: the git hooks write their log
through it, and `gitops` (below `containment`) writes its private index through it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePath

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Planted(OSError):
    """Something beneath the trusted root is not what failres made there (a link, a non-directory)."""


def parts_of(relative: str | PurePath) -> list[str]:
    """The components of a path relative to the root; ValueError for one that could leave it (pure)."""
    parts = list(PurePath(relative).parts)
    if not parts or PurePath(relative).is_absolute() or any(p in ("", ".", "..") for p in parts):
        msg = f"not a path beneath a root: {relative!s}"
        raise ValueError(msg)
    return parts


@contextmanager
def opened_dir(root: Path, relative: str | PurePath | None = None, *, create: bool = True) -> Iterator[int]:
    """An fd of the directory `root/relative`, reached without following any link beneath `root`."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        walked = Path(root)
        for name in parts_of(relative) if relative is not None else []:
            walked = walked / name
            next_fd = _step(fd, name, walked, create=create)
            os.close(fd)
            fd = next_fd
        yield fd
    finally:
        os.close(fd)


def _step(fd: int, name: str, shown: Path, *, create: bool) -> int:
    for _ in range(2):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            try:
                os.mkdir(name, 0o755, dir_fd=fd)
            except FileExistsError:
                pass  # made meanwhile: look again, without following it either
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                msg = f"{shown} is a symlink or not a directory"
                raise Planted(msg) from None
            raise
    msg = f"{shown} could not be made"
    raise Planted(msg)


def make_dirs(root: Path, relative: str | PurePath) -> None:
    with opened_dir(root, relative):
        pass


def make_new_dir(root: Path, relative: str | PurePath) -> None:
    """Create `root/relative`, which must not exist yet (FileExistsError when it does)."""
    *parents, name = parts_of(relative)
    with opened_dir(root, PurePath(*parents) if parents else None) as parent:
        os.mkdir(name, 0o755, dir_fd=parent)


def open_file(root: Path, relative: str | PurePath, flags: int, mode: int = 0o644) -> int:
    """An fd of the regular file `root/relative` opened with `flags`, checked to have no other name.

    Missing directories on the way are made only when `flags` asks to create the file.
    """
    *parents, name = parts_of(relative)
    create = bool(flags & os.O_CREAT)
    with opened_dir(root, PurePath(*parents) if parents else None, create=create) as parent:
        try:
            fd = os.open(name, flags | _FILE_FLAGS, mode, dir_fd=parent)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENXIO):
                msg = f"{Path(root, relative)} is a symlink or not a regular file"
                raise Planted(msg) from None
            raise
    try:
        _check_regular(fd, Path(root, relative))
    except OSError:
        os.close(fd)
        raise
    return fd


def _check_regular(fd: int, shown: Path) -> None:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        msg = f"{shown} is not a regular file"
        raise Planted(msg)
    if info.st_nlink != 1:
        msg = f"{shown} has another name (a hard link)"
        raise Planted(msg)


def append_file(root: Path, relative: str | PurePath, data: bytes) -> None:
    fd = open_file(root, relative, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def write_file(root: Path, relative: str | PurePath, data: bytes, *, exclusive: bool = False,
               mode: int = 0o644) -> None:
    """Put `data` at `root/relative`; with `exclusive`, the name must not exist yet.

    Otherwise whatever is at the name is replaced by rename, never written through,
    and Planted is raised when that was a link or a file with another name: what
    failres itself left there is always a plain, single-named file.
    """
    *parents, name = parts_of(relative)
    with opened_dir(root, PurePath(*parents) if parents else None) as parent:
        if exclusive:
            _create_with(parent, name, data, mode)
            return
        _refuse_planted(parent, name, Path(root, relative))
        _replace(parent, name, data, mode)


def replace_file(root: Path, relative: str | PurePath, data: bytes, *, mode: int = 0o644,
                 mtime_ns: int | None = None) -> None:
    """Put `data` at `root/relative` whatever entry is there now (a link is replaced, not followed).

    For putting a file back over what a seat left in its place; `mtime_ns` sets its
    modification time too.
    """
    *parents, name = parts_of(relative)
    with opened_dir(root, PurePath(*parents) if parents else None) as parent:
        _replace(parent, name, data, mode, mtime_ns)


def _replace(parent: int, name: str, data: bytes, mode: int, mtime_ns: int | None = None) -> None:
    temporary = f".{name}.{os.urandom(6).hex()}.tmp"  # what secrets.token_hex(6) is, without its imports
    _create_with(parent, temporary, data, mode, mtime_ns)
    try:
        os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
    except OSError:
        os.unlink(temporary, dir_fd=parent)
        raise


def _refuse_planted(parent: int, name: str, shown: Path) -> None:
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        msg = f"{shown} is a symlink"
        raise Planted(msg)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        msg = f"{shown} is not a plain file failres wrote"
        raise Planted(msg)


def _create_with(parent: int, name: str, data: bytes, mode: int, mtime_ns: int | None = None) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FILE_FLAGS, mode, dir_fd=parent)
    try:
        _write_all(fd, data)
        os.fchmod(fd, mode)
        if mtime_ns is not None:
            os.utime(fd, ns=(mtime_ns, mtime_ns))
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def remove_file(root: Path, relative: str | PurePath) -> None:
    """Unlink `root/relative` when it is there; a link is removed, never followed."""
    *parents, name = parts_of(relative)
    try:
        with opened_dir(root, PurePath(*parents) if parents else None, create=False) as parent:
            os.unlink(name, dir_fd=parent)
    except FileNotFoundError:
        pass


def copy_in(source: Path, root: Path, relative: str | PurePath, *, limit: int | None = None) -> bool:
    """Copy what is at `source` to the new name `root/relative`; False when there was nothing to copy.

    A symlink is copied as a symlink (its target is never read), a regular file as
    its bytes (read without following a link at `source`); anything else is skipped.
    """
    info = source.lstat()
    if stat.S_ISLNK(info.st_mode):
        make_symlink(root, relative, os.readlink(source))
        return True
    if not stat.S_ISREG(info.st_mode):
        return False
    write_file(root, relative, read_regular(source, limit), exclusive=True)
    return True


def make_symlink(root: Path, relative: str | PurePath, target: str | bytes) -> None:
    """A new symlink at `root/relative` (FileExistsError when the name is taken); `target` is never read."""
    *parents, name = parts_of(relative)
    with opened_dir(root, PurePath(*parents) if parents else None) as parent:
        os.symlink(os.fsdecode(target), name, dir_fd=parent)


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file at `path` (up to `limit`); never read through a link or a FIFO."""
    fd = os.open(path, os.O_RDONLY | _FILE_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            msg = f"{path} is not a regular file"
            raise Planted(msg)
        return _read_up_to(fd, limit)
    finally:
        os.close(fd)


def read_file(root: Path, relative: str | PurePath, limit: int | None = None) -> bytes:
    """The bytes of the regular, single-named file `root/relative` (up to `limit`), no link followed
    at any component beneath `root` (`Planted` otherwise)."""
    fd = open_file(root, relative, os.O_RDONLY)
    try:
        return _read_up_to(fd, limit)
    finally:
        os.close(fd)


def _read_up_to(fd: int, limit: int | None) -> bytes:
    chunks, left = [], limit if limit is not None else -1
    while left != 0:
        chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left = left - len(chunk) if left > 0 else left
    return b"".join(chunks)
