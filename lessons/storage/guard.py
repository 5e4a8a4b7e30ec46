"""The store is never silently replaced, and no tree is trusted as a store unchecked.

Two ways a person's records used to vanish without a word:

- The store ref was deleted (by a person, a script, a "clean up refs" tool) and the
  next write created an empty store in its place: journal, lessons and facts were
  gone from the ref, and nothing said so. Now only an explicit `Store.create()` (what
  `git failres init` calls) makes a store, and it refuses too when something shows a
  store existed here: its reflog, the last tip failres wrote, the SQLite index, a
  remote-tracking copy. The refusal names what it found and the one
  command that restores the store. We refuse rather than restore on our own: the
  deletion may have been deliberate, and which tip to bring back (the local one, or a
  remote's that lacks local records) is the person's call.
- A tree offered as a store (a remote's tip, a ref someone pointed elsewhere) had
  `journal` as a file, say. The union merge read that as "every journal record
  deleted" and pushed the result back. Now every tree is checked against the layout
  before it is merged or trusted (`layout_problems`), and a malformed one is refused
  by name with nothing changed.

Library code: it raises `StoreMissing` / `StoreDamaged`; the caller decides what a
person sees. Note that `git update-ref -d` deletes a ref's reflog with it, which is
why the last tip failres wrote is kept in a file of its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from lessons.frozen import record
from lessons.errors import StoreDamaged, StoreMissing
from lessons.storage.plain_repo import MODE_GITLINK, MODE_TREE

if TYPE_CHECKING:  # the guard reads over pygit2's repository or a `PlainRepository` alike
    import pygit2

    from lessons.storage.store import Store

# Collections of records: how many scope directories sit between the collection and
# its two fan-out levels (`journal/<slug>/ab/cd/<id>.json`, `lessons/ab/cd/<id>.json`).
SCOPE_LEVELS = {
    "lessons": 0, "decisions": 0, "facts": 0, "proposals": 0, "reflections": 0, "mined": 0,
    "journal": 1, "validations": 1,
}
FILE_DIRECTORIES = frozenset({"rules"})  # directories of plain files a person may edit
ARCHIVE = "archive"  # mirrors the collections, path for path
KNOWN_TOP = frozenset({*SCOPE_LEVELS, *FILE_DIRECTORIES, ARCHIVE})

_TREE = MODE_TREE
_FILES = (0o100644, 0o100755)  # git's modes of a file and of an executable one
_LINK = 0o120000
_ZERO = "0" * 40


# ── the layout ───────────────────────────────────────────────────────────────

@record
class _Shape:
    """What a directory of the store holds: `named` entries with shapes of their own
    (tolerating unknown names, which a newer failres may write), or, for every entry,
    one shape (`each`), or files (`each` None and `named` None)."""

    named: dict[str, _Shape] | None = None
    each: _Shape | None = None
    files: bool = False


_FILE_DIR = _Shape(files=True)


def _collection_shape(scope_levels: int) -> _Shape:
    shape = _Shape(each=_Shape(each=_FILE_DIR))  # the two fan-out levels, then record files
    for _ in range(scope_levels):
        shape = _Shape(each=shape)
    return shape


_COLLECTIONS = {name: _collection_shape(levels) for name, levels in SCOPE_LEVELS.items()}
_ROOT = _Shape(named={**_COLLECTIONS, **{name: _FILE_DIR for name in FILE_DIRECTORIES},
                      ARCHIVE: _Shape(named=dict(_COLLECTIONS))})


def _entry_problem(path: str, mode: int, want_tree: bool | None) -> str | None:
    if mode == MODE_GITLINK:
        return f"{path} is a submodule link, which a store never holds"
    if mode == _LINK:
        return f"{path} is a symbolic link, which a store never holds"
    if want_tree is True and mode != _TREE:
        return f"{path} is a file where the store keeps a directory"
    if want_tree is False and mode not in _FILES:
        return f"{path} is a directory where the store keeps files"
    return None


def layout_problems(repo: pygit2.Repository, tree: pygit2.Tree, *, base: pygit2.Tree | None = None,
                    deep: bool = True, limit: int = 5) -> list[str]:
    """What makes `tree` unfit as a store (a path and why each), at most `limit`; [] when sound.

    Subtrees identical to the same path in `base` (a tree already trusted, such as
    the merge base) are not read again, so checking what a remote brought costs what
    it changed. `deep=False` reads only the top two levels: enough to catch a
    collection or a fan-out directory replaced by a file, at a cost that does not
    grow with the store (what every command pays on its way in).
    """
    problems: list[str] = []
    names = {entry.name for entry in tree}
    if names and not names & KNOWN_TOP:
        shown = ", ".join(sorted(names)[:3])
        return [f"its tree holds {shown}{', ...' if len(names) > 3 else ''} and none of the store's "
                "directories (lessons, journal, decisions, ...): it is not a failres store"]
    for problem in _walk(repo, tree, base, _ROOT, "", 1 if not deep else -1):
        problems.append(problem)
        if len(problems) >= limit:
            break
    return problems


def _walk(repo: pygit2.Repository, tree: pygit2.Tree, base: pygit2.Tree | None, shape: _Shape, path: str,
          depth: int) -> Iterator[str]:
    if shape.files:  # a directory of record files, the most common by far: only the modes to look at
        for entry in tree:
            if entry.filemode not in _FILES:
                yield _entry_problem(f"{path}/{entry.name}" if path else entry.name, entry.filemode, False)
        return
    known = {entry.name: entry.id for entry in base} if base is not None else {}
    for entry in tree:
        where = f"{path}/{entry.name}" if path else entry.name
        if shape.files:
            child, want_tree = None, False
        elif shape.named is not None:
            child = shape.named.get(entry.name)
            want_tree = None if child is None else True
        else:
            child, want_tree = shape.each, True
        problem = _entry_problem(where, entry.filemode, want_tree)
        if problem is not None:
            yield problem
            continue
        if child is None or depth == 0 or known.get(entry.name) == entry.id:
            continue
        sub = repo.get(entry.id)
        if _type(sub) != "tree":
            yield f"{where} is missing from this repository (a partial fetch?)"
            continue
        old = repo.get(known[entry.name]) if entry.name in known else None
        yield from _walk(repo, sub, old if _type(old) == "tree" else None, child, where, depth - 1)


def check_store_commit(repo: pygit2.Repository, oid: pygit2.Oid, *, name: str,
                       base: pygit2.Tree | None = None, deep: bool = True) -> pygit2.Commit:
    """The commit `oid` names, checked as a store tip; StoreDamaged naming `name` otherwise."""
    obj = repo.get(oid)
    if obj is None:
        msg = f"{name} points at {str(oid)[:12]}, which is not in this repository"
        raise StoreDamaged(msg)
    if _type(obj) != "commit":
        msg = f"{name} points at a {_kind(obj)} ({str(oid)[:12]}), not a store commit"
        raise StoreDamaged(msg, hint=_peel_hint(obj))
    problems = layout_problems(repo, obj.tree, base=base, deep=deep)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        msg = f"{name} at {str(oid)[:12]} is not a sound store: {problems[0]}{more}"
        raise StoreDamaged(msg)
    return obj


def _type(obj: object) -> str | None:
    return getattr(obj, "type_str", None)


def _kind(obj: pygit2.Object) -> str:
    found = _type(obj)
    return found if found in ("blob", "tree", "tag") else "non-commit object"


def _peel_hint(obj: pygit2.Object) -> str | None:
    if _type(obj) == "tag":
        import pygit2  # only pygit2's repository gives a tag (a `PlainRepository` reads none)

        try:
            return f"the tag names commit {obj.peel(pygit2.Commit).id}; a store ref names a commit directly"
        except (ValueError, pygit2.GitError, KeyError):
            return None
    return None


# ── signs that a missing store existed ───────────────────────────────────────

@record
class Trace:
    """One sign that a store existed: where it was seen, and the commit it was at, if known."""

    source: str
    commit: str | None = None


def last_tip_path(common_dir: Path, ref: str) -> Path:
    """Where failres notes the last tip it moved `ref` to (a deleted ref takes its reflog along)."""
    return common_dir / "failres" / ("last-tip-" + ref.replace("/", "-"))


def existence_traces(store: Store, *, ignore_remote: str | None = None) -> list[Trace]:
    """Everything in the repository that shows `store.ref` existed, newest evidence first."""
    # Snapshot refs are not counted: a sync may bring them before any store exists here.
    return [*_reflog_traces(store), *_last_tip_traces(store), *_index_traces(store),
            *_remote_traces(store, ignore_remote)]


def _reflog_traces(store: Store) -> list[Trace]:
    log = store.common_dir / "logs" / store.ref
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    for line in reversed(lines):
        old, new = (line.split(" ", 2) + ["", ""])[:2]
        for oid in (new, old):
            if len(oid) == 40 and oid != _ZERO:
                return [Trace("its reflog", oid)]
    return []


def _last_tip_traces(store: Store) -> list[Trace]:
    try:
        oid = last_tip_path(store.common_dir, store.ref).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return []
    whole = len(oid) == 40 and all(c in "0123456789abcdef" for c in oid)  # a torn note is no note
    return [Trace("the last tip failres wrote", oid)] if whole else []


def _index_traces(store: Store) -> list[Trace]:
    from lessons.storage.index_db import index_file

    path = index_file(store.common_dir, store.ref)
    if not path.exists():
        return []
    import sqlite3  # here: a store with a tip, what every read meets, never opens an index

    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return []
    if row is None or not row[0]:
        # An index of no store (older versions wrote one on a read before `init`)
        # shows nothing: a cache of nothing is no sign that a store existed.
        return []
    return [Trace("the SQLite index", row[0])]


def _remote_traces(store: Store, ignore_remote: str | None) -> list[Trace]:
    suffix = "/" + store.ref.removeprefix("refs/")
    traces = []
    for name in store.repo.references:
        if not name.startswith("refs/remotes/") or not name.endswith(suffix):
            continue
        remote = name[len("refs/remotes/"):-len(suffix)]
        if remote == ignore_remote:
            continue
        target = store.repo.references[name].target
        traces.append(Trace(f"{name} (the copy from {remote})", None if isinstance(target, str) else str(target)))
    return traces


def restorable(store: Store, traces: list[Trace]) -> str | None:
    """The newest traced commit still in the object database (gc has not pruned it)."""
    for trace in traces:
        if trace.commit and _type(store.repo.get(trace.commit)) == "commit":
            return trace.commit
    return None


def missing_store_error(store: Store, traces: list[Trace], *, creating: bool = False) -> StoreMissing:
    """Why a missing store is refused, with the command that brings it back.

    Where a remote holds the store (or may: one that only the network could
    tell), the hint names `git failres sync REMOTE`: in a clone of a team's
    repository that is the way to the team's records, and `init` alone would
    start an unrelated empty store beside them.
    """
    from lessons.storage.remote_copies import remote_copies, sync_hint

    copies = remote_copies(store.repo, store.ref)
    if not traces:
        msg = f"there is no store at {store.ref} in this repository"
        held = [copy for copy in copies if copy.seen != "unchecked"]
        if held:
            hint = f"{sync_hint(held)} (`git failres init` takes it too)"
        elif copies:
            hint = f"create it with `git failres init`, or, {sync_hint(copies)}"
        else:
            hint = "create it with `git failres init`"
        return StoreMissing(msg, hint=hint)
    seen = ", ".join(trace.source for trace in traces)
    what = "creating an empty one would hide it" if creating else "nothing was written"
    msg = f"the store {store.ref} is gone, but {seen} show(s) it existed; {what}"
    local = [trace for trace in traces if not trace.source.startswith("refs/remotes/")]
    fetched = [copy for copy in copies if copy.seen == "fetched"]
    if not local and fetched:
        # Only a remote's copy shows it: a sync with that remote takes it back (it is
        # not held against that remote's own sync, see `verify_store`).
        hint = (f"take it back from {fetched[0].remote} with `git failres sync {fetched[0].remote}`; to start "
                "an empty store instead, run `git failres init --new-store`")
        return StoreMissing(msg, hint=hint)
    commit = restorable(store, [*_reflog_commits(store), *traces])
    if commit is not None:
        hint = (f"restore it with `git update-ref {store.ref} {commit}`; to start an empty store "
                "instead, run `git failres init --new-store`")
    else:
        hint = ("its commits are no longer in this repository; fetch them back (`git failres sync`) "
                "or start an empty store with `git failres init --new-store`")
    return StoreMissing(msg, hint=hint)


def refused_ref(store: Store, why: str | None) -> StoreDamaged:
    """The refusal of a store ref that names no commit: what it names, and the commit to point it back at."""
    if why is None:
        target = store.repo.references[store.ref].target
        obj = store.repo.get(target)
        kind = "nothing in this repository" if obj is None else f"a {_kind(obj)}"
        why = f"points at {kind} ({str(target)[:12]}), not a store commit"
        peeled = _peel_hint(obj) if obj is not None else None
        if peeled:
            return StoreDamaged(f"the store ref {store.ref} {why}", hint=peeled)
    return StoreDamaged(f"the store ref {store.ref} {why}", hint=damaged_ref_hint(store))


def verify_store(store: Store, *, ignore_remote: str | None = None) -> None:
    """Refuse a store that cannot be trusted, before anything reads or writes it.

    A missing ref is fine when nothing shows a store ever existed here (reads see an
    empty store; writes say to run `git failres init`); when something does, it is an
    error naming what, and how to restore it. An existing tip must be a commit whose
    top two levels have the store's layout (cheap, whatever the store's size).
    """
    tip = store.tip()
    if tip is None:
        traces = existence_traces(store, ignore_remote=ignore_remote)
        if traces:
            raise missing_store_error(store, traces)
        return
    check_store_commit(store.repo, tip, name=f"the store {store.ref}", deep=False)


def note_tip(common_dir: Path, ref: str, tip: pygit2.Oid) -> None:
    """Remember where `ref` is, outside the ref: `git update-ref -d` deletes a ref's reflog
    with it, and this note is what still shows, after such a deletion, where the store was."""
    path = last_tip_path(common_dir, ref)
    try:
        # Written in place: every note has the same length, and a torn one reads as
        # no note (it is checked for 40 hex digits), never as a wrong tip.
        path.parent.mkdir(exist_ok=True)  # a fresh repository has no failres directory yet
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.pwrite(fd, f"{tip}\n".encode("ascii"), 0)
        finally:
            os.close(fd)
    except OSError:
        pass  # a note, not a record: a write must not fail for want of it


def damaged_ref_hint(store: Store) -> str:
    """What to do about a store ref that names no commit: the last good tip, when one is known."""
    commit = restorable(store, [*_reflog_commits(store), *_last_tip_traces(store), *_index_traces(store)])
    if commit is not None:
        return f"point it back at the last store commit: `git update-ref {store.ref} {commit}`"
    return f"point it at a store commit with `git update-ref {store.ref} <commit>`"


def _reflog_commits(store: Store) -> list[Trace]:
    """Every commit the ref's reflog names, newest first (the latest entry may be the damage)."""
    log = store.common_dir / "logs" / store.ref
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    traces = []
    for line in reversed(lines):
        for oid in reversed(line.split(" ", 2)[:2]):  # where it moved to, then where from
            if len(oid) == 40 and oid != _ZERO:
                traces.append(Trace("its reflog", oid))
    return traces
