"""The person's checkout around a dispatch: a cheap record, an exact comparison, a faithful undo.

One `git status` before and one after. Before, every path status lists (modified,
deleted or untracked: the person's own work in progress) is fingerprinted and its
bytes kept in memory; the index file is kept too. After, the same status and
fingerprints are compared: a file the seat touched always shows, because writing
changes its ctime, which no user program can set back. Only when something differs
does the undo run:

- a path that was the person's work in progress gets its kept bytes back;
- a tracked file that was clean gets the index's version back;
- a file that was not there is moved out of the checkout (into the evidence);
- the index file gets its kept bytes back.

Every version the seat left is copied into the evidence directory first, so nothing
is lost if the change was the person's own, made while the seat ran. Each write of
the undo goes through `beneath` from the checkout's top: a directory the seat
replaced with a link (to the person's `.git`, say) stops that path's restore, and
is reported, rather than receiving the restored file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pygit2

from lessons.frozen import record
from failres import beneath
from failres.containment.evidence import Evidence
from failres.gitops.git import run_git
from failres.gitops.status import parse_status

# What is kept in memory of the person's uncommitted files: a file past this size is
# compared by its fingerprint and reported, not restored.
MAX_KEPT_FILE = 4 * 1024 * 1024
MAX_KEPT_TOTAL = 256 * 1024 * 1024
MAX_KEPT_IGNORED = 16 * 1024 * 1024
# git's own status, on failres's terms: no fsmonitor or hook runs, and stat data is
# trusted only as far as git's default (a seat that rewinds a file's mtime still
# changes its ctime, which `core.trustctime=false` in the person's config would ignore).
_READ_ONLY = ("core.fsmonitor=false", "core.hooksPath=/dev/null", "core.trustctime=true",
              "core.checkStat=default", "core.untrackedCache=false")
# Ignored files too, each by name: a `.env`, a `__pycache__/*.pyc` the next test run
# imports, a `conftest.py` hidden through the global excludes.
_STATUS = ("status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignored=traditional", "--no-renames",
           "--ignore-submodules=all")

Fingerprint = tuple[int, int, int, int, int] | None  # mode, size, mtime_ns, ctime_ns, inode; None: absent


@record
class CheckoutState:
    """The person's checkout at one moment."""

    status: bytes
    prints: dict[str, Fingerprint]  # every path status listed
    kept: dict[str, bytes | None]  # their bytes ("symlink:" + target for a link); None: too large
    index: bytes | None
    index_print: Fingerprint


def fingerprint(path: Path) -> Fingerprint:
    try:
        info = path.lstat()
    except OSError:
        return None
    return (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def listed_paths(raw: bytes) -> list[str]:
    """Every path a `status --porcelain=v2 -z` output names, both halves of a rename included (pure)."""
    paths = []
    for entry in parse_status(raw).entries:
        paths.append(entry.path)
        if entry.original_path:
            paths.append(entry.original_path)
    return paths


def capture(top: Path, git_dir: Path) -> CheckoutState:
    raw = run_git(top, _STATUS, env={"GIT_OPTIONAL_LOCKS": "0", "GIT_DIR": str(git_dir)}, config=_READ_ONLY)
    prints: dict[str, Fingerprint] = {}
    kept: dict[str, bytes | None] = {}
    budget = MAX_KEPT_TOTAL
    # Ignored files (a `.venv/` of thousands) are fingerprinted all, but only so many
    # of their bytes kept: one past that is found changed and reported, not restored.
    ignored_budget = MAX_KEPT_IGNORED
    ignored = {entry.path for entry in parse_status(raw).entries if entry.ignored}
    for path in listed_paths(raw):
        full = top / path
        prints[path] = fingerprint(full)
        if path in ignored:
            data = _read(full, min(MAX_KEPT_FILE, ignored_budget))
            ignored_budget -= len(data) if data is not None else 0
        else:
            data = _read(full, min(MAX_KEPT_FILE, budget))
            budget -= len(data) if data is not None else 0
        kept[path] = data
    index_file = git_dir / "index"
    try:
        index = index_file.read_bytes()
    except OSError:
        index = None
    return CheckoutState(raw, prints, kept, index, fingerprint(index_file))


def after_merge(top: Path, git_dir: Path, before: CheckoutState, old: str, new: str) -> CheckoutState:
    """The record `before` as a person's `land` from `old` to `new` left it: the index that merge wrote.

    The merge changed tracked files and the index; with the new index as the record, a
    file the merge wrote matches it, and one the seat changed is put back to the merge's
    version, not to what it was before the merge.
    """
    from dataclasses import replace

    index_file = git_dir / "index"
    try:
        index = index_file.read_bytes()
    except OSError:
        return before
    return replace(before, index=index, index_print=fingerprint(index_file))


def _read(path: Path, limit: int) -> bytes | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return b"symlink:" + os.fsencode(os.readlink(path))
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def changed_paths(before: CheckoutState, after: CheckoutState) -> list[str]:
    """Paths whose state differs between two records (pure)."""
    paths = set(before.prints) | set(after.prints)
    return sorted(p for p in paths if before.prints.get(p, _UNLISTED) != after.prints.get(p, _UNLISTED))


_UNLISTED = ("unlisted",)


def differs(before: CheckoutState, after: CheckoutState) -> bool:
    return (before.status != after.status or before.prints != after.prints
            or before.index_print != after.index_print)


def restore(top: Path, git_dir: Path, before: CheckoutState, after: CheckoutState,
            evidence: Evidence) -> tuple[list[str], list[str], list[str]]:
    """Put the checkout back to `before`; (paths restored, paths that could not be, evidence not kept)."""
    restored, failed = [], []
    changed = changed_paths(before, after)
    unkept = [problem for path in changed if (problem := evidence.keep(top / path, Path("checkout", path)))]
    if before.index is not None and after.index_print != before.index_print:
        beneath.replace_file(git_dir, "index", before.index)
    tracked = _index_entries(before.index)
    repo = pygit2.Repository(str(git_dir))
    for path in changed:
        try:
            if path in before.kept:
                data = before.kept[path]
                if data is None and before.prints.get(path) is not None:
                    failed.append(path)
                    continue
                _remove(top, path)
                if data is not None:
                    _write(top, path, data)
            elif path in tracked:
                mode, oid = tracked[path]
                blob = repo[oid].data
                _remove(top, path)
                _write(top, path, b"symlink:" + blob if mode == pygit2.GIT_FILEMODE_LINK else blob,
                       executable=mode == pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)
            else:
                _remove(top, path)  # it was not there before: planted
            restored.append(path)
        except (OSError, ValueError):
            failed.append(path)
    return restored, failed, unkept


def _index_entries(index_bytes: bytes | None) -> dict[str, tuple[int, pygit2.Oid]]:
    """path -> (mode, blob id) of every entry of an index file's bytes."""
    if not index_bytes:
        return {}
    with tempfile.TemporaryDirectory(prefix="failres-index-") as scratch:
        index_file = Path(scratch) / "index"
        index_file.write_bytes(index_bytes)
        try:
            index = pygit2.Index(str(index_file))
        except (pygit2.GitError, ValueError):
            return {}
        return {entry.path: (entry.mode, entry.id) for entry in index}  # type: ignore[misc]


def _write(top: Path, path: str, data: bytes, *, executable: bool = False) -> None:
    if data.startswith(b"symlink:"):
        beneath.make_symlink(top, path, data.removeprefix(b"symlink:"))
        return
    beneath.replace_file(top, path, data, mode=0o755 if executable else 0o644)


def _remove(top: Path, path: str) -> None:
    """Remove what is at `path`, but only when no directory on the way there is a link."""
    from failres.gitops.workspace import remove_tree

    parent = Path(path).parent
    if parent != Path("."):
        try:
            with beneath.opened_dir(top, parent, create=False):
                pass
        except FileNotFoundError:
            return  # its directory is gone: so is it
    remove_tree(top / path)
