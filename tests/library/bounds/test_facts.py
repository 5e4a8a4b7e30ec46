"""Facts with a timeline: versions, confirmations, contradictions and their severity, decay, prompts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import git
from lessons.bounds.capacity import count_records
from lessons.bounds.facts import (
    FACTS_HEADING,
    contradiction_severity,
    detect_contradiction,
    fact_timeline,
    facts_block,
    list_facts,
    read_facts,
    set_fact,
    word_similarity,
)
from lessons.bounds.policy import Policy, decayed_confidence
from lessons.storage.store import Store

DAY0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(repo: Path) -> Store:
    s = Store(repo)
    s.create()
    return s


def last_subject(store: Store) -> str:
    return git(store.repo.workdir, "log", "-1", "--format=%s", store.ref).strip()


def at(days: float) -> datetime:
    return DAY0 + timedelta(days=days)


# ---- the timeline ----

def test_three_versions_replay_in_order_each_closed_when_the_next_began(store: Store):
    policy = Policy()
    for n, value in enumerate(("pytest -q", "make check", "tox -e py311")):
        set_fact(store, "judge", "command", value, policy=policy, now=at(n))
    versions = fact_timeline(store, "judge", "command", policy)
    assert [v["value"] for v in versions] == ["pytest -q", "make check", "tox -e py311"]
    assert versions[0]["valid_until"] == versions[1]["valid_from"]
    assert versions[1]["valid_until"] == versions[2]["valid_from"]
    assert versions[2]["valid_until"] is None
    assert [v["supersedes"] for v in versions] == [None, versions[0]["id"], versions[1]["id"]]


def test_a_timeline_is_cut_to_its_newest_versions(store: Store):
    for n in range(4):
        set_fact(store, "judge", "command", f"variant {n} of something else entirely {'x' * n}",
                 policy=Policy(similarity_threshold=1.0), now=at(n))
    versions = fact_timeline(store, "judge", "command", Policy(timeline_limit=2))
    assert [v["value"][:9] for v in versions] == ["variant 2", "variant 3"]


def test_a_fact_write_is_one_commit_named_for_the_fact(store: Store):
    set_fact(store, "judge", "command", "pytest -q", policy=Policy(), now=at(0))
    assert last_subject(store) == "failres: fact set judge/command"
    set_fact(store, "judge", "command", "make check", policy=Policy(), now=at(1))
    subject = last_subject(store)
    assert subject == "failres: fact set judge/command (contradiction: medium)"
    body = git(store.repo.workdir, "log", "-1", "--format=%b", store.ref)
    assert body.count("+ facts/") == 2  # the new version and the amendment closing the old one


# ---- confirmations ----

def test_the_same_value_in_another_case_is_a_confirmation_not_a_version(store: Store):
    set_fact(store, "judge", "command", "pytest -q", policy=Policy(), now=at(0))
    result = set_fact(store, "judge", "command", "PYTEST   -Q", policy=Policy(), now=at(1))
    assert result.write.action == "confirmed" and result.write.contradiction is None
    assert len(read_facts(store)) == 1
    assert read_facts(store)[0]["confirmation_count"] == 2
    assert last_subject(store) == "failres: fact set judge/command (confirmed)"


def test_a_word_similar_value_refines_the_fact_and_carries_its_confirmations(store: Store):
    set_fact(store, "judge", "command", "pytest -q tests", policy=Policy(), now=at(0))
    result = set_fact(store, "judge", "command", "pytest tests -q", policy=Policy(), now=at(1))
    assert result.write.action == "refined" and result.write.contradiction is None
    versions = fact_timeline(store, "judge", "command", Policy())
    assert [v["value"] for v in versions] == ["pytest -q tests", "pytest tests -q"]
    assert versions[-1]["confirmation_count"] == 2


def test_word_similarity_is_jaccard_over_word_sets():
    assert word_similarity("a b c", "c b a a") == 1.0
    assert word_similarity("a b c", "a b d") == pytest.approx(2 / 4)
    assert word_similarity("", "") == 1.0


# ---- contradictions ----

def existing(confidence: float, confirmations: int) -> dict:
    return {"id": "1" * 16, "value": "pytest -q", "confidence": confidence, "confirmation_count": confirmations}


def test_a_near_certain_twice_confirmed_fact_contradicted_is_high():
    found = detect_contradiction(existing(0.9, 2), "make check", Policy())
    assert found is not None and found.severity == "high"


def test_a_near_certain_fact_confirmed_once_contradicted_is_medium():
    found = detect_contradiction(existing(0.95, 1), "make check", Policy(contradiction_threshold=0.5))
    assert found is not None and found.severity == "medium"


def test_a_fact_at_the_contradiction_threshold_contradicted_is_medium():
    assert contradiction_severity(0.5, 5, Policy(contradiction_threshold=0.5)) == "medium"


def test_a_fact_below_the_contradiction_threshold_contradicted_is_low():
    found = detect_contradiction(existing(0.49, 3), "make check", Policy(contradiction_threshold=0.5))
    assert found is not None and found.severity == "low"


def test_values_similar_above_the_threshold_do_not_contradict():
    assert detect_contradiction(existing(1.0, 3), "pytest -q", Policy()) is None
    assert detect_contradiction(existing(1.0, 3), "pytest  -Q", Policy()) is None


def test_facts_set_prints_the_contradiction_and_records_it_in_the_new_version(repo: Path, cli):
    assert cli(repo, "facts", "set", "judge", "command", "pytest -q").code == 0
    assert cli(repo, "facts", "set", "judge", "command", "pytest -q").code == 0
    result = cli(repo, "facts", "set", "judge", "command", "make check", "--confidence", "0.7")
    assert result.code == 0, result.err
    assert 'contradiction (high): it was "pytest -q" (confidence 1, confirmed 2 time(s))' in result.out
    versions = json.loads(cli(repo, "facts", "timeline", "judge", "command", "--json").out)
    assert versions[-1]["contradiction"]["severity"] == "high"
    assert versions[-1]["contradiction"]["previous_value"] == "pytest -q"


def test_facts_set_refuses_a_bad_category_or_confidence_with_exit_2(repo: Path, cli):
    assert cli(repo, "facts", "set", "bad category", "k", "v").code == 2
    assert cli(repo, "facts", "set", "judge", "k", "v", "--confidence", "1.5").code == 2


# ---- decay and staleness ----

def test_confidence_decays_by_whole_days_deterministically():
    assert decayed_confidence(0.8, 10, 0.01) == pytest.approx(0.8 * 0.99 ** 10)
    assert decayed_confidence(0.8, 10, 0.01) == decayed_confidence(0.8, 10, 0.01)
    assert decayed_confidence(0.8, 0, 0.5) == 0.8


def test_a_listing_decays_confidence_to_the_given_moment(store: Store):
    set_fact(store, "judge", "command", "pytest -q", policy=Policy(), confidence=0.8, now=at(0))
    policy = Policy(decay_rate=0.01)
    [row] = list_facts(store, policy, now=at(10.5))
    assert row.age_days == 10
    assert row.effective_confidence == pytest.approx(0.8 * 0.99 ** 10)
    assert [v.document() for v in list_facts(store, policy, now=at(10.9))] == [row.document()]


def test_a_stale_low_confidence_fact_is_a_candidate_and_stays_out_of_prompts(store: Store):
    policy = Policy(stale_days=30, low_confidence_threshold=0.3, decay_rate=0.01)
    set_fact(store, "owner", "src/a.py", "team-a", policy=policy, confidence=0.31, now=at(0))
    set_fact(store, "owner", "src/b.py", "team-b", policy=policy, confidence=1.0, now=at(0))
    rows = {r.fact["key"]: r for r in list_facts(store, policy, now=at(40))}
    assert rows["src/a.py"].candidate and not rows["src/b.py"].candidate
    assert facts_block(store, policy, now=at(40)) == f"## {FACTS_HEADING}\n\n- owner/src/b.py: team-b\n"


# ---- prompts and listings ----

def test_the_facts_block_keeps_the_most_confident_within_its_budget_listed_by_address(store: Store):
    policy = Policy(facts_per_prompt=2)
    set_fact(store, "judge", "command", "pytest -q", policy=policy, confidence=0.6, now=at(0))
    set_fact(store, "owner", "src", "team-a", policy=policy, confidence=0.9, now=at(0))
    set_fact(store, "build", "tool", "hatch", policy=policy, confidence=0.8, now=at(0))
    block = facts_block(store, policy, now=at(1))
    assert block == f"## {FACTS_HEADING}\n\n- build/tool: hatch\n- owner/src: team-a\n"


def test_the_facts_block_is_empty_without_facts(store: Store):
    assert facts_block(store, Policy(), now=at(0)) == ""


def test_facts_list_json_is_sorted_by_address_and_byte_identical(repo: Path, cli):
    for category, key in (("owner", "src"), ("judge", "command"), ("judge", "cwd")):
        assert cli(repo, "facts", "set", category, key, f"value of {key}").code == 0
    first = cli(repo, "facts", "list", "--json")
    assert first.out == cli(repo, "facts", "list", "--json").out
    rows = json.loads(first.out)
    assert [(r["category"], r["key"]) for r in rows] == [("judge", "command"), ("judge", "cwd"), ("owner", "src")]
    only = json.loads(cli(repo, "facts", "list", "--category", "owner", "--json").out)
    assert [r["key"] for r in only] == ["src"]


# ---- bounds ----

def test_a_full_facts_store_archives_closed_versions_first_and_the_timeline_still_reaches_them(store: Store):
    policy = Policy(max_facts=4, reclaim_headroom_pct=0.5, similarity_threshold=1.0)
    values = ("alpha one", "beta two", "gamma three", "delta four")
    for n, value in enumerate(values):
        result = set_fact(store, "judge", "command", value, policy=policy, now=at(n))
    assert result.reclaim is not None and result.reclaim.commits
    assert count_records(store, "facts") == 2
    assert [f["value"] for f in read_facts(store)] == ["gamma three", "delta four"]
    replay = fact_timeline(store, "judge", "command", policy)
    assert [v["value"] for v in replay] == list(values)
    assert [v["archived"] for v in replay] == [True, True, False, False]
    hidden = fact_timeline(store, "judge", "command", Policy(archive_reach="none"))
    assert [v["value"] for v in hidden] == ["gamma three", "delta four"]
