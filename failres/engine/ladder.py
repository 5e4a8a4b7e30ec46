"""What the loop does next about a failure, and when it stops trying altogether.

Pure decisions over counters and facts the loop already holds. The rules fail closed:
every retry is bounded by a counter, anything unrecognised escalates to a person, and no
outcome here ever loosens a gate or the scope guard — the strongest thing a failure can
earn is one more bounded attempt under the same judge.
"""

from __future__ import annotations

from collections.abc import Sequence

from lessons.frozen import record
from failres.engine.taxonomy import (
    BUILTIN_CLASSES,
    FIXER_SCOPE_VIOLATION,
    GATE_NOT_GREEN_AFTER_FIXER,
    GATE_UNAVAILABLE,
    REPEATED_FAILURE_STOP,
    UNKNOWN,
    WRAPPER_ENGINE_DOWN,
    Action,
    UserRule,
    user_rule_action,
)

__all__ = [
    "Action",
    "Conditions",
    "QuarantineFacts",
    "StopLoss",
    "next_action",
    "is_configuration_failure",
    "stop_loss_decision",
]

# What each class asks for before the counters have their say.
_INTENDED_ACTION = {
    WRAPPER_ENGINE_DOWN: Action.PROBE_THEN_RETRY,
    FIXER_SCOPE_VIOLATION: Action.CONSTRAINED_RETRY,
    # Every red gate arrives under this class: the name says how the story ends when the
    # fixer's budget runs out, and the budget check below decides whether it has ended.
    GATE_NOT_GREEN_AFTER_FIXER: Action.RETRY_FIXER,
    REPEATED_FAILURE_STOP: Action.STOP,
    UNKNOWN: Action.ESCALATE,
}


def next_action(
    fail_class: str,
    *,
    constrained_retries_used: int,
    fixer_attempts_used: int,
    fixer_budget: int,
    has_fixer: bool,
    repair_enabled: bool,
    probe_done: bool,
    scope_requested: bool,
    user_rules: Sequence[UserRule] = (),
) -> Action:
    """The one action the loop takes for `fail_class` given what it has already tried."""
    intended = _intended_action(fail_class, user_rules)
    if intended is Action.PROBE_THEN_RETRY:
        # One probe round per failure: a binding that stays down after it is quarantined,
        # never probed in a loop.
        return Action.QUARANTINE if probe_done else Action.PROBE_THEN_RETRY
    if intended is Action.CONSTRAINED_RETRY:
        # A SCOPE-REQUEST means the seat says the fix lies outside its files: retrying
        # inside them cannot help, and only a person may widen the scope.
        if scope_requested or constrained_retries_used != 0:
            return Action.ESCALATE
        return Action.CONSTRAINED_RETRY
    if intended is Action.RETRY_FIXER:
        budget_left = fixer_attempts_used < fixer_budget
        if has_fixer and repair_enabled and budget_left:
            return Action.RETRY_FIXER
        return Action.QUARANTINE
    return intended


def _intended_action(fail_class: str, user_rules: Sequence[UserRule]) -> Action:
    if fail_class in _INTENDED_ACTION:
        return _INTENDED_ACTION[fail_class]
    if fail_class in BUILTIN_CLASSES:
        return Action.QUARANTINE
    for rule in user_rules:
        if rule.cls == fail_class:
            return user_rule_action(rule)
    # A class nobody defined is as good as unknown, and unknown goes to a person.
    return Action.ESCALATE


# ─── Stop-loss ────────────────────────────────────────────────────────────────


@record
class QuarantineFacts:
    """A past quarantine of the task, reduced to what decides whether rerunning can differ."""

    signature: str
    int_head: str | None
    scope_key: str | None
    bindings_key: str | None
    config_key: str | None = ""


@record
class Conditions:
    """The conditions the task would run under now."""

    int_head: str
    scope_key: str
    bindings_key: str
    # The gate (command, env, setup, cwd ...) and `[workspace]`: what judges the task and what
    # its workspace holds decide the outcome as much as the code does. Two quarantines of a
    # wrong gate command were once the same experiment to the stop-loss after the person fixed
    # the command, and `stop_loss.mode = "off"` was the only way on.
    config_key: str = ""


@record
class StopLoss:
    """Do not run the task: it failed the same way `count` times under these conditions."""

    signature: str
    count: int
    advice: tuple[str, ...]


STOP_LOSS_ADVICE = (
    "move the integration head",
    "change the task's files (its scope)",
    "change the binding",
    "change the gate (its command, env, setup or cwd) or [workspace] in .failres.toml",
    'set stop_loss.mode = "off"',
)


def stop_loss_advice(open_decisions: Sequence[str] = ()) -> tuple[str, ...]:
    """What would change the outcome of the next run: each condition the stop compares.

    An open decision is named only when there is one: advice to answer a decision that
    does not exist sends a person looking for it.
    """
    answer = tuple(f"answer the open decision {d[:8]} (git failres decisions --open)" for d in open_decisions)
    return (STOP_LOSS_ADVICE[0], *answer, *STOP_LOSS_ADVICE[1:])


def stop_loss_decision(
    recent: Sequence[QuarantineFacts],
    current: Conditions,
    threshold: int,
    mode: str,
    open_decisions: Sequence[str] = (),
) -> StopLoss | None:
    """Whether to refuse another run because nothing that could change the outcome changed.

    `recent` is the task's quarantines oldest first. The task stops when the last
    `threshold` of them share one signature and all ran under `current`'s integration
    head, effective scope, bindings and configuration (the gate and `[workspace]`): a
    rerun would be the same experiment again. A
    past quarantine whose conditions were not recorded never matches, so missing data
    lets the task run (and quarantine) as it would without stop-loss.
    """
    # Only an explicit "off" disables it: a misspelt mode must not silently remove a guard.
    if mode == "off":
        return None
    # Zero or less cannot mean "stop before anything failed"; the smallest streak is one.
    window = max(threshold, 1)
    streak = _unchanged_streak(recent, current)
    if streak < window:
        return None
    return StopLoss(signature=recent[-1].signature, count=streak, advice=stop_loss_advice(open_decisions))


def _unchanged_streak(recent: Sequence[QuarantineFacts], current: Conditions) -> int:
    """How many of the latest quarantines share the last one's signature under `current`."""
    if not recent:
        return 0
    signature = recent[-1].signature
    streak = 0
    for facts in reversed(recent):
        if facts.signature != signature or not _same_conditions(facts, current):
            break
        streak += 1
    return streak


def _same_conditions(facts: QuarantineFacts, current: Conditions) -> bool:
    return (
        facts.int_head == current.int_head
        and facts.scope_key == current.scope_key
        and facts.bindings_key == current.bindings_key
        and facts.config_key == current.config_key
    )


def is_configuration_failure(fail_class: str, dispatches: int) -> bool:
    """Whether a quarantine is the configuration's, not the task's: the gate could not run
    before any seat was dispatched (a wrong command, a setup that cannot start).

    Nothing a seat did caused it and nothing a seat can do fixes it, so it is never shown
    to a seat as an earlier attempt, and when a run gets past it what resolved it was the
    configuration (`configuration-changed`). A gate that cannot run *after* a seat worked
    stays the task's: the seat may have broken it.
    """
    return fail_class == GATE_UNAVAILABLE and dispatches == 0
