"""Bounded everywhere: every write path reclaims, listings honour `list_limit`, and reclaim
never archives what a live command still needs."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git
from lessons.bounds.capacity import count_records, journal_pins
from lessons.recall.lesson import lesson_put, make_lesson, stamp_put
from lessons.storage.records import change_of
from lessons.storage.store import Store
from test_land import IDLE, LoopProject
from test_learning_budget import steer_session, write_sessions
from test_sync import make_clone, make_remote

TOP = "/home/ana/project"


def run_json(cli, repo: Path, *args: str):
    out = cli(repo, *args, "--json")
    assert out.code == 0, out.err
    return json.loads(out.out)


def policy(repo: Path, text: str) -> None:
    (repo / ".failres.toml").write_text(f"[policy]\n{text}\n")


def steers(tmp_path: Path, name: str, count: int, start: int = 0) -> Path:
    return write_sessions(tmp_path / name, {f"s{n:02d}": steer_session(f"s{n:02d}", f"always say thing {n}")
                                            for n in range(start, start + count)})


def test_reflect_reclaims_the_reflections_it_grew(repo: Path, tmp_path: Path, cli) -> None:
    policy(repo, "max_reflections = 8")
    assert len(run_json(cli, repo, "reflect", str(steers(tmp_path, "t", 15)))) == 15
    store = Store(repo)
    assert count_records(store, "reflections") == 6  # floor(8 * 0.75)
    assert count_records(store, "archive/reflections") == 9


def test_learn_and_decisions_on_proposals_reclaim_them_but_never_a_pending_one(repo: Path, tmp_path: Path,
                                                                               cli) -> None:
    policy(repo, "max_proposals = 4")
    pending = None
    for n in range(7):
        run_json(cli, repo, "reflect", str(steers(tmp_path, f"t{n}", 1, start=n)))
        (outcome,) = run_json(cli, repo, "learn")
        pending = outcome["proposal"]["id"]
        if n < 6:
            run_json(cli, repo, "proposals", "reject", pending, "--reason", "not yet")
    assert count_records(Store(repo), "proposals") == 3  # floor(4 * 0.75), the pending one among them
    assert pending in [p["id"] for p in run_json(cli, repo, "proposals", "list")]
    assert run_json(cli, repo, "proposals", "accept", pending)["status"] == "accepted"


def test_reflections_a_pending_proposal_cites_are_never_archived(repo: Path, tmp_path: Path, cli) -> None:
    policy(repo, "max_reflections = 4")
    run_json(cli, repo, "reflect", str(steers(tmp_path, "first", 1)))
    proposal = run_json(cli, repo, "learn")[0]["proposal"]
    (cited,) = proposal["reflection_ids"]
    run_json(cli, repo, "reflect", str(steers(tmp_path, "more", 6, start=1)))
    store = Store(repo)
    assert count_records(store, "reflections") == 3  # floor(4 * 0.75): the cited one, then the newest
    assert cited not in git(repo, "ls-tree", "-r", "--name-only", "refs/failres/store", "archive/")
    assert run_json(cli, repo, "proposals", "accept", proposal["id"])["status"] == "accepted"


def test_a_refusal_still_counts_after_its_proposal_is_archived(repo: Path, cli) -> None:
    store = Store(repo)
    policy(repo, "max_proposals = 1")
    for task in ("t1", "t2"):
        lesson = make_lesson(slug="rel", task=task, fail_class="seat-timeout", message="timed out",
                             files=["lib/x.py"], int_head="0" * 40, snapshot=None)
        store.commit(change_of([lesson_put(lesson), stamp_put(lesson["id"], ["binding-changed"],
                                                              "2026-11-01T00:00:00.000000Z", "c" * 40)]), "lesson")
    proposal = run_json(cli, repo, "learn")[0]["proposal"]
    run_json(cli, repo, "proposals", "reject", proposal["id"], "--reason", "no")
    assert count_records(store, "proposals") == 0 and count_records(store, "archive/proposals") == 1
    assert run_json(cli, repo, "learn")[0]["note"] == "nothing new to learn"


def test_deciding_reclaims_the_journal_and_fix_prompts_still_know_the_task(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    project.configure([{"print": "SCOPE-REQUEST: docs/notes.md — the notes must say it"}, IDLE],
                      extra="[policy]\nmax_journal_events = 4\n")
    project.run(cli, expect=1)
    store = project.store()
    decision = project.decision_id()
    assert cli(project.top, "decide", decision, "--scope-files", "docs/notes.md").code == 0
    assert count_records(store, "journal/rr") < 8 and count_records(store, "archive/journal/rr") > 0
    types = project.types()
    assert {"task-started", "quarantined", "decision-answered"} <= set(types)
    shown = cli(project.top, "prompt", "rr", "t1", "--mode", "fix")
    assert shown.code == 0, shown.err
    assert "# Task rr/t1: Fix add" in shown.out


def test_a_run_with_a_tiny_journal_keeps_what_its_next_prompt_and_landing_read(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    project.configure([IDLE], extra="[policy]\nmax_journal_events = 2\nreclaim_headroom_pct = 0.5\n")
    project.run(cli, expect=1)
    assert [e["type"] for e in project.events()] == ["task-started", "quarantined"]
    shown = cli(project.top, "prompt", "rr", "t1", "--mode", "fix")
    assert shown.code == 0 and "# Task rr/t1: Fix add" in shown.out


def test_journal_pins_keep_each_tasks_definition_state_and_pending_resolution_window() -> None:
    def event(n: int, task: str, kind: str) -> dict:
        return {"id": f"{n:016x}", "task": task, "type": kind, "ts": f"2026-01-01T00:00:{n:02d}.000000Z"}

    events = [event(1, "a", "task-started"), event(2, "a", "gate-result"), event(3, "a", "quarantined"),
              event(4, "a", "decision-answered"), event(5, "a", "seat-dispatched"), event(6, "a", "task-started"),
              event(7, "b", "task-started"), event(8, "b", "quarantined"), event(9, "b", "binding-changed"),
              event(10, "b", "landed")]
    pins = journal_pins({e["id"]: e for e in events})
    assert pins == {f"{n:016x}" for n in (3, 4, 6, 7, 8, 10)}


def test_sync_reclaims_what_the_merge_filled(tmp_path: Path, cli) -> None:
    bare = make_remote(tmp_path)
    a, b = make_clone(tmp_path, bare, "a"), make_clone(tmp_path, bare, "b")
    for clone, name in ((a, "a"), (b, "b")):
        store = Store(clone)
        store.create()  # as `git failres init` does
        for n in range(3):
            lesson = make_lesson(slug=name, task=f"t{n}", fail_class="unknown", message=f"{name} {n}",
                                 files=["x"], int_head="0" * 40, snapshot=None)
            store.commit(change_of([lesson_put(lesson)]), "lesson")
    assert cli(a, "sync").code == 0
    policy(b, "max_lessons = 4")
    assert cli(b, "sync").code == 0
    assert count_records(Store(b), "lessons") == 3 and count_records(Store(b), "archive/lessons") == 3


def test_listings_honour_list_limit(repo: Path, tmp_path: Path, cli) -> None:
    store = Store(repo)
    for n in range(5):
        lesson = make_lesson(slug="s", task=f"t{n}", fail_class="unknown", message=f"m {n}", files=["x"],
                             int_head="0" * 40, snapshot=None, ts=f"2026-01-0{n + 1}T00:00:00.000000Z")
        store.commit(change_of([lesson_put(lesson)]), "lesson")
    for n in range(4):
        run_json(cli, repo, "reflect", str(steers(tmp_path, f"t{n}", 1, start=n)))
        proposal = run_json(cli, repo, "learn")[0]["proposal"]
        run_json(cli, repo, "proposals", "reject", proposal["id"], "--reason", "no")
    policy(repo, "list_limit = 2")
    assert [d["task"] for d in run_json(cli, repo, "lessons", "list")] == ["t4", "t3"]
    assert len(run_json(cli, repo, "lessons", "list", "--limit", "4")) == 4
    listed = cli(repo, "proposals", "list", "--json")
    assert len(json.loads(listed.out)) == 2
    assert listed.err == "2 of 4 proposals (the newest) shown; --limit N shows more\n"
    assert len(run_json(cli, repo, "proposals", "list", "--limit", "3")) == 3
