"""Joining another replica's line of the store into the local one, and settling the result.

The store is add-only, so two diverged replicas merge as a union of files (see
`Store.merge`). One pair of facts still needs a follow-up: a replica that
archived a record (moved `<collection>/.../X.json` and its amendments to
`archive/<collection>/.../`, the same relative path) and another that wrote a new
amendment `X+Y.json` beside the live record. The union keeps both, which leaves
the new amendment orphaned at the live path while its record sits in the
archive: readers of the live tree would skip it, and a restore would not bring
it back with its record.

The rule, the same whichever side merges which: an amendment `X+Y.json` that
the merge leaves without its record `X.json` in its directory, while the record
is in the counterpart directory (live <-> archive), moves beside its record with
its bytes unchanged. The reverse case is the same rule: an amendment written into
the archive beside a record that the other side restored moves to the live tree.
Both facts stay in history: each side's commit is a parent of the merge.

`join` lands the other line on the local ref without starving behind local
writers: a merge of two long lines takes longer to build than a single record
takes to append, so a merge built on the tip and moved by compare-and-swap
would lose every race against a busy writer. Instead the merge is built on a
private scratch ref nobody else writes, starting at the local tip, and each lost
race only merges in the few records written locally meanwhile, until a
fast-forward of the local ref lands.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pygit2

from lessons.errors import StoreBusy
from lessons.storage.guard import note_tip
from lessons.storage.history import check_line, merge_line
from lessons.storage.records import AMEND_SEP
from lessons.storage.store import Change, Store
from lessons.storage.treediff import tree_changes

ARCHIVE_PREFIX = "archive/"
# One scratch ref per repository: joins of one store must take turns (sync holds a lock).
SCRATCH_REF = "refs/failres-join/merge"
OPTIMISTIC_CATCH_UPS = 8  # lost races before a catch-up holds the local writers back

_BLOB = pygit2.GIT_FILEMODE_BLOB


def counterpart_dir(directory: str) -> str:
    """The same relative directory on the other side of the archive boundary."""
    if directory.startswith(ARCHIVE_PREFIX):
        return directory[len(ARCHIVE_PREFIX):]
    return ARCHIVE_PREFIX + directory


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _record_of(name: str) -> str | None:
    """`X` for an amendment file `X+Y.json`; None for anything else."""
    if not name.endswith(".json") or AMEND_SEP not in name:
        return None
    return name[: -len(".json")].split(AMEND_SEP, 1)[0]


def orphan_moves(store: Store, tree: pygit2.Tree, directories: Iterable[str] | None = None,
                 base: pygit2.Tree | None = None) -> Change:
    """The moves that put orphaned amendments beside their record.

    Only `directories` (and their counterparts) are looked at, so the cost follows
    the size of a merge rather than of the store; None looks at the whole tree.
    An amendment that was already orphaned in `base` is left alone: the merge did
    not make it so, and leaving it makes the result independent of which side's
    directories were looked at.
    """
    if directories is None:
        directories = {_parent(path) for path, _ in _walk_files(store, tree)}
    puts: dict[str, bytes] = {}
    deletes: set[str] = set()
    seen: set[str] = set()
    for directory in directories:
        for here in (directory, counterpart_dir(directory)):
            if here in seen or not here:
                continue
            seen.add(here)
            _plan_moves(store, tree, base, here, puts, deletes)
    return Change(puts, frozenset(deletes))


def _orphans(store: Store, tree: pygit2.Tree | None, directory: str) -> dict[str, pygit2.Oid]:
    """name -> blob of the amendments in `directory` whose record sits in the counterpart directory."""
    files = store.files_in(tree, directory) if tree is not None else {}
    other: dict[str, pygit2.Oid] | None = None
    found = {}
    for name, oid in files.items():
        record = _record_of(name)
        if record is None or f"{record}.json" in files:
            continue
        if other is None:
            other = store.files_in(tree, counterpart_dir(directory))
        if f"{record}.json" in other:
            found[name] = oid
    return found


def _plan_moves(store: Store, tree: pygit2.Tree, base: pygit2.Tree | None, directory: str,
                puts: dict[str, bytes], deletes: set[str]) -> None:
    orphans = _orphans(store, tree, directory)
    if not orphans:
        return
    inherited = _orphans(store, base, directory)
    other_dir = counterpart_dir(directory)
    other = store.files_in(tree, other_dir)
    for name, oid in sorted(orphans.items()):
        if inherited.get(name) == oid:
            continue
        deletes.add(f"{directory}/{name}")
        existing = other.get(name)
        # The same amendment on both sides is one fact; if the bytes ever differ,
        # the smaller blob id wins, the tie rule `Store.merge` uses, so the merge
        # order cannot change the result.
        if existing is None or str(oid) < str(existing):
            puts[f"{other_dir}/{name}"] = store.blob(oid)


def _walk_files(store: Store, tree: pygit2.Tree, base: str = "") -> Iterable[tuple[str, pygit2.Oid]]:
    for entry in tree:
        path = f"{base}/{entry.name}" if base else entry.name
        if entry.filemode == pygit2.GIT_FILEMODE_TREE:
            yield from _walk_files(store, store.repo[entry.id], path)
        else:
            yield path, entry.id


def changed_directories(store: Store, old: pygit2.Tree | None, new: pygit2.Tree) -> set[str]:
    """The parent directory of every file that differs between two trees."""
    return {_parent(path) for path, _, _ in tree_changes(store.repo, old, new)}


def settle_merge(store: Store, theirs: pygit2.Commit) -> Callable[[pygit2.Tree], Change]:
    """A `settle` step for `merge_line(store, theirs, settle=...)`.

    It looks only where theirs changed something since the merge base: a merge
    makes an orphan only where one side's amendment meets the other side's move
    of its record, and theirs touched that directory either way (it added the
    amendment, or it moved the record away). So the cost follows what theirs
    brought, not what this side holds. The local parent is the store tip at the
    moment the merge is built (a merge whose tip moved meanwhile loses its
    compare-and-swap and is rebuilt, calling this again).
    """

    def settle(merged: pygit2.Tree) -> Change:
        if ARCHIVE_PREFIX.rstrip("/") not in merged:
            return Change()  # nothing archived on either side: no record can be on the other side of it
        ours = store.commit_at()
        base_id = store.repo.merge_base(ours.id, theirs.id) if ours is not None else None
        base = store.repo[base_id].tree if base_id is not None else None
        return orphan_moves(store, merged, changed_directories(store, base, theirs.tree), base)

    return settle


def join(store: Store, theirs: pygit2.Oid, message: str, *, scratch_ref: str = SCRATCH_REF,
         name: str | None = None) -> tuple[str, pygit2.Oid | None]:
    """Bring another line of the store (`theirs`) into the local ref.

    Returns how, and the commit the local ref moved to: ("adopted", theirs) when
    there was no local store, ("up-to-date", None) when the local store already
    holds theirs, ("fast-forward", theirs), or ("merged", the merge commit).
    A malformed line (see `lessons.storage.guard`) is refused as `name` before anything moves.
    """
    repo = store.repo
    check_line(store, theirs, name=name or f"the store line {str(theirs)[:12]}")
    if store.tip() is None:
        try:
            repo.create_reference(store.ref, theirs, force=False, message=message)
            store.require()  # opts the ref into a reflog for the writes that follow
            note_tip(store.common_dir, store.ref, theirs)  # a deletion of the adopted store is seen too
            return "adopted", theirs
        except (pygit2.AlreadyExistsError, ValueError, pygit2.GitError):
            pass  # a local writer created the store meanwhile: join into it instead
    local = store.tip()
    assert local is not None
    if local == theirs or repo.descendant_of(local, theirs):
        return "up-to-date", None
    if repo.descendant_of(theirs, local):
        if _fast_forward(store, local, theirs, message):
            return "fast-forward", theirs
        local = store.tip()  # a local write came first: merge instead
        assert local is not None
    # Built on a scratch ref that starts at the local tip: the first merge costs
    # what theirs brought; each catch-up after a lost race costs only what was
    # written locally meanwhile.
    repo.create_reference(scratch_ref, local, force=True)
    scratch = Store(repo, scratch_ref)
    try:
        # Checked above against the local tip, where the scratch ref starts: not walked again.
        merge_line(scratch, theirs, message, settle=settle_merge(scratch, repo[theirs]), checked=True)
        for _ in range(OPTIMISTIC_CATCH_UPS):
            candidate = scratch.tip()
            assert candidate is not None
            if _fast_forward(store, local, candidate, message):
                return "merged", candidate
            local = store.tip()
            assert local is not None
            merge_line(scratch, local, message, settle=settle_merge(scratch, repo[local]))
        return "merged", _catch_up_holding_the_lock(store, scratch, message)
    finally:
        repo.references.delete(scratch_ref)


def _catch_up_holding_the_lock(store: Store, scratch: Store, message: str) -> pygit2.Oid:
    """The last catch-up, with the local writers held back.

    A writer that appends faster than a catch-up merge takes would win every race
    for ever. Holding the lock every store writer takes before it moves the ref
    makes them wait (for one small merge) instead; they then find the ref moved
    and rebuild on it, as after any lost race.
    """
    with store.locked():
        local = store.tip()
        assert local is not None
        merge_line(scratch, local, message, settle=settle_merge(scratch, store.repo[local]))
        candidate = scratch.tip()
        assert candidate is not None
        ref = store.repo.references[store.ref]
        try:
            if ref.target != local:
                raise ValueError  # moved by something that does not take the lock (plain git)
            ref.set_target(candidate, message.splitlines()[0])
        except (ValueError, OSError, pygit2.GitError):
            msg = f"the store ref {store.ref} moved outside failres while another line was joined into it"
            raise StoreBusy(msg, hint="nothing was lost; run the command again") from None
        return candidate


def _fast_forward(store: Store, expected: pygit2.Oid, new: pygit2.Oid, message: str) -> bool:
    """Move the local ref from `expected` to its descendant `new`, unless it moved meanwhile.

    Through the store's own compare-and-swap: every writer of the ref takes the
    same lock before moving it, and a ref moved around that lock could make a
    writer fail rather than retry.
    """
    return store.compare_and_swap(expected, new, message.splitlines()[0])
