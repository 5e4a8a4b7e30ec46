"""How many records a store holds, told without walking it: the bounds ask after every write.

Reclaim asks the count of every store after every sync, run and import, so a count must
not read the whole store: the count of the last tree counted under each prefix is noted in
the git dir (`<git dir>/failres/record-counts.json`), and the next count reads only the
subtrees that differ from that tree. A note is a fact about a tree id, so one out of date
is never wrong for the tree it names; one whose tree is gone, or that cannot be read,
costs a whole count.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pygit2

from lessons.storage.records import AMEND_SEP, iter_record_files
from lessons.storage.store import Store

_TREE_MODE = pygit2.GIT_FILEMODE_TREE

COUNTS_NOTE = "record-counts.json"  # in <git dir>/failres/: prefix -> [tree id, records in it]


def count_records(store: Store, prefix: str, commit: pygit2.Commit | None = None) -> int:
    """How many records live under `prefix`, from tree entry names alone (no blob is read).

    Reclaim asks it of every store after every sync and every run, so it must not walk
    the store: the count of the last tree counted under each prefix is noted in the git
    dir, and the next count reads only the subtrees that differ from that tree. A note
    is a fact about a tree id, so one out of date is never wrong for the tree it names;
    one whose tree is gone, or that cannot be read, costs a whole count.
    """
    commit = commit if commit is not None else store.commit_at()
    count = noted_count(store, prefix, commit)
    if count is None:
        count = sum(1 for _, _, amend, _ in iter_record_files(store, prefix, commit) if amend is None)
        note_count(store, prefix, commit, count)
    return count


def noted_count(store: Store, prefix: str, commit: pygit2.Commit | None) -> int | None:
    """The count under `prefix` from the note and the subtrees changed since; None when only a
    whole count can tell (no note, or one that cannot be read). Notes the answer."""
    tree = _tree_under(store, commit, prefix)
    if tree is None:
        return 0
    notes = _read_counts(store)
    noted = notes.get(prefix)
    try:
        old = store.repo.get(pygit2.Oid(hex=noted[0])) if noted is not None else None
        count = noted[1] + _count_delta(store.repo, old, tree) if isinstance(old, pygit2.Tree) else None
    except (KeyError, ValueError, TypeError, pygit2.GitError):  # a missing object, an odd entry
        count = None
    if count is not None and noted != [str(tree.id), count]:
        notes[prefix] = [str(tree.id), count]
        _write_counts(store, notes)
    return count


def note_count(store: Store, prefix: str, commit: pygit2.Commit | None, count: int) -> None:
    """Remember a whole count of `prefix` at `commit`, so the next count reads only what changed."""
    tree = _tree_under(store, commit, prefix)
    if tree is not None:
        notes = _read_counts(store)
        notes[prefix] = [str(tree.id), count]
        _write_counts(store, notes)


def _tree_under(store: Store, commit: pygit2.Commit | None, prefix: str) -> pygit2.Tree | None:
    if commit is None:
        return None
    try:
        obj = store.repo[commit.tree[prefix.rstrip("/")].id] if prefix.strip("/") else commit.tree
    except KeyError:
        return None
    return obj if isinstance(obj, pygit2.Tree) else None


def _count_delta(repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree) -> int:
    """Records in `new` less records in `old`, reading only the subtrees whose ids differ."""
    if old is not None and old.id == new.id:
        return 0
    before = {entry.name: entry for entry in old} if old is not None else {}
    delta = 0
    for entry in new:
        prior = before.pop(entry.name, None)
        if prior is not None and prior.id == entry.id and prior.filemode == entry.filemode:
            continue
        if prior is not None and prior.filemode == entry.filemode == _TREE_MODE:
            delta += _count_delta(repo, repo[prior.id], repo[entry.id])
        else:
            delta += _entry_records(repo, entry) - _entry_records(repo, prior)
    return delta - sum(_entry_records(repo, prior) for prior in before.values())


def _entry_records(repo: pygit2.Repository, entry: pygit2.Object | None) -> int:
    if entry is None or entry.filemode == pygit2.GIT_FILEMODE_COMMIT:  # a submodule link is no record
        return 0
    if entry.filemode == _TREE_MODE:
        return _count_delta(repo, None, repo[entry.id])
    name = entry.name
    return 1 if name.endswith(".json") and AMEND_SEP not in name[: -len(".json")] else 0


def _counts_path(store: Store) -> Path:
    return store.common_dir / "failres" / COUNTS_NOTE


def _read_counts(store: Store) -> dict[str, list]:
    try:
        notes = json.loads(_counts_path(store).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(notes, dict):
        return {}
    return {prefix: note for prefix, note in notes.items()
            if isinstance(note, list) and len(note) == 2 and isinstance(note[0], str) and type(note[1]) is int}


def _write_counts(store: Store, notes: dict[str, list]) -> None:
    """Replaced whole (a reader sees the old note or the new); a note, never a record: failures pass."""
    path = _counts_path(store)
    try:
        path.parent.mkdir(exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(notes, sort_keys=True), encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        pass
