"""How many: the one definition of what `status` and `report` count, so the two never disagree.

- A **run** is one attempt at a task: each `task-started`, and each stop-loss refusal (a
  run that dispatched nothing). Every run ends one way: `committed`, a failure class,
  `interrupted`, or `running` while it is still going.
- A **quarantine** is a `quarantined` event of a run that ran; a stop-loss stop records
  one too, but it is counted apart, as a **stop** (it makes no lesson and ran nothing).
- A task's **state** is the journal's, except that `running` with no live process holding
  the task is `interrupted`: the run died, and nobody is working on it.
- **Lessons** are counted from the lessons themselves (imports included), and a resolved
  lesson once, under the combination of causes that resolved it, so the causes add up to
  the lessons resolved.

Pure functions over journal events and lesson records; whether a task's process is
alive is asked by the caller and passed in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from lessons.frozen import record
from failres.engine.state import STATES, STOP_CLASS, task_state

Event = Mapping[str, object]


def _seconds(event: Event) -> float:
    value = event.get("durationMs")
    return float(value) / 1000 if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def effective_state(events: Sequence[Event], *, live: bool) -> str:
    """The task's state; `running` only while `live` (a process holds the task)."""
    found = task_state(events)
    return "interrupted" if found == "running" and not live else found


def runs_of(events: Sequence[Event], *, live: bool = True) -> list[dict]:
    """Each run of one task with what it cost and how it ended: `committed`, a failure
    class, `interrupted`, or `running` (only the last run, only while `live`)."""
    runs: list[dict] = []
    current: dict | None = None
    for event in events:
        kind = event.get("type")
        if kind == "task-started" or (kind == "stop-loss" and (current is None or current["outcome"] != "running")):
            if current is not None and current["outcome"] == "running":
                current["outcome"] = "interrupted"  # a run that never ended before the next began died
            current = {"outcome": "running", "dispatches": 0, "agentSeconds": 0.0, "gateSeconds": 0.0}
            runs.append(current)
        if current is None:
            continue
        if kind == "seat-dispatched":
            current["dispatches"] += 1
        elif kind == "seat-finished":
            current["agentSeconds"] += _seconds(event)
        elif kind == "gate-result":
            current["gateSeconds"] += _seconds(event)
        elif kind == "quarantined" and current["outcome"] == "running":
            current["outcome"] = str(event.get("failClass") or "unknown")
        elif kind == "task-committed" and current["outcome"] == "running":
            current["outcome"] = "committed"
        elif kind == "interrupted" and current["outcome"] == "running":
            current["outcome"] = "interrupted"
    if current is not None and current["outcome"] == "running" and not live:
        current["outcome"] = "interrupted"
    return runs


@record
class TaskTally:
    """One task, counted."""

    state: str
    runs: int
    quarantines: int
    stops: int
    dispatches: int
    agent_seconds: float
    gate_seconds: float
    last_fail_class: str | None


def tally_task(events: Sequence[Event], *, live: bool) -> TaskTally:
    runs = runs_of(events, live=live)
    quarantined = [e for e in events if e.get("type") == "quarantined"]
    stops = sum(1 for e in quarantined if e.get("failClass") == STOP_CLASS)
    return TaskTally(
        state=effective_state(events, live=live),
        runs=len(runs),
        quarantines=len(quarantined) - stops,
        stops=stops,
        dispatches=sum(r["dispatches"] for r in runs),
        agent_seconds=round(sum(r["agentSeconds"] for r in runs), 3),
        gate_seconds=round(sum(r["gateSeconds"] for r in runs), 3),
        last_fail_class=str(quarantined[-1].get("failClass")) if quarantined else None,
    )


def resolution_of(lesson: Mapping) -> str | None:
    """The causes that resolved a lesson, as one name (`decision-answered + scope-widened`), or None."""
    causes = lesson.get("resolved_by")
    if not causes or not isinstance(causes, (list, tuple)):
        return None
    return " + ".join(sorted(dict.fromkeys(str(c) for c in causes)))


@record
class Totals:
    """A whole store (or one plan), counted: what every view's summary says."""

    tasks: int
    by_state: tuple[tuple[str, int], ...]
    runs: int
    quarantines: int
    stops: int
    lessons: int
    resolved: int

    @property
    def unresolved(self) -> int:
        return self.lessons - self.resolved


def totals(tallies: Sequence[TaskTally], lessons: Sequence[Mapping]) -> Totals:
    states = Counter(t.state for t in tallies)
    return Totals(
        tasks=len(tallies),
        by_state=tuple((s, states.get(s, 0)) for s in STATES),
        runs=sum(t.runs for t in tallies),
        quarantines=sum(t.quarantines for t in tallies),
        stops=sum(t.stops for t in tallies),
        lessons=len(lessons),
        resolved=sum(1 for lesson in lessons if resolution_of(lesson) is not None),
    )


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else many or one + 's'}"


def summary_line(found: Totals) -> str:
    """One line of the counts, the same wherever it is printed."""
    states = ", ".join(f"{count} {name}" for name, count in found.by_state if count)
    return (f"{_plural(found.tasks, 'task')}" + (f" ({states})" if states else "")
            + f"; {_plural(found.runs, 'run')}, {_plural(found.quarantines, 'quarantine')}, "
              f"{_plural(found.stops, 'stop')}; {_plural(found.lessons, 'lesson')}, {found.unresolved} unresolved")
