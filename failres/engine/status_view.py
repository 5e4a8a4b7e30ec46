"""What `git failres status` shows: every task of every plan that ran, counted as `report` counts.

A task is on the list once a run of its plan has seen it: the tasks that ran, and those
the run left `pending` (waiting on `after`, or not selected), which the run records with
a `task-planned` event. The counts come from `engine.tally`, the definition the report
uses too. Reading a status is also when a run that died is noticed: its task reads
`interrupted`, and whatever its seat left running is stopped, before anyone dispatches again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lessons.frozen import record
from failres.containment.left import leave_lost_workspace
from failres.containment.locks import live_holder, lost_holder, stop_lost_seat
from failres.engine import state
from failres.engine.tally import TaskTally, Totals, tally_task, totals
from failres.journal import list_slugs, read_journal
from lessons.storage.store import Store


@record
class StatusView:
    rows: list[dict]
    totals: Totals


def waits_for(events: Sequence[Mapping], journal_states: Mapping[str, str]) -> list[str]:
    """The `after` tasks a never-started task still waits for (pure): none once it has started."""
    if any(e.get("type") == "task-started" for e in events):
        return []
    planned = state.last_event(events, "task-planned")
    after = planned.get("after") if planned else None
    if not isinstance(after, list):
        return []
    return [str(other) for other in after if journal_states.get(str(other)) != "landed"]


def status_of(store: Store, slug: str | None = None, *, with_lessons: bool = True) -> StatusView:
    """One row per task the journal knows, sorted by slug then task, and their totals
    (the lessons counted only `with_lessons`: the rows never need them)."""
    slugs = [slug] if slug else list_slugs(store)
    rows: list[dict] = []
    tallies: list[TaskTally] = []
    git_dir = store.common_dir
    for name in slugs:
        journal = read_journal(store, name)
        tasks = sorted({str(e.get("task")) for e in journal.events if e.get("task")})
        by_task = {task: journal.for_task(task) for task in tasks}
        states = {task: state.task_state(events) for task, events in by_task.items()}
        for task in tasks:
            events = by_task[task]
            holder = live_holder(git_dir, name, task) if states[task] == "running" else None
            counted = tally_task(events, live=holder is not None)
            if states[task] == "running" and holder is None:
                left = lost_holder(git_dir, name, task)
                if left is not None:
                    stop_lost_seat(left)
                leave_lost_workspace(git_dir, name, task)  # its seat is stopped: its `.git` can be made inert
                from failres.engine.live_log import clean_live_logs

                clean_live_logs(git_dir, name, task)  # what the lost run's live log held in clear
            committed = state.last_event(events, "task-committed")
            landed = state.last_event(events, "landed")
            tallies.append(counted)
            rows.append({
                "slug": name,
                "task": task,
                "state": counted.state,
                "pid": holder.pid if holder else None,
                "runs": counted.runs,
                "quarantines": counted.quarantines,
                "stops": counted.stops,
                "lastFailClass": counted.last_fail_class,
                "waitsFor": waits_for(events, states),
                "commit": (landed or committed or {}).get("commit"),
                "empty": bool(committed and committed.get("empty")),
                "updated": events[-1].get("ts") if events else None,
                "events": len(events),
            })
    lessons: list = []
    if with_lessons:
        from lessons.recall.lesson import read_lessons  # its records and signatures only when counted

        lessons, _ = read_lessons(store)
    if slug is not None:
        lessons = [lesson for lesson in lessons if lesson.get("slug") == slug]
    return StatusView(rows, totals(tallies, lessons))
