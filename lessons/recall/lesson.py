"""Lessons: what one quarantine taught, and later what resolved it.

A lesson is written in the same store commit as the quarantine it records. It is
add-only: when the task lands, a `resolved_by` stamp is an amendment beside it
(first stamp wins, so two replicas that both saw a landing agree).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from lessons.storage.records import Put, amendment_put, derived_id, make_amendment, new_id, now_ts, read_collection, record_put
from lessons.recall.signature import signature as make_signature
from lessons.storage.store import Store

COLLECTION = "lessons"
# `configuration-changed`: the gate, its setup or `[workspace]` changed since the quarantine.
RESOLUTIONS = ("decision-answered", "integration-head-moved", "scope-widened", "binding-changed",
               "configuration-changed")
UNKNOWN = ("unknown",)


def package_of(files: Sequence[str]) -> str:
    """The first path segment of the task's first file: where the failure lives."""
    for path in files:
        head = path.strip("/").split("/", 1)[0]
        if head:
            return head
    return ""


def make_lesson(*, slug: str, task: str, fail_class: str, message: str, files: Sequence[str],
                int_head: str, snapshot: str | None, ts: str | None = None, **extra: object) -> dict:
    from lessons.redaction.redact import redact

    clean = redact(message)
    doc = {
        "id": new_id(),
        "ts": ts or now_ts(),
        "slug": slug,
        "task": task,
        "failClass": fail_class,
        "signature": make_signature(fail_class, clean),
        "package": package_of(files),
        "message": clean,
        "snapshotBundle": snapshot,
        "intHead": int_head,
        "resolved_by": None,
        "resolved_at": None,
    }
    doc.update(extra)
    return doc


def lesson_put(lesson: Mapping[str, object]) -> Put:
    return record_put(COLLECTION, lesson)


def stamp_put(lesson_id: str, resolved_by: Sequence[str], resolved_at: str, landed_commit: str,
              collection: str = COLLECTION) -> Put:
    """The `resolved_by` stamp. Its id is derived from the lesson and the landing, so
    stamping the same landing twice writes the same file: idempotent by construction."""
    if not resolved_by:
        resolved_by = UNKNOWN
    amend = make_amendment(
        lesson_id,
        {"resolved_by": list(resolved_by), "resolved_at": resolved_at},
        first_wins=True,
        amend_id=derived_id("stamp", lesson_id, landed_commit),
        ts=resolved_at,
        landed=landed_commit,
    )
    return amendment_put(collection, lesson_id, amend)


def newest_first(lessons: Iterable[Mapping[str, object]]) -> list[dict]:
    return sorted((dict(x) for x in lessons), key=lambda r: (str(r.get("ts", "")), str(r.get("id", ""))),
                  reverse=True)


def read_lessons(store: Store) -> tuple[list[dict], list[str]]:
    """All lessons newest first, and the paths of files that could not be read."""
    result = read_collection(store, COLLECTION)
    return newest_first(result.records), [str(p) for p in result.problems]
