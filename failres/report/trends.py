"""The report's views over time: quarantines per day and class, and the failures that keep coming back.

A report opened every week must answer "is it getting better" and "what should we fix
first": the days' counts by class answer the first; the recurring signatures (the same
failure, by its normalised first line, two or more times), with when they were first and
last seen and whether any of their lessons is still unresolved, answer the second. Pure
functions over journal events and lesson records; a stop-loss stop is not a quarantine.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Mapping, Sequence

from failres.engine.state import STOP_CLASS

Event = Mapping[str, object]
RECURS_AT = 2  # a failure seen this often is a pattern, not bad luck


def _quarantines(events: Sequence[Event]) -> list[Event]:
    return [e for e in events if e.get("type") == "quarantined" and e.get("failClass") != STOP_CLASS]


def quarantines_by_day(events: Sequence[Event]) -> list[dict]:
    """`[{day, total, byFailClass: [{name, count}]}]`, oldest day first; days with none left out."""
    days: dict[str, Counter] = {}
    for event in _quarantines(events):
        day = str(event.get("ts") or "")[:10]
        if day:
            days.setdefault(day, Counter())[str(event.get("failClass"))] += 1
    return [{"day": day, "total": sum(counts.values()),
             "byFailClass": [{"name": n, "count": c} for n, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]}
            for day, counts in sorted(days.items())]


def recurring_signatures(events: Sequence[Event], lessons: Sequence[Mapping]) -> list[dict]:
    """Signatures quarantined at least `RECURS_AT` times: most first, then the most recent.

    `open` is true while any of its lessons is unresolved (a quarantine whose lesson is not
    in the store counts as open: nothing says it was resolved).
    """
    resolved = {str(lesson.get("id")): bool(lesson.get("resolved_by")) for lesson in lessons}
    groups: dict[str, list[Event]] = {}
    for event in _quarantines(events):
        groups.setdefault(str(event.get("signature") or ""), []).append(event)
    rows = []
    for signature, found in groups.items():
        if len(found) < RECURS_AT or not signature:
            continue
        stamps = sorted(str(e.get("ts") or "") for e in found)
        rows.append({
            "signature": signature,
            "failClass": str(found[-1].get("failClass")),
            "count": len(found),
            "firstSeen": stamps[0],
            "lastSeen": stamps[-1],
            "open": any(not resolved.get(str(e.get("lesson")), False) for e in found),
            "tasks": sorted({f"{e.get('slug')}/{e.get('task')}" for e in found}),
        })
    return sorted(rows, key=lambda r: (-r["count"], _desc(r["lastSeen"]), r["signature"]))


def _desc(text: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in text)


def task_commands(slug: str, task: str, commit: str | None) -> dict:
    """The commands that show a task's logs, its journal and its commit."""
    quoted = f"{shlex.quote(slug)} {shlex.quote(task)}"
    return {"logs": f"git failres logs {quoted}", "journal": f"git failres journal {shlex.quote(slug)} --task "
            f"{shlex.quote(task)}", "show": f"git show {commit}" if commit else None}


def task_commits(events: Sequence[Event]) -> dict[tuple[str, str], str]:
    """Each task's commit: its landing's merge, else its latest task commit."""
    committed: dict[tuple[str, str], str] = {}
    landed: dict[tuple[str, str], str] = {}
    for event in events:
        key = (str(event.get("slug")), str(event.get("task")))
        if event.get("type") == "task-committed" and event.get("commit"):
            committed[key] = str(event["commit"])
        elif event.get("type") == "landed" and event.get("commit"):
            landed[key] = str(event["commit"])
    return {**committed, **landed}
