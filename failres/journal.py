"""The run journal: typed events, written through the store, read oldest first.

The journal is the ground truth of what happened to a task. Outcome labelling
(`resolved_by`) and stop-loss read it, never agent prose. Events live in the
store under `journal/<slug>/...`, one file each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from lessons.frozen import record
from lessons.errors import InvalidInput
from lessons.storage.records import Put, new_id, now_ts, read_collection, record_put

if TYPE_CHECKING:  # a journal is read over a `StoreView` too, which need not load libgit2
    from lessons.storage.store import Store

COLLECTION = "journal"

# The fields each event type must carry, from the contract. Events may carry more.
EVENT_FIELDS: Mapping[str, tuple[str, ...]] = {
    "task-planned": ("title", "after"),
    "task-started": ("intHead",),
    "seat-dispatched": ("seat", "binding", "mode", "attempt", "constrained"),
    "seat-finished": ("seat", "binding", "exitCode", "timedOut", "durationMs"),
    "scope-violation": ("files",),
    "scope-request": ("file", "reason"),
    "gate-result": ("gate", "passed", "exitCode"),
    "repair": ("kind", "outcome"),
    "quarantined": ("failClass", "signature", "message", "intHead", "lesson"),
    "decision-requested": ("decision", "files"),
    "decision-answered": ("decision", "answer"),
    "decision-proposed": ("decision", "proposal"),
    "binding-changed": ("seat", "from", "to"),
    "stop-loss": ("signature", "count"),
    "task-committed": ("commit",),
    "interrupted": ("reason",),
    "seat-tamper": ("what",),
    "landed": ("commit", "intHead"),
}


@record
class Journal:
    """Events of one slug, oldest first, and the files that could not be read."""

    slug: str
    events: tuple[dict, ...]
    problems: tuple[str, ...] = ()

    def for_task(self, task: str) -> list[dict]:
        return [e for e in self.events if e.get("task") == task]


def make_event(event_type: str, slug: str, task: str, *, ts: str | None = None, **fields: object) -> dict:
    """A journal event with its id and timestamp; refuses a type or a field the contract lacks."""
    required = EVENT_FIELDS.get(event_type)
    if required is None:
        msg = f"unknown journal event type {event_type!r}"
        raise InvalidInput(msg)
    missing = [name for name in required if name not in fields]
    if missing:
        msg = f"journal event {event_type} lacks {', '.join(missing)}"
        raise InvalidInput(msg)
    return {"id": new_id(), "ts": ts or now_ts(), "slug": slug, "task": task, "type": event_type, **fields}


def event_put(event: Mapping[str, object]) -> Put:
    return record_put(COLLECTION, event, scope=str(event["slug"]))


def event_order(event: Mapping[str, object]) -> tuple[str, int, str]:
    """Oldest first; `seq` breaks ties between events written in the same instant."""
    return (str(event.get("ts", "")), int(event.get("seq", 0) or 0), str(event.get("id", "")))


def sequence(events: Iterable[dict]) -> list[dict]:
    """Number events written together so their order survives equal timestamps."""
    out = []
    for seq, event in enumerate(events):
        out.append({**event, "seq": seq})
    return out


def read_journal(store: Store, slug: str) -> Journal:
    result = read_collection(store, COLLECTION, scope=slug)
    events = sorted(result.records, key=event_order)
    return Journal(slug, tuple(events), tuple(str(p) for p in result.problems))


def list_slugs(store: Store) -> list[str]:
    return sorted(store.list_dir(COLLECTION))
