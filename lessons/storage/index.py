"""A derived, disposable SQLite index of the store, for reads that must not walk it.

Prompts and hooks ask the same few questions on every dispatch and every merge
(the resolved lessons of a failure class, a task's lessons, the open decisions,
a task's journal). Answering them from the store means reading every record
file; answering them here costs an indexed lookup, whatever the store's size.

The index is never authoritative. It lives at
`<git common dir>/failres/index-<hash of the ref>.sqlite`, records the store
commit it reflects, and every answer could be recomputed from the store:

- before each answer it is brought up to the store tip from the tree diff
  between the commit it reflects and the tip (`lessons.storage.treediff`: identical
  subtrees are skipped, so the cost follows the size of the change, not of the
  store), re-folding only the records whose files changed;
- it is rebuilt from the tip when it is missing, unreadable (any file that is not
  a sound SQLite database of this schema), or when the commit it reflects is not
  an ancestor of the tip (the ref was reset or rewritten behind its back);
- several processes may use it at once: WAL mode lets readers read while one
  writer updates, and the update re-reads the tip under SQLite's write lock, so
  a slow process never moves the index back to an older commit;
- anything that goes wrong with it costs speed, not an answer: `answer()` falls
  back to reading the store itself.

Only the canonical layout is indexed (`<collection>/[<scope>/]<id[0:2]>/<id[2:4]>/
<id>[+<amend>].json`, collections `lessons`, `decisions` and `journal`).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pygit2

from lessons.frozen import record
from lessons.errors import CorruptRecord, StoreMissing
from lessons.storage.index_db import IndexCorrupt, connect, delete_row, discard, insert_row, is_corrupt, index_file
from lessons.storage.records import AMEND_SEP, decode, fold
from lessons.storage.store import Store
from lessons.storage.treediff import tree_changes
from lessons.failpoints import failpoint

log = logging.getLogger(__name__)

SCOPED = {"journal"}  # collections with a scope directory (the slug) above the fan-out
INDEXED = ("lessons", "decisions", "journal")

T = TypeVar("T")


@dataclass(frozen=True)
class RecordFile:
    """Where one record file sits in the canonical layout."""

    collection: str
    scope: str  # "" for collections without one
    directory: str
    record: str  # the record id the file belongs to


@record
class Refresh:
    """How the index was brought to the tip: "current", "incremental" or "rebuild"."""

    kind: str
    commit: str | None
    files: int  # record files (re)read


def parse_record_path(path: str) -> RecordFile | None:
    """The canonical place of `path`, or None for any file the index does not hold."""
    parts = path.split("/")
    collection = parts[0]
    if collection not in INDEXED:
        return None
    depth = 5 if collection in SCOPED else 4
    if len(parts) != depth or not parts[-1].endswith(".json"):
        return None
    stem = parts[-1][: -len(".json")]
    record = stem.partition(AMEND_SEP)[0]
    if record[0:2] != parts[-3] or record[2:4] != parts[-2]:
        return None
    return RecordFile(collection, parts[1] if collection in SCOPED else "", "/".join(parts[:-1]), record)


def index_path(store: Store) -> Path:
    return index_file(store.common_dir, store.ref)


def answer(store: Store, query: Callable[[StoreIndex], T], fallback: Callable[[], T]) -> T:
    """`query` answered from the index; `fallback` (a store read) when the index cannot answer.

    A failing index must never fail a command: it only makes it slower. Damage
    found while answering (not only when opening) discards the file once, so the
    next answer rebuilds it instead of falling back for ever.

    Where there is no store, the store read is the answer (there is nothing to
    read) and no index file is made: an index is one of the signs `lessons.storage.guard`
    takes for a store that existed, and a read must never leave such a sign
    behind (a person who looks around a fresh clone before `init` would be
    locked out of it).
    """
    try:
        if store.tip() is None:
            return fallback()
    except Exception:  # a damaged ref: the store read says what is wrong with it
        return fallback()
    for attempt in range(2):
        try:
            with StoreIndex.open(store) as index:
                return query(index)
        except Exception as problem:  # the index is a cache; any failure means "read the store"
            if attempt == 0 and is_corrupt(problem):
                try:
                    discard(index_path(store), recheck=False)
                    continue
                except OSError:
                    pass
            log.warning("store index unavailable, reading the store instead: %s: %s",
                        type(problem).__name__, problem)
            break
    return fallback()


class StoreIndex:
    """The index of one store ref; one connection, used by one thread."""

    def __init__(self, store: Store, path: Path, conn: sqlite3.Connection) -> None:
        self.store = store
        self.path = path
        self._conn = conn

    @classmethod
    def open(cls, store: Store) -> StoreIndex:
        path = index_path(store)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return cls(store, path, connect(path))
        except (sqlite3.DatabaseError, IndexCorrupt) as problem:
            if not is_corrupt(problem):
                raise
        discard(path)
        return cls(store, path, connect(path))

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> StoreIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ── keeping up with the store ───────────────────────────────────────

    def indexed(self) -> tuple[bool, str | None]:
        """(whether the index reflects any commit yet, that commit; None for the empty store)."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
        return (False, None) if row is None else (True, row[0] or None)

    def refresh(self) -> Refresh:
        """Bring the index to the store tip; incremental when it can be."""
        tip = self.store.tip()
        if self.indexed() == (True, str(tip) if tip else None):
            return Refresh("current", str(tip) if tip else None, 0)
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read both under the write lock: another process may have moved the
            # index meanwhile, and the tip read before the lock may be older than it.
            done = self._update(self.store.commit_at(), *self.indexed())
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        return done

    def _update(self, tip: pygit2.Commit | None, known: bool, indexed: str | None) -> Refresh:
        tip_hex = str(tip.id) if tip is not None else None
        if known and indexed == tip_hex:
            return Refresh("current", tip_hex, 0)
        failpoint("index-write")
        if tip is None and known and indexed is not None:
            # The store ref is gone. Emptying the index would erase the last sign of
            # where the store was (`lessons.storage.guard` reads it to say how to restore it),
            # so it is left as it is and the question goes to the store itself.
            msg = f"the store {self.store.ref} is gone; the index keeps {indexed or 'the empty store'}"
            raise StoreMissing(msg)
        base = self._sound_base(indexed, tip) if known else None
        if base is None:
            for table in ("lessons", "decisions", "events", "problems"):
                self._conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
            read = sum(self._reindex_directory(directory, files, None, fresh=True)
                       for directory, files in _record_directories(self.store, tip))
            kind = "rebuild"
        else:
            assert tip is not None
            touched: dict[str, set[str]] = {}
            for path, _, _ in tree_changes(self.store.repo, base, tip.tree):
                place = parse_record_path(path)
                if place is not None:
                    touched.setdefault(place.directory, set()).add(place.record)
            read = sum(self._reindex_directory(directory, self.store.files_in(tip.tree, directory), records)
                       for directory, records in touched.items())
            kind = "incremental"
        if tip_hex is None:
            # An index of no store records no commit: it would read, later, as a sign
            # that a store existed here (see `answer`).
            self._conn.execute("DELETE FROM meta WHERE key = 'commit'")
        else:
            self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('commit', ?)", (tip_hex,))
        return Refresh(kind, tip_hex, read)

    def _sound_base(self, indexed: str | None, tip: pygit2.Commit | None) -> pygit2.Tree | None:
        """The tree the index holds, when an incremental update from it is sound; else None."""
        if tip is None:
            return None  # no store and nothing indexed yet: the empty index is the whole update
        if indexed is None:
            return self.store.repo[self.store.repo.TreeBuilder().write()]  # it held the empty store
        try:
            old = self.store.repo[pygit2.Oid(hex=indexed)]
        except (KeyError, ValueError):
            return None  # gone (gc after a rewrite): start over
        if not isinstance(old, pygit2.Commit):
            return None
        if old.id != tip.id and not self.store.repo.descendant_of(tip.id, old.id):
            return None  # reset or rewritten behind our back: rebuild rather than guess
        return old.tree

    def _reindex_directory(self, directory: str, files: dict[str, pygit2.Oid], records: set[str] | None,
                           *, fresh: bool = False) -> int:
        """Re-fold `records` of one directory (None: every record in it) from its files at the tip."""
        grouped: dict[str, dict[str, pygit2.Oid]] = {}
        for name, oid in files.items():
            place = parse_record_path(f"{directory}/{name}")
            if place is not None:
                grouped.setdefault(place.record, {})[name] = oid
        return sum(self._reindex_record(directory, record, grouped.get(record, {}), fresh=fresh)
                   for record in (records if records is not None else grouped))

    def _reindex_record(self, directory: str, record: str, files: dict[str, pygit2.Oid], *, fresh: bool) -> int:
        place = parse_record_path(f"{directory}/{record}.json")
        assert place is not None
        conn = self._conn
        if not fresh:
            delete_row(conn, place.collection, place.scope, record)
            conn.execute("DELETE FROM problems WHERE directory = ? AND record = ?", (directory, record))
        base_name = f"{record}.json"
        amendments: list[dict] = []
        base: dict | None = None
        for name, oid in sorted(files.items()):
            path = f"{directory}/{name}"
            try:
                doc = decode(path, self.store.blob(oid))
            except CorruptRecord as problem:
                conn.execute("INSERT OR REPLACE INTO problems VALUES (?, ?, ?, ?, ?, ?)",
                             (path, place.collection, place.scope, directory, record, problem.reason))
                continue
            if name == base_name:
                base = doc
            else:
                amendments.append(doc)
        if base is not None:
            insert_row(conn, place.collection, place.scope, record, f"{directory}/{base_name}",
                       fold(base, amendments))
        return len(files)

    # ── questions ────────────────────────────────────────────────────────

    def _docs(self, sql: str, args: tuple = ()) -> list[dict]:
        self.refresh()
        try:
            return [json.loads(row[0]) for row in self._conn.execute(sql, args)]
        except json.JSONDecodeError as exc:
            msg = f"unreadable row in {self.path}"
            raise IndexCorrupt(msg) from exc

    def lessons(self, *, slug: str | None = None, task: str | None = None, fail_class: str | None = None,
                resolved: bool | None = None, limit: int | None = None) -> list[dict]:
        """Lessons, newest first (ts, then id), filtered by what is given."""
        where, args = _filters({"slug": slug, "task": task, "fail_class": fail_class,
                                "resolved": None if resolved is None else int(resolved)})
        sql = f"SELECT doc FROM lessons {where} ORDER BY ts DESC, id DESC"  # noqa: S608 - fixed columns
        if limit is not None:
            sql += " LIMIT ?"
            args += (max(0, limit),)
        return self._docs(sql, args)

    def count_lessons(self, *, slug: str | None = None, task: str | None = None, fail_class: str | None = None,
                      resolved: bool | None = None) -> int:
        """How many lessons `lessons` would return without a limit (a listing says what it left out)."""
        self.refresh()
        where, args = _filters({"slug": slug, "task": task, "fail_class": fail_class,
                                "resolved": None if resolved is None else int(resolved)})
        return int(self._conn.execute(f"SELECT COUNT(*) FROM lessons {where}", args).fetchone()[0])  # noqa: S608

    def relevant_lessons(self, fail_class: str, limit: int = 3) -> list[dict]:
        """Resolved lessons of one failure class, newest first."""
        return self.lessons(fail_class=fail_class, resolved=True, limit=limit)

    def task_lessons(self, slug: str, task: str) -> list[dict]:
        """Every lesson of one task, newest first."""
        return self.lessons(slug=slug, task=task)

    def decisions(self, status: str | None = None) -> list[dict]:
        """Decisions, oldest first (ts, then id), optionally of one status."""
        where, args = _filters({"status": status})
        return self._docs(f"SELECT doc FROM decisions {where} ORDER BY ts, id", args)  # noqa: S608

    def open_decisions(self) -> list[dict]:
        return self.decisions("open")

    def events(self, slug: str, task: str | None = None) -> list[dict]:
        """A slug's journal events (or one task's), oldest first, as the journal orders them."""
        where, args = _filters({"scope": slug, "task": task})
        return self._docs(f"SELECT doc FROM events {where} ORDER BY ts, seq, id", args)  # noqa: S608

    def problems(self, collection: str | None = None) -> list[tuple[str, str]]:
        """(path, reason) of record files that could not be read."""
        self.refresh()
        where, args = _filters({"collection": collection})
        rows = self._conn.execute(f"SELECT path, reason FROM problems {where} ORDER BY path", args)  # noqa: S608
        return [(path, reason) for path, reason in rows]


def _filters(values: dict[str, object]) -> tuple[str, tuple]:
    given = [(column, value) for column, value in values.items() if value is not None]
    if not given:
        return "", ()
    return "WHERE " + " AND ".join(f"{column} = ?" for column, _ in given), tuple(v for _, v in given)


# ── the store's trees ────────────────────────────────────────────────────

def _record_directories(store: Store, tip: pygit2.Commit | None) -> Iterator[tuple[str, dict[str, pygit2.Oid]]]:
    """(directory, its files) for every fan-out directory of the indexed collections."""
    if tip is None:
        return
    for collection in INDEXED:
        depth = 4 if collection in SCOPED else 3
        try:
            top = store.repo[tip.tree[collection].id]
        except KeyError:
            continue
        if isinstance(top, pygit2.Tree):
            yield from _leaves(store, top, collection, depth - 1)


def _leaves(store: Store, tree: pygit2.Tree, path: str, below: int) -> Iterator[tuple[str, dict[str, pygit2.Oid]]]:
    if below == 0:
        yield path, {e.name: e.id for e in tree if e.filemode != pygit2.GIT_FILEMODE_TREE}
        return
    for entry in tree:
        if entry.filemode == pygit2.GIT_FILEMODE_TREE:
            yield from _leaves(store, store.repo[entry.id], f"{path}/{entry.name}", below - 1)


