"""What failres's own records say about each resolved lesson, for the learner to count.

A lesson says which failure a task hit and, once the task landed, what kinds of
thing resolved it (`resolved_by`). The journal says more, and only the journal is
trusted for it (never an agent's account): which files the task works on and
which gate judges it (its `task-started`), and, between the last quarantine and
the landing, which files a person's answer widened the scope to
(`decision-answered`) and which seat was bound to what (`binding-changed`). The
window is the one `resolved_by` was computed from (see `failres.landing.outcome_labels`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from failres.decisions.records import scope_files_of
from failres.journal import read_journal
from lessons.learning.outcomes import ResolvedOutcome, area_of, outcome_from_lesson
from lessons.recall.lesson import read_lessons
from lessons.storage.store import Store


def resolution_window(events: Sequence[Mapping[str, object]], lesson_id: str) -> list[Mapping[str, object]]:
    """The task's events between the last quarantine before the landing that resolved
    `lesson_id` and that landing; [] when the journal does not hold them."""
    start = next((i for i, e in enumerate(events) if e.get("type") == "quarantined" and e.get("lesson") == lesson_id),
                 None)
    if start is None:
        return []
    end = next((i for i in range(start, len(events)) if events[i].get("type") == "landed"), len(events))
    last = max(i for i in range(start, end) if events[i].get("type") == "quarantined")
    return list(events[last + 1:end])


def _definition(events: Sequence[Mapping[str, object]]) -> tuple[tuple[str, ...], str]:
    """(files, gate) the task ran with, from its latest `task-started`."""
    for event in reversed(events):
        if event.get("type") != "task-started":
            continue
        definition = event.get("definition")
        definition = definition if isinstance(definition, Mapping) else {}
        files = definition.get("files") or event.get("scope")
        gate = definition.get("gate")
        return (tuple(str(f) for f in files) if isinstance(files, list) else (),
                gate if isinstance(gate, str) else "")
    return (), ""


def outcome_with_journal(lesson: Mapping[str, object], events: Sequence[Mapping[str, object]]
                         ) -> ResolvedOutcome | None:
    """A resolved lesson's outcome, with what its task's journal adds (pure)."""
    bare = outcome_from_lesson(lesson)
    if bare is None:
        return None
    files, gate = _definition(events)
    widened: list[str] = []
    bindings: list[tuple[str, str]] = []
    for event in resolution_window(events, bare.lesson_id):
        if event.get("type") == "decision-answered":
            widened.extend(scope_files_of(event.get("answer")))
        elif event.get("type") == "binding-changed":
            bindings.append((str(event.get("seat", "")), str(event.get("to") or "")))
    return ResolvedOutcome(
        lesson_id=bare.lesson_id, task=bare.task, fail_class=bare.fail_class, resolved_by=bare.resolved_by,
        area=area_of(files) if files else bare.area, gate=gate, widened=tuple(dict.fromkeys(widened)),
        bindings=tuple(dict.fromkeys(bindings)),
    )


def resolved_outcomes(store: Store) -> list[ResolvedOutcome]:
    """Every resolved lesson's outcome, read through the lessons and journal readers."""
    journals: dict[str, list[dict]] = {}
    found = []
    for lesson in read_lessons(store)[0]:
        slug, task = str(lesson.get("slug", "")), str(lesson.get("task", ""))
        if slug not in journals:
            journals[slug] = list(read_journal(store, slug).events)
        events = [e for e in journals[slug] if e.get("task") == task]
        outcome = outcome_with_journal(lesson, events)
        if outcome is not None:
            found.append(outcome)
    return found
