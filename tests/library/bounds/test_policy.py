"""The knowledge policy: defaults, strict ranges, environment overrides, `policy show|validate`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from failres.config.model import PolicyConfig
from failres.config.loading import effective_policy_of, parse_config
from failres.errors import ConfigError
from lessons.bounds.policy import (
    POLICY_KEYS,
    Policy,
    PolicyProblem,
    check_value,
    effective_policy,
    env_overrides,
    reaches_archive,
)

SOURCE = "cfg.toml"


def refusal(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, SOURCE)
    return str(caught.value)


# ---- the keys ----

def test_the_config_section_declares_exactly_the_library_keys_with_the_same_defaults():
    declared = [f.name for f in dataclasses.fields(PolicyConfig) if f.name != "file_keys"]
    assert declared == list(POLICY_KEYS)
    assert all(getattr(PolicyConfig(), key) == getattr(Policy(), key) for key in POLICY_KEYS)


def test_an_empty_policy_table_gives_the_defaults():
    config = parse_config("[policy]\n", SOURCE)
    assert effective_policy_of(config, {}).policy == Policy()


def test_an_unknown_policy_key_is_refused_with_a_suggestion():
    with pytest.raises(ConfigError) as caught:
        parse_config("[policy]\nmax_lesson = 3\n", SOURCE)
    assert str(caught.value) == f"{SOURCE}: policy.max_lesson: unknown key"
    assert caught.value.hint == 'did you mean "max_lessons"?'


# ---- edge values, refused with the key named ----

@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("reclaim_headroom_pct = 0", "must be more than 0 and less than 1, got 0"),
        ("reclaim_headroom_pct = 1", "must be more than 0 and less than 1, got 1"),
        ("reclaim_headroom_pct = -0.25", "must be more than 0 and less than 1, got -0.25"),
        ("reclaim_headroom_pct = 1e300", "must be more than 0 and less than 1, got 1e+300"),
        ("reclaim_headroom_pct = nan", "must be a finite number, got nan"),
        ("max_lessons = 0", "must be at least 1 and at most 10000000, got 0"),
        ("max_facts = -5", "must be at least 1 and at most 10000000, got -5"),
        ("max_journal_events = 100000000000", "must be at least 1 and at most 10000000, got 100000000000"),
        ("max_lessons = 2.5", "expected an integer, got 2.5"),
        ('max_lessons = "100"', 'expected an integer, got a string ("100")'),
        ("decay_rate = 1", "must be at least 0 and less than 1, got 1"),
        ("decay_rate = -0.01", "must be at least 0 and less than 1, got -0.01"),
        ("similarity_threshold = 0", "must be more than 0 and at most 1, got 0"),
        ("contradiction_threshold = 1.5", "must be at least 0 and at most 1, got 1.5"),
        ("stale_days = 0", "must be at least 1 and at most 36500, got 0"),
        ("lessons_per_prompt = -1", "must be at least 0 and at most 50, got -1"),
        ("reclaim_enabled = 1", "expected a boolean (true or false), got an integer (1)"),
        ('archive_reach = "everything"', 'must be one of "none", "timeline", "all", got "everything"'),
    ],
)
def test_out_of_range_values_are_refused_naming_file_and_key(line: str, problem: str):
    key = line.split(" ", 1)[0]
    assert refusal(f"[policy]\n{line}\n") == f"{SOURCE}: policy.{key}: {problem}"


@pytest.mark.parametrize(
    ("line", "key", "value"),
    [
        ("reclaim_headroom_pct = 0.5", "reclaim_headroom_pct", 0.5),
        ("max_lessons = 1", "max_lessons", 1),
        ("max_lessons = 10000000", "max_lessons", 10_000_000),
        ("decay_rate = 0", "decay_rate", 0.0),
        ("similarity_threshold = 1", "similarity_threshold", 1.0),
        ("lessons_per_prompt = 0", "lessons_per_prompt", 0),
        ("low_confidence_threshold = 0", "low_confidence_threshold", 0.0),
        ("contradiction_threshold = 1", "contradiction_threshold", 1.0),
    ],
)
def test_values_on_the_edge_of_their_range_are_accepted(line: str, key: str, value: object):
    config = parse_config(f"[policy]\n{line}\n", SOURCE)
    assert getattr(effective_policy_of(config, {}).policy, key) == value


def test_an_integer_given_for_a_number_key_is_read_as_a_float():
    assert check_value("decay_rate", 0) == 0.0 and isinstance(check_value("decay_rate", 0), float)


# ---- where each value came from ----

def test_each_value_says_whether_it_came_from_default_file_or_env():
    effective = effective_policy({"max_lessons": 9}, file_source="f.toml",
                                 environ={"FAILRES_POLICY_DECAY_RATE": "0.5", "UNRELATED": "x"})
    rows = {row["key"]: row for row in effective.rows()}
    assert (rows["max_lessons"]["source"], rows["max_lessons"]["from"], rows["max_lessons"]["value"]) == \
        ("file", "f.toml", 9)
    assert (rows["decay_rate"]["source"], rows["decay_rate"]["from"], rows["decay_rate"]["value"]) == \
        ("env", "FAILRES_POLICY_DECAY_RATE", 0.5)
    assert rows["stale_days"]["source"] == "default"


def test_the_environment_overrides_the_file():
    config = parse_config("[policy]\nmax_lessons = 9\n", SOURCE)
    effective = effective_policy_of(config, {"FAILRES_POLICY_MAX_LESSONS": "12"})
    assert effective.policy.max_lessons == 12
    assert effective.sources["max_lessons"].kind == "env"


def test_a_file_value_equal_to_the_default_still_counts_as_from_the_file():
    config = parse_config("[policy]\nmax_lessons = 5000\n", SOURCE)
    assert effective_policy_of(config, {}).sources["max_lessons"].kind == "file"


@pytest.mark.parametrize(("text", "value"), [("true", True), ("FALSE", False), ("1", True), ("off", False)])
def test_boolean_overrides_accept_the_usual_spellings(text: str, value: bool):
    assert env_overrides({"FAILRES_POLICY_RECLAIM_ENABLED": text})["reclaim_enabled"][0] is value


@pytest.mark.parametrize(
    ("variable", "text", "problem"),
    [
        ("FAILRES_POLICY_MAX_LESSONS", "0", "must be at least 1 and at most 10000000, got 0"),
        ("FAILRES_POLICY_MAX_LESSONS", "ten", 'expected an integer, got "ten"'),
        ("FAILRES_POLICY_RECLAIM_HEADROOM_PCT", "1", "must be more than 0 and less than 1, got 1"),
        ("FAILRES_POLICY_RECLAIM_HEADROOM_PCT", "inf", "must be a finite number, got inf"),
        ("FAILRES_POLICY_RECLAIM_ENABLED", "maybe", 'expected true or false, got "maybe"'),
        ("FAILRES_POLICY_MAX_LESONS", "3", "is not a policy setting"),
    ],
)
def test_a_bad_override_is_refused_naming_the_variable(variable: str, text: str, problem: str):
    with pytest.raises(PolicyProblem) as caught:
        env_overrides({variable: text})
    assert str(caught.value) == f"{variable}: {problem}"


def test_archive_reach_governs_timelines_and_retrieval_separately():
    assert reaches_archive(Policy(archive_reach="timeline"), "timeline")
    assert not reaches_archive(Policy(archive_reach="timeline"), "retrieval")
    assert reaches_archive(Policy(archive_reach="all"), "retrieval")
    assert not reaches_archive(Policy(archive_reach="none"), "timeline")


# ---- the commands ----

def test_policy_show_json_lists_values_sources_and_the_rung_table(repo: Path, cli, monkeypatch):
    (repo / ".failres.toml").write_text(
        '[policy]\nmax_facts = 50\n[[taxonomy.rules]]\nclass = "lockfile-drift"\nmatch = "lockfile"\n')
    monkeypatch.setenv("FAILRES_POLICY_LIST_LIMIT", "7")
    result = cli(repo, "policy", "show", "--json")
    assert result.code == 0, result.err
    document = json.loads(result.out)
    rows = {row["key"]: row for row in document["policy"]}
    assert [row["key"] for row in document["policy"]] == list(POLICY_KEYS)
    assert (rows["max_facts"]["value"], rows["max_facts"]["source"]) == (50, "file")
    assert (rows["list_limit"]["value"], rows["list_limit"]["source"]) == (7, "env")
    classes = [row["failClass"] for row in document["rungs"]]
    assert "wrapper-engine-down" in classes and classes[-1] == "lockfile-drift"
    assert cli(repo, "policy", "show", "--json").out == result.out


def test_policy_show_for_people_prints_both_tables(repo: Path, cli):
    result = cli(repo, "policy", "show")
    assert result.code == 0
    assert "knowledge policy" in result.out and "failure classes and their rungs" in result.out


def test_policy_validate_accepts_a_good_configuration(repo: Path, cli, monkeypatch):
    monkeypatch.setenv("FAILRES_POLICY_STALE_DAYS", "7")
    result = cli(repo, "policy", "validate", "--json")
    assert result.code == 0
    assert json.loads(result.out)["overrides"] == ["FAILRES_POLICY_STALE_DAYS"]


def test_policy_validate_rejects_an_out_of_range_file_value_with_exit_2(repo: Path, cli):
    (repo / ".failres.toml").write_text("[policy]\nreclaim_headroom_pct = 1\n")
    result = cli(repo, "policy", "validate")
    assert result.code == 2
    assert "policy.reclaim_headroom_pct: must be more than 0 and less than 1, got 1" in result.err


def test_policy_validate_rejects_a_bad_override_with_exit_2_naming_the_variable(repo: Path, cli, monkeypatch):
    monkeypatch.setenv("FAILRES_POLICY_MAX_FACTS", "-1")
    result = cli(repo, "policy", "validate")
    assert result.code == 2
    assert result.err.splitlines()[0] == \
        "error: environment: FAILRES_POLICY_MAX_FACTS: must be at least 1 and at most 10000000, got -1"


def test_a_bad_override_stops_a_command_that_needs_the_policy_before_it_writes(repo: Path, cli, monkeypatch):
    from lessons.storage.store import Store

    Store(repo).create()
    before = Store(repo).tip()
    monkeypatch.setenv("FAILRES_POLICY_DECAY_RATE", "2")
    result = cli(repo, "facts", "set", "judge", "command", "make check")
    assert result.code == 2 and "FAILRES_POLICY_DECAY_RATE" in result.err
    assert Store(repo).tip() == before
