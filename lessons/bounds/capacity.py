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

import json
import logging
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path

import pygit2

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
from lessons.storage.records import AMEND_SEP, iter_record_files
from lessons.storage.store import Change, Store

log = logging.getLogger("lessons.bounds.capacity")
_TREE_MODE = pygit2.GIT_FILEMODE_TREE

Anchors = Callable[[Mapping[str, Mapping[str, object] | None]], frozenset[str]]
Pins = Callable[[Store, "pygit2.Commit | None", Mapping[str, Mapping[str, object] | None]], frozenset[str]]


def _pure_pins(pins: Anchors) -> Pins:
    return lambda _store, _commit, records: pins(records)


@dataclass(frozen=True)
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

@dataclass(frozen=True)
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


COUNTS_NOTE = "record-counts.json"  # in <git dir>/failres/: prefix -> [tree id, records in it]


def count_records(store: Store, prefix: str, commit: pygit2.Commit | None = None) -> int:
    """How many records live under `prefix`, from tree entry names alone (no blob is read).

    Reclaim asks it of every store after every sync and every run, so it must not walk
    the store: the count of the last tree counted under each prefix is noted in the git
    dir, and the next count reads only the subtrees that differ from that tree. A note
    is a fact about a tree id, so one out of date is never wrong for the tree it names;
    one whose tree is gone, or that cannot be read, costs a whole count.
    """
    commit = commit if commit is not None else store.commit_at()
    tree = _tree_under(store, commit, prefix)
    if tree is None:
        return 0
    notes = _read_counts(store)
    noted = notes.get(prefix)
    try:
        old = store.repo.get(pygit2.Oid(hex=noted[0])) if noted is not None else None
        count = noted[1] + _count_delta(store.repo, old, tree) if isinstance(old, pygit2.Tree) else None
    except (KeyError, ValueError, TypeError, pygit2.GitError):  # a missing object, an odd entry
        count = None
    if count is None:
        count = sum(1 for _, _, amend, _ in iter_record_files(store, prefix, commit) if amend is None)
    if noted != [str(tree.id), count]:
        notes[prefix] = [str(tree.id), count]
        _write_counts(store, notes)
    return count


def _tree_under(store: Store, commit: pygit2.Commit | None, prefix: str) -> pygit2.Tree | None:
    if commit is None:
        return None
    try:
        obj = store.repo[commit.tree[prefix.rstrip("/")].id] if prefix.strip("/") else commit.tree
    except KeyError:
        return None
    return obj if isinstance(obj, pygit2.Tree) else None


def _count_delta(repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree) -> int:
    """Records in `new` less records in `old`, reading only the subtrees whose ids differ."""
    if old is not None and old.id == new.id:
        return 0
    before = {entry.name: entry for entry in old} if old is not None else {}
    delta = 0
    for entry in new:
        prior = before.pop(entry.name, None)
        if prior is not None and prior.id == entry.id and prior.filemode == entry.filemode:
            continue
        if prior is not None and prior.filemode == entry.filemode == _TREE_MODE:
            delta += _count_delta(repo, repo[prior.id], repo[entry.id])
        else:
            delta += _entry_records(repo, entry) - _entry_records(repo, prior)
    return delta - sum(_entry_records(repo, prior) for prior in before.values())


def _entry_records(repo: pygit2.Repository, entry: pygit2.Object | None) -> int:
    if entry is None or entry.filemode == pygit2.GIT_FILEMODE_COMMIT:  # a submodule link is no record
        return 0
    if entry.filemode == _TREE_MODE:
        return _count_delta(repo, None, repo[entry.id])
    name = entry.name
    return 1 if name.endswith(".json") and AMEND_SEP not in name[: -len(".json")] else 0


def _counts_path(store: Store) -> Path:
    return store.common_dir / "failres" / COUNTS_NOTE


def _read_counts(store: Store) -> dict[str, list]:
    try:
        notes = json.loads(_counts_path(store).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(notes, dict):
        return {}
    return {prefix: note for prefix, note in notes.items()
            if isinstance(note, list) and len(note) == 2 and isinstance(note[0], str) and type(note[1]) is int}


def _write_counts(store: Store, notes: dict[str, list]) -> None:
    """Replaced whole (a reader sees the old note or the new); a note, never a record: failures pass."""
    path = _counts_path(store)
    try:
        path.parent.mkdir(exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(notes, sort_keys=True), encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        pass


# ---- planning and applying reclaim ----

@dataclass(frozen=True)
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
                 commit: pygit2.Commit | None = None) -> ReclaimPlan:
    """The moves reclaim would make in one partition at `commit` (the tip by default)."""
    commit = commit if commit is not None else store.commit_at()
    maximum = policy.capacity(part.kind.name)
    count = count_records(store, part.prefix, commit)
    keep = keep_count(count, maximum, policy.reclaim_headroom_pct, policy.reclaim_enabled)
    if keep is None:
        return ReclaimPlan(part.kind.name, part.scope, count, maximum, None)
    files = record_files(store, part.prefix, commit)
    records = read_grouped(store, files)
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


def _commit_reclaim(store: Store, part: Partition, policy: Policy, now: datetime) -> tuple[ReclaimPlan, str | None]:
    def plan_at(tip: pygit2.Commit | None) -> tuple[ReclaimPlan, Change]:
        plan = plan_reclaim(store, part, policy, now, tip)
        return plan, moves_change(store, plan.moves, tip)

    return commit_planned(store, plan_at, lambda p: f"failres: consolidate {part.label} (archived {len(p.evicted)})")


@dataclass(frozen=True)
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
                names: Iterable[str] | None = None) -> Consolidation:
    """Reclaim every store (or those named) that has reached its maximum; one commit each."""
    now = now or datetime.now(UTC)
    plans: list[ReclaimPlan] = []
    commits: list[str] = []
    commit = store.commit_at()
    for part in partitions(store, names, commit):
        if dry_run:
            plans.append(plan_reclaim(store, part, policy, now, commit))
            continue
        failpoint("reclaim")
        plan, oid = _commit_reclaim(store, part, policy, now)
        plans.append(plan)
        if oid is not None:
            commits.append(oid)
    return Consolidation(tuple(plans), tuple(commits), dry_run)


def reclaim_full_stores(store: Store, policy: Policy | Callable[[], Policy], *, names: Iterable[str] | None = None,
                        now: datetime | None = None) -> Consolidation | None:
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
        return consolidate(store, resolved, now=now, names=names)
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
