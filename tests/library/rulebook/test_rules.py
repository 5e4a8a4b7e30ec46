"""Rules files, the rendered block, lineage, retirement, the budget, and the validation ledger."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git
from lessons.errors import CorruptRecord, InvalidInput
from lessons.rulebook.ledger import (
    EMPTY_BLOCK_HASH,
    fnv1a64,
    read_validations,
    record_outcome,
    rule_tallies,
)
from lessons.rulebook.rule_lineage import finalize_rules, retire_rule
from lessons.rulebook.rules import (
    Budget,
    Rule,
    budget_problem,
    domain_section,
    domains_in,
    load_rules,
    parse_rules,
    render_rules_block,
    rules_block,
    rules_in_force,
    rules_path,
    rules_toml,
)
from lessons.storage.store import Change, Store

NOW = "2026-11-30T00:00:00.000000Z"


def minted(ids: list[str]):
    """A rule-id minter that hands out the given ids in order (lineage tests read them)."""
    queue = list(ids)
    return lambda _now, _rule, _taken: queue.pop(0)


def put_rules(store: Store, domain: str, kind: str, text: str) -> None:
    """Write a rules file the way a person would: a plain commit on the store ref."""
    store.commit(Change({rules_path(domain, kind): text.encode()}), f"person: edit {domain}.{kind}")


@pytest.fixture
def store(repo: Path) -> Store:
    s = Store(repo)
    s.create()
    return s


# ── the hash ─────────────────────────────────────────────────────────────────


def test_the_rules_hash_is_fnv1a_64_and_stable_forever() -> None:
    # A known vector: if this changes, every ledger key changed and every tally split.
    assert fnv1a64("abc") == "e71fa2190541574b"
    assert fnv1a64("") == EMPTY_BLOCK_HASH == "cbf29ce484222325"
    assert fnv1a64("abc") != fnv1a64("abd")


def test_the_hash_reads_utf8_bytes() -> None:
    assert fnv1a64("é") == fnv1a64("\u00e9") != fnv1a64("e\u0301")


# ── files ────────────────────────────────────────────────────────────────────


def test_a_hand_written_file_of_bare_texts_loads_as_active_rules() -> None:
    rules = parse_rules('[[rules]]\ntext = "Never push to main."\n\n[[rules]]\ntext = "Ask first."\n', "f")
    assert [r.text for r in rules] == ["Never push to main.", "Ask first."]
    assert all(r.active() and r.id is None and r.sources == () for r in rules)


@pytest.mark.parametrize(("text", "problem"), [
    ('[[rules]]\ntxt = "typo"\n', "unknown key 'txt'"),
    ('[[rules]]\ntext = "   "\n', "non-empty text"),
    ('[[rules]]\ntext = "x"\nenabled = "yes"\n', "enabled has the wrong type"),
    ('[[rules]]\ntext = "x"\nconfidence = true\n', "confidence has the wrong type"),
    ("rules = [1]\n", "must be [[rules]] tables"),
    ("[other]\n", "unknown key 'other'"),
    ("[[rules]\n", "malformed TOML"),
])
def test_a_malformed_rules_file_is_refused_naming_the_problem(text: str, problem: str) -> None:
    with pytest.raises(InvalidInput, match="f: ") as caught:
        parse_rules(text, "f")
    assert problem in str(caught.value)


def test_the_learned_file_round_trips_every_field() -> None:
    rules = (
        Rule("Ask before deleting.", confidence=0.9, based_on_count=2, id="r-1", sources=("a", "b"),
             created_at=NOW),
        Rule("Old.", enabled=False, id="r-2", retired_at=NOW, retired_reason="regressed twice"),
        Rule('When x failures in package src were resolved, it was by scope-widened (2 of 2).', id="r-3",
             basis="lessons/x/src"),
    )
    data = rules_toml(rules, "behavior")
    assert data.startswith(b"# Learned rules of the behavior domain")
    assert parse_rules(data.decode(), "f") == rules
    assert rules_toml(rules, "behavior") == data  # canonical: same rules, same bytes


def test_a_secret_in_a_rule_never_reaches_the_file() -> None:
    data = rules_toml((Rule("Use token=ghp_abcdefghijklmnopqrstuvwxyz0123456789AB for the API."),), "behavior")
    assert b"ghp_abcdefghij" not in data and b"[REDACTED:" in data


def test_rules_files_are_read_from_the_store_tree(store: Store) -> None:
    put_rules(store, "behavior", "user", '[[rules]]\ntext = "Never push to main."\n')
    put_rules(store, "code", "learned", '[[rules]]\ntext = "Prefer pathlib."\n')
    assert domains_in(store) == ["behavior", "code"]
    assert [r.text for r in load_rules(store, "behavior", "user")] == ["Never push to main."]
    assert load_rules(store, "behavior", "learned") == ()


def test_an_invalid_domain_name_is_refused() -> None:
    with pytest.raises(InvalidInput, match="invalid rules domain"):
        rules_path("../etc", "user")


# ── rendering ────────────────────────────────────────────────────────────────


def test_user_rules_come_first_and_inactive_rules_never_render() -> None:
    user = [Rule("User rule.")]
    learned = [Rule("Learned rule."), Rule("Disabled.", enabled=False),
               Rule("Retired.", enabled=True, retired_at=NOW, retired_reason="harmful")]
    section = domain_section("behavior", user, learned)
    assert section == "### behavior\n- User rule.\n- Learned rule."


def test_nothing_to_say_is_an_empty_block_not_a_heading() -> None:
    assert render_rules_block([("behavior", [], [Rule("x", enabled=False)])]) == ""


def test_the_block_has_one_heading_and_a_section_per_domain_with_rules() -> None:
    block = render_rules_block([("behavior", [Rule("A.")], []), ("code", [], []), ("docs", [], [Rule("B.")])])
    assert block.startswith("## Rules for this repository\n\n")
    assert "### behavior\n- A.\n\n### docs\n- B.\n" in block and "### code" not in block
    assert block.count("## Rules") == 1 and block.endswith("\n")


def test_the_block_in_force_names_its_hash_and_active_learned_ids(store: Store) -> None:
    put_rules(store, "behavior", "user", '[[rules]]\ntext = "U."\n')
    store.commit(Change({rules_path("behavior", "learned"): rules_toml(
        (Rule("L.", id="r-a"), Rule("Gone.", id="r-b", retired_at=NOW, retired_reason="x")), "behavior")}), "accept")
    force = rules_in_force(store)
    assert force.block == rules_block(store)
    assert force.block_hash == fnv1a64(force.block)
    assert force.rule_ids == ("r-a",)


def test_an_unreadable_rules_file_costs_its_rules_and_is_reported(store: Store) -> None:
    put_rules(store, "behavior", "user", "[[rules]\nbroken")
    put_rules(store, "behavior", "learned", '[[rules]]\ntext = "Still here."\n')
    force = rules_in_force(store)
    assert "- Still here." in force.block
    assert len(force.problems) == 1 and "rules/behavior.user.toml" in force.problems[0]
    with pytest.raises(CorruptRecord):
        load_rules(store, "behavior", "user")


def test_the_domains_setting_limits_the_block(store: Store) -> None:
    put_rules(store, "behavior", "user", '[[rules]]\ntext = "B."\n')
    put_rules(store, "code", "user", '[[rules]]\ntext = "C."\n')
    assert "- C." not in rules_block(store, ["behavior"]) and "- B." in rules_block(store, ["behavior"])


# ── lineage and retirement ───────────────────────────────────────────────────


def test_a_restated_rule_keeps_its_identity_and_a_new_one_gets_its_own() -> None:
    survivor = Rule("Keep asking before mass edits.", id="r-old", sources=("refl-a",), created_at="2026-01-01")
    out = finalize_rules([Rule("Keep asking before mass edits."), Rule("New lesson.")], [survivor],
                         ["refl-b", "refl-c"], NOW, mint=minted(["r-new"]))
    assert (out[0].id, out[0].created_at, out[0].sources) == ("r-old", "2026-01-01", ("refl-a",))
    assert (out[1].id, out[1].created_at, out[1].sources) == ("r-new", NOW, ("refl-b", "refl-c"))


def test_a_counted_rule_keeps_its_identity_when_its_counts_change() -> None:
    before = Rule("When x failures in package src were resolved, it was by scope-widened (2 of 2).",
                  id="r-count", basis="lessons/x/src", created_at="2026-01-01")
    after = Rule("When x failures in package src were resolved, it was by scope-widened (3 of 3).",
                 basis="lessons/x/src", sources=("l1", "l2", "l3"))
    (out,) = finalize_rules([after], [before], [], NOW, mint=minted([]))
    assert (out.id, out.created_at, out.text, out.sources) == ("r-count", "2026-01-01", after.text, ("l1", "l2", "l3"))


def test_a_retired_rule_survives_a_rewrite_that_leaves_it_out_and_never_renders() -> None:
    retired = Rule("Always summarise every file first.", enabled=False, id="r-bad", retired_at=NOW,
                   retired_reason="3 attributed regressions")
    out = finalize_rules([Rule("Fresh rule.")], [retired], ["refl-x"], NOW, mint=minted(["r-fresh"]))
    assert retired in out
    assert domain_section("behavior", [], out) == "### behavior\n- Fresh rule."


def test_restating_a_retired_rule_does_not_resurrect_it() -> None:
    retired = Rule("Always summarise every file first.", enabled=True, id="r-bad", retired_at=NOW,
                   retired_reason="harmful")
    out = finalize_rules([Rule("Always  summarise every file\nfirst.")], [retired], [], NOW, mint=minted([]))
    assert out == (retired,)
    assert not out[0].active()


def test_repeated_texts_in_a_rewrite_become_one_rule() -> None:
    out = finalize_rules([Rule("Same."), Rule(" Same. ")], [], [], NOW, mint=minted(["r-1"]))
    assert [r.id for r in out] == ["r-1"]


def test_retiring_needs_a_known_active_rule_and_a_reason() -> None:
    rules = (Rule("A.", id="r-a"),)
    (retired,) = retire_rule(rules, "r-a", "regressed", NOW)
    assert (retired.retired_at, retired.retired_reason, retired.active()) == (NOW, "regressed", False)
    with pytest.raises(InvalidInput, match="no learned rule"):
        retire_rule(rules, "r-zzz", "x", NOW)
    with pytest.raises(InvalidInput, match="needs a reason"):
        retire_rule(rules, "r-a", "  ", NOW)
    with pytest.raises(InvalidInput, match="already retired"):
        retire_rule((retired,), "r-a", "again", NOW)


# ── the budget ───────────────────────────────────────────────────────────────


def rules_of(n: int, size: int = 10) -> list[Rule]:
    return [Rule(f"{i:03d}" + "x" * size) for i in range(n)]


def test_filling_up_to_the_budget_is_allowed_and_growing_past_it_is_refused() -> None:
    budget = Budget(max_rules=15, max_chars=10_000)
    assert budget_problem(rules_of(3), rules_of(15), budget) is None
    assert "16 active learned rules" in budget_problem(rules_of(15), rules_of(16), budget)


def test_an_over_budget_set_may_shrink_or_be_rewritten_at_its_size_but_not_grow() -> None:
    budget = Budget(max_rules=15, max_chars=10_000)
    assert budget_problem(rules_of(21), rules_of(17), budget) is None
    assert budget_problem(rules_of(17), rules_of(17), budget) is None
    assert budget_problem(rules_of(20), rules_of(21), budget) is not None


def test_retired_rules_cost_the_budget_nothing() -> None:
    budget = Budget(max_rules=2, max_chars=10_000)
    after = [*rules_of(2), Rule("old", retired_at=NOW), Rule("off", enabled=False)]
    assert budget_problem([], after, budget) is None


def test_the_character_budget_refuses_a_set_that_grows_past_it() -> None:
    budget = Budget(max_rules=15, max_chars=100)
    assert budget_problem([], rules_of(2, size=30), budget) is None
    assert "characters" in budget_problem([], rules_of(4, size=30), budget)


# ── the validation ledger ────────────────────────────────────────────────────


def test_outcomes_fold_into_per_rule_tallies(store: Store) -> None:
    block = fnv1a64("a block")
    record_outcome(store, block, ["r-a", "r-b"], "committed", slug="s", task="t1")
    record_outcome(store, block, ["r-a", "r-b"], "quarantined", slug="s", task="t2")
    record_outcome(store, fnv1a64("another"), ["r-a"], "committed", slug="s", task="t3")
    records, problems = read_validations(store)
    assert len(records) == 3 and problems == []
    tallies = rule_tallies(records)
    a, b = tallies["r-a"], tallies["r-b"]
    assert (a.observations, a.committed, a.quarantined) == (3, 2, 1)
    assert (b.observations, b.committed, b.quarantined) == (2, 1, 1)
    assert a.last_validated == records[-1]["created_at"]
    assert len(read_validations(store, block)[0]) == 2


def test_an_attributed_regression_lands_on_that_rule_alone() -> None:
    rows = [
        {"rule_ids": ["r-a", "r-b"], "outcome": "improved", "created_at": "2026-01-01"},
        {"rule_ids": ["r-a", "r-b"], "outcome": "regressed", "attributed_rule_id": "r-b", "created_at": "2026-01-02"},
    ]
    tallies = rule_tallies(rows)
    assert (tallies["r-a"].improved, tallies["r-a"].regressed, tallies["r-a"].attributed_regressions) == (1, 1, 0)
    assert tallies["r-b"].attributed_regressions == 1
    assert tallies["r-b"].last_validated == "2026-01-02"


def test_each_outcome_is_one_readable_store_commit(store: Store, repo: Path) -> None:
    block = fnv1a64("b")
    record_outcome(store, block, ["r-a"], "committed", slug="rel", task="t1")
    log = git(repo, "log", "-1", "--format=%s", "refs/failres/store").strip()
    assert log == f"failres: validation committed for rel/t1 under rules {block}"


def test_nothing_is_measured_under_an_empty_block(store: Store) -> None:
    assert record_outcome(store, EMPTY_BLOCK_HASH, [], "committed") is None
    assert read_validations(store)[0] == []


@pytest.mark.parametrize(("block_hash", "outcome"), [("zz", "committed"), (fnv1a64("x"), "great")])
def test_a_malformed_outcome_is_refused(store: Store, block_hash: str, outcome: str) -> None:
    with pytest.raises(InvalidInput):
        record_outcome(store, block_hash, ["r-a"], outcome)
