"""The person's object database around a dispatch: a loose object a seat forged is found and put back.

A loose object is named by the hash of what it holds, and git trusts the name: a seat
that overwrites `objects/ab/cdef...` of an existing blob (the person's test file) makes
`git show main:tests/check.py` print the seat's text, and every checkout of it too.

Hashing every loose object after every dispatch would cost more than the dispatch, so
the suspects are the objects written *during* it: git and a seat alike write a loose
object by creating a file in its fan-out directory (`objects/ab/`), which changes that
directory's modification time. Before the dispatch the 256 directories' times are
recorded; after it, only the directories whose time moved are listed, and only their
files changed since the dispatch began are read and hash-checked. A forged one is moved
into the evidence, and the true object comes back from a pack or from the person's
checkout (a file whose content hashes to that name); when neither has it, the
object is reported as lost, never left forged. A new pack is checked whole with
`git verify-pack`.

An object rewritten in place (its directory's time unchanged) is not a suspect here;
failres checks the hash of every object it puts into a workspace or a commit
(`gitops.verify`), so the gate never judges one.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from failres.gitops.verify import set_aside_broken_pack, set_aside_forged

_FANOUT = tuple(f"{i:02x}" for i in range(256))
# Timestamps a filesystem keeps may lag the clock a little: what changed this close
# before the record is a suspect too (re-hashed, which costs little).
_SLACK_NS = 2_000_000_000


class ObjectWatch:
    """The object database's fan-out directories as they were before a dispatch."""

    def __init__(self, git_dir: Path) -> None:
        self.objects = Path(git_dir) / "objects"
        self.git_dir = Path(git_dir)
        self.since_ns = time.time_ns() - _SLACK_NS
        self.times = self._times()

    def _times(self) -> dict[str, int]:
        # 257 stats at each of a dispatch's two looks: by string, not by Path, whose joins
        # cost more than the stats (1.3 ms a look before, 0.5 after).
        base = os.path.join(self.objects, "")
        found = {}
        for name in (*_FANOUT, "pack"):
            try:
                found[name] = os.stat(base + name).st_mtime_ns
            except OSError:
                found[name] = 0
        return found

    def suspects(self) -> tuple[list[tuple[str, Path]], list[Path]]:
        """(loose objects written since, as (oid, path)), and new pack files."""
        now = self._times()
        loose: list[tuple[str, Path]] = []
        packs: list[Path] = []
        for name, was in self.times.items():
            if now[name] == was and now[name] < self.since_ns:
                continue
            try:
                entries = list(os.scandir(self.objects / name))
            except OSError:
                continue
            for entry in entries:
                try:
                    changed = entry.stat(follow_symlinks=False).st_ctime_ns >= self.since_ns
                except OSError:
                    continue
                if not changed:
                    continue
                if name == "pack":
                    if entry.name.endswith(".pack"):
                        packs.append(Path(entry.path))
                elif len(entry.name) == 38:
                    loose.append((name + entry.name, Path(entry.path)))
        return loose, packs

    def check(self, keep=None) -> list[str]:
        """Hash-check the suspects; put back or report each forged one (lines for the journal)."""
        loose, packs = self.suspects()
        what: list[str] = []
        for oid, path in loose:
            if set_aside_forged(path, oid, keep):
                what.append(f"the object {oid[:12]} did not hold what its name says: {self._put_back(oid)}")
        for pack in packs:
            problem = set_aside_broken_pack(self.git_dir, pack, keep)
            if problem:
                what.append(f"the pack {pack.name} did not verify ({problem}): removed")
        return what

    def _put_back(self, oid: str) -> str:
        import pygit2

        repo = pygit2.Repository(str(self.git_dir))
        try:
            repo.odb.read(oid)
            return "removed; git reads the true object from a pack"
        except (KeyError, ValueError, pygit2.GitError):
            pass
        for path in _checkout_paths_of(repo, oid):
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if _blob_id(data) == oid:
                repo.odb.write(pygit2.GIT_OBJECT_BLOB, data)
                return f"put back from {path.name} in the checkout"
        return "removed; the true object is nowhere to be had (`git fsck` names what needs it)"


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 - git's object names


def _checkout_paths_of(repo, oid: str) -> list[Path]:
    if repo.workdir is None:
        return []
    try:
        index = repo.index
    except Exception:  # noqa: BLE001 - no index: no checkout to recover from
        return []
    return [Path(repo.workdir, entry.path) for entry in index if str(entry.id) == oid]
