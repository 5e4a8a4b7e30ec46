"""The files of a workspace, whatever a seat did to them, and where workspaces go.

Removing a tree a seat made read-only or full of symlinks (never following one),
giving back the permissions it took away, finding the `.git` directories it planted
where git will not look, refusing a place that holds someone else's files or leads
into the person's repository, the default place outside the person's checkout and git
dir, the few settings of the person's the seat's own git dir carries, the settings
failres's own reads run with, and what git cannot record (nested repositories, FIFOs).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

import pygit2

from failres.errors import GitError

T = TypeVar("T")
U = TypeVar("U")

_ODD_TYPES = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISBLK, "a device"),
              (stat.S_ISCHR, "a device"))


def odd_entries(top: Path) -> dict[str, str]:
    """Entries below `top` that git cannot record as files, relative path -> what they are.

    A nested repository (any `.git` below the top: git would take its directory for a
    submodule and run its config's filters and fsmonitor) and a FIFO, socket or device
    (git refuses to add one; a gate that reads it hangs). One `find` walks the tree.
    """
    finder = shutil.which("find")
    found: dict[str, str] = {}
    if finder is None:
        return _odd_by_walk(top)
    from failres.processes.reaper import run_owned

    completed = run_owned([finder, str(top), "-mindepth", "1", "-path", str(top / ".git"), "-prune", "-o",
                           "-name", ".git", "-prune", "-print0", "-o",
                           "(", "-type", "p", "-o", "-type", "s", "-o", "-type", "b", "-o", "-type", "c", ")",
                           "-print0"])
    if completed.returncode != 0:
        return _odd_by_walk(top)
    for raw in completed.stdout.split(b"\0"):
        if raw:
            _classify(top, Path(os.fsdecode(raw)), found)
    return found


def side_by_side(action: Callable[[], T], walk: Callable[[], U]) -> tuple[T, U]:
    """`action()` and `walk()`, the walk in a thread while the action runs.

    The scope check is a `git status` and a walk for what git cannot record over the
    same tree; side by side they take the time of the longer one instead of the sum.
    The walk's answer is the same as alone: it is read only once both are done.
    """
    found: list[U] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            found.append(walk())
        except BaseException as error:  # handed to the caller below
            failed.append(error)

    walker = threading.Thread(target=run, name="failres-odd-entries", daemon=True)
    walker.start()
    try:
        result = action()
    finally:
        walker.join()
    if failed:
        raise failed[0]
    return result, found[0]


def _odd_by_walk(top: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for root, dirs, files in os.walk(top):
        if Path(root) == top and ".git" in dirs:
            dirs.remove(".git")
        for name in [*dirs, *files]:
            full = Path(root) / name
            if name == ".git" or any(test(full.lstat().st_mode) for test, _ in _ODD_TYPES):
                _classify(top, full, found)
        dirs[:] = [d for d in dirs if d != ".git"]
    return found


def _classify(top: Path, full: Path, found: dict[str, str]) -> None:
    if full.name == ".git":
        found[full.parent.relative_to(top).as_posix()] = "a nested git repository"
        return
    try:
        mode = full.lstat().st_mode
    except OSError:
        return
    for test, what in _ODD_TYPES:
        if test(mode):
            found[full.relative_to(top).as_posix()] = what
            return


# Settings that make git read a work tree on failres's terms, whatever the person's or
# the seat's configuration says: no fsmonitor daemon or hook, no untracked cache whose
# directory mtimes a seat could rewind, no sparse checkout that would mark paths
# skip-worktree, no split index spread over shared files.
#
# Nor does any git dir a seat could have made run anything of its own: no submodule is
# ever recursed into (a nested `.git` with a `clean` filter or an fsmonitor of the
# seat's would run in failres's place; nested repositories are refused instead, see
# `odd_entries`), and no hook runs.
TRUSTED_READ = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "submodule.recurse=false",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "core.untrackedCache=false",
    "core.sparseCheckout=false",
    "core.splitIndex=false",
    "core.trustctime=true",
    "core.checkStat=default",
)


# A workspace of this many files or more, handed over in the second its checkout ended,
# waits for the next one (once a task, less than a second) rather than have git re-read at
# every check and put back each file the checkout wrote in that second: at 50,000 files that
# is most of them, about 0.2 s a check and 0.9 s a put back.
SETTLE_WAIT_ENTRIES = 10_000
_SECOND = 1_000_000_000


def settled_index_time(index_mtime_ns: int, index: bytes, *, checkout: bool) -> int:
    """The time to give a private index whose files nobody has touched since it was last proven.

    git trusts a file's stat data only if the file is older than its index, to the second
    ("racy git"): a stat taken in the index's own second could be that of a same-second
    edit, so each such file is re-read at every status, and the whole index rewritten.
    Once the clock is past that second, anything a seat does from now on moves a ctime to
    a later second, which git always sees; so an index whose files are still as it says
    may take the time of now, and git stops re-reading the checkout's last second. The
    index of a big `checkout` (`SETTLE_WAIT_ENTRIES`) still in its second waits for the next.
    """
    now = time.time_ns()
    big = checkout and int.from_bytes(index[8:12], "big") >= SETTLE_WAIT_ENTRIES  # the header's entry count
    if big and now // _SECOND == index_mtime_ns // _SECOND:
        time.sleep((_SECOND - now % _SECOND) / _SECOND + 0.001)
        now = time.time_ns()
    return now if now // _SECOND > index_mtime_ns // _SECOND else index_mtime_ns


def kept(path: str, keep: Iterable[str]) -> bool:
    """Whether `path` is one a gate declared it needs (`keep`, gitignore patterns)."""
    from failres.gitops.scope import ignore_pattern_matches

    return any(ignore_pattern_matches(pattern, path) for pattern in keep)


def shown_name(path: str) -> str:
    """A path as it can be recorded: undecodable bytes become visible `\\xNN` escapes."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    return path


def remove_nested_git_dirs(top: Path) -> None:
    # git never lists a directory named `.git`, wherever it is, so `clean` leaves one
    # a seat planted below the top (with whatever it put inside). Only the top one is
    # the seat's git dir, and it is rebuilt anyway. `find` walks a large tree in a
    # fraction of Python's time; os.walk is the fallback.
    finder = shutil.which("find")
    if finder is not None:
        from failres.processes.reaper import run_owned

        completed = run_owned([finder, str(top), "-mindepth", "2", "-name", ".git", "-prune", "-print0"])
        if completed.returncode == 0:
            for raw in completed.stdout.split(b"\0"):
                if raw:
                    remove_tree(Path(os.fsdecode(raw)))
            return
    for root, dirs, _files in os.walk(top):
        if Path(root) == top:
            dirs[:] = [d for d in dirs if d != ".git"]
            continue
        if ".git" in dirs:
            remove_tree(Path(root) / ".git")
            dirs.remove(".git")


def unlink_inside(top: Path, path: str) -> None:
    """Remove the file at `top/path` when it lies inside `top` (never through a symlink to elsewhere)."""
    full = top / path
    root = os.path.realpath(top)
    if full.parent != top and not os.path.realpath(full.parent).startswith(root + os.sep):
        return
    try:
        if not stat.S_ISDIR(full.lstat().st_mode):
            full.unlink()
    except OSError:
        pass


def restore_permissions(top: Path) -> None:
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            full = os.path.join(root, name)
            try:
                if not os.path.islink(full):
                    os.chmod(full, os.stat(full).st_mode | stat.S_IRUSR | stat.S_IWUSR
                             | (stat.S_IXUSR if os.path.isdir(full) else 0))
            except OSError:
                pass


def remove_tree(path: Path) -> None:
    """Remove a file, a symlink (never what it points to) or a directory tree, whatever its permissions."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        path.unlink()
        return

    def retry_writable(function, failed: str, _exc) -> None:
        parent = os.path.dirname(failed)
        try:
            os.chmod(parent, os.stat(parent).st_mode | stat.S_IRWXU)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, os.stat(failed).st_mode | stat.S_IRWXU)
        except OSError:
            pass
        function(failed)

    # A seat may take write permission away from its files; failres gives it back to
    # delete them. (`onerror` is the spelling every supported Python accepts.)
    shutil.rmtree(path, onerror=retry_writable)


def fresh_dir_beside(base: Path, relative: str) -> Path:
    """An empty directory `base/relative` (a dispatch's own, beside a workspace), reached without a link.

    A seat can replace `<task>.dispatch` with a link to the person's checkout: what
    was there is removed, and the new directory made, only when no directory on the way
    is a link (`beneath.Planted` otherwise), so nothing of the person's is deleted.
    """
    from failres import beneath

    parent = os.path.dirname(relative)
    if parent:
        with beneath.opened_dir(base, parent):
            pass
    remove_tree(base / relative)
    beneath.make_dirs(base, relative)
    return base / relative


def leads_into(path: Path, guarded: Iterable[Path]) -> Path | None:
    """The guarded directory that `path`, symlinks followed, lies in or above; None when it is clear.

    A seat can replace its workspace (or a directory on the way to it) by a symlink to
    the person's checkout; every removal and clean-up failres makes there checks this
    first, so that what it deletes is never the person's.
    """
    real = os.path.realpath(path)
    for place in guarded:
        held = os.path.realpath(place)
        if real == held or real.startswith(held.rstrip(os.sep) + os.sep) or held.startswith(real.rstrip(os.sep) + os.sep):
            return Path(held)
    return None


def identity(path: Path) -> tuple[str, int, int]:
    """Where `path` really is, and which directory it is there (device, inode)."""
    real = os.path.realpath(path)
    info = os.lstat(real)
    return real, info.st_dev, info.st_ino


def claim_workspace_path(path: Path, git_dir: Path, state_dir: Path) -> None:
    """Make room at `path` for a new workspace, removing only what failres itself made there.

    A directory failres registered for this task (`<state_dir>/path` names it) is
    failres's and goes; anything else at that path is someone's, and failres refuses.
    """
    from failres import beneath

    # A new run's workspace is not left for a person (yet): `containment.left` notes when it is.
    beneath.remove_file(git_dir, state_dir.relative_to(git_dir) / "left")
    if not path.exists() and not path.is_symlink():
        return
    inside = leads_into(path, (git_dir, git_dir.parent))
    if inside is not None and not path.is_symlink():
        msg = f"cannot create a task workspace at {path}: it leads into {inside} (a directory on the way was replaced)"
        raise GitError(msg, hint=f"remove the symlink on the way to {path}; nothing was touched")
    registered = state_dir / "path"
    ours = registered.exists() and registered.read_text(encoding="utf-8").strip() == str(path)
    if not ours and path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
        return  # an empty directory holds nothing to lose
    if not ours:
        owner = leftover_workspace_of(path)
        ours_objects = os.path.realpath(git_dir / "objects")
        if owner is not None and (os.path.realpath(owner) == ours_objects or not owner.is_dir()):
            # A workspace failres made for a repository at this path that is gone or was
            # made anew (a run killed before it could clean up): no run of this
            # repository registered it, and no other repository's objects back it.
            remove_tree(path)
            return
        if owner is not None:
            msg = f"cannot create a task workspace at {path}: a workspace of the repository at {owner.parent} is there"
            raise GitError(msg, hint=f"run `git failres gc` in that repository, or set [worktrees] dir in "
                                     ".failres.toml apart from its")
        msg = f"cannot create a task workspace at {path}: something that failres did not make is there"
        raise GitError(msg, hint="move it away or set [worktrees] dir in .failres.toml to another directory")
    remove_tree(path)


WORKSPACE_DESCRIPTION = "a failres task workspace\n"  # what failres writes in every seat's `.git/description`


def leftover_workspace_of(path: Path) -> Path | None:
    """The objects directory a workspace failres made at `path` borrows from; None when `path` is not one.

    A workspace is recognised by the seat git dir failres writes as plain files: a real
    `.git` directory (no link on the way) whose `description` is failres's and whose
    `objects/info/alternates` names one objects directory and nothing else.
    """
    dot_git = path / ".git"
    try:
        if not stat.S_ISDIR(path.lstat().st_mode) or not stat.S_ISDIR(dot_git.lstat().st_mode):
            return None
        for part in ("description", "objects", "objects/info", "objects/info/alternates"):
            info = (dot_git / part).lstat()
            if stat.S_ISLNK(info.st_mode):
                return None
        if (dot_git / "description").read_text(encoding="utf-8") != WORKSPACE_DESCRIPTION:
            return None
        lines = (dot_git / "objects" / "info" / "alternates").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if len(lines) != 1 or not lines[0].startswith("/") or not lines[0].endswith("/objects"):
        return None
    return Path(lines[0])


def default_root(common_dir: Path, top: Path) -> Path:
    """Where workspaces go by default: the user's cache, one directory per repository.

    Outside the person's checkout (nothing shows in their `git status`) and outside
    the git dir (agents refuse to edit files under `.git`, and a seat must not find
    the person's repository by looking at its own path).
    """
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha256(str(common_dir.resolve()).encode()).hexdigest()[:10]
    name = "".join(c if c.isalnum() or c in "._-" else "-" for c in top.name) or "repo"
    return cache / "failres" / "workspaces" / f"{name}-{digest}"


# What of the person's local configuration the seat's own git should agree on, so
# that `git status` in the workspace shows the same files as changed as failres sees.
SEAT_IDENTITY = ("failres seat", "seat@failres.invalid")
SEAT_CONFIG_KEYS = ("core.autocrlf", "core.eol", "core.symlinks", "core.ignorecase", "core.precomposeunicode")


def seat_config(git_dir: Path) -> str:
    """The seat's own `.git/config`: the person's settings that decide which files git sees as changed."""
    lines = ["[core]", "\trepositoryformatversion = 0", "\tbare = false", "\tlogallrefupdates = true"]
    try:
        local = pygit2.Config(str(git_dir / "config"))
    except (pygit2.GitError, OSError):
        local = None
    for key in SEAT_CONFIG_KEYS:
        try:
            value = str(local[key]) if local is not None else ""
        except (KeyError, pygit2.GitError, ValueError):
            continue
        if value and "\n" not in value and '"' not in value:
            lines.append(f"\t{key.split('.', 1)[1]} = {value}")
    # An identity of failres's own, so an agent that commits (or checks that it could)
    # in its workspace does not stop to ask for one on a machine that has none. The
    # person's name and address are not handed to the seat: its commits are never kept.
    lines += ["[user]", f"\tname = {SEAT_IDENTITY[0]}", f"\temail = {SEAT_IDENTITY[1]}"]
    return "\n".join(lines) + "\n"
