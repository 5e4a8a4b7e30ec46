"""Outcome labelling: when a task lands, say what resolved its failures.

What resolved a failure is read from the task's journal between its last
quarantine and the landing, and from nothing else: an agent's own account of
what it fixed is exactly the kind of text a label must not trust. What the
journal can show:

- `decision-answered`: a person (or the resolver seat) answered a decision of
  this task after the quarantine;
- `scope-widened`: one of those answers had the one shape that widens a scope,
  `{"scopeFiles": [paths]}`;
- `integration-head-moved`: the run that produced what landed started from
  another integration head than the quarantined run;
- `binding-changed`: a seat was bound to another agent (or command) since;
- `configuration-changed`: the run that produced what landed ran under another
  configuration (the gate: command, env, setup, cwd ...; `[workspace]`) than the
  quarantined run, as the digest both recorded (`configKey`) says. A gate command
  fixed after two `gate-unavailable` quarantines was stamped `unknown` before.

None of these is `["unknown"]`, still a label: "it went green and we cannot say
why" is a fact worth counting too.

The stamp is add-only and first-wins (see `lessons.recall.lesson.stamp_put`), and the
`landed` event is written once per landing commit, so stamping the same landing
again, from `land`, the merge hook or `label`, writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pygit2

from failres.decisions.records import scope_files_of
from failres.journal import COLLECTION as JOURNAL
from failres.journal import event_order, event_put, make_event, sequence
from lessons.errors import CorruptRecord
from lessons.recall.lesson import COLLECTION as LESSONS
from lessons.recall.lesson import RESOLUTIONS, UNKNOWN, stamp_put
from lessons.storage.records import change_of, now_ts, read_collection, read_record
from lessons.recall.retrieval import is_resolved
from lessons.storage.store import Change, Store
from lessons.failpoints import failpoint


def events_before_landing(events: Sequence[Mapping[str, object]], landed_commit: str) -> list[Mapping[str, object]]:
    """The events that precede the landing at `landed_commit` (all of them when it is not journaled yet)."""
    for index, event in enumerate(events):
        if event.get("type") == "landed" and event.get("commit") == landed_commit:
            return list(events[:index])
    return list(events)


def resolved_by_from_journal(events: Sequence[Mapping[str, object]], *, landed_int_head: str | None) -> list[str]:
    """What resolved the task's last quarantine, from its events (oldest first, up to the landing).

    `landed_int_head` is the integration head the task was merged onto. The head
    that counts is the one the last run after the quarantine started from (its
    `task-started`): that run produced what landed, and the gate judged it there.
    Only when no run followed the quarantine (the branch was fixed by hand) does
    the landing's own head stand in for it.
    """
    last = None
    for index, event in enumerate(events):
        if event.get("type") == "quarantined":
            last = index
    if last is None:
        return list(UNKNOWN)
    quarantined = events[last]
    window = events[last + 1:]
    found: set[str] = set()
    started_from: str | None = None
    configured: str | None = None
    for event in window:
        kind = event.get("type")
        if kind == "decision-answered":
            found.add("decision-answered")
            if scope_files_of(event.get("answer")):
                found.add("scope-widened")
        elif kind == "binding-changed":
            found.add("binding-changed")
        elif kind == "task-started":
            started_from = str(event.get("intHead") or "") or started_from
            configured = str(event.get("configKey") or "") or configured
    head = started_from or landed_int_head
    before = str(quarantined.get("intHead") or "")
    if head and before and head != before:
        found.add("integration-head-moved")
    was = str(quarantined.get("configKey") or "")
    if configured and was and configured != was:
        found.add("configuration-changed")
    labels = [name for name in RESOLUTIONS if name in found]
    return labels or list(UNKNOWN)


def lesson_ids_of(events: Sequence[Mapping[str, object]]) -> list[str]:
    """The lessons the task's quarantines wrote, oldest first.

    Read from the journal rather than by scanning every lesson: each quarantine
    event names its lesson, so stamping costs the same in a store of a million
    lessons as in one of ten.
    """
    ids: list[str] = []
    for event in events:
        lesson = event.get("lesson")
        if event.get("type") == "quarantined" and isinstance(lesson, str) and lesson and lesson not in ids:
            ids.append(lesson)
    return ids


@dataclass(frozen=True)
class StampPlan:
    """What one landing writes: its event (unless journaled already) and the missing stamps."""

    write_landed: bool
    stamped: tuple[str, ...]
    resolved_by: tuple[str, ...]


@dataclass(frozen=True)
class StampResult:
    """What `stamp_task` wrote: the `landed` event (or not), the lessons stamped, the store commit."""

    slug: str
    task: str
    landed_commit: str
    int_head: str
    landed_event: bool
    stamped: tuple[str, ...]
    resolved_by: tuple[str, ...]
    store_commit: str | None

    @property
    def wrote(self) -> bool:
        return self.store_commit is not None


def task_events_at(store: Store, slug: str, task: str, tip: pygit2.Commit | None) -> list[dict]:
    """One task's journal events as the store tip `tip` holds them, oldest first."""
    records = read_collection(store, JOURNAL, scope=slug, commit=tip).records
    return sorted((e for e in records if e.get("task") == task), key=event_order)


ARCHIVED_LESSONS = f"archive/{LESSONS}"


def unstamped_lessons(store: Store, lesson_ids: Sequence[str], tip: pygit2.Commit | None,
                      homes: dict[str, str] | None = None) -> list[str]:
    """The lessons among `lesson_ids` not stamped yet, live or archived.

    An archived lesson is stamped where it lies (its stamp goes beside it in the
    archive), so a restore brings both back together; `homes` learns which.
    """
    out = []
    for lesson_id in lesson_ids:
        for collection in (LESSONS, ARCHIVED_LESSONS):
            try:
                lesson = read_record(store, collection, lesson_id, commit=tip)
            except CorruptRecord:
                break  # an unreadable lesson cannot be stamped; the reader reports it
            if lesson is None:
                continue
            if not is_resolved(lesson):
                out.append(lesson_id)
                if homes is not None:
                    homes[lesson_id] = collection
            break
    return out


def plan_stamp(events: Sequence[Mapping[str, object]], unstamped: Sequence[str], landed_commit: str,
               int_head: str) -> StampPlan:
    """Pure: what a landing at `landed_commit` must still write, given the task's events."""
    before = events_before_landing(events, landed_commit)
    already = len(before) < len(events)
    labels = resolved_by_from_journal(before, landed_int_head=int_head) if unstamped else []
    return StampPlan(write_landed=not already, stamped=tuple(unstamped), resolved_by=tuple(labels))


def stamp_task(store: Store, slug: str, task: str, landed_commit: str, int_head: str) -> StampResult:
    """Journal the landing of slug/task and stamp every unstamped lesson of it, in one store commit.

    The decision is taken on the tip the commit really lands on (the store's
    function form), so two stampers racing each other cannot both write.
    """
    resolved_at = now_ts()
    planned: list[StampPlan] = []

    def change(tip: pygit2.Commit | None) -> Change:
        events = task_events_at(store, slug, task, tip)
        before = events_before_landing(events, landed_commit)
        homes: dict[str, str] = {}
        plan = plan_stamp(events, unstamped_lessons(store, lesson_ids_of(before), tip, homes), landed_commit,
                          int_head)
        planned[:] = [plan]
        puts = [stamp_put(lesson, plan.resolved_by, resolved_at, landed_commit, collection=homes.get(lesson, LESSONS))
                for lesson in plan.stamped]
        if plan.write_landed:
            fields: dict[str, object] = {"commit": landed_commit, "intHead": int_head}
            if plan.stamped:
                fields.update(stamped=list(plan.stamped), resolvedBy=list(plan.resolved_by))
            event = make_event("landed", slug, task, ts=resolved_at, **fields)
            puts.extend(event_put(e) for e in sequence([event]))
        return change_of(puts)

    failpoint("hook-stamp")
    oid = store.commit(change, f"failres: land {slug}/{task} at {landed_commit[:12]}")
    plan = planned[0] if planned else StampPlan(False, (), ())
    wrote = oid is not None
    return StampResult(slug=slug, task=task, landed_commit=landed_commit, int_head=int_head,
                       landed_event=wrote and plan.write_landed, stamped=plan.stamped if wrote else (),
                       resolved_by=plan.resolved_by if wrote else (), store_commit=str(oid) if wrote else None)


def landing_summary(store: Store, slug: str, task: str, landed_commit: str) -> StampResult | None:
    """The landing at `landed_commit` as the journal recorded it (by whichever road wrote it first).

    `land` merging in a checkout with the hooks installed is stamped by the
    post-merge hook before `land` gets to it; this is how `land` still reports
    what was stamped.
    """
    for event in reversed(task_events_at(store, slug, task, store.commit_at())):
        if event.get("type") == "landed" and event.get("commit") == landed_commit:
            stamped, labels = event.get("stamped"), event.get("resolvedBy")
            return StampResult(slug=slug, task=task, landed_commit=landed_commit,
                               int_head=str(event.get("intHead", "")), landed_event=True,
                               stamped=tuple(stamped) if isinstance(stamped, list) else (),
                               resolved_by=tuple(labels) if isinstance(labels, list) else (), store_commit=None)
    return None
