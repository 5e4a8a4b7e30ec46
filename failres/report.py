"""`git failres report`: what failed, what resolved it, what it cost.

`build_report` is a pure function of the journal, the lessons and the decisions;
`load_report` reads them from the store. Every list has a fixed order, so the same
store always gives the same report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime

from failres.engine.state import STATES, task_state

Event = Mapping[str, object]


def _parse_ts(ts: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(ts).replace("Z", "+00:00"))
    except ValueError:
        return None


def _counted(counter: Counter) -> list[dict]:
    """Most first, then by name: a stable order for equal counts."""
    return [{"name": name, "count": count} for name, count in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))]


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def repair_outcomes(tasks: Mapping[tuple[str, str], Sequence[Event]]) -> dict:
    """Of the task runs in which the fixer was dispatched, how many ended green."""
    attempted = repaired = 0
    for events in tasks.values():
        fixer_used = False
        for event in events:
            kind = event.get("type")
            if kind == "task-started":
                fixer_used = False
            elif kind == "seat-dispatched" and event.get("seat") == "fixer":
                fixer_used = True
            elif kind in ("task-committed", "quarantined") and fixer_used:
                attempted += 1
                repaired += kind == "task-committed"
                fixer_used = False
    rate = repaired / attempted if attempted else None
    return {"runsWithFixer": attempted, "repaired": repaired, "rate": rate}


def stop_loss_savings(tasks: Mapping[tuple[str, str], Sequence[Event]]) -> dict:
    """Runs the stop-loss refused, and the dispatches the refused runs would have made
    (counted as the dispatches of the last run it stopped from repeating)."""
    stops = saved = 0
    for events in tasks.values():
        last_run_dispatches = 0
        current = 0
        for event in events:
            kind = event.get("type")
            if kind == "task-started":
                current = 0
            elif kind == "seat-dispatched":
                current += 1
            elif kind == "quarantined" and event.get("failClass") != "repeated-failure-stop":
                last_run_dispatches = current
            elif kind == "stop-loss":
                stops += 1
                saved += max(1, last_run_dispatches)
    return {"runsStopped": stops, "dispatchesNotMade": saved}


def time_to_land(tasks: Mapping[tuple[str, str], Sequence[Event]]) -> dict:
    """Seconds from a task's first quarantine to its landing, for tasks that had one."""
    spans = []
    for events in tasks.values():
        first_q = next((e for e in events if e.get("type") == "quarantined"), None)
        landed = next((e for e in events if e.get("type") == "landed"), None)
        if first_q and landed:
            a, b = _parse_ts(first_q.get("ts")), _parse_ts(landed.get("ts"))
            if a and b:
                spans.append((b - a).total_seconds())
    return {"tasks": len(spans), "medianSeconds": _median(spans), "maxSeconds": max(spans) if spans else None}


def build_report(events: Sequence[Event], lessons: Sequence[Mapping], decisions: Sequence[Mapping]) -> dict:
    tasks: dict[tuple[str, str], list[Event]] = {}
    for event in events:
        tasks.setdefault((str(event.get("slug")), str(event.get("task"))), []).append(event)
    states = Counter(task_state(evs) for evs in tasks.values())
    by_class = Counter(str(lesson.get("failClass")) for lesson in lessons)
    by_package = Counter(str(lesson.get("package") or "(none)") for lesson in lessons)
    resolved = [lesson for lesson in lessons if lesson.get("resolved_by")]
    resolutions: Counter = Counter()
    for lesson in resolved:
        for reason in lesson.get("resolved_by") or ():
            resolutions[str(reason)] += 1
    open_decisions = [d for d in decisions if d.get("status") == "open"]
    return {
        "tasks": {
            "total": len(tasks),
            "byState": [{"name": s, "count": states.get(s, 0)} for s in STATES],
        },
        "quarantines": {
            "total": len(lessons),
            "byFailClass": _counted(by_class),
            "byPackage": _counted(by_package),
        },
        "resolutions": {
            "resolvedLessons": len(resolved),
            "unresolvedLessons": len(lessons) - len(resolved),
            "byReason": _counted(resolutions),
        },
        "repair": repair_outcomes(tasks),
        "stopLoss": stop_loss_savings(tasks),
        "timeToLand": time_to_land(tasks),
        "openDecisions": [
            {"id": d.get("id"), "slug": d.get("slug"), "task": d.get("task"), "files": d.get("files", [])}
            for d in sorted(open_decisions, key=lambda d: (str(d.get("ts")), str(d.get("id"))))
        ],
    }


def load_report(store) -> tuple[dict, list[str]]:
    """The report of a store, and the paths of records that could not be read."""
    from failres.decisions import read_decisions
    from failres.journal import list_slugs, read_journal
    from lessons.lesson import read_lessons

    events: list[Event] = []
    problems: list[str] = []
    for slug in list_slugs(store):
        journal = read_journal(store, slug)
        events.extend(journal.events)
        problems.extend(journal.problems)
    lessons, lesson_problems = read_lessons(store)
    decisions, decision_problems = read_decisions(store)
    return build_report(events, lessons, decisions), problems + lesson_problems + decision_problems
