"""What each bounded store keeps first, and what it never lets go while it is needed.

Pure rankings over records (and, for the pins that need them, reads of the store),
used by the capacity manager (`lessons.bounds.capacity`). Every ranking is a total order:
the manager breaks ties by record id, so every machine moves the same records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

import pygit2

from lessons.frozen import record
from lessons.bounds.policy import Policy, age_days, decayed_confidence, is_consolidation_candidate
from lessons.storage.records import read_collection
from lessons.storage.store import Store

Retention = Callable[[Mapping[str, object], "RankContext"], tuple]


@record
class RankContext:
    """What a ranking may depend on besides the record: the policy and the moment."""

    policy: Policy
    now: datetime


def _ts(record: Mapping[str, object]) -> str:
    return str(record.get("ts", ""))


def lessons_retention(record: Mapping[str, object], ctx: RankContext) -> tuple:
    resolved = bool(record.get("resolved_by"))
    fresh = age_days(record.get("ts"), ctx.now) <= ctx.policy.stale_days
    tier = 1 if resolved else (2 if fresh else 0)
    return (tier, _ts(record))


def _event_order(record: Mapping[str, object]) -> tuple[str, int]:
    seq = record.get("seq", 0)
    return (_ts(record), seq if isinstance(seq, int) and not isinstance(seq, bool) else 0)


def journal_retention(record: Mapping[str, object], ctx: RankContext) -> tuple:
    return _event_order(record)


def fact_retention(record: Mapping[str, object], ctx: RankContext) -> tuple:
    confirmed = record.get("last_confirmed") or record.get("valid_from") or record.get("ts")
    days = age_days(confirmed, ctx.now)
    raw = record.get("confidence", 0.0)
    confidence = float(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) else 0.0
    current = record.get("valid_until") is None
    candidate = is_consolidation_candidate(confidence, days, ctx.policy)
    tier = (2 if not candidate else 1) if current else 0
    # Rounded so that float noise can never outrank the id tie-break.
    return (tier, round(decayed_confidence(confidence, days, ctx.policy.decay_rate), 9), str(confirmed or ""))


QUARANTINES_KEPT_PER_TASK = 3


def journal_anchors(records: Mapping[str, Mapping[str, object] | None]) -> frozenset[str]:
    """The events a task's state is read from: per task, the newest of each type (three quarantines)."""
    groups: dict[tuple[str, str], list[tuple[tuple, str]]] = {}
    for rec_id, record in records.items():
        if record is not None:
            place = (str(record.get("task", "")), str(record.get("type", "")))
            groups.setdefault(place, []).append((_event_order(record), rec_id))
    anchors: set[str] = set()
    for (_, event_type), events in groups.items():
        kept = QUARANTINES_KEPT_PER_TASK if event_type == "quarantined" else 1
        events.sort(key=lambda item: item[1])  # equal stamps keep the smaller id first, as `rank` does
        events.sort(key=lambda item: item[0], reverse=True)
        anchors.update(rec_id for _, rec_id in events[:kept])
    return frozenset(anchors)


# The events a task's run is defined by (its definition, and its state) and, until a
# landing stamps its lessons, the events `resolved_by` will be read from.
_DEFINING_EVENTS = ("task-started", "task-committed", "quarantined", "landed")
_RESOLVING_EVENTS = frozenset(("decision-answered", "binding-changed", "task-started"))


def journal_pins(records: Mapping[str, Mapping[str, object] | None]) -> frozenset[str]:
    """The events live commands still read, never archived whatever the maximum says.

    Per task: the newest event of each defining type -- `task-started` holds the task as
    it ran (`prompt`, `land` and the edit trigger read it), the others its state -- and,
    while a quarantine waits for its landing, every event since the last quarantine that
    the landing reads `resolved_by` from. A few per task, so the store stays bounded by
    the plan's size; without them a small `max_journal_events` archived `task-started`
    and `prompt SLUG TASK` no longer knew the task had run.
    """
    by_task: dict[str, list[tuple[tuple, str, Mapping[str, object]]]] = {}
    for rec_id, record in records.items():
        if record is not None:
            by_task.setdefault(str(record.get("task", "")), []).append((_event_order(record), rec_id, record))
    pins: set[str] = set()
    for events in by_task.values():
        events.sort(key=lambda item: (item[0], item[1]))
        for kind in _DEFINING_EVENTS:
            newest = [rec_id for _, rec_id, record in events if record.get("type") == kind]
            pins.update(newest[-1:])
        last_quarantine = max((i for i, (_, _, r) in enumerate(events) if r.get("type") == "quarantined"), default=None)
        if last_quarantine is None:
            continue
        after = events[last_quarantine + 1:]
        if any(r.get("type") == "landed" for _, _, r in after):
            continue  # stamped already: its window is history
        pins.update(rec_id for _, rec_id, r in after if r.get("type") in _RESOLVING_EVENTS)
    return frozenset(pins)


def pending_proposal_pins(store: Store, commit: pygit2.Commit | None,
                          records: Mapping[str, Mapping[str, object] | None]) -> frozenset[str]:
    """Pending proposals: a person may still accept one, and accepting reads it live."""
    return frozenset(rec_id for rec_id, record in records.items()
                     if record is not None and record.get("status") == "pending")


def cited_reflection_pins(store: Store, commit: pygit2.Commit | None,
                          records: Mapping[str, Mapping[str, object] | None]) -> frozenset[str]:
    """Reflections a pending proposal cites: deciding it marks them, and a reviewer reads them."""
    cited: set[str] = set()
    for proposal in read_collection(store, "proposals", commit=commit).records:
        ids = proposal.get("reflection_ids")
        if proposal.get("status") == "pending" and isinstance(ids, list):
            cited.update(str(i) for i in ids)
    return frozenset(cited & set(records))


def proposal_retention(record: Mapping[str, object], ctx: RankContext) -> tuple:
    return (record.get("status") == "pending", _ts(record))


def newest_retention(record: Mapping[str, object], ctx: RankContext) -> tuple:
    return (_ts(record),)
