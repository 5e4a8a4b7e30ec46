"""Failure classes, SCOPE-REQUEST parsing, the rung table, the resolver and stop-loss: pure decisions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failres.engine.ladder import (
    STOP_LOSS_ADVICE,
    Action,
    Conditions,
    QuarantineFacts,
    StopLoss,
    next_action,
    stop_loss_advice,
    stop_loss_decision,
)
from failres.engine.taxonomy import (
    BUILTIN_CLASSES,
    FIXER_SCOPE_VIOLATION,
    GATE_NOT_GREEN_AFTER_FIXER,
    GATE_TIMEOUT,
    MAX_SCOPE_REQUESTS,
    PATCH_DOES_NOT_APPLY,
    REPEATED_FAILURE_STOP,
    SEAT_CRASHED,
    SEAT_TIMEOUT,
    UNKNOWN,
    WRAPPER_ENGINE_DOWN,
    Classification,
    Observation,
    ScopeRequest,
    UserRule,
    classify,
    parse_scope_requests,
    render_rung_table,
    rung_table,
)

ENGINE_DOWN_PATTERNS = (r"(?i)503 service unavailable", r"ECONNREFUSED")
ENGINE_DOWN_EXIT_CODES = (75,)


def observe(stage="seat", *, seat="fixer", exit_code=1, timed_out=False, not_found=False, output="", **scope):
    return Observation(stage, seat if stage in ("seat", "scope") else None, exit_code, timed_out, not_found, output, **scope)


def class_of(obs, user_rules=()):
    result = classify(
        obs,
        engine_down_patterns=ENGINE_DOWN_PATTERNS,
        engine_down_exit_codes=ENGINE_DOWN_EXIT_CODES,
        user_rules=user_rules,
    )
    return None if result is None else result.fail_class


# ─── classify ─────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("obs", "expected"),
    [
        pytest.param(observe(not_found=True, exit_code=127), WRAPPER_ENGINE_DOWN, id="seat-not-found"),
        pytest.param(observe(exit_code=75), WRAPPER_ENGINE_DOWN, id="engine-down-exit-code"),
        pytest.param(observe(output="HTTP 503 Service Unavailable"), WRAPPER_ENGINE_DOWN, id="engine-down-pattern"),
        pytest.param(
            observe(exit_code=None, timed_out=True, output="connect ECONNREFUSED"), WRAPPER_ENGINE_DOWN,
            id="engine-down-pattern-beats-seat-timeout",
        ),
        pytest.param(observe(exit_code=None, timed_out=True), SEAT_TIMEOUT, id="seat-timeout"),
        pytest.param(observe("gate", exit_code=None, timed_out=True), GATE_TIMEOUT, id="gate-timeout"),
        pytest.param(observe("gate", exit_code=1), GATE_NOT_GREEN_AFTER_FIXER, id="gate-red"),
        pytest.param(observe("gate", exit_code=127, not_found=True), UNKNOWN, id="gate-cannot-start"),
        pytest.param(observe("scope", exit_code=0, scope_rejected=("src/x.py",)), FIXER_SCOPE_VIOLATION, id="scope"),
        pytest.param(observe(exit_code=2), SEAT_CRASHED, id="seat-crashed"),
        pytest.param(observe("patch", exit_code=1), PATCH_DOES_NOT_APPLY, id="patch"),
    ],
)
def test_each_builtin_class_is_recognised(obs, expected):
    assert class_of(obs) == expected


def test_engine_down_patterns_only_apply_to_the_seat_stage():
    assert class_of(observe("gate", exit_code=1, output="503 Service Unavailable")) == GATE_NOT_GREEN_AFTER_FIXER


@pytest.mark.parametrize(
    "obs",
    [
        pytest.param(observe(exit_code=0, output="503 Service Unavailable"), id="seat-exit-0-with-engine-text"),
        pytest.param(observe("gate", exit_code=0), id="green-gate"),
        pytest.param(observe("patch", exit_code=0), id="patch-applied"),
    ],
)
def test_success_is_not_a_failure(obs):
    assert class_of(obs, user_rules=(UserRule("flaky", ".*", "any", "quarantine"),)) is None


def test_classification_carries_a_readable_reason():
    result = classify(observe(exit_code=75), engine_down_patterns=(), engine_down_exit_codes=(75,))
    assert result == Classification(WRAPPER_ENGINE_DOWN, "fixer exited with code 75, an engine-down code")


def test_scope_reason_names_the_requested_files():
    obs = observe("scope", scope_requests=(ScopeRequest("a.py", "needed"), ScopeRequest("b.py", "")))
    result = classify(obs, engine_down_patterns=(), engine_down_exit_codes=())
    assert result == Classification(FIXER_SCOPE_VIOLATION, "fixer requested files outside its scope: a.py, b.py")


def test_a_user_rule_wins_over_the_builtin_class():
    rules = (UserRule("lockfile-drift", r"lockfile .* out of date", "gate", "escalate"),)
    obs = observe("gate", exit_code=1, output="error: lockfile pnpm-lock.yaml out of date")
    assert class_of(obs, rules) == "lockfile-drift"


def test_a_user_rule_wins_over_engine_down():
    rules = (UserRule("quota", r"quota exceeded", "seat", "quarantine"),)
    assert class_of(observe(exit_code=75, output="quota exceeded"), rules) == "quota"


def test_a_gate_rule_does_not_apply_to_seat_output():
    rules = (UserRule("lockfile-drift", "lockfile", "gate", "escalate"),)
    assert class_of(observe(exit_code=3, output="lockfile"), rules) == SEAT_CRASHED


def test_an_any_rule_applies_to_every_stage():
    rules = (UserRule("disk-full", "No space left", "any", "quarantine"),)
    for stage in ("seat", "gate", "patch"):
        assert class_of(observe(stage, exit_code=1, output="No space left on device"), rules) == "disk-full"


def test_the_first_matching_user_rule_wins():
    rules = (UserRule("first", "boom", "any", "quarantine"), UserRule("second", "boom", "any", "escalate"))
    assert class_of(observe(output="boom"), rules) == "first"


def test_an_invalid_user_pattern_matches_nothing_instead_of_raising():
    rules = (UserRule("broken", "([unclosed", "any", "quarantine"),)
    assert class_of(observe(exit_code=4, output="([unclosed"), rules) == SEAT_CRASHED


# ─── SCOPE-REQUEST ────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "line",
    [
        "SCOPE-REQUEST: src/a.py \u2014 the bug is here",
        "SCOPE-REQUEST: src/a.py\u2014the bug is here",
        "SCOPE-REQUEST: src/a.py \u2013 the bug is here",
        "SCOPE-REQUEST: src/a.py - the bug is here",
        "SCOPE-REQUEST: src/a.py -- the bug is here",
        "SCOPE-REQUEST: src/a.py: the bug is here",
        "SCOPE-REQUEST: src/a.py : the bug is here",
        "SCOPE-REQUEST: `src/a.py` \u2014 the bug is here",
        "SCOPE-REQUEST: \"src/a.py\" - the bug is here",
        "SCOPE-REQUEST: 'src/a.py': the bug is here",
        "**SCOPE-REQUEST:** `src/a.py` \u2014 the bug is here",
        "  > agent: SCOPE-REQUEST: src/a.py \u2014 the bug is here",
    ],
)
def test_scope_request_separator_variants_all_parse(line):
    assert parse_scope_requests(f"thinking...\n{line}\ndone\n") == (ScopeRequest("src/a.py", "the bug is here"),)


def test_a_scope_request_may_have_no_reason():
    assert parse_scope_requests("SCOPE-REQUEST: src/a.py\n") == (ScopeRequest("src/a.py", ""),)


@pytest.mark.parametrize("file", ["__init__.py", "_private/x.py", "*.md", "docs/**"])
def test_paths_starting_with_markup_characters_survive(file):
    assert parse_scope_requests(f"SCOPE-REQUEST: {file} \u2014 why") == (ScopeRequest(file, "why"),)


def test_a_quoted_path_may_contain_spaces():
    assert parse_scope_requests('SCOPE-REQUEST: "docs/my notes.md" \u2014 typo') == (
        ScopeRequest("docs/my notes.md", "typo"),
    )


@pytest.mark.parametrize(
    "line",
    [
        "SCOPE-REQUEST:",
        "SCOPE-REQUEST:    ",
        "SCOPE-REQUEST: \u2014 no file given",
        "SCOPE-REQUEST: -- no file given",
        "SCOPE-REQUEST: ``",
        "print `SCOPE-REQUEST: <file> \u2014 <reason>` and stop without editing.",
        "scope-request: src/a.py \u2014 lower case is not the marker",
    ],
)
def test_lines_naming_no_file_are_ignored(line):
    assert parse_scope_requests(line) == ()


def test_duplicate_requests_keep_the_first_reason_and_order():
    text = "SCOPE-REQUEST: b.py \u2014 one\nSCOPE-REQUEST: a.py \u2014 two\nSCOPE-REQUEST: b.py \u2014 three\n"
    assert parse_scope_requests(text) == (ScopeRequest("b.py", "one"), ScopeRequest("a.py", "two"))


def test_at_most_twenty_requests_are_kept():
    text = "\n".join(f"SCOPE-REQUEST: f{i}.py \u2014 r" for i in range(50))
    requests = parse_scope_requests(text)
    assert len(requests) == MAX_SCOPE_REQUESTS
    assert requests[-1] == ScopeRequest("f19.py", "r")


@given(st.text())
def test_parsing_arbitrary_text_never_raises_and_stays_bounded(text):
    requests = parse_scope_requests(text)
    files = [request.file for request in requests]
    assert len(requests) <= MAX_SCOPE_REQUESTS
    assert len(files) == len(set(files))
    assert all(file.strip() for file in files)


@given(st.lists(st.sampled_from(["SCOPE-REQUEST:", " ", "\u2014", "-", "--", ":", "`", '"', "a.py", "\n", "*", "x"])))
def test_parsing_marker_heavy_text_never_raises(pieces):
    parse_scope_requests("".join(pieces))


@given(
    file=st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_./-]{0,40}", fullmatch=True),
    reason=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ,.()]{0,60}", fullmatch=True).map(str.strip),
    separator=st.sampled_from([" \u2014 ", " \u2013 ", " - ", " -- ", ": "]),
)
def test_a_well_formed_request_round_trips(file, reason, separator):
    assert parse_scope_requests(f"SCOPE-REQUEST: {file}{separator}{reason}") == (ScopeRequest(file, reason),)


# ─── rung table ───────────────────────────────────────────────────────────────


def test_every_builtin_class_has_a_rung():
    assert {row.fail_class for row in rung_table()} == set(BUILTIN_CLASSES)


@pytest.mark.parametrize(
    ("fail_class", "expected"),
    [
        (WRAPPER_ENGINE_DOWN, {(1, "probe-then-retry")}),
        (FIXER_SCOPE_VIOLATION, {(2, "constrained-retry"), (3, "escalate")}),
        (GATE_NOT_GREEN_AFTER_FIXER, {(2, "retry-fixer"), (3, "quarantine")}),
        (SEAT_TIMEOUT, {(3, "quarantine")}),
        (GATE_TIMEOUT, {(3, "quarantine")}),
        (SEAT_CRASHED, {(3, "quarantine")}),
        (PATCH_DOES_NOT_APPLY, {(3, "quarantine")}),
        (UNKNOWN, {(3, "escalate")}),
        (REPEATED_FAILURE_STOP, {(4, "stop")}),
    ],
)
def test_builtin_rungs(fail_class, expected):
    assert {(row.rung, row.action) for row in rung_table() if row.fail_class == fail_class} == expected


def test_user_classes_follow_the_builtins_with_the_rung_of_their_action():
    rules = (UserRule("quota", "quota", "seat", "probe-then-retry"), UserRule("lint", "E501", "gate", "quarantine"))
    user_rows = [row for row in rung_table(rules) if row.source == "user"]
    assert [(row.fail_class, row.rung, row.action) for row in user_rows] == [
        ("quota", 1, "probe-then-retry"),
        ("lint", 3, "quarantine"),
    ]


def test_a_user_rule_cannot_move_a_builtin_class():
    rules = (UserRule(GATE_TIMEOUT, "slow", "gate", "probe-then-retry"),)
    assert rung_table(rules) == rung_table()


def test_a_user_rule_with_an_unknown_action_escalates():
    (row,) = [row for row in rung_table((UserRule("odd", "x", "any", "weaken-gate"),)) if row.source == "user"]
    assert (row.rung, row.action) == (3, "escalate")


def test_the_rendered_table_is_json_ready():
    rendered = render_rung_table(rung_table())
    assert rendered[0] == {
        "failClass": WRAPPER_ENGINE_DOWN,
        "rung": 1,
        "action": "probe-then-retry",
        "description": rendered[0]["description"],
        "source": "built-in",
    }
    assert all(type(row["action"]) is str for row in rendered)


# ─── resolver ─────────────────────────────────────────────────────────────────

FRESH = dict(
    constrained_retries_used=0, fixer_attempts_used=0, fixer_budget=1, has_fixer=True,
    repair_enabled=True, probe_done=False, scope_requested=False,
)


@pytest.mark.parametrize(
    ("fail_class", "state", "expected"),
    [
        (WRAPPER_ENGINE_DOWN, {}, Action.PROBE_THEN_RETRY),
        (WRAPPER_ENGINE_DOWN, {"probe_done": True}, Action.QUARANTINE),
        (FIXER_SCOPE_VIOLATION, {}, Action.CONSTRAINED_RETRY),
        (FIXER_SCOPE_VIOLATION, {"constrained_retries_used": 1}, Action.ESCALATE),
        (FIXER_SCOPE_VIOLATION, {"scope_requested": True}, Action.ESCALATE),
        (GATE_NOT_GREEN_AFTER_FIXER, {}, Action.RETRY_FIXER),
        (GATE_NOT_GREEN_AFTER_FIXER, {"fixer_attempts_used": 1}, Action.QUARANTINE),
        (GATE_NOT_GREEN_AFTER_FIXER, {"fixer_budget": 3, "fixer_attempts_used": 2}, Action.RETRY_FIXER),
        (GATE_NOT_GREEN_AFTER_FIXER, {"has_fixer": False}, Action.QUARANTINE),
        (GATE_NOT_GREEN_AFTER_FIXER, {"repair_enabled": False}, Action.QUARANTINE),
        (GATE_NOT_GREEN_AFTER_FIXER, {"fixer_budget": 0}, Action.QUARANTINE),
        (SEAT_TIMEOUT, {}, Action.QUARANTINE),
        (GATE_TIMEOUT, {}, Action.QUARANTINE),
        (SEAT_CRASHED, {}, Action.QUARANTINE),
        (PATCH_DOES_NOT_APPLY, {}, Action.QUARANTINE),
        (UNKNOWN, {}, Action.ESCALATE),
        (REPEATED_FAILURE_STOP, {}, Action.STOP),
        ("never-defined", {}, Action.ESCALATE),
    ],
)
def test_next_action(fail_class, state, expected):
    assert next_action(fail_class, **{**FRESH, **state}) == expected


@pytest.mark.parametrize(
    ("action", "state", "expected"),
    [
        ("quarantine", {}, Action.QUARANTINE),
        ("escalate", {}, Action.ESCALATE),
        ("probe-then-retry", {}, Action.PROBE_THEN_RETRY),
        ("probe-then-retry", {"probe_done": True}, Action.QUARANTINE),
        ("retry-fixer", {}, Action.RETRY_FIXER),
        ("retry-fixer", {"fixer_attempts_used": 1}, Action.QUARANTINE),
        ("stop", {}, Action.ESCALATE),
        ("loosen-the-gate", {}, Action.ESCALATE),
    ],
)
def test_a_user_class_gets_its_configured_action_within_the_same_bounds(action, state, expected):
    rules = (UserRule("custom", "x", "any", action),)
    assert next_action("custom", **{**FRESH, **state}, user_rules=rules) == expected


def test_a_user_rule_cannot_change_a_builtin_class_action():
    rules = (UserRule(SEAT_TIMEOUT, "x", "any", "retry-fixer"),)
    assert next_action(SEAT_TIMEOUT, **FRESH, user_rules=rules) == Action.QUARANTINE


# ─── stop-loss ────────────────────────────────────────────────────────────────

NOW = Conditions(int_head="abc123", scope_key="scope-1", bindings_key="bind-1")


def quarantine(signature="gate-not-green-after-fixer|tests failed", **changes):
    facts = {"int_head": NOW.int_head, "scope_key": NOW.scope_key, "bindings_key": NOW.bindings_key, **changes}
    return QuarantineFacts(signature=signature, **facts)


def test_identical_quarantines_at_the_threshold_stop_the_task():
    decision = stop_loss_decision([quarantine(), quarantine()], NOW, threshold=2, mode="on")
    assert decision == StopLoss("gate-not-green-after-fixer|tests failed", 2, STOP_LOSS_ADVICE)


def test_stop_loss_advice_names_every_way_out():
    assert STOP_LOSS_ADVICE == (
        "move the integration head",
        "change the task's files (its scope)",
        "change the binding",
        "change the gate (its command, env, setup or cwd) or [workspace] in .failres.toml",
        'set stop_loss.mode = "off"',
    )


def test_stop_loss_advice_names_an_open_decision_only_when_there_is_one():
    assert stop_loss_advice() == STOP_LOSS_ADVICE
    assert not any("decision" in advice for advice in stop_loss_advice())
    named = stop_loss_advice(["d77e8c26aa00bb11"])
    assert named[1] == "answer the open decision d77e8c26 (git failres decisions --open)"
    decided = stop_loss_decision([quarantine(), quarantine()], NOW, threshold=2, mode="on",
                                 open_decisions=["d77e8c26aa00bb11"])
    assert decided.advice == named


def test_the_count_is_the_whole_unchanged_streak():
    recent = [quarantine("other|x"), quarantine(), quarantine(), quarantine()]
    assert stop_loss_decision(recent, NOW, threshold=2, mode="on").count == 3


def test_fewer_quarantines_than_the_threshold_run():
    assert stop_loss_decision([quarantine()], NOW, threshold=2, mode="on") is None
    assert stop_loss_decision([], NOW, threshold=2, mode="on") is None


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param({"int_head": "old000"}, id="integration-head-moved"),
        pytest.param({"scope_key": "scope-0"}, id="scope-changed"),
        pytest.param({"bindings_key": "bind-0"}, id="binding-changed"),
        pytest.param({"config_key": "gate-0"}, id="configuration-changed"),
        pytest.param({"int_head": None}, id="conditions-not-recorded"),
    ],
)
def test_a_changed_condition_lets_the_task_run(changed):
    recent = [quarantine(**changed), quarantine()]
    assert stop_loss_decision(recent, NOW, threshold=2, mode="on") is None


def test_different_signatures_let_the_task_run():
    recent = [quarantine("seat-timeout|seat ran long"), quarantine()]
    assert stop_loss_decision(recent, NOW, threshold=2, mode="on") is None


def test_mode_off_lets_the_task_run():
    assert stop_loss_decision([quarantine()] * 5, NOW, threshold=2, mode="off") is None


def test_a_misspelt_mode_keeps_stop_loss_on():
    assert stop_loss_decision([quarantine()] * 2, NOW, threshold=2, mode="of") is not None


def test_a_threshold_below_one_still_needs_one_quarantine():
    assert stop_loss_decision([], NOW, threshold=0, mode="on") is None
    assert stop_loss_decision([quarantine()], NOW, threshold=0, mode="on").count == 1
