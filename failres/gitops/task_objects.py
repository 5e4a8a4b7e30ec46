"""A task's own object directory: what failres hashes for a task stays there until it is committed.

Under `run --jobs`, task a's red attempt once hashed a blob X into the person's object
database; task b committed a tree holding the same X; when a was done, the clean-up of
a's "fresh" objects removed X, and `git fsck` said `missing blob`, `land` failed with
`unable to read sha1 file`, a lesson was lost the same way. Identical blobs across tasks
are ordinary (an empty file, boilerplate, a reverted line): no object in a shared
database is ever one task's to remove, so failres removes none.

Instead, as git's receive-pack quarantine (`tmp_objdir`) does, every object failres
writes for a task goes into `<git dir>/failres/workspaces/<slug>/<task>/objects`, with the
person's database as an alternate (git: `GIT_OBJECT_DIRECTORY` and
`GIT_ALTERNATE_OBJECT_DIRECTORIES`; pygit2: an object database on that directory with the
person's as alternate). What a task commit or a snapshot needs is copied into the
person's database when it is made (`bring_in`), and nothing else: the person's objects
only grow, and only by what is committed. An aborted attempt's objects go with the
task's directory, which is not the repository's.

A seat's own `.git` borrows the person's database alone (read-only inside the seat world):
its HEAD and index are the task's start, and the task's progress reaches it as plain files,
so it needs none of what failres hashed for earlier dispatches, and finds none of it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from lessons.frozen import record

_GITLINK = 0o160000  # a submodule's commit: another repository's object, never copied


@record
class TaskObjects:
    """The object directory of one task, beside the person's database it borrows from."""

    git_dir: Path
    path: Path  # `<git dir>/failres/workspaces/<slug>/<task>/objects`

    @property
    def person(self) -> Path:
        return self.git_dir / "objects"

    def env(self, *, into: Path | None = None) -> dict[str, str]:
        """For a git process: write into this directory (or `into`), read the person's and this one too."""
        borrowed = [self.person] if into is None else [self.path, self.person]
        return {"GIT_OBJECT_DIRECTORY": str(into or self.path),
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.pathsep.join(str(p) for p in borrowed)}

    def repo(self, *also: Path) -> pygit2.Repository:
        """A pygit2 repository that writes objects here and reads the person's (and `also`) as well.

        It has no refs: refs are moved on the person's repository, after `bring_in`.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        odb = pygit2.Odb(str(self.path))
        for directory in (self.person, *also):
            odb.add_disk_alternate(str(directory))
        repo = pygit2.Repository()
        repo.set_odb(odb)
        return repo

    def bring_in(self, oid: str) -> int:
        """Copy into the person's database every object reachable from `oid` that it lacks; how many.

        Each object is read hash-checked (libgit2 verifies what it reads) and written
        afresh, never linked: a seat that reached this directory and kept a link to a
        file in it could otherwise rewrite an object of the person's later. Children are
        written before what names them, so no reader of the person's database ever
        finds a tree whose blobs are not there yet.
        """
        person = pygit2.Repository(str(self.git_dir))
        if person.odb.exists(oid):
            return 0
        task = self.repo()
        written = 0
        done: set[str] = set()
        stack: list[tuple[str, bool]] = [(oid, False)]
        while stack:  # depth first, each object written once all it names is
            current, named_done = stack.pop()
            if current in done:
                continue
            if named_done:
                kind, data = task.odb.read(current)
                person.odb.write(kind, data)
                done.add(current)
                written += 1
                continue
            if person.odb.exists(current):
                done.add(current)  # the person's already: so is everything it names
                continue
            stack.append((current, True))
            stack.extend((name, False) for name in _named_by(task, current) if name not in done)
        return written


def _named_by(repo: pygit2.Repository, oid: str) -> list[str]:
    obj = repo[oid]
    if isinstance(obj, pygit2.Tree):
        return [str(entry.id) for entry in obj if entry.filemode != _GITLINK]
    if isinstance(obj, pygit2.Commit):
        return [str(obj.tree_id), *(str(p) for p in obj.parent_ids)]
    if isinstance(obj, pygit2.Tag):
        return [str(obj.target)]
    return []
