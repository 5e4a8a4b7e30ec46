"""Bounded stores: reclaim at the maximum, the settle target, lossless moves, restore, ranking ties."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import git
from lessons.bounds.capacity import (
    STORES,
    RankContext,
    consolidate,
    count_records,
    fact_retention,
    keep_count,
    lessons_retention,
    proposal_retention,
    rank,
    reclaim_target,
    restore_store,
)
from lessons.recall.lesson import lesson_put, make_lesson, stamp_put
from lessons.bounds.policy import Policy
from lessons.storage.records import amendment_put, change_of, make_amendment
from lessons.storage.store import Store
from project import FIXED, Project

NOW = datetime(2030, 6, 1, tzinfo=UTC)


def ts(day: int, second: int = 0) -> str:
    return f"2030-05-{day:02d}T00:00:{second:02d}.000000Z"


def lesson(n: int, *, day: int = 20, resolved: bool = False) -> dict:
    doc = make_lesson(slug="s", task=f"t{n}", fail_class="unknown", message=f"failure {n}", files=["src/x.py"],
                      int_head="0" * 40, snapshot=None, ts=ts(day, n % 60))
    doc["id"] = f"{n:016x}"
    if resolved:
        doc["resolved_by"] = ["unknown"]
    return doc


def write_lessons(store: Store, docs: list[dict]) -> None:
    store.commit(change_of([lesson_put(d) for d in docs]), "test: lessons")


@pytest.fixture
def store(repo: Path) -> Store:
    s = Store(repo)
    s.create()
    return s


def live_ids(store: Store, prefix: str = "lessons") -> set[str]:
    return {path.rsplit("/", 1)[1][:-5] for path, _ in store.walk(prefix) if "+" not in path}


def tree_entries(store: Store, prefix: str) -> dict[str, str]:
    return {path: str(oid) for path, oid in store.walk(prefix)}


# ---- the pure part ----

def test_reclaim_target_is_the_floor_of_max_times_one_minus_headroom():
    assert reclaim_target(100, 0.25) == 75
    assert reclaim_target(10, 0.25) == 7
    assert reclaim_target(1, 0.25) == 0


def test_reclaim_target_is_exact_where_floats_are_not():
    # 100 * (1 - 0.43) is 56.99999999999999 in floats; the target is 57.
    assert reclaim_target(100, 0.43) == 57


def test_nothing_is_reclaimed_below_the_maximum():
    assert keep_count(99, 100, 0.25, enabled=True) is None


def test_reclaim_triggers_at_exactly_the_maximum_and_settles_at_the_target():
    assert keep_count(100, 100, 0.25, enabled=True) == 75


def test_with_reclaim_disabled_only_the_overflow_goes():
    assert keep_count(100, 100, 0.25, enabled=False) is None
    assert keep_count(103, 100, 0.25, enabled=False) == 100


def test_equal_ranks_are_ordered_by_id_ascending():
    ctx = RankContext(Policy(), NOW)
    same = {rid: {"id": rid, "ts": ts(1)} for rid in ("c" * 16, "a" * 16, "b" * 16)}
    assert rank(same, STORES["reflections"].retention, ctx) == ["a" * 16, "b" * 16, "c" * 16]


def test_newer_records_rank_before_older_ones():
    ctx = RankContext(Policy(), NOW)
    records = {"a" * 16: {"ts": ts(1)}, "b" * 16: {"ts": ts(3)}, "c" * 16: {"ts": ts(2)}}
    assert rank(records, STORES["reflections"].retention, ctx) == ["b" * 16, "c" * 16, "a" * 16]


def test_lessons_keep_fresh_unresolved_then_resolved_then_stale_unresolved():
    ctx = RankContext(Policy(stale_days=30), NOW)
    fresh_open, resolved_old, stale_open = lesson(1, day=25), lesson(2, day=1, resolved=True), lesson(3, day=1)
    stale_open["ts"] = "2030-01-01T00:00:00.000000Z"
    resolved_old["ts"] = "2029-01-01T00:00:00.000000Z"
    records = {d["id"]: d for d in (stale_open, resolved_old, fresh_open)}
    assert rank(records, lessons_retention, ctx) == [fresh_open["id"], resolved_old["id"], stale_open["id"]]


def test_facts_keep_current_before_closed_and_candidates_last_among_current():
    ctx = RankContext(Policy(stale_days=30, low_confidence_threshold=0.3, decay_rate=0.01), NOW)
    current = {"id": "1" * 16, "confidence": 0.5, "valid_until": None, "last_confirmed": ts(30)}
    candidate = {"id": "2" * 16, "confidence": 0.3, "valid_until": None, "last_confirmed": "2029-01-01T00:00:00Z"}
    closed = {"id": "3" * 16, "confidence": 1.0, "valid_until": ts(31), "last_confirmed": ts(31)}
    records = {d["id"]: d for d in (closed, candidate, current)}
    assert rank(records, fact_retention, ctx) == ["1" * 16, "2" * 16, "3" * 16]


def test_proposals_keep_pending_before_decided_whatever_their_age():
    ctx = RankContext(Policy(), NOW)
    records = {"a" * 16: {"status": "accepted", "ts": ts(9)}, "b" * 16: {"status": "pending", "ts": ts(1)}}
    assert rank(records, proposal_retention, ctx) == ["b" * 16, "a" * 16]


def test_an_unreadable_record_ranks_below_every_readable_one():
    ctx = RankContext(Policy(), NOW)
    records = {"a" * 16: None, "b" * 16: {"ts": ts(1)}}
    assert rank(records, STORES["reflections"].retention, ctx) == ["b" * 16, "a" * 16]


# ---- against a real store ----

def test_a_store_one_below_its_maximum_is_left_alone(store: Store):
    write_lessons(store, [lesson(n) for n in range(7)])
    before = store.tip()
    result = consolidate(store, Policy(max_lessons=8), now=NOW)
    assert store.tip() == before and result.commits == ()
    assert count_records(store, "lessons") == 7


def test_a_store_at_exactly_its_maximum_settles_at_the_target_and_archives_the_rest(store: Store):
    write_lessons(store, [lesson(n) for n in range(8)])
    result = consolidate(store, Policy(max_lessons=8, reclaim_headroom_pct=0.25), now=NOW)
    assert count_records(store, "lessons") == 6
    assert count_records(store, "archive/lessons") == 2
    # Newest kept: the two oldest (n = 0, 1) moved.
    assert set(result.plans[0].evicted) == {f"{0:016x}", f"{1:016x}"}
    assert git(store.repo.workdir, "log", "-1", "--format=%s", "refs/failres/store").strip() == \
        "failres: consolidate lessons (archived 2)"


def test_archived_files_keep_their_bytes_and_their_relative_path(store: Store):
    docs = [lesson(n) for n in range(4)]
    write_lessons(store, docs)
    before = tree_entries(store, "lessons")
    consolidate(store, Policy(max_lessons=4, reclaim_headroom_pct=0.5), now=NOW)
    after = tree_entries(store, "archive/lessons")
    assert len(after) == 2
    for path, oid in after.items():
        assert before[path[len("archive/"):]] == oid


def test_an_amendment_moves_with_its_record(store: Store):
    docs = [lesson(n) for n in range(4)]
    write_lessons(store, docs)
    oldest = docs[0]["id"]
    stamp = stamp_put(oldest, ["unknown"], ts(21), "f" * 40)
    store.commit(change_of([stamp]), "test: stamp")
    # The stamp makes the oldest lesson resolved, which ranks it below the fresh open ones.
    consolidate(store, Policy(max_lessons=4, reclaim_headroom_pct=0.25), now=NOW)
    assert store.read_bytes("archive/" + stamp.path) is not None
    assert store.read_bytes(stamp.path) is None


def test_reclaim_disabled_moves_only_the_overflow_still_to_the_archive(store: Store):
    write_lessons(store, [lesson(n) for n in range(11)])
    policy = Policy(max_lessons=10, reclaim_enabled=False)
    consolidate(store, policy, now=NOW)
    assert count_records(store, "lessons") == 10
    assert count_records(store, "archive/lessons") == 1


def test_reclaim_disabled_leaves_a_store_at_exactly_its_maximum_alone(store: Store):
    write_lessons(store, [lesson(n) for n in range(10)])
    before = store.tip()
    consolidate(store, Policy(max_lessons=10, reclaim_enabled=False), now=NOW)
    assert store.tip() == before


def test_a_dry_run_writes_nothing_and_names_exactly_the_moves_that_happen(store: Store):
    write_lessons(store, [lesson(n) for n in range(8)])
    policy = Policy(max_lessons=8)
    before = store.tip()
    dry = consolidate(store, policy, now=NOW, dry_run=True)
    assert store.tip() == before
    real = consolidate(store, policy, now=NOW)
    assert [p.moves for p in dry.plans] == [p.moves for p in real.plans]
    assert dry.plans[0].moves and dry.commits == ()


def test_restore_brings_back_the_exact_bytes_newest_first(store: Store):
    write_lessons(store, [lesson(n) for n in range(8)])
    original = tree_entries(store, "lessons")
    consolidate(store, Policy(max_lessons=8, reclaim_headroom_pct=0.5), now=NOW)
    assert len(live_ids(store)) == 4
    result = restore_store(store, "lessons", limit=3)
    assert result.restored == tuple(f"{n:016x}" for n in (3, 2, 1))
    restored = tree_entries(store, "lessons")
    for path, oid in restored.items():
        assert original[path] == oid
    assert len(live_ids(store)) == 7 and count_records(store, "archive/lessons") == 1
    assert git(store.repo.workdir, "log", "-1", "--format=%s", "refs/failres/store").strip() == \
        "failres: restore lessons (3)"


def test_restore_with_a_query_brings_back_only_matching_records(store: Store):
    write_lessons(store, [lesson(n) for n in range(8)])
    consolidate(store, Policy(max_lessons=8, reclaim_headroom_pct=0.5), now=NOW)
    result = restore_store(store, "lessons", query="FAILURE 2", limit=10)
    assert result.restored == (f"{2:016x}",)


def test_restore_of_an_unknown_store_is_refused(store: Store, cli, repo: Path):
    result = cli(repo, "restore", "--store", "lesons")
    assert result.code == 2
    assert "no store named 'lesons'" in result.err


def test_the_journal_is_bounded_per_slug(store: Store):
    from failres.journal import event_put, make_event

    events = [make_event("task-started", slug, "t1", intHead="0" * 40, ts=ts(1, n))
              for slug in ("a", "b") for n in range(4 if slug == "a" else 2)]
    store.commit(change_of([event_put(e) for e in events]), "test: events")
    consolidate(store, Policy(max_journal_events=4, reclaim_headroom_pct=0.5), now=NOW)
    assert count_records(store, "journal/a") == 2 and count_records(store, "journal/b") == 2
    assert git(store.repo.workdir, "log", "-1", "--format=%s", "refs/failres/store").strip() == \
        "failres: consolidate journal/a (archived 2)"


def test_counting_reads_tree_names_not_blobs(store: Store):
    write_lessons(store, [lesson(n) for n in range(3)])
    # An amendment beside a record is not a record; a record whose bytes are garbage still is one.
    store.commit(change_of([amendment_put("lessons", f"{0:016x}", make_amendment(f"{0:016x}", {"x": 1}))]), "t")
    from lessons.storage.store import Change

    store.commit(Change({"lessons/ff/ff/ffffffffffffffff.json": b"not json"}), "t")
    assert count_records(store, "lessons") == 4


# ---- the commands ----

def test_consolidate_dry_run_json_is_byte_identical_and_writes_nothing(store: Store, cli, repo: Path):
    write_lessons(store, [lesson(n) for n in range(8)])
    (repo / ".failres.toml").write_text("[policy]\nmax_lessons = 8\n")
    before = store.tip()
    first = cli(repo, "consolidate", "--dry-run", "--json")
    second = cli(repo, "consolidate", "--dry-run", "--json")
    assert first.code == 0 and first.out == second.out
    assert Store(repo).tip() == before
    document = json.loads(first.out)
    assert document["dryRun"] is True and document["archived"] == 2
    assert [s["store"] for s in document["stores"]] == ["lessons"]


def test_consolidate_all_reports_every_store(store: Store, cli, repo: Path):
    write_lessons(store, [lesson(n) for n in range(2)])
    result = cli(repo, "consolidate", "--all", "--dry-run", "--json")
    stores = json.loads(result.out)["stores"]
    assert [s["store"] for s in stores] == ["lessons", "reflections", "proposals", "facts"]
    assert stores[0]["count"] == 2 and stores[0]["keep"] is None


def test_consolidate_then_restore_through_the_cli(store: Store, cli, repo: Path):
    write_lessons(store, [lesson(n) for n in range(8)])
    (repo / ".failres.toml").write_text("[policy]\nmax_lessons = 8\nreclaim_headroom_pct = 0.5\n")
    done = cli(repo, "consolidate", "--json")
    assert done.code == 0 and json.loads(done.out)["archived"] == 4
    back = cli(repo, "restore", "--store", "lessons", "--limit", "2", "--json")
    assert back.code == 0
    assert json.loads(back.out)["restored"] == [f"{3:016x}", f"{2:016x}"]


def test_the_end_of_a_run_reclaims_the_journal_it_grew(tmp_path: Path, cli):
    project = Project.create(tmp_path)
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}],
                      extra="[policy]\nmax_journal_events = 4\nreclaim_headroom_pct = 0.5\n")
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 0, result.err
    store = Store(project.top)
    assert count_records(store, "journal/rr") == 2
    assert count_records(store, "archive/journal/rr") == 4  # six events: the preflight's gate-result too
    assert git(project.top, "log", "-1", "--format=%s", "refs/failres/store").strip() == \
        "failres: consolidate journal/rr (archived 4)"


def test_a_bad_policy_override_is_refused_before_anything_runs(tmp_path: Path, cli, monkeypatch):
    project = Project.create(tmp_path)
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    monkeypatch.setenv("FAILRES_POLICY_MAX_LESSONS", "zero")
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 2
    assert result.err.startswith("error: ") and "FAILRES_POLICY_MAX_LESSONS" in result.err
    assert project.types() == [] and project.calls("impl") == 0



def test_a_committed_task_keeps_the_events_its_state_is_read_from_under_a_flood_of_newer_ones(store: Store):
    from failres.engine.state import task_state
    from failres.journal import event_put, make_event, read_journal

    old = [make_event("task-started", "s", "done", intHead="0" * 40, ts=ts(1, 0)),
           make_event("task-committed", "s", "done", commit="1" * 40, ts=ts(1, 1))]
    flood = [make_event("seat-dispatched", "s", "busy", seat="implementer", binding="b", mode="implement",
                        attempt=n, constrained=False, ts=ts(2, n)) for n in range(10)]
    store.commit(change_of([event_put(e) for e in old + flood]), "test: events")
    consolidate(store, Policy(max_journal_events=12, reclaim_headroom_pct=0.5), now=NOW)
    journal = read_journal(store, "s")
    assert task_state(journal.for_task("done")) == "committed"
    assert len(journal.events) == 6  # the two anchors of "done", the newest of "busy" and its next three


def test_journal_anchors_are_the_newest_of_each_type_per_task_and_three_quarantines():
    from lessons.bounds.capacity import journal_anchors

    def event(n: int, task: str, kind: str) -> dict:
        return {"id": f"{n:016x}", "task": task, "type": kind, "ts": ts(1, n)}

    records = {e["id"]: e for e in [event(1, "a", "gate-result"), event(2, "a", "gate-result"),
                                    *[event(n, "a", "quarantined") for n in range(3, 8)], event(8, "b", "landed")]}
    assert journal_anchors(records) == {f"{n:016x}" for n in (2, 5, 6, 7, 8)}
