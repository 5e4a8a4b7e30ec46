"""`git failres report`: what failed, what resolved it, what it cost.

`build_report` is a pure function of the journal, the lessons and the decisions
(and of where they come from, for the header); `load_report` reads them from the
store. Every list has a fixed order, so the same store always gives the same report.
What a run cost is read from the journal's own measurements: each `seat-finished`
and `gate-result` event carries its `durationMs`. What resolved the lessons is counted
under the names the landing stamped (`lessons.recall.lesson.RESOLUTIONS`), so a
configuration failure fixed in `.failres.toml` reads `configuration-changed`, not `unknown`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime

from failres.engine.state import STOP_CLASS
from failres.engine.tally import resolution_of, runs_of, summary_line, tally_task, totals
from failres.report.trends import quarantines_by_day, recurring_signatures, task_commands, task_commits

Event = Mapping[str, object]

# Directories that hold a project's code rather than name a part of it: "src/dates/x.py"
# is about `dates`, and a src-layout repository is not one package called "src".
CONTAINER_DIRS = frozenset({"src", "lib", "libs", "pkg", "pkgs", "packages", "source", "sources", "app", "apps",
                            "internal", "python"})


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


def package_of_paths(paths: Sequence[str]) -> str:
    """The first meaningful segment of the first path: past container directories like
    `src/`, and without a file's extension (`src/dates.py` -> `dates`)."""
    for path in paths:
        parts = [p for p in str(path).strip("/").split("/") if p and p not in (".", "..")]
        while len(parts) > 1 and parts[0] in CONTAINER_DIRS:
            parts = parts[1:]
        if parts:
            head = parts[0]
            if len(parts) == 1 and "." in head.strip("."):
                head = head.rsplit(".", 1)[0]
            return head.rstrip("*") or head
    return ""


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


def task_rows(tasks: Mapping[tuple[str, str], Sequence[Event]], live: Collection[tuple[str, str]] = ()) -> list[dict]:
    """One row per task, counted as `status` counts it (`engine.tally`)."""
    rows = []
    for (slug, task), events in sorted(tasks.items()):
        counted = tally_task(events, live=(slug, task) in live)
        rows.append({
            "slug": slug, "task": task, "state": counted.state,
            "attempts": sum(1 for e in events if e.get("type") == "task-started"),
            "runs": counted.runs, "dispatches": counted.dispatches,
            "agentSeconds": counted.agent_seconds, "gateSeconds": counted.gate_seconds,
            "quarantines": counted.quarantines, "stops": counted.stops,
            "lastFailClass": counted.last_fail_class,
        })
    commits = task_commits([e for evs in tasks.values() for e in evs])
    for row in rows:
        row["commit"] = commits.get((row["slug"], row["task"]))
        row["commands"] = task_commands(row["slug"], row["task"], row["commit"])
    return rows


def cost(tasks: Mapping[tuple[str, str], Sequence[Event]], saved: int,
         live: Collection[tuple[str, str]] = ()) -> dict:
    """What the runs cost, by how they ended (a failure class, "committed", "interrupted", "running")."""
    by_outcome: dict[str, dict] = {}
    for key, events in tasks.items():
        for run in runs_of(events, live=key in live):
            entry = by_outcome.setdefault(run["outcome"], {"name": run["outcome"], "runs": 0, "dispatches": 0,
                                                           "agentSeconds": 0.0, "gateSeconds": 0.0})
            entry["runs"] += 1
            for name in ("dispatches", "agentSeconds", "gateSeconds"):
                entry[name] += run[name]
    rows = sorted(by_outcome.values(), key=lambda r: (-r["dispatches"], -r["agentSeconds"], r["name"]))
    for row in rows:
        row["agentSeconds"] = round(row["agentSeconds"], 3)
        row["gateSeconds"] = round(row["gateSeconds"], 3)
    return {
        "dispatches": sum(r["dispatches"] for r in rows),
        "agentSeconds": round(sum(r["agentSeconds"] for r in rows), 3),
        "gateSeconds": round(sum(r["gateSeconds"] for r in rows), 3),
        "byOutcome": rows,
        "dispatchesSavedByStopLoss": saved,
    }


def _first_line(text: object) -> str:
    lines = [line.strip() for line in str(text or "").splitlines() if line.strip()]
    return lines[0] if lines else ""


def lesson_rows(lessons: Sequence[Mapping], commits: Mapping[tuple[str, str], str] | None = None) -> dict:
    """Unresolved lessons (oldest first: the longest waiting) and resolved ones (newest first),
    each with its task's commit and the commands that show the lesson, its logs and the commit."""
    def row(lesson: Mapping) -> dict:
        slug, task = str(lesson.get("slug")), str(lesson.get("task"))
        commit = (commits or {}).get((slug, task))
        out = {"id": lesson.get("id"), "slug": lesson.get("slug"), "task": lesson.get("task"),
               "failClass": lesson.get("failClass"), "message": _first_line(lesson.get("message")),
               "ts": lesson.get("ts"), "commit": commit,
               "commands": {"lesson": f"git failres lessons show {lesson.get('id')}",
                            **task_commands(slug, task, commit)}}
        if lesson.get("resolved_by"):
            out["resolvedBy"] = list(lesson.get("resolved_by") or [])
            out["resolvedAt"] = lesson.get("resolved_at")
        return out

    key = (lambda lesson: (str(lesson.get("ts")), str(lesson.get("id"))))
    unresolved = sorted((l for l in lessons if not l.get("resolved_by")), key=key)
    resolved = sorted((l for l in lessons if l.get("resolved_by")), key=key, reverse=True)
    return {"unresolved": [row(l) for l in unresolved], "resolved": [row(l) for l in resolved]}


def period_of(events: Sequence[Event]) -> dict:
    stamps = sorted(str(e.get("ts")) for e in events if e.get("ts"))
    return {"from": stamps[0] if stamps else None, "to": stamps[-1] if stamps else None}


def _task_packages(tasks: Mapping[tuple[str, str], Sequence[Event]]) -> dict[tuple[str, str], str]:
    """Each task's package, from the scope its runs recorded (the journal keeps it)."""
    packages = {}
    for key, events in tasks.items():
        started = [e for e in events if e.get("type") == "task-started"]
        definition = started[-1].get("definition") if started else None
        files = (definition or {}).get("files") if isinstance(definition, Mapping) else None
        files = files or (started[-1].get("scope") if started else None) or []
        if files:
            packages[key] = package_of_paths([str(f) for f in files])
    return packages


def build_report(events: Sequence[Event], lessons: Sequence[Mapping], decisions: Sequence[Mapping], *,
                 repository: str = "", branch: str = "", live: Collection[tuple[str, str]] = ()) -> dict:
    """The report; `live` names the tasks a live process runs now (any other `running` one died)."""
    tasks: dict[tuple[str, str], list[Event]] = {}
    for event in events:
        tasks.setdefault((str(event.get("slug")), str(event.get("task"))), []).append(event)
    tallies = {key: tally_task(evs, live=key in live) for key, evs in tasks.items()}
    counted = totals(list(tallies.values()), lessons)
    # Quarantines are the journal's (a stop is counted as a stop): the same count `status` shows.
    quarantined = [e for e in events if e.get("type") == "quarantined" and e.get("failClass") != STOP_CLASS]
    by_class = Counter(str(e.get("failClass")) for e in quarantined)
    packages = _task_packages(tasks)
    lesson_packages = {str(lesson.get("id")): package_of_paths([str(lesson.get("package") or "")]) for lesson in lessons}
    by_package = Counter(packages.get((str(e.get("slug")), str(e.get("task"))))
                         or lesson_packages.get(str(e.get("lesson"))) or "(none)" for e in quarantined)
    resolved = [lesson for lesson in lessons if resolution_of(lesson) is not None]
    resolutions: Counter = Counter()
    for lesson in resolved:
        for reason in dict.fromkeys(str(r) for r in lesson.get("resolved_by") or ()):
            resolutions[reason] += 1
    open_decisions = [d for d in decisions if d.get("status") == "open"]
    stop = stop_loss_savings(tasks)
    return {
        "header": {"repository": repository, "branch": branch, "period": period_of(events)},
        "summary": summary_line(counted),
        "totals": {"tasks": counted.tasks, "runs": counted.runs, "quarantines": counted.quarantines,
                   "stops": counted.stops, "lessons": counted.lessons, "resolvedLessons": counted.resolved,
                   "unresolvedLessons": counted.unresolved},
        "tasks": {
            "total": counted.tasks,
            "byState": [{"name": name, "count": count} for name, count in counted.by_state],
            "table": task_rows(tasks, live),
        },
        "quarantines": {
            "total": counted.quarantines,
            "stops": counted.stops,
            "byFailClass": _counted(by_class),
            "byPackage": _counted(by_package),
            "byDay": quarantines_by_day(events),
        },
        "recurring": recurring_signatures(events, lessons),
        "resolutions": {
            "resolvedLessons": counted.resolved,
            "unresolvedLessons": counted.unresolved,
            "byReason": _counted(resolutions),
            "byResolution": _counted(Counter(resolution_of(lesson) for lesson in resolved)),
        },
        "lessons": lesson_rows(lessons, task_commits(events)),
        "cost": cost(tasks, stop["dispatchesNotMade"], live),
        "repair": repair_outcomes(tasks),
        "stopLoss": stop,
        "timeToLand": time_to_land(tasks),
        "openDecisions": [
            {"id": d.get("id"), "slug": d.get("slug"), "task": d.get("task"), "files": d.get("files", [])}
            for d in sorted(open_decisions, key=lambda d: (str(d.get("ts")), str(d.get("id"))))
        ],
    }


def load_report(store, *, repository: str = "", branch: str = "") -> tuple[dict, list[str]]:
    """The report of a store, and the paths of records that could not be read."""
    from failres.decisions.records import read_decisions
    from failres.journal import list_slugs, read_journal
    from lessons.recall.lesson import read_lessons

    events: list[Event] = []
    problems: list[str] = []
    for slug in list_slugs(store):
        journal = read_journal(store, slug)
        events.extend(journal.events)
        problems.extend(journal.problems)
    lessons, lesson_problems = read_lessons(store)
    decisions, decision_problems = read_decisions(store)
    report = build_report(events, lessons, decisions, repository=repository, branch=branch,
                          live=live_tasks(store, events))
    from failres.report.learned_rules import learned_rule_rows

    report["learnedRules"] = learned_rule_rows(store)
    return report, problems + lesson_problems + decision_problems


def live_tasks(store, events: Sequence[Event]) -> set[tuple[str, str]]:
    """The tasks the journal calls running that a live process holds now (asked of their locks)."""
    from failres.containment.locks import live_holder
    from failres.engine.state import task_state

    tasks: dict[tuple[str, str], list[Event]] = {}
    for event in events:
        tasks.setdefault((str(event.get("slug")), str(event.get("task"))), []).append(event)
    return {key for key, evs in tasks.items()
            if task_state(evs) == "running" and live_holder(store.common_dir, *key) is not None}
