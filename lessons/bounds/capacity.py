"""Bounded stores with lossless eviction: the one capacity manager every store goes through.

A store (a collection of records; the journal counts per plan slug) has a maximum in
the policy. Nothing happens below it. When a store *reaches* its maximum, reclaim
ranks its records and keeps the best `floor(max * (1 - reclaim_headroom_pct))`; the
gap between that settle target and the maximum is the hysteresis that stops reclaim
from running again on the very next write. With `reclaim_enabled = false` only the
overflow beyond the maximum is moved — an escape hatch that never moves more than it
must.

Nothing is dropped. An evicted record moves, with its amendments, in one store
commit, to `archive/<the same path>`: the bytes (and so the blob ids) are unchanged,
`git failres restore` is the move back, and `git revert` of the consolidation commit
undoes it too.

Retention ranking — what each store keeps first. Every ranking is a total order:
ties are always broken by record id, ascending, so the same store gives the same
moves on every machine.

- lessons: (1) unresolved lessons not older than `stale_days` — their task may still
  land, and the `resolved_by` stamp needs the lesson live to be found; (2) resolved
  lessons — they are what advisory prompts are made of; (3) unresolved lessons older
  than `stale_days`, most likely of abandoned tasks. Newest first within each.
- journal (per slug): first the events a task's state is read from — for each task
  the newest event of each type, and its newest three quarantines (stop-loss and the
  prior-failure context look that far back) — so that a flood of newer events from
  other tasks can never make a committed task look pending and run it again; then
  everything else. Newest first (by `ts`, then `seq`) within each.
- facts: current versions before closed ones (`valid_until` set); among current ones,
  consolidation candidates (stale and low-confidence) last; then higher decayed
  confidence, then the more recently confirmed.
- proposals: pending before decided, then newest first.
- reflections: newest first.

A record whose file cannot be parsed ranks below every readable one: it is moved
first, intact, out of the way of readers.

Pins — never archived while a live command needs them, even when that leaves a store
above its target (the rankings live in `lessons.bounds.retention`):

- journal: per task, the newest `task-started` (the task as it ran), the newest
  `task-committed`, `quarantined` and `landed` (its state), and until a landing
  stamps its lessons, the events since its last quarantine that `resolved_by` is
  read from;
- proposals: pending ones (a person may still accept them);
- reflections: those a pending proposal cites.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime

import pygit2

from lessons.frozen import record
# The counts live beside the bounds; `count_records` and `COUNTS_NOTE` are read from here too.
from lessons.bounds.counts import COUNTS_NOTE, count_records, note_count, noted_count  # noqa: F401
from lessons.bounds.archive import (
    Move,
    Restoration,
    archive_path,
    commit_planned,
    entry_at,
    moves_change,
    read_grouped,
    record_files,
)
from lessons.bounds.archive import restore as restore_collection
from lessons.errors import InvalidInput
from lessons.bounds.policy import Policy
from lessons.failpoints import failpoint
from lessons.bounds.retention import (
    RankContext,
    Retention,
    cited_reflection_pins,
    fact_retention,
    journal_anchors,
    journal_pins,
    journal_retention,
    lessons_retention,
    newest_retention,
    pending_proposal_pins,
    proposal_retention,
)
from lessons.storage.store import Change, Store

log = logging.getLogger("lessons.bounds.capacity")

Anchors = Callable[[Mapping[str, Mapping[str, object] | None]], frozenset[str]]
Pins = Callable[[Store, "pygit2.Commit | None", Mapping[str, Mapping[str, object] | None]], frozenset[str]]


def _pure_pins(pins: Anchors) -> Pins:
    return lambda _store, _commit, records: pins(records)


@record
class StoreKind:
    """A store the capacity manager bounds: its collection, whether each scope counts alone,
    how its records rank, which records rank before all others (`anchors`) and which are
    never archived while a live command still needs them (`pins`): a full store of pinned
    records settles above its target rather than break a command."""

    name: str
    per_scope: bool
    retention: Retention
    anchors: Anchors | None = None
    pins: Pins | None = None


STORES: Mapping[str, StoreKind] = {
    kind.name: kind
    for kind in (
        StoreKind("lessons", False, lessons_retention),
        StoreKind("reflections", False, newest_retention, pins=cited_reflection_pins),
        StoreKind("journal", True, journal_retention, journal_anchors, _pure_pins(journal_pins)),
        StoreKind("proposals", False, proposal_retention, pins=pending_proposal_pins),
        StoreKind("facts", False, fact_retention),
    )
}


def store_kind(name: str) -> StoreKind:
    if name not in STORES:
        msg = f"no store named {name!r}"
        raise InvalidInput(msg, hint="stores: " + ", ".join(STORES))
    return STORES[name]


# ---- the pure part: how many to keep, which ones ----

def reclaim_target(maximum: int, headroom: float) -> int:
    """floor(max * (1 - headroom)), computed exactly (0.57 * 100 is 56.99... in floats)."""
    from fractions import Fraction  # with decimal beneath it, for the stores that are full only

    return math.floor(Fraction(maximum) * (1 - Fraction(str(headroom))))


def keep_count(count: int, maximum: int, headroom: float, enabled: bool) -> int | None:
    """How many records stay after reclaim, or None when this store is left alone."""
    if enabled:
        return reclaim_target(maximum, headroom) if count >= maximum else None
    return maximum if count > maximum else None


def rank(records: Mapping[str, Mapping[str, object] | None], retention: Retention, ctx: RankContext,
         anchors: frozenset[str] = frozenset(), pins: frozenset[str] = frozenset()) -> list[str]:
    """Record ids, best kept first: pins, then anchors, then by retention, ties by id
    ascending. `None` stands for a record that could not be read; it ranks last."""
    by_id = sorted(records)

    def key(rec_id: str) -> tuple:
        record = records[rec_id]
        return (0,) if record is None else (1, rec_id in pins, rec_id in anchors, *retention(record, ctx))

    # sorted() is stable even with reverse=True, so equal keys keep the ascending id order.
    return sorted(by_id, key=key, reverse=True)


# ---- reading a store's shape from git ----

@record
class Partition:
    """One bounded unit: a store, or one scope of a per-scope store (the journal of one slug)."""

    kind: StoreKind
    scope: str | None = None

    @property
    def prefix(self) -> str:
        return f"{self.kind.name}/{self.scope}" if self.scope else self.kind.name

    @property
    def label(self) -> str:
        return self.prefix


def partitions(store: Store, names: Iterable[str] | None = None, commit: pygit2.Commit | None = None) -> list[Partition]:
    out = []
    for name in names if names is not None else STORES:
        kind = store_kind(name)
        if kind.per_scope:
            out.extend(Partition(kind, scope) for scope in sorted(store.list_dir(kind.name, commit)))
        else:
            out.append(Partition(kind))
    return out


# ---- planning and applying reclaim ----

@record
class ReclaimPlan:
    """What reclaim does to one partition: nothing (keep is None) or the moves of its tail."""

    store: str
    scope: str | None
    count: int
    maximum: int
    keep: int | None
    evicted: tuple[str, ...] = ()
    moves: tuple[Move, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.store}/{self.scope}" if self.scope else self.store

    def document(self) -> dict[str, object]:
        return {"store": self.store, "scope": self.scope, "count": self.count, "max": self.maximum,
                "keep": self.keep, "archived": list(self.evicted),
                "moves": [{"from": m.source, "to": m.target} for m in self.moves]}


def plan_reclaim(store: Store, part: Partition, policy: Policy, now: datetime,
                 commit: pygit2.Commit | None = None, known: Mapping[pygit2.Oid, dict] | None = None) -> ReclaimPlan:
    """The moves reclaim would make in one partition at `commit` (the tip by default).

    `known`: documents the caller has just written, by blob id (see `archive.read_grouped`).
    """
    commit = commit if commit is not None else store.commit_at()
    maximum = policy.capacity(part.kind.name)
    count = noted_count(store, part.prefix, commit)
    files = None
    if count is None:
        # A whole count walks the tree, and a full store is walked again for its files:
        # walked once, the files give the count too.
        files = record_files(store, part.prefix, commit)
        count = sum(1 for entries in files.values() for _, _, is_amend in entries if not is_amend)
        note_count(store, part.prefix, commit, count)
    keep = keep_count(count, maximum, policy.reclaim_headroom_pct, policy.reclaim_enabled)
    if keep is None:
        return ReclaimPlan(part.kind.name, part.scope, count, maximum, None)
    files = files if files is not None else record_files(store, part.prefix, commit)
    records = read_grouped(store, files, known)
    anchors = part.kind.anchors(records) if part.kind.anchors is not None else frozenset()
    pins = part.kind.pins(store, commit, records) if part.kind.pins is not None else frozenset()
    ranked = rank(records, part.kind.retention, RankContext(policy, now), anchors, pins)
    evicted = tuple(sorted(rec_id for rec_id in ranked[keep:] if rec_id not in pins))
    moves = [Move(path, archive_path(path), oid) for rec_id in evicted for path, oid, _ in sorted(files[rec_id])]
    # Amendments written after their record was archived (a late stamp) join it there.
    for rec_id in sorted(set(files) - set(records)):
        for path, oid, _ in sorted(files[rec_id]):
            base = f"{path.rsplit('/', 1)[0]}/{rec_id}.json"
            if entry_at(commit, archive_path(base)) is not None:
                moves.append(Move(path, archive_path(path), oid))
    return ReclaimPlan(part.kind.name, part.scope, count, maximum, keep, evicted, tuple(moves))


def _commit_reclaim(store: Store, part: Partition, policy: Policy, now: datetime,
                    known: Mapping[pygit2.Oid, dict] | None) -> tuple[ReclaimPlan, str | None]:
    def plan_at(tip: pygit2.Commit | None) -> tuple[ReclaimPlan, Change]:
        plan = plan_reclaim(store, part, policy, now, tip, known)
        return plan, moves_change(store, plan.moves, tip)

    return commit_planned(store, plan_at, lambda p: f"failres: consolidate {part.label} (archived {len(p.evicted)})")


@record
class Consolidation:
    """Every partition looked at, what was (or, in a dry run, would be) moved, and the commits."""

    plans: tuple[ReclaimPlan, ...]
    commits: tuple[str, ...]
    dry_run: bool

    def document(self, *, include_all: bool) -> dict[str, object]:
        shown = [p for p in self.plans if include_all or p.keep is not None]
        return {"dryRun": self.dry_run, "stores": [p.document() for p in shown],
                "archived": sum(len(p.evicted) for p in self.plans), "commits": list(self.commits)}


def consolidate(store: Store, policy: Policy, *, now: datetime | None = None, dry_run: bool = False,
                names: Iterable[str] | None = None, known: Mapping[pygit2.Oid, dict] | None = None) -> Consolidation:
    """Reclaim every store (or those named) that has reached its maximum; one commit each.

    `known`: documents just written, by blob id, that need not be read back (an import's).
    """
    now = now or datetime.now(UTC)
    plans: list[ReclaimPlan] = []
    commits: list[str] = []
    commit = store.commit_at()
    for part in partitions(store, names, commit):
        if dry_run:
            plans.append(plan_reclaim(store, part, policy, now, commit, known))
            continue
        failpoint("reclaim")
        plan, oid = _commit_reclaim(store, part, policy, now, known)
        plans.append(plan)
        if oid is not None:
            commits.append(oid)
    return Consolidation(tuple(plans), tuple(commits), dry_run)


def reclaim_full_stores(store: Store, policy: Policy | Callable[[], Policy], *, names: Iterable[str] | None = None,
                        now: datetime | None = None, known: Mapping[pygit2.Oid, dict] | None = None
                        ) -> Consolidation | None:
    """Reclaim after a batch of writes (a run, an import, a fact); never raises.

    Called at the end of write paths that grow stores, not on every append: reclaim
    reads the ranked store, which is cheap once per run and wasteful once per event.
    It must not turn a finished run into a failed one, so any problem — including a
    policy that cannot be built (a bad FAILRES_POLICY_* value, passed in as a callable
    for that reason) — is logged and the stores are left as they are for the next
    `git failres consolidate` to settle.
    """
    try:
        resolved = policy() if callable(policy) else policy
        return consolidate(store, resolved, now=now, names=names, known=known)
    except Exception:  # the write that called us has already landed; reclaim can wait
        log.exception("failres: reclaim after a write failed; run `git failres consolidate`")
        return None




def restore_store(store: Store, name: str, *, query: str = "", limit: int, dry_run: bool = False) -> Restoration:
    """Bring archived records of store `name` back, newest first (see `lessons.bounds.archive.restore`).

    Restored records count again; if that fills the store, the next reclaim ranks them
    with everything else, so a restore is undone only by a store that is full again.
    """
    kind = store_kind(name)
    return restore_collection(store, kind.name, query=query, limit=limit, dry_run=dry_run)
