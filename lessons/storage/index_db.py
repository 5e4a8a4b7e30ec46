"""The SQLite side of the store index: the file, its schema, its rows.

Everything here is about keeping one derived file sound under many processes:
WAL mode so readers never wait for the one writer, a busy timeout so a writer
waits its turn, a schema version so an index written by another version is
dropped rather than misread, and a damaged file deleted and started afresh
(it holds nothing the store does not).
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SCHEMA_VERSION = "1"
BUSY_TIMEOUT = 10.0  # seconds to wait for another process's update before giving up (and reading the store)
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


class IndexCorrupt(Exception):
    """The index file cannot be trusted; it is deleted and rebuilt."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS lessons (
    record TEXT PRIMARY KEY, ts TEXT, id TEXT, slug TEXT, task TEXT, fail_class TEXT, resolved INTEGER,
    path TEXT, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS lessons_by_class ON lessons (fail_class, resolved, ts, id);
CREATE INDEX IF NOT EXISTS lessons_by_task ON lessons (slug, task, ts, id);
CREATE INDEX IF NOT EXISTS lessons_by_time ON lessons (ts, id);
CREATE TABLE IF NOT EXISTS decisions (
    record TEXT PRIMARY KEY, ts TEXT, id TEXT, slug TEXT, task TEXT, status TEXT, path TEXT, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS decisions_by_status ON decisions (status, ts, id);
CREATE TABLE IF NOT EXISTS events (
    scope TEXT, record TEXT, ts TEXT, seq INTEGER, id TEXT, task TEXT, type TEXT, path TEXT, doc TEXT NOT NULL,
    PRIMARY KEY (scope, record));
CREATE INDEX IF NOT EXISTS events_by_task ON events (scope, task, ts, seq, id);
CREATE TABLE IF NOT EXISTS problems (
    path TEXT PRIMARY KEY, collection TEXT, scope TEXT, directory TEXT, record TEXT, reason TEXT);
CREATE INDEX IF NOT EXISTS problems_by_record ON problems (directory, record);
"""


def _order(doc: dict, key: str) -> str:
    """A sort key exactly as the store readers build it: `str(doc.get(key, ""))`."""
    return str(doc.get(key, ""))


def _match(doc: dict, key: str) -> str | None:
    """A filter value: only a string can equal the string a caller asks for."""
    value = doc.get(key)
    return value if isinstance(value, str) else None


def _resolved(doc: dict) -> int:
    """Stamped by a landing: `resolved_by` is a non-empty list (as `retrieval.is_resolved` says)."""
    value = doc.get("resolved_by")
    return int(isinstance(value, list) and bool(value))


def _seq(doc: dict) -> int:
    try:
        return int(doc.get("seq", 0) or 0)
    except (TypeError, ValueError):
        return 0


def delete_row(conn: sqlite3.Connection, collection: str, scope: str, record: str) -> None:
    if collection == "journal":
        conn.execute("DELETE FROM events WHERE scope = ? AND record = ?", (scope, record))
    else:
        conn.execute(f"DELETE FROM {collection} WHERE record = ?", (record,))  # noqa: S608 - fixed names


def insert_row(conn: sqlite3.Connection, collection: str, scope: str, record: str, path: str, doc: dict) -> None:
    """One folded record as a row: the columns queries filter and sort on, and the document."""
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False)
    ts, doc_id = _order(doc, "ts"), _order(doc, "id")
    if collection == "lessons":
        conn.execute("INSERT INTO lessons VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (record, ts, doc_id, _match(doc, "slug"), _match(doc, "task"),
                      _match(doc, "failClass"), _resolved(doc), path, text))
    elif collection == "decisions":
        conn.execute("INSERT INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     (record, ts, doc_id, _match(doc, "slug"), _match(doc, "task"),
                      _match(doc, "status"), path, text))
    else:
        conn.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (scope, record, ts, _seq(doc), doc_id, _match(doc, "task"),
                      _match(doc, "type"), path, text))


def is_corrupt(problem: BaseException) -> bool:
    if isinstance(problem, IndexCorrupt):
        return True
    return getattr(problem, "sqlite_errorcode", None) in _CORRUPT_CODES


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # a lost update after a power cut is rebuilt, not lost
        row = _schema_version(conn)
        if row != SCHEMA_VERSION:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if _schema_version(conn) != SCHEMA_VERSION:
                    _create(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
    except BaseException:
        conn.close()
        raise
    return conn


def _schema_version(conn: sqlite3.Connection) -> str | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise
    return row[0] if row else None


def _create(conn: sqlite3.Connection) -> None:
    """A fresh schema; an index of another version is dropped, not migrated (it is derived)."""
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        conn.execute(f'DROP TABLE IF EXISTS "{name}"')
    for statement in _SCHEMA.strip().split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,))


def discard(path: Path, *, recheck: bool = True) -> None:
    """Delete a corrupt index (with its WAL files) so the next open starts afresh.

    Under a lock, and (for damage seen on opening) only after checking again, so
    two processes that both saw it do not delete the fresh index the other has
    just begun. A process still holding the old file keeps reading its own copy.
    """
    with _file_lock(path.with_suffix(".lock")):
        if recheck:
            try:
                connect(path).close()
                return  # someone else has already replaced it
            except (sqlite3.DatabaseError, IndexCorrupt) as problem:
                if not is_corrupt(problem):
                    raise
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def index_file(common_dir: Path, ref: str) -> Path:
    """Where the index of the store at `ref` lives: one file per store ref, in the git dir."""
    import hashlib

    ref_hash = hashlib.blake2b(ref.encode(), digest_size=6).hexdigest()
    return common_dir / "failres" / f"index-{ref_hash}.sqlite"
