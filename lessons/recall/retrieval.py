"""The reads prompts, hooks and people ask of the store.

Each query is one function with the signature its callers rely on, so a faster
backing (a derived index brought up to date from the store's tree diff) can
replace the body without touching a caller. Each asks the store index
(`lessons.storage.index`), which costs the same whatever the store's size, and falls back
to reading the collection from the tip of the store when the index cannot answer.

Order is part of the answer: newest first, ties broken by id, so the same store
gives the same list on every run and every machine.
"""

from __future__ import annotations

from collections.abc import Mapping

from lessons.frozen import record
from lessons.storage.index import StoreIndex, answer
from lessons.recall.lesson import COLLECTION as LESSONS
from lessons.recall.lesson import newest_first
from lessons.storage.records import read_collection
from lessons.storage.store import Store

# The decisions collection belongs to the engine that raises decisions; its name is
# all the library needs to read it.
DECISIONS = "decisions"


@record
class LessonFilter:
    """Which lessons a listing keeps; an unset field keeps everything."""

    slug: str | None = None
    task: str | None = None
    fail_class: str | None = None
    unresolved: bool = False
    resolved: bool = False

    def keeps(self, lesson: Mapping[str, object]) -> bool:
        if self.slug is not None and lesson.get("slug") != self.slug:
            return False
        if self.task is not None and lesson.get("task") != self.task:
            return False
        if self.fail_class is not None and lesson.get("failClass") != self.fail_class:
            return False
        stamped = is_resolved(lesson)
        if self.unresolved and stamped:
            return False
        return not (self.resolved and not stamped)


def is_resolved(lesson: Mapping[str, object]) -> bool:
    """Stamped by a landing: `resolved_by` is a non-empty list."""
    value = lesson.get("resolved_by")
    return isinstance(value, list) and bool(value)


def list_lessons(store: Store, which: LessonFilter = LessonFilter(), limit: int | None = None) -> list[dict]:
    """Lessons that pass `which`, newest first, cut to `limit` after sorting."""
    if limit is not None and limit < 0:
        limit = 0
    return answer(store, lambda index: _indexed_lessons(index, which, limit),
                  lambda: _read_lessons(store, which, limit))


def _indexed_lessons(index: StoreIndex, which: LessonFilter, limit: int | None) -> list[dict]:
    if which.resolved and which.unresolved:
        return []  # a lesson is one or the other
    resolved = True if which.resolved else False if which.unresolved else None
    return index.lessons(slug=which.slug, task=which.task, fail_class=which.fail_class, resolved=resolved,
                         limit=limit)


def _read_lessons(store: Store, which: LessonFilter, limit: int | None) -> list[dict]:
    """The same answer from the store itself: what the index falls back to."""
    records = read_collection(store, LESSONS).records
    found = newest_first(r for r in records if which.keeps(r))
    return found if limit is None else found[:limit]


def count_lessons(store: Store, which: LessonFilter = LessonFilter()) -> int:
    """How many lessons pass `which`: what a cut listing is a part of."""
    def indexed(index: StoreIndex) -> int:
        if which.resolved and which.unresolved:
            return 0
        resolved = True if which.resolved else False if which.unresolved else None
        return index.count_lessons(slug=which.slug, task=which.task, fail_class=which.fail_class, resolved=resolved)

    return answer(store, indexed, lambda: len(_read_lessons(store, which, None)))


def relevant_lessons(store: Store, fail_class: str, limit: int = 3, *, include_archived: bool = False) -> list[dict]:
    """Resolved lessons of `fail_class`, newest first, at most `limit`.

    Only resolved ones: a lesson nobody has learned the outcome of yet tells the
    next fixer nothing about what worked. With `include_archived` (the policy's
    `archive_reach = "all"`), archived lessons make up what the live store lacks;
    the archive is read only then, and only when the live answer is short.
    """
    which = LessonFilter(fail_class=fail_class, resolved=True)
    live = list_lessons(store, which, limit)
    if not include_archived or len(live) >= limit:
        return live
    from lessons.bounds.archive import iter_archived

    archived = newest_first(r for r in iter_archived(store, LESSONS) if which.keeps(r))
    return newest_first([*live, *archived])[:limit]


def task_lessons(store: Store, slug: str, task: str) -> list[dict]:
    """Every lesson of one task, newest first."""
    return list_lessons(store, LessonFilter(slug=slug, task=task))


def open_decisions(store: Store) -> list[dict]:
    """Decisions still waiting for an answer, oldest first (the longest waiting leads)."""
    return answer(store, lambda index: index.open_decisions(), lambda: _read_open_decisions(store))


def task_decisions(store: Store, slug: str, task: str) -> list[dict]:
    """Every decision of one task, oldest first (what the loop widens its scope from)."""
    def mine(decisions: list[dict]) -> list[dict]:
        return [d for d in decisions if d.get("slug") == slug and d.get("task") == task]

    return answer(store, lambda index: mine(index.decisions()), lambda: mine(_read_decisions(store)))


def _read_decisions(store: Store) -> list[dict]:
    records = read_collection(store, DECISIONS).records
    return sorted(records, key=lambda d: (str(d.get("ts", "")), str(d.get("id", ""))))


def _read_open_decisions(store: Store) -> list[dict]:
    records = read_collection(store, DECISIONS).records
    waiting = [d for d in records if d.get("status") == "open"]
    return sorted(waiting, key=lambda d: (str(d.get("ts", "")), str(d.get("id", ""))))
