"""The archive of a store: where evicted records live, and the moves in and out of it.

An archived record keeps its path below `archive/` (`lessons/ab/cd/<id>.json` becomes
`archive/lessons/ab/cd/<id>.json`), so moving it is a rename of the same bytes: the
blob id is unchanged, restore is the move back, and a merge of two replicas treats a
move like any other delete-plus-add. Amendments travel with their record.

Every move is one store commit planned on the tip it lands on (`commit_planned`), so
the commit message names exactly what moved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import pygit2

from lessons.frozen import record
from lessons.storage import bulk
from lessons.errors import CorruptRecord, StoreBusy
from lessons.storage.records import ReadResult, decode, fold, iter_record_files, read_files
from lessons.storage.store import Change, Store, _audit_body

ARCHIVE = "archive"
P = TypeVar("P")


@dataclass(frozen=True)
class Move:
    """One file moved between the live store and the archive."""

    source: str
    target: str
    # The file's blob at the commit the move was planned on: read by id, the bytes cost a
    # blob read, where a lookup by path walks three fan-out trees (18x as long; it was a
    # third of a 200,000-lesson import with the policy in force).
    blob: pygit2.Oid | None = field(default=None, compare=False)


def archive_path(path: str) -> str:
    return f"{ARCHIVE}/{path}"


def record_files(store: Store, prefix: str, commit: pygit2.Commit | None = None
                 ) -> dict[str, list[tuple[str, pygit2.Oid, bool]]]:
    """id -> [(path, blob, is_amendment)] for every record under prefix (orphan amendments too)."""
    grouped: dict[str, list[tuple[str, pygit2.Oid, bool]]] = {}
    for path, rec_id, amend, oid in iter_record_files(store, prefix, commit):
        grouped.setdefault(rec_id, []).append((path, oid, amend is not None))
    return grouped


def read_grouped(store: Store, files: Mapping[str, list[tuple[str, pygit2.Oid, bool]]],
                 known: Mapping[pygit2.Oid, dict] | None = None) -> dict[str, dict | None]:
    """Each record with a base file, folded; None when its base file cannot be parsed.

    `known` holds documents the caller has just written, by blob id, as `decode` reads
    them back: a reclaim right after a big import takes them from there instead of
    reading and parsing each blob again (a blob id names its bytes, so it cannot be stale).
    """
    out: dict[str, dict | None] = {}
    known = known or {}
    for rec_id, entries in files.items():
        base = [(p, o) for p, o, is_amend in entries if not is_amend]
        if not base:
            continue  # an amendment whose record lives elsewhere (archived): not a record here
        doc = known.get(base[0][1])
        if doc is None:
            try:
                doc = decode(base[0][0], store.blob(base[0][1]))
            except CorruptRecord:
                out[rec_id] = None
                continue
        amends = []
        for path, oid, is_amend in entries:
            if is_amend:
                try:
                    amends.append(decode(path, store.blob(oid)))
                except CorruptRecord:
                    continue  # a broken amendment costs that fact, not the record
        out[rec_id] = fold(doc, amends)
    return out


def moves_change(store: Store, moves: Iterable[Move], commit: pygit2.Commit | None) -> Change:
    """The moves as one change: the same bytes put at the target, the source deleted."""
    puts: dict[str, bytes] = {}
    deletes: set[str] = set()
    for move in moves:
        data: bytes | pygit2.Oid | None
        if move.blob is not None:
            # The blob is put by its id: the same bytes, which nobody reads, inflates or
            # writes again (a reclaim after a 200,000-lesson import moved 196,250 of them).
            data = move.blob if _is_blob(store, move.blob) else None
        else:
            data = store.read_bytes(move.source, commit)
        if data is None:
            continue
        puts[move.target] = data
        deletes.add(move.source)
    return Change(puts, frozenset(deletes))


def _is_blob(store: Store, oid: pygit2.Oid) -> bool:
    try:
        kind, _size = store.repo.odb.read_header(oid)
    except (KeyError, ValueError, pygit2.GitError):
        return False
    return kind == pygit2.enums.ObjectType.BLOB


MAX_PLAN_ATTEMPTS = 50


def commit_planned(store: Store, plan_at: Callable[[pygit2.Commit | None], tuple[P, Change]],
                   message_of: Callable[[P], str]) -> tuple[P, str | None]:
    """Plan on the tip, and commit that plan only if the tip is still the one it was made on.

    A writer that lost a race plans again rather than applying a plan made on a store
    that has changed since, so the commit message always describes what landed.
    Returns the plan and the commit (None when the plan changes nothing).
    """
    for _ in range(MAX_PLAN_ATTEMPTS):
        tip = store.commit_at()
        plan, change = plan_at(tip)
        if change.is_empty():
            return plan, None
        expected = tip.id if tip is not None else None
        # Hundreds of moves (a reclaim after a big import) go through fast-import: one pack.
        fast = bulk.commit_on(store, tip, change, message_of(plan), _audit_body(change))
        if fast is not None:
            landed, made = fast
            if landed:
                return plan, None if made is None else str(made)
            continue  # the tip moved: plan again on the new one

        def only_on_planned_tip(now_tip: pygit2.Commit | None, change: Change = change,
                                expected: pygit2.Oid | None = expected) -> Change:
            return change if (now_tip.id if now_tip is not None else None) == expected else Change()

        oid = store.commit(only_on_planned_tip, message_of(plan))
        if oid is not None:
            return plan, str(oid)
    msg = f"the store ref {store.ref} kept moving while a write was planned"
    raise StoreBusy(msg, hint="nothing was written; run the command again")


# ---- the archive: reading it, restoring from it ----

def read_archived(store: Store, collection: str, scope: str | None = None,
                  commit: pygit2.Commit | None = None) -> ReadResult:
    """Archived records of a collection (or one scope of it), folded, with unreadable files reported."""
    prefix = f"{ARCHIVE}/{collection}/{scope}" if scope else f"{ARCHIVE}/{collection}"
    return read_files(store, iter_record_files(store, prefix, commit))


def iter_archived(store: Store, collection: str, scope: str | None = None,
                  commit: pygit2.Commit | None = None) -> Iterator[dict]:
    """Archived records for readers that the policy lets reach the archive (`reaches_archive`)."""
    yield from read_archived(store, collection, scope, commit).records


@record
class Restoration:
    """Records moved back from the archive (newest first), the moves, the commit."""

    store: str
    restored: tuple[str, ...]
    moves: tuple[Move, ...]
    commit: str | None
    kept_in_archive: tuple[str, ...] = ()

    def document(self) -> dict[str, object]:
        return {"store": self.store, "restored": list(self.restored), "commit": self.commit,
                "moves": [{"from": m.source, "to": m.target} for m in self.moves],
                "keptInArchive": list(self.kept_in_archive)}


def _matches(store: Store, entries: list[tuple[str, pygit2.Oid, bool]], query: str) -> bool:
    if not query:
        return True
    needle = query.casefold()
    for _, oid, _ in entries:
        if needle in store.blob(oid).decode("utf-8", "replace").casefold():
            return True
    return False


def plan_restore(store: Store, collection: str, *, query: str = "", limit: int,
                 commit: pygit2.Commit | None = None) -> tuple[tuple[str, ...], tuple[Move, ...], tuple[str, ...]]:
    """Which archived records come back (newest first, ties by id, cut to `limit`), their
    moves, and the files left in the archive because a different file lives at their path.

    `query` is a case-insensitive substring of the record's files (its JSON as stored).
    """
    commit = commit if commit is not None else store.commit_at()
    files = record_files(store, f"{ARCHIVE}/{collection}", commit)
    records = read_grouped(store, files)
    wanted = {rec_id: doc for rec_id, doc in records.items() if _matches(store, files[rec_id], query)}

    def stamp(rec_id: str) -> str:
        return str((wanted[rec_id] or {}).get("ts", ""))

    newest = sorted(sorted(wanted), key=stamp, reverse=True)[: max(0, limit)]
    moves: list[Move] = []
    kept: list[str] = []
    for rec_id in newest:
        for path, oid, _ in sorted(files[rec_id]):
            live = path[len(ARCHIVE) + 1:]
            present = entry_at(commit, live)
            if present is not None and present != oid:
                kept.append(path)  # never overwrite a live file; the archived copy stays put
                continue
            moves.append(Move(path, live, oid))
    return tuple(newest), tuple(moves), tuple(kept)


def entry_at(commit: pygit2.Commit | None, path: str) -> pygit2.Oid | None:
    if commit is None:
        return None
    try:
        return commit.tree[path].id
    except KeyError:
        return None


def restore(store: Store, collection: str, *, query: str = "", limit: int, dry_run: bool = False) -> Restoration:
    """Move archived records of a collection back, newest first, in one commit."""
    def plan_at(tip: pygit2.Commit | None) -> tuple[Restoration, Change]:
        restored, moves, kept = plan_restore(store, collection, query=query, limit=limit, commit=tip)
        return Restoration(collection, restored, moves, None, kept), moves_change(store, moves, tip)

    if dry_run:
        return plan_at(store.commit_at())[0]
    done, oid = commit_planned(store, plan_at, lambda p: f"failres: restore {collection} ({len(p.restored)})")
    return Restoration(done.store, done.restored, done.moves, oid, done.kept_in_archive)
