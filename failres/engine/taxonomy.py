"""What went wrong, as a failure class, and the rung each class sits on.

Pure functions over plain data: the loop observes a seat, a gate, the scope guard or a
patch, and asks `classify` what kind of failure that was. The rung table is the policy a
person reads with `git failres policy show`; lessons never edit it, because a learned rule
that could move a class to a gentler rung could learn its way around a gate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Literal

from lessons.frozen import record
from failres.engine.scope_requests import (  # noqa: F401 - the loop reads requests from here too
    MAX_SCOPE_REQUESTS, SCOPE_REQUEST_MARKER, ScopeRequest, parse_scope_requests, requestable, visible)

FIXER_SCOPE_VIOLATION = "fixer-scope-violation"
GATE_NOT_GREEN_AFTER_FIXER = "gate-not-green-after-fixer"
WRAPPER_ENGINE_DOWN = "wrapper-engine-down"
REPEATED_FAILURE_STOP = "repeated-failure-stop"
SEAT_TIMEOUT = "seat-timeout"
GATE_TIMEOUT = "gate-timeout"
SEAT_CRASHED = "seat-crashed"
PATCH_DOES_NOT_APPLY = "patch-does-not-apply"
SEAT_TAMPER = "seat-tamper"
SEAT_DENIED = "seat-denied"
GATE_UNAVAILABLE = "gate-unavailable"
WORKSPACE_UNRESTORABLE = "workspace-unrestorable"
PUBLISH_REFUSED = "publish-refused"
INCLUDE_REFUSED = "include-refused"
UNKNOWN = "unknown"

BUILTIN_CLASSES = (
    FIXER_SCOPE_VIOLATION,
    GATE_NOT_GREEN_AFTER_FIXER,
    WRAPPER_ENGINE_DOWN,
    REPEATED_FAILURE_STOP,
    SEAT_TIMEOUT,
    GATE_TIMEOUT,
    SEAT_CRASHED,
    PATCH_DOES_NOT_APPLY,
    SEAT_TAMPER,
    SEAT_DENIED,
    GATE_UNAVAILABLE,
    WORKSPACE_UNRESTORABLE,
    PUBLISH_REFUSED,
    INCLUDE_REFUSED,
    UNKNOWN,
)


class Action(StrEnum):
    """What the loop does about a failure; the resolver picks one, the rung table lists them."""

    PROBE_THEN_RETRY = "probe-then-retry"
    CONSTRAINED_RETRY = "constrained-retry"
    RETRY_FIXER = "retry-fixer"
    QUARANTINE = "quarantine"
    ESCALATE = "escalate"
    STOP = "stop"


# Actions a user rule may give its class. Constrained retry needs rejected files to name
# and stop is the stop-loss's alone, so neither makes sense for a class matched by text.
USER_RULE_ACTIONS = (Action.PROBE_THEN_RETRY, Action.RETRY_FIXER, Action.QUARANTINE, Action.ESCALATE)

Stage = Literal["seat", "gate", "scope", "patch"]
SeatName = Literal["implementer", "fixer"]


@record
class Observation:
    """One step's outcome as the loop saw it; `output` is the step's printable text."""

    stage: Stage
    seat: SeatName | None
    exit_code: int | None
    timed_out: bool
    not_found: bool
    output: str
    scope_rejected: tuple[str, ...] = ()
    scope_requests: tuple[ScopeRequest, ...] = ()


@record
class UserRule:
    """A user-defined class: `match` (a regex) searched in the output of stage `on`."""

    cls: str
    match: str
    on: Literal["seat", "gate", "any"]
    action: str


@record
class Classification:
    """The failure class of an observation and a one-line reason a person can read."""

    fail_class: str
    reason: str


def classify(
    obs: Observation,
    *,
    engine_down_patterns: Sequence[str],
    engine_down_exit_codes: Sequence[int],
    user_rules: Sequence[UserRule] = (),
) -> Classification | None:
    """The failure class of `obs`, or None when it is not a failure at all.

    A seat that exits 0 is not judged here: whether its work is good is the gate's call.
    User rules are tried first, in order, so a team can name failures it knows; they never
    turn a success into a failure.
    """
    if not _is_failure(obs):
        return None
    for rule in user_rules:
        if _rule_applies(rule, obs):
            return Classification(rule.cls, f"output matches user rule /{rule.match}/")
    return _builtin_class(obs, engine_down_patterns, engine_down_exit_codes)


def _is_failure(obs: Observation) -> bool:
    if obs.stage == "scope":
        # The loop builds a scope observation only when the guard rejected something or
        # the seat asked for more scope; either way the task cannot proceed as is.
        return True
    return obs.timed_out or obs.not_found or obs.exit_code != 0


def _rule_applies(rule: UserRule, obs: Observation) -> bool:
    if rule.on != "any" and rule.on != obs.stage:
        return False
    return _searches(rule.match, obs.output)


def _searches(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        # Config validation refuses bad patterns before a run; one that slips through
        # matches nothing rather than breaking the failure path it is meant to refine.
        return False


def _builtin_class(
    obs: Observation, engine_down_patterns: Sequence[str], engine_down_exit_codes: Sequence[int]
) -> Classification:
    seat = obs.seat or "seat"
    if obs.stage == "seat":
        engine_down = _engine_down_reason(obs, engine_down_patterns, engine_down_exit_codes)
        if engine_down is not None:
            return Classification(WRAPPER_ENGINE_DOWN, engine_down)
        if obs.timed_out:
            return Classification(SEAT_TIMEOUT, f"{seat} did not finish before its timeout")
        return Classification(SEAT_CRASHED, f"{seat} exited with code {obs.exit_code}")
    if obs.stage == "gate":
        if obs.timed_out:
            return Classification(GATE_TIMEOUT, "gate did not finish before its timeout")
        if obs.not_found:
            # A gate that cannot even start is a broken setup, not red code: a fixer
            # cannot repair it, so it must not be sent to try.
            return Classification(UNKNOWN, "gate command could not be started")
        return Classification(GATE_NOT_GREEN_AFTER_FIXER, f"gate exited with code {obs.exit_code}")
    if obs.stage == "scope":
        return Classification(FIXER_SCOPE_VIOLATION, _scope_reason(obs))
    if obs.stage == "patch":
        return Classification(PATCH_DOES_NOT_APPLY, "patch does not apply to the worktree")
    return Classification(UNKNOWN, f"unrecognised stage {obs.stage!r}")


def _engine_down_reason(
    obs: Observation, engine_down_patterns: Sequence[str], engine_down_exit_codes: Sequence[int]
) -> str | None:
    """Why the seat's engine (agent, wrapper, API) looks down, or None.

    Checked before the timeout: an agent whose API is down often retries until it is
    killed, and only its output tells the two apart. Probing and retrying is the one
    repair that historically works for a down engine, and it is bounded.
    """
    seat = obs.seat or "seat"
    if obs.not_found:
        return f"{seat} command could not be started"
    if obs.exit_code is not None and obs.exit_code in engine_down_exit_codes:
        return f"{seat} exited with code {obs.exit_code}, an engine-down code"
    for pattern in engine_down_patterns:
        if _searches(pattern, obs.output):
            return f"{seat} output matches engine-down pattern /{pattern}/"
    return None


def _scope_reason(obs: Observation) -> str:
    seat = obs.seat or "seat"
    if obs.scope_requests:
        files = some_paths(request.file for request in obs.scope_requests)
        return f"{seat} requested files outside its scope: {files}"
    if obs.scope_rejected:
        return f"{seat} touched files outside its scope: {some_paths(obs.scope_rejected)}"
    return f"{seat} was stopped by the scope guard"


def some_paths(paths: Iterable[str], shown: int = 5) -> str:
    """The first few paths and how many more: a seat that touched 949 files made a one-line
    reason of 36,000 characters. The full list stays in the `scope-violation` event."""
    listed = list(paths)
    if len(listed) <= shown + 1:
        return ", ".join(listed)
    return ", ".join(listed[:shown]) + f" … and {len(listed) - shown} more"


# ─── The rung table ───────────────────────────────────────────────────────────

_RUNG_OF_ACTION = {
    Action.PROBE_THEN_RETRY: 1,
    Action.CONSTRAINED_RETRY: 2,
    Action.RETRY_FIXER: 2,
    Action.QUARANTINE: 3,
    Action.ESCALATE: 3,
    Action.STOP: 4,
}


@record
class Rung:
    """One row of the policy: a class, the rung it sits on, and what the loop does there."""

    fail_class: str
    rung: int
    action: str
    description: str
    source: Literal["built-in", "user"] = "built-in"


_BUILTIN_RUNGS = (
    Rung(
        WRAPPER_ENGINE_DOWN, 1, Action.PROBE_THEN_RETRY,
        "probe the binding's health command (bounded attempts, with backoff); "
        "healthy: dispatch the seat again; still down: quarantine",
    ),
    Rung(
        FIXER_SCOPE_VIOLATION, 2, Action.CONSTRAINED_RETRY,
        "first violation: restore the worktree and dispatch the same seat once more, "
        "told which files it may not touch",
    ),
    Rung(
        GATE_NOT_GREEN_AFTER_FIXER, 2, Action.RETRY_FIXER,
        "red gate while the fixer has attempts left: dispatch the fixer",
    ),
    Rung(
        GATE_NOT_GREEN_AFTER_FIXER, 3, Action.QUARANTINE,
        "red gate with no fixer or no attempts left: quarantine",
    ),
    Rung(SEAT_TIMEOUT, 3, Action.QUARANTINE, "the seat ran past its timeout: quarantine"),
    Rung(GATE_TIMEOUT, 3, Action.QUARANTINE, "the gate ran past its timeout: quarantine"),
    Rung(SEAT_CRASHED, 3, Action.QUARANTINE, "the seat exited non-zero: quarantine"),
    Rung(PATCH_DOES_NOT_APPLY, 3, Action.QUARANTINE, "the patch does not apply: quarantine"),
    Rung(
        SEAT_TAMPER, 3, Action.QUARANTINE,
        "the seat changed something outside its workspace (a ref, the config, a hook, the checkout): "
        "undo it, keep what the seat left, quarantine; never retried blind",
    ),
    Rung(
        SEAT_DENIED, 3, Action.QUARANTINE,
        "the agent's own permissions refused the calls it needed and it changed nothing: quarantine "
        "(widen the binding's allowed tools)",
    ),
    Rung(
        GATE_UNAVAILABLE, 3, Action.ESCALATE,
        "the gate's program cannot run (missing, not executable, its setup failed): a configuration "
        "error; no fixer is dispatched",
    ),
    Rung(
        WORKSPACE_UNRESTORABLE, 3, Action.ESCALATE,
        "the task's workspace could not be put back after a seat (files it cannot remove): quarantine",
    ),
    Rung(
        PUBLISH_REFUSED, 3, Action.QUARANTINE,
        "the remote refused the task's branch the same way twice (a pre-receive hook, a protected branch): "
        "quarantine with the remote's words, the work kept in the snapshot; the other tasks go on",
    ),
    Rung(
        INCLUDE_REFUSED, 3, Action.QUARANTINE,
        "a file `[workspace] include` names could not be put in the workspace (a directory or a link "
        "stands where it goes): the gate would run without it; quarantine, never skipped in silence",
    ),
    Rung(
        FIXER_SCOPE_VIOLATION, 3, Action.ESCALATE,
        "violation after the constrained retry, or a SCOPE-REQUEST: quarantine and "
        "raise a scope decision for a person",
    ),
    Rung(UNKNOWN, 3, Action.ESCALATE, "no known class: quarantine and ask a person"),
    Rung(
        REPEATED_FAILURE_STOP, 4, Action.STOP,
        "identical quarantines on unchanged conditions reached the stop-loss threshold: "
        "do not run the task again until something changes",
    ),
)


def rung_table(user_rules: Sequence[UserRule] = ()) -> tuple[Rung, ...]:
    """The built-in rungs, then one row per user class, in the order the rules are written.

    A user rule naming a built-in class is left out: configuration validation refuses it,
    and if one slipped through it still must not move a built-in class to another rung.
    """
    rows = list(_BUILTIN_RUNGS)
    listed = set(BUILTIN_CLASSES)
    for rule in user_rules:
        if rule.cls in listed:
            continue
        listed.add(rule.cls)
        action = user_rule_action(rule)
        rows.append(
            Rung(
                rule.cls, _RUNG_OF_ACTION[action], action,
                f"user rule: {rule.on} output matches /{rule.match}/", source="user",
            )
        )
    return tuple(rows)


def user_rule_action(rule: UserRule) -> Action:
    """The action a user rule asks for; one outside USER_RULE_ACTIONS escalates (fail closed)."""
    if rule.action in USER_RULE_ACTIONS:
        return Action(rule.action)
    return Action.ESCALATE


def render_rung_table(rows: Sequence[Rung]) -> list[dict[str, object]]:
    """The rung table as JSON-ready rows for `git failres policy show`."""
    return [
        {
            "failClass": row.fail_class,
            "rung": row.rung,
            "action": str(row.action),
            "description": row.description,
            "source": row.source,
        }
        for row in rows
    ]
