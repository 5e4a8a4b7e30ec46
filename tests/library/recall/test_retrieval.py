"""Retrieval: resolved lessons of a class into fix prompts, and `lessons list|show|relevant`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git
from failres.knowledge.advisory import advisory_for
from failres.decisions.records import answer_put, decision_put, make_decision
from failres.engine.prompts import ADVISORY_HEADING
from lessons.recall.lesson import lesson_put, make_lesson, stamp_put
from lessons.storage.records import change_of
from lessons.recall.retrieval import LessonFilter, list_lessons, open_decisions, relevant_lessons, task_lessons
from lessons.storage.store import Store
from test_land import LoopProject

RED = "gate-not-green-after-fixer"


def lesson(task: str, day: int, fail_class: str = RED, resolved: list[str] | None = None, slug: str = "old") -> tuple:
    doc = make_lesson(slug=slug, task=task, fail_class=fail_class, message=f"gate check exit 1: {task} failed",
                      files=["src/calc.py"], int_head="0" * 40, snapshot=None, ts=f"2030-01-{day:02d}T00:00:00.000000Z")
    puts = [lesson_put(doc)]
    if resolved:
        puts.append(stamp_put(doc["id"], resolved, f"2030-02-{day:02d}T00:00:00.000000Z", "c" * 40))
    return doc, puts


def write(store: Store, *items: tuple) -> list[dict]:
    store.commit(change_of([put for _, puts in items for put in puts]), "test: lessons")
    return [doc for doc, _ in items]


@pytest.fixture
def project(tmp_path: Path) -> LoopProject:
    project = LoopProject(tmp_path)
    project.configure([{}])
    return project


def fix_prompt(project: LoopProject, cli) -> str:
    result = cli(project.top, "prompt", "rr", "t1", "--mode", "fix", "--plan", str(project.plan()))
    assert result.code == 0, result.err
    return result.out


# ── the library ─────────────────────────────────────────────────────────────


def test_relevant_lessons_are_resolved_ones_of_the_class_newest_first_limited(project: LoopProject) -> None:
    store = project.store()
    write(store, lesson("t1", 1, resolved=["unknown"]), lesson("t2", 2, resolved=["scope-widened"]),
          lesson("t3", 3), lesson("t4", 4, fail_class="seat-timeout", resolved=["unknown"]),
          lesson("t5", 5, resolved=["binding-changed"]), lesson("t6", 6, resolved=["integration-head-moved"]))
    assert [x["task"] for x in relevant_lessons(store, RED)] == ["t6", "t5", "t2"]
    assert [x["task"] for x in relevant_lessons(store, RED, limit=10)] == ["t6", "t5", "t2", "t1"]
    assert relevant_lessons(store, "wrapper-engine-down") == []


def test_listing_filters_and_ties_break_by_id(project: LoopProject) -> None:
    store = project.store()
    a, b = write(store, lesson("t1", 1, slug="x"), lesson("t1", 1, slug="x", resolved=["unknown"]))
    listed = list_lessons(store, LessonFilter(slug="x", task="t1"))
    assert [x["id"] for x in listed] == sorted([a["id"], b["id"]], reverse=True)
    assert [x["id"] for x in list_lessons(store, LessonFilter(unresolved=True))] == [a["id"]]
    assert [x["id"] for x in task_lessons(store, "x", "t1")] == [x["id"] for x in listed]


def test_open_decisions_are_the_unanswered_ones(project: LoopProject) -> None:
    store = project.store()
    first = make_decision(slug="rr", task="t1", files=["a"], requests=[], ts="2030-01-01T00:00:00.000000Z")
    second = make_decision(slug="rr", task="t2", files=["b"], requests=[], ts="2030-01-02T00:00:00.000000Z")
    store.commit(change_of([decision_put(first), decision_put(second), answer_put(first["id"], "no", "me")]), "t")
    assert [d["id"] for d in open_decisions(store)] == [second["id"]]


# ── into prompts ────────────────────────────────────────────────────────────


def test_the_fix_prompt_has_no_advisory_block_without_a_match(project: LoopProject, cli) -> None:
    write(project.store(), lesson("t1", 1), lesson("t2", 2, fail_class="seat-timeout", resolved=["unknown"]))
    assert ADVISORY_HEADING not in fix_prompt(project, cli)


def advisory_lines(prompt: str) -> list[str]:
    block = prompt.split(f"## {ADVISORY_HEADING}", 1)[1]
    return [line for line in block.split("\n## ", 1)[0].splitlines() if line.startswith("- `")]


def test_the_fix_prompt_shows_at_most_three_matches_newest_first(project: LoopProject, cli) -> None:
    write(project.store(), *(lesson(f"t{n}", n, resolved=["unknown"]) for n in range(1, 6)))
    shown = advisory_lines(fix_prompt(project, cli))
    assert [line.split("(task ")[1].split(",")[0] for line in shown] == ["old/t5", "old/t4", "old/t3"]
    assert shown[0] == "- `gate-not-green-after-fixer|gate check exit 1: t5 failed` — resolved by unknown (task old/t5, 2030-02-05)"


def test_the_same_outcome_is_one_line_with_its_count_never_repeated(project: LoopProject, cli) -> None:
    # Seven lessons of one failure resolved the same way, and one resolved otherwise.
    same = [lesson("t1", n, resolved=["binding-changed"]) for n in range(1, 8)]
    for doc, puts in same:
        doc["message"] = doc["signature"] = "gate check exit 1: the same failure"
    other = lesson("t2", 9, resolved=["scope-widened"])
    write(project.store(), *same, other)
    shown = advisory_lines(fix_prompt(project, cli))
    assert len(shown) == len(set(shown)) == 2
    assert shown[0].endswith("resolved by scope-widened (task old/t2, 2030-02-09)")
    assert shown[1].endswith("resolved by binding-changed, 7 times (latest: task old/t1, 2030-02-07)")


def test_lessons_per_prompt_above_three_is_honoured(project: LoopProject, cli) -> None:
    write(project.store(), *(lesson(f"t{n}", n, resolved=["unknown"]) for n in range(1, 7)))
    config = project.top / ".failres.toml"
    config.write_text(config.read_text() + "\n[policy]\nlessons_per_prompt = 5\n")
    assert len(advisory_lines(fix_prompt(project, cli))) == 5
    config.write_text(config.read_text().replace("lessons_per_prompt = 5", "lessons_per_prompt = 0"))
    assert ADVISORY_HEADING not in fix_prompt(project, cli)


def test_the_advisory_hook_fails_quietly(project: LoopProject) -> None:
    class Engine:
        store = Store(project.top, "refs/failres/store")

    git(project.top, "update-ref", "refs/failres/store", git(project.top, "rev-parse", "HEAD:check.py").strip())
    assert advisory_for(Engine())(RED) == []  # a store that cannot be read costs the block, not the run


# ── the commands ────────────────────────────────────────────────────────────


def test_lessons_list_json_has_the_contract_fields_newest_first(project: LoopProject, cli) -> None:
    write(project.store(), lesson("t1", 1), lesson("t2", 2, resolved=["scope-widened"]))
    result = cli(project.top, "lessons", "list", "--json")
    assert result.code == 0, result.err
    docs = json.loads(result.out)
    assert [d["task"] for d in docs] == ["t2", "t1"]
    assert set(docs[0]) == {"id", "ts", "slug", "task", "failClass", "signature", "package", "message",
                            "snapshotBundle", "intHead", "resolved_by", "resolved_at", "schemaVersion"}
    assert docs[0]["resolved_by"] == ["scope-widened"] and docs[1]["resolved_by"] is None
    unresolved = json.loads(cli(project.top, "lessons", "list", "--unresolved", "--json").out)
    assert [d["task"] for d in unresolved] == ["t1"]
    assert cli(project.top, "lessons", "list", "--task", "t9", "--json").code == 2  # no such task: a typo
    assert "t2" in cli(project.top, "lessons", "list").out


def test_lessons_relevant_prints_what_a_fixer_would_see(project: LoopProject, cli) -> None:
    write(project.store(), *(lesson(f"t{n}", n, resolved=["unknown"]) for n in range(1, 5)), lesson("t9", 9))
    result = cli(project.top, "lessons", "relevant", "--fail-class", RED, "--json")
    assert [d["task"] for d in json.loads(result.out)] == ["t4", "t3", "t2"]
    one = cli(project.top, "lessons", "relevant", "--fail-class", RED, "--limit", "1", "--json")
    assert [d["task"] for d in json.loads(one.out)] == ["t4"]
    assert cli(project.top, "lessons", "relevant", "--fail-class", RED, "--limit", "0").code == 2


def test_lessons_show_diff_and_bundle_of_a_real_quarantine(project: LoopProject, cli, tmp_path: Path) -> None:
    project.configure([{"write": {"src/calc.py": "def add(a, b):\n    return a * b\n"}}])
    project.run(cli, expect=1)
    [found] = project.lessons()
    shown = cli(project.top, "lessons", "show", found["id"][:6], "--json")
    assert shown.code == 0 and json.loads(shown.out)["id"] == found["id"]
    diff = cli(project.top, "lessons", "show", found["id"], "--diff")
    assert diff.code == 0 and "+    return a * b" in diff.out and "-    return a - b" in diff.out
    bundle = tmp_path / "lesson.bundle"
    assert cli(project.top, "lessons", "show", found["id"], "--bundle", str(bundle)).code == 0
    git(project.top, "bundle", "verify", str(bundle))  # raises unless git accepts it
    heads = git(project.top, "bundle", "list-heads", str(bundle))
    assert f"refs/failres/snapshots/rr/t1/{found['id']}" in heads and found["snapshotBundle"] in heads


def test_lessons_show_of_a_lesson_without_a_snapshot_is_exit_2(project: LoopProject, cli) -> None:
    [doc] = write(project.store(), lesson("t1", 1))
    assert cli(project.top, "lessons", "show", doc["id"]).code == 0
    result = cli(project.top, "lessons", "show", doc["id"], "--diff")
    assert result.code == 2 and "no snapshot" in result.err


def test_archived_lessons_make_up_a_short_answer_only_when_the_policy_reaches_the_archive(tmp_path: Path) -> None:
    from lessons.storage.store import Change

    (tmp_path / "r").mkdir()
    git(tmp_path / "r", "init", "-q")
    store = Store(tmp_path / "r")
    store.create()
    docs = []
    for n in range(2):
        doc = make_lesson(slug="s", task=f"t{n}", fail_class="seat-crashed", message=f"crash {n}", files=["src/a.py"],
                          int_head="0" * 40, snapshot=None, ts=f"2026-11-0{n + 1}T00:00:00.000000Z")
        docs.append(doc)
        store.commit(change_of([lesson_put(doc), stamp_put(doc["id"], ["unknown"], doc["ts"], "1" * 40)]), "t")
    # Archive the older lesson the way the capacity manager does: same path under archive/.
    old = docs[0]["id"]
    moves = {path: oid for path, oid in store.walk("lessons") if f"/{old}" in path}
    store.commit(Change({f"archive/{p}": oid for p, oid in moves.items()}, frozenset(moves)), "archive")
    assert [d["task"] for d in relevant_lessons(store, "seat-crashed", 3)] == ["t1"]
    reached = relevant_lessons(store, "seat-crashed", 3, include_archived=True)
    assert [d["task"] for d in reached] == ["t1", "t0"]
    assert reached[1]["resolved_by"] == ["unknown"]
