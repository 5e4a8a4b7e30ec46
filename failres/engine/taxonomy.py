"""What went wrong, as a failure class, and the rung each class sits on.

Pure functions over plain data: the loop observes a seat, a gate, the scope guard or a
patch, and asks `classify` what kind of failure that was. The rung table is the policy a
person reads with `git failres policy show`; lessons never edit it, because a learned rule
that could move a class to a gentler rung could learn its way around a gate.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

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


@dataclass(frozen=True)
class ScopeRequest:
    """A seat's `SCOPE-REQUEST:` line: a file outside its scope and why it needs it."""

    file: str
    reason: str


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class UserRule:
    """A user-defined class: `match` (a regex) searched in the output of stage `on`."""

    cls: str
    match: str
    on: Literal["seat", "gate", "any"]
    action: str


@dataclass(frozen=True)
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
        files = ", ".join(request.file for request in obs.scope_requests)
        return f"{seat} requested files outside its scope: {files}"
    if obs.scope_rejected:
        return f"{seat} touched files outside its scope: {', '.join(obs.scope_rejected)}"
    return f"{seat} was stopped by the scope guard"


# ─── SCOPE-REQUEST lines ──────────────────────────────────────────────────────

SCOPE_REQUEST_MARKER = "SCOPE-REQUEST:"
MAX_SCOPE_REQUESTS = 20
# A request is evidence for a person to read, not a channel for pasting whole files into
# the decision record.
_MAX_FILE_CHARS = 1024
_MAX_REASON_CHARS = 1000
_QUOTES = "\"'`"
_GLUED_SEPARATORS = ("\u2014", "\u2013")  # em dash, en dash: often written without spaces
_LEADING_SEPARATOR = re.compile(r"^(?:\u2014|\u2013|--|-(?=\s)|:)\s*")


def parse_scope_requests(text: str) -> tuple[ScopeRequest, ...]:
    """Every `SCOPE-REQUEST: <file> — <reason>` line in `text`, first per file, at most 20.

    Seats are free text generators, so this accepts the separators people actually type
    (em dash, en dash, ` - `, `--`, `:`), quoted or backticked paths, and markdown
    emphasis around the marker; it never raises. Lines naming no file, and the
    `<file>` placeholder of the prompt echoed back, are ignored.
    """
    requests: list[ScopeRequest] = []
    seen: set[str] = set()
    for line in text.splitlines():
        request = _parse_request_line(line)
        if request is None or request.file in seen:
            continue
        seen.add(request.file)
        requests.append(request)
        if len(requests) == MAX_SCOPE_REQUESTS:
            break
    return tuple(requests)


def _parse_request_line(line: str) -> ScopeRequest | None:
    _, marker, rest = line.partition(SCOPE_REQUEST_MARKER)
    if not marker:
        return None
    if rest.startswith("*"):
        # "**SCOPE-REQUEST:** file": markdown bold glued to the marker. Only glued asterisks
        # go; a path may itself begin with "_" (`__init__.py`) or be a glob after a space.
        rest = rest.lstrip("*")
    rest = rest.strip()
    file, remainder = _split_file(rest)
    file = file.strip().strip(_QUOTES).strip().rstrip(":,;")
    if not file or len(file) > _MAX_FILE_CHARS or _is_placeholder(file):
        return None
    if file in ("-", "--"):
        return None  # a separator with no file before it
    if not requestable(file):
        return None
    reason = _LEADING_SEPARATOR.sub("", remainder.strip()).strip()
    reason = visible(reason.rstrip("*").strip()[:_MAX_REASON_CHARS])
    return ScopeRequest(file=file, reason=reason)


def requestable(file: str) -> bool:
    """Whether a requested path could be a task's file (pure): inside the repository, outside
    any git dir, and every character one a person sees (no terminal escape hides a part of it)."""
    if any(not (char.isprintable() or char == " ") or char == "\ufffd" for char in file):
        return False  # U+FFFD: a control character the output reader already neutralised
    if file.startswith(("/", "~")) or "\\" in file:
        return False
    parts = [part for part in file.split("/") if part not in ("", ".")]
    return bool(parts) and ".." not in parts and not any(part.lower() == ".git" for part in parts)


def visible(text: str) -> str:
    """`text` with every control character shown as an escape (`\\x1b`), so a person reads what was sent (pure)."""
    return "".join(char if char.isprintable() or char == " " else char.encode("unicode_escape").decode("ascii")
                   for char in text)


def _split_file(rest: str) -> tuple[str, str]:
    """(file, what follows it); a path with spaces must be quoted to survive."""
    if rest[:1] and rest[0] in _QUOTES:
        closing = rest.find(rest[0], 1)
        if closing == -1:
            return rest[1:], ""
        return rest[1:closing], rest[closing + 1 :]
    parts = rest.split(maxsplit=1)
    token = parts[0] if parts else ""
    remainder = parts[1] if len(parts) > 1 else ""
    for separator in _GLUED_SEPARATORS:
        if separator in token:
            token, _, glued = token.partition(separator)
            remainder = f"{glued} {remainder}"
    return token, remainder


def _is_placeholder(file: str) -> bool:
    return file.startswith("<") and file.endswith(">")


# ─── The rung table ───────────────────────────────────────────────────────────

_RUNG_OF_ACTION = {
    Action.PROBE_THEN_RETRY: 1,
    Action.CONSTRAINED_RETRY: 2,
    Action.RETRY_FIXER: 2,
    Action.QUARANTINE: 3,
    Action.ESCALATE: 3,
    Action.STOP: 4,
}


@dataclass(frozen=True)
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
