"""History operations on a store: undo one write, merge another line of the store.

Both work on trees in memory and land through the store's compare-and-swap, so
they are as safe against concurrent writers and crashes as any append.
"""

from __future__ import annotations

import json
import random
import time
import tomllib
from collections.abc import Callable

import pygit2

from lessons.errors import InvalidInput, NotFound, StoreBusy
from lessons.storage.store import MAX_CAS_ATTEMPTS, Change, Store, entry_id


def undo_commit(store: Store, rev: str) -> pygit2.Oid:
    """Revert exactly one store commit, as a new commit on the tip.

    Refused when a later write changed what that commit wrote (undo those first),
    for merge and root commits, and for commits that are not the store's.
    """
    target = store.commit_at(rev)
    if target is None or not store.reachable(target.id):
        msg = f"{rev} is not a commit of the store {store.ref}"
        raise NotFound(msg)
    if len(target.parents) != 1:
        msg = f"{rev} is a {'merge' if target.parents else 'root'} commit; undo takes one ordinary store commit"
        raise InvalidInput(msg, hint="revert the individual writes instead")
    parent = target.parents[0]
    changes = list(store.diff_changes(parent.tree, target.tree))

    def inverse(tip: pygit2.Commit | None) -> Change:
        puts: dict[str, pygit2.Oid] = {}
        deletes: set[str] = set()
        conflicts: list[str] = []
        for path, before, after in changes:
            now = entry_id(tip.tree, path) if tip else None
            if now != after:
                if now == before:
                    continue  # already undone by a later write
                conflicts.append(path)
            elif before is None:
                deletes.add(path)
            else:
                puts[path] = before
        if conflicts:
            msg = f"cannot undo {str(target.id)[:12]}: later writes changed {', '.join(sorted(conflicts)[:3])}"
            raise InvalidInput(msg, hint="undo the later writes first (see git log -p " + store.ref + ")")
        return Change(puts, frozenset(deletes))

    summary = target.message.splitlines()[0] if target.message else ""
    oid = store.commit(inverse, f'failres: undo {str(target.id)[:12]} "{summary}"')
    if oid is None:
        msg = f"{str(target.id)[:12]} is already undone"
        raise InvalidInput(msg)
    return oid


def merge_line(store: Store, other: pygit2.Oid | str, message: str | None = None,
               settle: Callable[[pygit2.Tree], Change] | None = None, *, checked: bool = False) -> pygit2.Oid | None:
    """Join another line of this store into the local tip: one merge commit.

    The rule is a union: every file added on either side is kept; a file the
    other side deleted (archived) is deleted here unless this side changed it.
    Where both sides wrote the same path with different bytes, the blob with the
    smaller id wins, so both merge orders give the same tree; the other version
    stays in the history of its parent. A version that does not parse as what its
    name says never replaces one that does (a damaged or hostile remote). `settle` may add a follow-up change
    computed from the merged tree (records that must move together).
    """
    theirs = store.commit_at(str(other))
    if theirs is None:
        msg = f"nothing to merge at {other}"
        raise NotFound(msg)
    store.require()
    repo = store.repo
    if not checked:  # `checked`: the caller ran `check_line` on this very line against this store's tip
        check_line(store, theirs.id, name=str(other))
    for attempt in range(MAX_CAS_ATTEMPTS):
        ours = store.commit_at()
        assert ours is not None
        if ours.id == theirs.id or repo.descendant_of(ours.id, theirs.id):
            return None
        if repo.descendant_of(theirs.id, ours.id):
            if store.compare_and_swap(ours.id, theirs.id, "failres: fast-forward store"):
                return theirs.id
            continue
        base_id = repo.merge_base(ours.id, theirs.id)
        base_tree = repo[base_id].tree if base_id else None
        tree = union_tree(store, base_tree, ours.tree, theirs.tree)
        if settle is not None:
            extra = settle(repo[tree])
            if not extra.is_empty():
                tree = store.apply(repo[tree], extra)
        sig = store.signature()
        text = message or f"failres: merge store {str(theirs.id)[:12]} into {str(ours.id)[:12]}"
        oid = repo.create_commit(None, sig, sig, text + "\n", tree, [ours.id, theirs.id])
        if store.compare_and_swap(ours.id, oid, text.splitlines()[0]):
            return oid
        time.sleep(min(0.05, 0.001 * (attempt + 1)) * random.random())
    msg = f"the store ref {store.ref} kept moving during a merge"
    raise StoreBusy(msg, hint="nothing was lost; run the command again")


def check_line(store: Store, theirs: pygit2.Oid, *, name: str) -> pygit2.Commit:
    """Another line of the store, checked before it is merged: StoreDamaged naming it if malformed.

    Read as a union, a line whose `journal` is a file would delete every journal
    record of ours; so would a fan-out directory turned into a file. Only what it
    changed since the merge base is read (the base is part of our own line).
    """
    from lessons.storage.guard import check_store_commit

    check_store_commit(store.repo, theirs, name=name, deep=False)  # a commit at all, before any history walk
    ours = store.tip()
    base = None
    if ours is not None:
        base_id = store.repo.merge_base(ours, theirs)
        base = store.repo[base_id].tree if base_id is not None else None
    return check_store_commit(store.repo, theirs, name=name, base=base)


def union_tree(store: Store, base: pygit2.Tree | None, ours: pygit2.Tree, theirs: pygit2.Tree) -> pygit2.Oid:
    """The merged tree by the union rule: walked level by level, file by file where the walk cannot decide."""
    from lessons.storage.treemerge import Mismatch, merge_trees

    try:
        return merge_trees(store.repo, base, ours, theirs, lambda path, oid: _readable(store, path, oid))
    except Mismatch:
        return store.apply(ours, union_change(store, base, ours, theirs))


def union_change(store: Store, base: pygit2.Tree | None, ours: pygit2.Tree, theirs: pygit2.Tree) -> Change:
    """What applying their side's changes since `base` onto ours does, by the union rule.

    Our side is read as its own diff from the base (what we changed), not path by
    path: both diffs cost what changed, where a lookup per path costs a walk down
    the fan-out trees for every record the other side brought.
    """
    mine_changed = {path: after for path, _, after in store.diff_changes(base, ours)}
    puts: dict[str, pygit2.Oid] = {}
    deletes: set[str] = set()
    for path, before, after in store.diff_changes(base, theirs):
        mine = mine_changed[path] if path in mine_changed else before
        if after is None:
            if mine == before:  # they deleted it and we left it alone
                deletes.add(path)
            continue
        if mine is not None and mine != after and _readable(store, path, mine) and not _readable(store, path, after):
            continue  # never a record that reads for one that does not (a damaged remote)
        if mine is None or mine == before:
            # A file they added (or changed) that we did not touch; also a file we
            # deleted and they changed keeps their newer version: nothing is lost.
            if mine != after:
                puts[path] = after
        elif mine != after and (str(after) < str(mine) or not _readable(store, path, mine)):
            puts[path] = after
    return Change(puts, frozenset(deletes))


def _readable(store: Store, path: str, oid: pygit2.Oid) -> bool:
    """Whether the file at `path` parses as what its name says (a JSON object, TOML)."""
    data = store.blob(oid)
    try:
        if path.endswith(".json"):
            return isinstance(json.loads(data), dict)
        if path.endswith(".toml"):
            tomllib.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError and TOMLDecodeError are ValueErrors
        return False
    return True
