"""Reading back what failres is about to commit, with every object's hash checked.

git reuses an object that already exists under the name it computes, without reading
it: a seat that planted a loose object under the name of the file it is about to write
(same name, other bytes) would have those other bytes committed, behind a green gate.
libgit2 verifies the hash of every object it reads, so reading back the objects a new
tree names on the way to the accepted paths finds such a forgery before any commit.

A forged file is set aside only after its bytes are read again and found not to be the
object its name says (`set_aside_forged`, `set_aside_broken_pack`): the only way failres
removes a file under an `objects/` directory, so no true object is ever removed, whoever
asks (a shared blob once went missing from the person's database that way).
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import pygit2

from failres.errors import GitError
from failres.gitops.task_objects import TaskObjects

Keep = Callable[[Path, Path], None]  # a copy for the evidence: (file, name to keep it under)


class ObjectsPoisoned(GitError):
    """An object the task's tree names does not hold what its name says: a file planted in
    an object database under a name git would reuse instead of writing."""


def verify_objects(objects: TaskObjects, tree: str, paths: Sequence[str]) -> None:
    """Read back every object on the way to `paths` in `tree`, hash-checked (libgit2 verifies
    each object it reads); a forged loose object is set aside and reported."""
    repo = objects.repo()
    forged: list[str] = []
    for path in paths:
        try:
            entry = repo[tree].peel(pygit2.Tree)[path]
            repo[entry.id].read_raw()
        except KeyError:
            continue  # a deletion: nothing to read
        except pygit2.GitError as error:
            oid = str(error).split(":", 1)[0].strip()
            if len(oid) == 40:
                for directory in (objects.path, objects.person):
                    set_aside_forged(directory / oid[:2] / oid[2:], oid)
            forged.append(f"{path} ({oid[:12]})")
    if forged:
        msg = f"objects in the repository did not hold what their names say: {', '.join(forged)}"
        raise ObjectsPoisoned(msg, hint="the forged loose objects were set aside; `git fsck` checks the rest")


def holds(path: Path, oid: str) -> bool:
    """Whether the loose object file at `path` inflates to an object whose hash is `oid`."""
    try:
        raw = zlib.decompress(path.read_bytes())
    except (OSError, zlib.error):
        return False
    return hashlib.sha1(raw).hexdigest() == oid  # noqa: S324 - git's object names are SHA-1


def set_aside_forged(path: Path, oid: str, keep: Keep | None = None) -> bool:
    """Whether the loose file at `path` is a forgery of `oid`; if so it is removed (a copy kept by `keep` first)."""
    if not path.is_file() or path.is_symlink() or holds(path, oid):
        return False
    if keep is not None:
        keep(path, Path("objects", path.parent.name + path.name))
    try:
        path.unlink()
    except OSError:
        pass  # reported all the same: a forgery left in place is still one
    return True


def pack_problem(git_dir: Path, pack: Path) -> str | None:
    """What `git verify-pack` finds wrong with `pack`, or None (also for a pack still being written)."""
    from failres.gitops.git import try_git

    idx = pack.with_suffix(".idx")
    if not idx.exists():
        return None  # still being written by git, or an orphan git ignores
    done = try_git(git_dir, ["verify-pack", str(idx)], env={"GIT_DIR": str(git_dir)})
    if done.returncode == 0:
        return None
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"exit {done.returncode}"


def set_aside_broken_pack(git_dir: Path, pack: Path, keep: Keep | None = None) -> str | None:
    """Remove `pack` (and its index) if it does not verify; what was wrong with it, or None."""
    problem = pack_problem(git_dir, pack)
    if problem is None:
        return None
    for part in (pack, pack.with_suffix(".idx"), pack.with_suffix(".rev")):
        if part.is_file() and not part.is_symlink():
            if keep is not None:
                keep(part, Path("objects", part.parent.name + part.name))
            part.unlink(missing_ok=True)
    return problem
