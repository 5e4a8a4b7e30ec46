"""Reading back what failres is about to commit, with every object's hash checked.

git reuses an object that already exists under the name it computes, without reading
it: a seat that planted a loose object under the name of the file it is about to write
(same name, other bytes) would have those other bytes committed, behind a green gate.
libgit2 verifies the hash of every object it reads, so reading back the objects a new
tree names on the way to the accepted paths finds such a forgery before any commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pygit2

from failres.errors import GitError


class ObjectsPoisoned(GitError):
    """An object the task's tree names does not hold what its name says: a file planted in
    the person's object database under a name git would reuse instead of writing."""


def verify_objects(git_dir: Path, tree: str, paths: Sequence[str]) -> None:
    """Read back every object on the way to `paths` in `tree`, hash-checked (libgit2 verifies
    each object it reads); a forged loose object is removed and reported."""
    repo = pygit2.Repository(str(git_dir))
    forged: list[str] = []
    for path in paths:
        try:
            entry = repo[tree].peel(pygit2.Tree)[path]
            repo[entry.id].read_raw()
        except KeyError:
            continue  # a deletion: nothing to read
        except pygit2.GitError as error:
            oid = str(error).split(":", 1)[0].strip()
            loose = git_dir / "objects" / oid[:2] / oid[2:]
            if len(oid) == 40 and loose.is_file():
                loose.unlink()
            forged.append(f"{path} ({oid[:12]})")
    if forged:
        msg = f"objects in the repository did not hold what their names say: {', '.join(forged)}"
        raise ObjectsPoisoned(msg, hint="the forged loose objects were removed; `git fsck` checks the rest")
