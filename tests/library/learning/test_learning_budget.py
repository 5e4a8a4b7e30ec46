"""Learning within its budget, without deadlock: grouped candidates, partial acceptance,
refusals that are not repeated, and a hand-edited rules file past the budget.

Everything runs through the real CLI on a real repository, with no model unless the
test configures the scripted one (a real command, as in test_learning).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import git
from lessons.learning.store_io import read_reflections
from lessons.recall.lesson import lesson_put, make_lesson, stamp_put
from lessons.storage.records import change_of
from lessons.rulebook.rules import load_rules, rules_block, rules_path
from lessons.storage.store import Change, Store

TOP = "/home/ana/project"


def rec(kind: str, content: object, session: str) -> dict:
    return {"type": kind, "isSidechain": False, "sessionId": session, "cwd": TOP,
            "timestamp": "2026-02-11T20:00:00.000Z", "message": {"role": kind, "content": content}}


def steer_session(session: str, words: str) -> list[dict]:
    """A person steering a run of repository reads with `words`."""
    return [
        rec("user", "tidy the docs", session),
        rec("assistant", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "README.md"}}],
            session),
        rec("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "# doc"}, {"type": "text", "text": words}],
            session),
        rec("assistant", [{"type": "text", "text": "Understood."}], session),
    ]


def refusal_session(session: str, command: str) -> list[dict]:
    """A person refusing a shell command without a word, then stopping the run."""
    refused = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
               "file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the "
               "user to tell you how to proceed.")
    return [
        rec("user", "start the server", session),
        rec("assistant", [{"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": command}}], session),
        {**rec("user", [{"type": "tool_result", "tool_use_id": "b1", "content": refused, "is_error": True}], session),
         "toolUseResult": "User rejected tool use"},  # how Claude Code records the person's refusal
        rec("user", [{"type": "text", "text": "[Request interrupted by user for tool use]"}], session),
    ]


def write_sessions(folder: Path, sessions: dict[str, list[dict]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, records in sessions.items():
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def run_json(cli, repo: Path, *args: str):
    out = cli(repo, *args, "--json")
    assert out.code == 0, out.err
    return json.loads(out.out)


def sixteen_steers(tmp_path: Path) -> Path:
    return write_sessions(tmp_path / "t", {f"s{n:02d}": steer_session(f"s{n:02d}", f"always keep rule number {n}, please")
                                           for n in range(16)})


def store_proposals(repo: Path) -> list[str]:
    return [p for p in git(repo, "ls-tree", "-r", "--name-only", "refs/failres/store").split()
            if p.startswith("proposals/") and "+" not in p]


# ── no deadlock ──────────────────────────────────────────────────────────────


def test_sixteen_clean_reflections_without_a_model_propose_what_fits_and_never_repeat(
        repo: Path, tmp_path: Path, cli) -> None:
    run_json(cli, repo, "reflect", str(sixteen_steers(tmp_path)))
    (first,) = run_json(cli, repo, "learn")
    proposal = first["proposal"]
    assert (proposal["status"], len(proposal["rules"]), first["waiting"]) == ("pending", 15, 1)
    # Learning again proposes nothing new: no second proposal, pending or refused.
    (second,) = run_json(cli, repo, "learn")
    assert second["proposal"] is None and second["note"] == f"proposal {proposal['id']} already proposes this"
    assert len(store_proposals(repo)) == 1
    accepted = run_json(cli, repo, "proposals", "accept", proposal["id"])
    assert accepted["status"] == "accepted"
    assert len(load_rules(Store(repo), "behavior", "learned")) == 15
    (third,) = run_json(cli, repo, "learn")
    assert third["proposal"] is None and third["note"].startswith("nothing fits: 1 candidate rule(s) wait")
    assert len(store_proposals(repo)) == 1


def test_a_person_accepts_part_of_a_proposal_and_the_rest_is_not_proposed_again(
        repo: Path, tmp_path: Path, cli) -> None:
    folder = write_sessions(tmp_path / "t", {"a": steer_session("a", "always keep the changelog short"),
                                             "b": steer_session("b", "never touch vendor/")})
    run_json(cli, repo, "reflect", str(folder))
    proposal = run_json(cli, repo, "learn")[0]["proposal"]
    ids = {r["text"]: r["id"] for r in proposal["rules"]}
    keep = ids['A person steered a run and said: "never touch vendor/"']
    shown = run_json(cli, repo, "proposals", "show", proposal["id"])
    assert any(line.startswith(f"+ {keep}: ") for line in shown["changes"])
    accepted = run_json(cli, repo, "proposals", "accept", proposal["id"], "--only", keep)
    declined = [i for i in ids.values() if i != keep]
    assert (accepted["accepted_rules"], accepted["declined_rules"]) == ([keep], declined)
    assert [r.id for r in load_rules(Store(repo), "behavior", "learned")] == [keep]
    assert "never touch vendor/" in rules_block(Store(repo)) and "changelog" not in rules_block(Store(repo))
    assert all(r.is_processed for r in read_reflections(Store(repo))[0])  # a person decided on both
    assert run_json(cli, repo, "learn")[0]["note"] == "nothing new to learn"


def test_accepting_a_rule_the_proposal_does_not_change_is_refused_with_the_ids_it_does(
        repo: Path, tmp_path: Path, cli) -> None:
    run_json(cli, repo, "reflect", str(write_sessions(tmp_path / "t", {"a": steer_session("a", "always be brief")})))
    proposal = run_json(cli, repo, "learn")[0]["proposal"]
    out = cli(repo, "proposals", "accept", proposal["id"], "--only", "r-19990101-deadbeef")
    assert out.code == 2 and out.out == ""
    assert out.err.splitlines() == [
        f"error: proposal {proposal['id']} does not change a rule r-19990101-deadbeef",
        f"hint: the rules it changes: {proposal['rules'][0]['id']} (git failres proposals show {proposal['id']})"]
    assert load_rules(Store(repo), "behavior", "learned") == ()


def resolved_lesson(store: Store, task: str, fail_class: str = "seat-timeout") -> None:
    lesson = make_lesson(slug="rel", task=task, fail_class=fail_class, message="seat timed out",
                         files=["lib/x.py"], int_head="0" * 40, snapshot=None)
    store.commit(change_of([lesson_put(lesson), stamp_put(lesson["id"], ["binding-changed"],
                                                          "2026-11-01T00:00:00.000000Z", "c" * 40)]), "lesson")


def test_a_proposal_refused_by_the_gate_is_not_proposed_again_until_the_pool_changes(
        repo: Path, tmp_path: Path, cli) -> None:
    # A hand edit left the learned rules over the character budget. Recounting the
    # outcomes rewrites the counted rule longer, which the gate refuses: an over-budget
    # set may only shrink toward the budget.
    store = Store(repo)
    store.create()
    plain = [f"{'x' * 60} {n}" for n in range(2)]
    live = "".join(f'[[rules]]\nid = "r-20260101-0000000{n}"\ntext = "{text}"\n' for n, text in enumerate(plain))
    live += '[[rules]]\nid = "r-20260101-00000009"\ntext = "old"\nbasis = "outcomes/seat-timeout/area/lib/*"\n'
    store.commit(Change({rules_path("behavior", "learned"): live.encode()}), "person: rules by hand")
    resolved_lesson(store, "t1")
    resolved_lesson(store, "t2")
    state = tmp_path / "model"
    state.mkdir()
    program = tmp_path / "model.py"
    program.write_text(
        "import json, pathlib, sys\n"
        f"state = pathlib.Path({str(state)!r})\n"
        "prompt = sys.stdin.read()\n"
        "if '\"rules\": [' in prompt:\n"
        "    (state / f'learner-{len(list(state.iterdir()))}').write_text(prompt)\n"
        f"    print(json.dumps({{'rules': [{{'rule': t}} for t in {plain!r}]}}))\n"
        "else:\n"
        "    print('{\"skip\": false, \"reflexion\": \"Keep the docs short.\"}')\n")
    (repo / ".failres.toml").write_text(
        f'[learning]\nprovider = "command"\ncommand = {json.dumps([sys.executable, str(program)])}\nmax_chars = 100\n')
    run_json(cli, repo, "reflect", str(write_sessions(tmp_path / "t", {"a": steer_session("a", "always write shorter docs")})))
    (first,) = run_json(cli, repo, "learn")
    assert first["proposal"]["status"] == "rejected_by_gate"
    (second,) = run_json(cli, repo, "learn")
    assert second["proposal"] is None
    assert second["note"].startswith(f"proposal {first['proposal']['id']} was refused by the budget gate")
    assert len(list(state.iterdir())) == 1, "the model is not asked again about the same pool"
    assert len(store_proposals(repo)) == 1
    # New evidence changes the pool: it is argued again.
    resolved_lesson(store, "t3")
    assert run_json(cli, repo, "learn")[0]["proposal"] is not None
    assert len(list(state.iterdir())) == 2 and len(store_proposals(repo)) == 2


# ── no-model rules that generalise a little ──────────────────────────────────


def test_the_same_steer_and_the_same_refused_command_family_are_one_candidate_each(
        repo: Path, tmp_path: Path, cli) -> None:
    folder = write_sessions(tmp_path / "t", {
        "a": steer_session("a", "Always run the formatter before committing."),
        "b": steer_session("b", "always run the formatter before committing"),
        "c": refusal_session("c", "mix phx.server 2>&1 | head -80"),
        "d": refusal_session("d", "cd assets && mix phx.server"),
    })
    assert len(run_json(cli, repo, "reflect", str(folder))) == 4
    proposal = run_json(cli, repo, "learn")[0]["proposal"]
    assert [(r["text"], r["based_on_count"], len(r["sources"])) for r in proposal["rules"]] == [
        ('A person steered a run and said: "Always run the formatter before committing."', 2, 2),
        ("Ask before running `mix phx.server`: a person refused it.", 2, 2),
    ]
    assert len(proposal["reflection_ids"]) == 4


def test_a_counted_rule_a_person_rejected_returns_only_with_new_evidence(repo: Path, cli) -> None:
    store = Store(repo)
    resolved_lesson(store, "t1")
    resolved_lesson(store, "t2")
    proposal = run_json(cli, repo, "learn")[0]["proposal"]
    assert [r["text"] for r in proposal["rules"]] == [
        "2 tasks touching `lib/*` hit `seat-timeout`; each was resolved by changing a seat's binding."]
    run_json(cli, repo, "proposals", "reject", proposal["id"], "--reason", "not useful")
    assert run_json(cli, repo, "learn")[0]["note"] == "nothing new to learn"
    resolved_lesson(store, "t3")
    again = run_json(cli, repo, "learn")[0]["proposal"]
    assert [r["text"] for r in again["rules"]] == [
        "3 tasks touching `lib/*` hit `seat-timeout`; each was resolved by changing a seat's binding."]


# ── a hand edit past the budget ──────────────────────────────────────────────


def test_a_hand_edit_past_the_budget_is_warned_about_and_prompts_carry_only_the_budget(
        repo: Path, tmp_path: Path, cli) -> None:
    store = Store(repo)
    store.create()
    rules = "".join(f'[[rules]]\nid = "r-20260101-{n:08x}"\ntext = "Rule {n}."\n' for n in range(17))
    store.commit(Change({rules_path("behavior", "learned"): rules.encode()}), "person: seventeen rules by hand")
    out = cli(repo, "rules")
    assert out.code == 0
    assert ("warning: behavior: 17 active learned rules (177 characters), more than the budget of 15 rules and "
            "1600 characters; prompts leave out 2: r-20260101-0000000f, r-20260101-00000010") in out.err
    view = run_json(cli, repo, "rules")
    assert [r["id"] for r in view["overBudget"][0]["dropped"]] == ["r-20260101-0000000f", "r-20260101-00000010"]
    assert "- Rule 14." in view["block"] and "- Rule 15." not in view["block"]
    assert len(view["ruleIds"]) == 15
    # A seat's prompt carries the same cut block.
    (repo / ".failres.toml").write_text('[gates.g]\ncommand = ["true"]\n')
    plan = tmp_path / "plan.toml"
    plan.write_text('slug = "rel"\n[[tasks]]\nid = "t1"\ntitle = "T"\nprompt = "Do it."\nfiles = ["src/a.py"]\n')
    shown = cli(repo, "prompt", "rel", "t1", "--mode", "implement", "--plan", str(plan))
    assert shown.code == 0, shown.err
    assert "- Rule 14." in shown.out and "- Rule 16." not in shown.out
