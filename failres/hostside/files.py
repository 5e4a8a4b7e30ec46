"""The host side's one door to the file system: beneath a trusted root no link is followed.

A workspace and a dispatch directory are the seat's to write: any name there, and any
directory on the way to it, may be a link the seat planted to some other file of the
person's. So a read or a write there starts from a root failres made and trusts (the
directory the task's workspaces and dispatches sit in) and walks one component at a
time with `O_NOFOLLOW` (`failres.beneath`): a link anywhere on the way is refused,
never followed. The person's own files (their login, their `PATH`) are theirs to
arrange with links, and are read as they are: those are the person's configuration.

Every other module of `failres/hostside/` reaches files only through these functions.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePath

from failres import beneath


def relative_below(path: Path, root: Path | None) -> PurePath | None:
    """`path` relative to `root` when it lies strictly below it (plain path arithmetic), else None."""
    if root is None:
        return None
    try:
        relative = PurePath(os.path.normpath(path)).relative_to(os.path.normpath(root))
    except ValueError:
        return None
    return relative if relative.parts and ".." not in relative.parts else None


def read_beneath(root: Path, relative: PurePath, limit: int | None = None) -> bytes:
    """The bytes of the regular file `root/relative`; `beneath.Planted` when any component is a link.

    The file must have no other name either: a hard link to a file of the person's is
    not the seat's file.
    """
    return beneath.read_file(root, relative, limit)


def files_beneath(root: Path, start: PurePath | None, pattern: str) -> Iterator[PurePath]:
    """The regular files below `root/start` matching the glob `pattern` (one glob per component).

    Each directory is listed from an fd reached without a link, and an entry is looked
    at without following it (`follow_symlinks=False`): a link is never a directory to
    go into nor a file to report. Relative to `root`, sorted.
    """
    parts = [p for p in PurePath(pattern).parts if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        return iter(())
    try:
        with beneath.opened_dir(root, start, create=False):
            pass
    except OSError:
        return iter(())
    return iter(sorted(_matches(root, start, parts)))


def _matches(root: Path, here: PurePath | None, parts: Sequence[str]) -> list[PurePath]:
    try:
        with beneath.opened_dir(root, here, create=False) as fd:
            entries = [(entry.name, entry.stat(follow_symlinks=False).st_mode) for entry in os.scandir(fd)]
    except OSError:
        return []
    found: list[PurePath] = []
    for name, mode in entries:
        if not fnmatch.fnmatchcase(name, parts[0]):
            continue
        path = PurePath(name) if here is None else here / name
        if len(parts) == 1 and stat.S_ISREG(mode):
            found.append(path)
        elif len(parts) > 1 and stat.S_ISDIR(mode):
            found += _matches(root, path, parts[1:])
    return found


def is_dir_beneath(root: Path, relative: PurePath) -> bool:
    """Whether `root/relative` is a directory reached without a link."""
    try:
        with beneath.opened_dir(root, relative, create=False):
            return True
    except OSError:
        return False


def executable_beneath(root: Path, relative: PurePath) -> bool:
    """Whether `root/relative` is an executable regular file, with no link on the way or at it."""
    try:
        fd = beneath.open_file(root, relative, os.O_RDONLY)
    except (OSError, ValueError):
        return False
    try:
        return bool(os.fstat(fd).st_mode & 0o111)
    finally:
        os.close(fd)


def make_dirs_beneath(root: Path, relative: PurePath) -> None:
    beneath.make_dirs(root, relative)


def link_beneath(root: Path, relative: PurePath, target: Path) -> bool:
    """A new link `root/relative` -> `target`; False when the name is taken (nothing replaced)."""
    try:
        beneath.make_symlink(root, relative, os.fspath(target))
    except FileExistsError:
        return False
    return True


def is_link_beneath(root: Path, relative: PurePath) -> bool:
    """Whether the entry `root/relative` itself is a link (the directories on the way are not followed)."""
    *parents, name = relative.parts
    try:
        with beneath.opened_dir(root, PurePath(*parents) if parents else None, create=False) as fd:
            return stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


# ---- the person's own files: their configuration, read as they arranged it ----

def read_person_file(path: Path) -> bytes | None:
    """The bytes of one of the person's regular files (their login), None when there is none."""
    try:
        return beneath.read_regular(Path(os.path.realpath(path)))
    except OSError:
        return None


def is_person_file(path: Path) -> bool:
    return os.path.isfile(path)


def make_person_dirs(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)


def link_person_file(link: Path, target: Path) -> bool:
    """A link at `link` (a place the person's configuration chose) to `target`; False when taken."""
    if os.path.lexists(link):
        return False
    link.symlink_to(target)
    return True


def replace_person_file(path: Path, data: bytes) -> None:
    """Put `data` at the person's `path` atomically, owner-only (a refreshed login of theirs)."""
    real = Path(os.path.realpath(path))
    beneath.replace_file(real.parent, real.name, data, mode=0o600)


def which_on_path(program: str, path_value: str | None) -> str | None:
    """Where `program` is on the person's `PATH`."""
    return shutil.which(program, path=path_value)


def is_executable_file(path: str) -> bool:
    """Whether the absolute path the person's configuration names is an executable file."""
    return os.path.isfile(path) and os.access(path, os.X_OK)
