"""Bulk import of lessons written by another harness: JSONL, one lesson a line.

Every line is checked before anything is written, so a bad line costs the whole
import and nothing lands: half an import is worse than none, because nobody
can tell which half. An imported lesson passes through the same redaction and
signature normalisation as one the quarantine writes.

A line needs `ts`, `slug`, `task`, `failClass` and `message`; it may carry the
other lesson fields (`id`, `signature`, `package`, `snapshotBundle`, `intHead`,
`resolved_by`, `resolved_at`). Any other key is refused, as a misspelt setting is:
a field silently dropped is a fact silently lost.

Ids: a line without one gets an id derived from its content, so importing the
same file twice writes nothing new. A line whose id is already in the store
with the same content is skipped; with different content it is refused (records
are add-only).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pygit2
from pygit2.enums import ObjectType

from lessons.errors import InvalidInput
from lessons.jsontext import loads as loads_json
from lessons.recall.lesson import COLLECTION, RESOLUTIONS, UNKNOWN
from lessons.storage.records import derived_id, encoded, record_path
from lessons.redaction.redact import redact
from lessons.recall.signature import signature as make_signature
from lessons.storage.store import Change, Store
from lessons.failpoints import failpoint

REQUIRED = ("ts", "slug", "task", "failClass", "message")
OPTIONAL = ("id", "signature", "package", "snapshotBundle", "intHead", "resolved_by", "resolved_at")
BATCH_SIZE = 5000
_ID = re.compile(r"^[0-9a-f]{16}$")


@dataclass(frozen=True)
class ImportResult:
    """What an import read and wrote."""

    files: tuple[str, ...]
    lessons: int  # distinct lessons read (a line repeated exactly counts once)
    imported: int
    unchanged: int
    commits: tuple[str, ...]
    # What was written, by blob id, as a read of it would return it: the reclaim that
    # follows an import ranks these without reading 200,000 blobs back (`read_grouped`).
    documents: Mapping[pygit2.Oid, dict] = field(default_factory=dict, compare=False, repr=False)


def _timestamp(value: object, key: str) -> str:
    """An RFC 3339 time as the store writes it: UTC, microseconds, fixed width (string order = time order)."""
    if not isinstance(value, str) or not value.strip():
        msg = f"{key} must be an RFC 3339 timestamp string"
        raise ValueError(msg)
    return _utc_text(value, key)


# Another harness's lines share their times (a run writes many lessons in one second, a
# file of resolved lessons shares its `resolved_at`): each text is parsed once. A bad one
# raises every time, and exceptions are not cached.
@functools.lru_cache(maxsize=8192)
def _utc_text(value: str, key: str) -> str:
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        msg = f"{key} {value!r} is not an RFC 3339 timestamp"
        raise ValueError(msg) from None
    if parsed.tzinfo is None:
        msg = f"{key} {value!r} has no time zone (add Z for UTC)"
        raise ValueError(msg)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _text(doc: dict, key: str, *, required: bool, one_line: bool = False) -> str | None:
    value = doc.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and key != "message" and not value.strip()):
        msg = f"{key} must be a non-empty string" if key != "message" else "message must be a string"
        raise ValueError(msg)
    if one_line and ("\n" in value or "\r" in value):
        msg = f"{key} must be one line"
        raise ValueError(msg)
    return value


def _resolved_by(value: object) -> list[str] | None:
    if value is None:
        return None
    allowed = (*RESOLUTIONS, *UNKNOWN)
    if not isinstance(value, list) or not value or not all(isinstance(x, str) and x in allowed for x in value):
        msg = f"resolved_by must be null or a non-empty list drawn from {', '.join(allowed)}"
        raise ValueError(msg)
    if "unknown" in value and value != ["unknown"]:
        msg = 'resolved_by "unknown" stands alone'
        raise ValueError(msg)
    return [name for name in RESOLUTIONS if name in value] or list(UNKNOWN)


def lesson_from_line(doc: object) -> dict:
    """The lesson record a JSONL line becomes; ValueError saying what is wrong with it."""
    if not isinstance(doc, dict):
        msg = "a line must be one JSON object"
        raise ValueError(msg)
    unknown = sorted(set(doc) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        msg = f"unknown field {unknown[0]!r} (known: {', '.join((*REQUIRED, *OPTIONAL))})"
        raise ValueError(msg)
    missing = [key for key in REQUIRED if key not in doc]
    if missing:
        msg = f"missing required field {missing[0]!r}"
        raise ValueError(msg)
    fail_class = _text(doc, "failClass", required=True, one_line=True)
    message = redact(_text(doc, "message", required=True) or "")
    given = _text(doc, "signature", required=False)
    if given is not None:
        # Another harness's signature may carry the volatile parts ours normalise away;
        # normalised here, equal failures from both harnesses compare equal.
        cls, sep, text = given.partition("|")
        sig = make_signature(cls, text) if sep else make_signature(fail_class, given)
    else:
        sig = make_signature(fail_class, message)
    lesson = {
        "ts": _timestamp(doc["ts"], "ts"),
        "slug": _text(doc, "slug", required=True, one_line=True),
        "task": _text(doc, "task", required=True, one_line=True),
        "failClass": fail_class,
        "signature": sig,
        "package": _text(doc, "package", required=False) or "",
        "message": message,
        "snapshotBundle": _text(doc, "snapshotBundle", required=False),
        "intHead": _text(doc, "intHead", required=False),
        "resolved_by": _resolved_by(doc.get("resolved_by")),
        "resolved_at": _timestamp(doc["resolved_at"], "resolved_at") if doc.get("resolved_at") is not None else None,
    }
    rec_id = doc.get("id")
    if rec_id is None:
        canonical = json.dumps(lesson, sort_keys=True, ensure_ascii=False)
        rec_id = derived_id("import", canonical)
    elif not isinstance(rec_id, str) or not _ID.match(rec_id):
        msg = f"id {rec_id!r} is not 16 lowercase hex digits"
        raise ValueError(msg)
    lesson["id"] = rec_id
    return lesson


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of every non-blank line of a JSONL file."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        msg = f"cannot read {path}: {exc.strerror}"
        raise InvalidInput(msg) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        msg = f"{path}:{line}: not valid UTF-8"
        raise InvalidInput(msg) from None
    # Lines end at "\n" only: str.splitlines() also breaks at U+2028 and other separators
    # that a JSON string may hold as they are, which would cut a valid line in two.
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip():
            yield number, line


def parse_files(paths: Sequence[Path]) -> list[dict]:
    """Every lesson in `paths`, checked; InvalidInput naming file and line at the first bad one.

    A line repeated exactly (same id, same content) is one lesson; the same id with
    other content is refused.
    """
    return list(_checked(paths))


def _checked(paths: Sequence[Path]) -> Iterator[dict]:
    """The lessons of `parse_files`, each as soon as its line is read."""
    lessons: dict[str, dict] = {}
    where_of: dict[str, str] = {}
    for path in paths:
        for number, line in read_lines(path):
            where = f"{path}:{number}"
            try:
                lesson = lesson_from_line(loads_json(line))
            except json.JSONDecodeError as exc:
                msg = f"{where}: not valid JSON ({exc.msg} at column {exc.colno})"
                raise InvalidInput(msg, hint="nothing was imported; fix the line and run again") from None
            except ValueError as exc:
                msg = f"{where}: {exc}"
                raise InvalidInput(msg, hint="nothing was imported; fix the line and run again") from None
            first = lessons.get(lesson["id"])
            if first is not None and first != lesson:
                msg = f"{where}: id {lesson['id']} was already used, with other content, at {where_of[lesson['id']]}"
                raise InvalidInput(msg, hint="nothing was imported; every lesson needs its own id")
            if first is None:
                lessons[lesson["id"]] = lesson
                where_of[lesson["id"]] = where
                yield lesson


def import_lessons(store: Store, paths: Sequence[Path], *, batch_size: int = BATCH_SIZE) -> ImportResult:
    """Check every line of every file, then write the lessons in batch commits."""
    # Each lesson is encoded as soon as it is read, while its redacted text is the one
    # redaction has just judged (see `lessons.redaction.redact`); nothing is written before the last line.
    lessons = [(lesson["id"], *encoded(lesson)) for lesson in _checked(paths)]
    tip = store.commit_at()
    tree = tip.tree if tip is not None else None
    new: list[tuple[str, bytes]] = []
    documents: dict[pygit2.Oid, dict] = {}
    unchanged = 0
    for rec_id, data, document in lessons:
        path = record_path(COLLECTION, rec_id)
        existing = _file_at(store, tree, path)
        if existing == data:
            unchanged += 1
        elif existing is not None:
            msg = f"lesson {rec_id} is already in the store with other content"
            raise InvalidInput(msg, hint="records are add-only; give the imported lesson another id (or none)")
        else:
            new.append((path, data))
            documents[pygit2.hash(data)] = document
    names = ", ".join(p.name for p in paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    commits = commit_all_or_nothing(store, new, f"failres: import {len(new)} lessons from {names}", batch_size)
    return ImportResult(tuple(str(p) for p in paths), len(lessons), len(new), unchanged,
                        tuple(str(c) for c in commits), documents)


def _file_at(store: Store, tree, path: str) -> bytes | None:
    """The bytes of the file at `path` in `tree`; None when there is none (one tree read for a whole import)."""
    if tree is None:
        return None
    try:
        entry = tree[path]
    except KeyError:
        return None
    obj = store.repo[entry.id]
    return obj.data if obj.type == ObjectType.BLOB else None


def commit_all_or_nothing(store: Store, puts: Sequence[tuple[str, bytes]], message: str,
                          batch_size: int, attempts: int = 20) -> list:
    """The batch commits, chained on the tip in memory, then the ref moved once to the last.

    An import interrupted at any moment (Ctrl-C between batches, a kill) leaves the store
    where it was: the batches are unreachable objects until the single compare-and-swap
    that makes all of them the store. A writer that moved the tip meanwhile costs a rebuild.
    """
    from lessons.storage import bulk
    from lessons.errors import StoreBusy
    from lessons.storage.store import _audit_body

    if not puts:
        return []
    store.require()
    changes = [Change(dict(puts[first:first + batch_size])) for first in range(0, len(puts), batch_size)]
    texts = [f"{message} (batch {n + 1})\n" + _audit_body(change) for n, change in enumerate(changes)]
    fast = len(puts) >= bulk.MIN_BULK_FILES and bulk.available()
    for _ in range(attempts):
        failpoint("import-batch")
        parent = store.commit_at()
        start = parent.id if parent is not None else None
        chain = _fast_chain(store, parent, changes, texts) if fast else None
        if chain is None:
            fast = False  # git could not write it: object by object, the same commits
            chain = _plain_chain(store, parent, changes, texts)
        if store.compare_and_swap(start, chain[-1], message):
            return chain
    msg = f"the store ref {store.ref} kept moving; gave up after {attempts} attempts"
    raise StoreBusy(msg, hint="nothing was imported; run the command again")


def _fast_chain(store: Store, parent, changes: list[Change], texts: list[str]) -> list | None:
    """The batches as one chain written by `git fast-import` (one pack); None when git failed."""
    import pygit2

    from lessons.storage import bulk

    try:
        made = bulk.write_chain(store.common_dir, parent, list(zip(changes, texts, strict=True)), store.signature())
    except ValueError:  # a path fast-import cannot take
        return None
    return None if made is None else [pygit2.Oid(hex=oid) for oid in made]


def _plain_chain(store: Store, parent, changes: list[Change], texts: list[str]) -> list:
    """The batches as a chain of commits written through libgit2, none of them on a ref yet."""
    tree = parent.tree if parent is not None else None
    last = parent.id if parent is not None else None
    chain = []
    for change, text in zip(changes, texts, strict=True):
        tree_id = store.apply(tree, change)
        signature = store.signature()
        last = store.repo.create_commit(None, signature, signature, text, tree_id, [last] if last else [])
        chain.append(last)
        tree = store.repo[tree_id]
    return chain
