"""Outcome labelling: resolved_by read from the journal only, stamped once per landing, found on any road."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git
from failres.landing.outcome_labels import plan_stamp, resolved_by_from_journal, stamp_task
from failres.landing.trailers import tasks_in_message
from test_land import ASK_FOR_DOCS, FIX, FIX_WITH_DOCS, IDLE, LoopProject, quarantine_then_commit

# ── the pure rule ───────────────────────────────────────────────────────────

Q = {"type": "quarantined", "intHead": "h0", "lesson": "a" * 16}


def started(head: str = "h0") -> dict:
    return {"type": "task-started", "intHead": head}


def answered(answer: object) -> dict:
    return {"type": "decision-answered", "decision": "d" * 16, "answer": answer}


def test_nothing_detectable_is_exactly_unknown() -> None:
    events = [started(), Q, started(), {"type": "task-committed", "commit": "c"}]
    assert resolved_by_from_journal(events, landed_int_head="h0") == ["unknown"]


def test_a_scope_answer_is_decision_answered_and_scope_widened() -> None:
    events = [started(), Q, answered({"scopeFiles": ["docs/x.md"]}), started()]
    assert resolved_by_from_journal(events, landed_int_head="h0") == ["decision-answered", "scope-widened"]


def test_an_answer_of_another_shape_widens_nothing() -> None:
    for answer in ("docs/x.md", ["docs/x.md"], 3, {"scopeFiles": "docs/x.md"}, {"files": ["docs/x.md"]},
                   {"scopeFiles": ["docs/x.md"], "also": 1}, {"scopeFiles": []}):
        events = [started(), Q, answered(answer), started()]
        assert resolved_by_from_journal(events, landed_int_head="h0") == ["decision-answered"], answer


def test_a_later_run_from_another_integration_head_is_integration_head_moved() -> None:
    events = [started("h0"), Q, started("h1")]
    assert resolved_by_from_journal(events, landed_int_head="h1") == ["integration-head-moved"]


def test_the_head_of_the_run_that_went_green_counts_not_the_head_it_was_merged_onto() -> None:
    # Re-run on the same head, green, merged later after others landed: the head did not fix it.
    events = [started("h0"), Q, started("h0")]
    assert resolved_by_from_journal(events, landed_int_head="h5") == ["unknown"]


def test_without_a_later_run_the_landing_head_stands_in() -> None:
    events = [started("h0"), Q]
    assert resolved_by_from_journal(events, landed_int_head="h3") == ["integration-head-moved"]
    assert resolved_by_from_journal(events, landed_int_head="h0") == ["unknown"]


def test_a_binding_change_is_binding_changed() -> None:
    events = [started(), Q, {"type": "binding-changed", "seat": "implementer", "from": "a", "to": "b"}, started()]
    assert resolved_by_from_journal(events, landed_int_head="h0") == ["binding-changed"]


def test_only_events_after_the_last_quarantine_count() -> None:
    events = [started(), Q, answered({"scopeFiles": ["x"]}), started("h1"), {**Q, "intHead": "h1"}, started("h1")]
    assert resolved_by_from_journal(events, landed_int_head="h1") == ["unknown"]


def test_labels_come_in_the_contract_order() -> None:
    events = [started("h0"), Q, {"type": "binding-changed", "seat": "fixer", "from": "a", "to": "b"},
              answered({"scopeFiles": ["x"]}), started("h1")]
    assert resolved_by_from_journal(events, landed_int_head="h1") == [
        "decision-answered", "integration-head-moved", "scope-widened", "binding-changed"]


def test_agent_text_never_counts() -> None:
    events = [started(), Q, {"type": "seat-finished", "message": "resolved by scope-widened"},
              {"type": "scope-request", "file": "x", "reason": "decision-answered"}, started()]
    assert resolved_by_from_journal(events, landed_int_head="h0") == ["unknown"]


def test_a_journaled_landing_plans_no_second_landed_event() -> None:
    events = [started(), Q, started(), {"type": "landed", "commit": "m1", "intHead": "h0"}]
    assert plan_stamp(events, [], "m1", "h0").write_landed is False
    assert plan_stamp(events, [], "m2", "h0").write_landed is True


def test_trailers_are_found_plain_and_indented_and_only_with_valid_ids() -> None:
    message = ("squashed\n\n    failres: x\n\n    Failres-Task: rr/t1\n\nFailres-Task: rr/t2\n"
               "Failres-Task: Not/Valid\nFailres-Task: rr/t1\n")
    assert tasks_in_message(message) == [("rr", "t1"), ("rr", "t2")]


def test_the_trailer_key_is_the_one_task_commits_carry() -> None:
    from failres.gitops.commits import TASK_TRAILER_KEY
    from failres.landing.trailers import TASK_TRAILER_KEY as KEY

    assert KEY == TASK_TRAILER_KEY


# ── through real runs and landings ──────────────────────────────────────────


def landed_lesson(project: LoopProject) -> dict:
    lessons = project.lessons()
    assert len(lessons) == 1, lessons
    return lessons[0]


def test_after_a_real_answer_the_next_run_succeeds_and_land_stamps_decision_and_scope(tmp_path: Path,
                                                                                     cli) -> None:
    project = LoopProject(tmp_path)
    project.configure([ASK_FOR_DOCS, FIX_WITH_DOCS])
    project.run(cli, expect=1)
    assert cli(project.top, "decide", project.decision_id(), "--scope-files", "docs/notes.md").code == 0
    project.run(cli, expect=0)
    assert git(project.top, "show", "failres/rr/t1:docs/notes.md") == "add adds\n"
    assert cli(project.top, "land", "rr", "t1").code == 0
    lesson = landed_lesson(project)
    assert lesson["resolved_by"] == ["decision-answered", "scope-widened"]
    assert lesson["resolved_at"]


def test_head_moved_between_quarantine_and_land_is_integration_head_moved(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    project.configure([IDLE, FIX])
    project.run(cli, expect=1)
    project.move_main()
    project.run(cli, expect=0)
    assert cli(project.top, "land", "rr", "t1").code == 0
    assert landed_lesson(project)["resolved_by"] == ["integration-head-moved"]


def test_a_changed_binding_is_binding_changed(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    project.configure([IDLE])
    project.run(cli, expect=1)
    project.configure([FIX], binding="other")
    project.run(cli, expect=0)
    assert "binding-changed" in project.types()
    assert cli(project.top, "land", "rr", "t1").code == 0
    assert landed_lesson(project)["resolved_by"] == ["binding-changed"]


def test_nothing_detectable_between_quarantine_and_land_is_unknown(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    quarantine_then_commit(project, cli)
    assert cli(project.top, "land", "rr", "t1").code == 0
    assert landed_lesson(project)["resolved_by"] == ["unknown"]


def test_stamping_the_same_landing_twice_writes_nothing(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    quarantine_then_commit(project, cli)
    assert cli(project.top, "land", "rr", "t1").code == 0
    merge = git(project.top, "rev-parse", "main").strip()
    tip = project.store_tip()
    again = stamp_task(project.store(), "rr", "t1", merge, git(project.top, "rev-parse", "main^1").strip())
    assert again.store_commit is None and again.stamped == () and not again.landed_event
    assert project.store_tip() == tip
    assert [e["type"] for e in project.events()].count("landed") == 1


def test_a_lesson_archived_before_its_task_lands_is_stamped_where_it_lies(tmp_path: Path, cli) -> None:
    from lessons.bounds.archive import read_archived
    from lessons.storage.store import Change

    project = LoopProject(tmp_path)
    quarantine_then_commit(project, cli)
    store = project.store()
    moves = {path: oid for path, oid in store.walk("lessons")}
    assert moves, "the quarantine wrote a lesson"
    store.commit(Change({f"archive/{p}": oid for p, oid in moves.items()}, frozenset(moves)), "test: archive it")
    assert cli(project.top, "land", "rr", "t1").code == 0
    assert list(store.walk("lessons")) == []  # no stamp left orphaned at the live path
    [lesson] = read_archived(store, "lessons").records
    assert lesson["resolved_by"] == ["unknown"]
    restored = cli(project.top, "restore", "--store", "lessons", "--json")
    assert restored.code == 0, restored.err
    assert landed_lesson(project)["resolved_by"] == ["unknown"]


def test_a_stamp_is_first_wins_a_later_landing_does_not_relabel(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    quarantine_then_commit(project, cli)
    assert cli(project.top, "land", "rr", "t1").code == 0
    first = landed_lesson(project)
    later = stamp_task(project.store(), "rr", "t1", "f" * 40, "e" * 40)
    assert later.stamped == ()  # the lesson is stamped already; only the new landing is journaled
    assert landed_lesson(project)["resolved_by"] == first["resolved_by"]


# ── label: the roads no local hook sees ─────────────────────────────────────


def no_hooks(top: Path, *args: str) -> str:
    """git with every hook off, as on a forge."""
    return git(top, "-c", "core.hooksPath=/dev/null", *args)


def test_a_squash_merge_then_label_stamps_by_the_trailer(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    quarantine_then_commit(project, cli)
    project.move_main()  # so the squash is not a fast-forward
    no_hooks(project.top, "merge", "-q", "--squash", "failres/rr/t1")
    no_hooks(project.top, "commit", "-q", "--no-edit")
    squash = git(project.top, "rev-parse", "HEAD").strip()
    assert "    Failres-Task: rr/t1" in git(project.top, "log", "-1", "--format=%B")
    result = cli(project.top, "label", "--json")
    assert result.code == 0, result.err
    stamps = json.loads(result.out)["stamps"]
    assert [(s["slug"], s["task"], s["commit"], s["stamped"] != []) for s in stamps] == [("rr", "t1", squash, True)]
    assert landed_lesson(project)["resolved_by"] == ["unknown"]
    assert project.events()[-1]["intHead"] == git(project.top, "rev-parse", "HEAD^").strip()


def test_a_rebased_task_commit_is_found_by_its_trailer(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    quarantine_then_commit(project, cli)
    project.move_main()
    no_hooks(project.top, "cherry-pick", "failres/rr/t1")
    assert cli(project.top, "label").code == 0
    assert "landed" in project.types()
    assert landed_lesson(project)["resolved_by"] == ["unknown"]


def test_a_forge_style_merge_is_found_through_the_merge_commit(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    quarantine_then_commit(project, cli)
    project.move_main()
    before = git(project.top, "rev-parse", "HEAD").strip()
    no_hooks(project.top, "merge", "-q", "--no-ff", "-m", "Merge pull request #7", "failres/rr/t1")
    merge = git(project.top, "rev-parse", "HEAD").strip()
    assert cli(project.top, "label").code == 0
    landed = [e for e in project.events() if e["type"] == "landed"]
    assert [(e["commit"], e["intHead"]) for e in landed] == [(merge, before)]


def test_label_is_idempotent(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    quarantine_then_commit(project, cli)
    no_hooks(project.top, "merge", "-q", "--ff-only", "failres/rr/t1")
    assert cli(project.top, "label").code == 0
    tip = project.store_tip()
    again = cli(project.top, "label", "--json")
    assert again.code == 0 and json.loads(again.out)["stamps"] == []
    assert project.store_tip() == tip


def test_label_ignores_task_branches_that_did_not_reach_the_integration_branch(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    quarantine_then_commit(project, cli)
    tip = project.store_tip()
    result = cli(project.top, "label", "--json")
    assert result.code == 0 and json.loads(result.out)["stamps"] == []
    assert project.store_tip() == tip
