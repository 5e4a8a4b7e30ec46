"""The store's history during a dispatch: which commits failres wrote, and undoing the others.

The store is append-only from a seat's side of things: a record a seat adds (an answer to
its own decision) is as much tamper as one it removes. Every store commit failres makes is
noted before its ref moves (`moves`), so after a dispatch the store's first-parent history
from the tip back to where it was is read commit by commit: a commit failres did not note
is the seat's, however many of failres's own appends came after it. A sync's merge is
failres's own; the remote history it brings in is not walked.

Undoing is one more commit on the tip: every change of every commit of the seat's,
reversed (what it added removed, what it changed or removed put back), so failres's own
records made meanwhile all stay.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pygit2

# A dispatch does not write more store commits than this; a longer walk stops there.
_MAX_WALK = 20000


def foreign_commits(repo: pygit2.Repository, old: str, new: str, own: Collection[str | None]) -> list[pygit2.Commit]:
    """Commits on the first-parent way from `new` back to `old` that failres did not write, newest first."""
    found = []
    commit = repo[new].peel(pygit2.Commit)
    for _ in range(_MAX_WALK):
        if str(commit.id) == old:
            break
        if str(commit.id) not in own:
            found.append(commit)
        if not commit.parents:
            break
        commit = commit.parents[0]
    return found


def put_store_back(git_dir: Path, store_ref: str, old: str, new: str, own: Collection[str | None]) -> str:
    """Reverse, in one commit on the tip, every change of the store commits failres did not write."""
    from lessons.storage.store import Store
    from lessons.storage.trees import Change
    from lessons.storage.treediff import tree_changes

    repo = pygit2.Repository(str(git_dir))
    foreign = foreign_commits(repo, old, new, own)
    puts: dict[str, pygit2.Oid] = {}
    deletes: set[str] = set()
    for commit in foreign:  # newest first: an older commit's "before" wins
        parent = commit.parents[0].tree if commit.parents else None
        for path, was, _now in tree_changes(repo, parent, commit.tree):
            if was is None:
                deletes.add(path)
                puts.pop(path, None)
            else:
                puts[path] = was
                deletes.discard(path)
    shown = f"{store_ref} got {len(foreign)} commit(s) failres did not write, up to {new[:12]}"
    if not puts and not deletes:
        return f"{shown}: they changed no record"
    try:
        Store(str(git_dir), store_ref).commit(Change(puts=puts, deletes=frozenset(deletes)),
                                              f"failres: undo {len(foreign)} store commit(s) a seat made")
    except Exception as error:  # noqa: BLE001 - reported in the journal, the run goes on to quarantine
        return f"{shown}: could not be undone: {error}"
    return f"{shown}: {len(puts) + len(deletes)} record(s) put back"
