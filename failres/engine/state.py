"""What the journal says about a task: pure functions over its events.

The journal is the only source: a task's state, its quarantine history for
stop-loss, the reasons fed back into its next prompt, and what changed between a
quarantine and a landing are all read from events, never from agent output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from lessons.frozen import record

if TYPE_CHECKING:  # the plan's model (and the config it reads) only where a task is rebuilt
    from failres.engine.plan import Task

STATES = ("pending", "running", "interrupted", "committed", "quarantined", "stopped", "landed")
STOP_CLASS = "repeated-failure-stop"
_MILESTONES = {"task-started", "task-committed", "quarantined", "landed", "interrupted"}


def task_state(events: Sequence[Mapping[str, object]]) -> str:
    """pending, running, interrupted, committed, quarantined, stopped or landed (events oldest first)."""
    state = "pending"
    for event in events:
        kind = event.get("type")
        if kind not in _MILESTONES:
            continue
        if kind == "landed":
            state = "landed"
        elif state == "landed":
            continue  # a landed task stays landed, whatever ran on its branch afterwards
        elif kind == "task-started":
            state = "running"
        elif kind == "interrupted":
            state = "interrupted" if state == "running" else state
        elif kind == "task-committed":
            state = "committed"
        elif kind == "quarantined":
            state = "stopped" if event.get("failClass") == STOP_CLASS else "quarantined"
    return state


def key_of(value: object) -> str:
    """A short stable digest of a condition (a scope, a set of bindings)."""
    import hashlib  # not at import: `status` reads states and never digests one

    raw = json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


def configuration_key(gate_name: str, gate: object | None, workspace: object) -> str:
    """A digest of the configuration that decides a run's outcome besides the code: the task's
    gate (every setting of it: command, env, setup, cwd, keep, timeout ...) and `[workspace]`.

    Recorded with each run and each quarantine, so the stop-loss sees a fixed gate as a new
    experiment and a landing can say the configuration changed. Only a digest is kept: a
    gate's env may hold a token.
    """
    return key_of({"gate": gate_name, "settings": _settings(gate), "workspace": _settings(workspace)})


def _settings(section: object | None) -> dict | None:
    """A configuration section's settings as plain JSON values (mappings sorted, tuples as lists)."""
    from collections.abc import Mapping as AnyMapping
    from dataclasses import fields, is_dataclass

    if section is None or not is_dataclass(section):
        return None

    def plain(value: object) -> object:
        if isinstance(value, AnyMapping):
            return {str(k): plain(v) for k, v in sorted(value.items())}
        if isinstance(value, (tuple, list)):
            return [plain(v) for v in value]
        return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)

    return {f.name: plain(getattr(section, f.name)) for f in fields(section) if f.compare}


@record
class QuarantineFacts:
    signature: str
    int_head: str
    scope_key: str
    bindings_key: str
    fail_class: str
    message: str
    config_key: str = ""
    configuration: bool = False  # the configuration's failure, not the task's (`ladder.is_configuration_failure`)


def quarantines(events: Sequence[Mapping[str, object]]) -> list[QuarantineFacts]:
    """The task's quarantines, oldest first, with the conditions they ran under."""
    # Imported here: signatures bring redaction's patterns, which `status` never needs.
    from lessons.recall.signature import current_form

    out = []
    for event in events:
        if event.get("type") != "quarantined":
            continue
        out.append(QuarantineFacts(
            # As this version writes it: the stop-loss compares it with a fresh one.
            signature=current_form(str(event.get("signature", ""))),
            int_head=str(event.get("intHead", "")),
            scope_key=str(event.get("scopeKey", "")),
            bindings_key=str(event.get("bindingsKey", "")),
            fail_class=str(event.get("failClass", "")),
            message=str(event.get("message", "")),
            config_key=str(event.get("configKey", "")),
            configuration=event.get("configuration") is True,
        ))
    return out


def task_quarantines(events: Sequence[Mapping[str, object]]) -> list[QuarantineFacts]:
    """The quarantines that are the task's own: no stop-loss stop, no configuration failure."""
    return [q for q in quarantines(events) if q.fail_class != STOP_CLASS and not q.configuration]


def prior_failure_reasons(events: Sequence[Mapping[str, object]], limit: int = 3) -> tuple[str, ...]:
    """The last `limit` quarantine reasons, newest first, for the next prompt.

    A configuration failure is not an earlier attempt at the task (no seat ran): shown as one,
    a fixed gate command read to the implementer as "earlier attempts at this task failed".
    """
    found = task_quarantines(events)
    reasons = []
    for q in reversed(found[-limit:]):
        first = q.message.strip().splitlines()[0] if q.message.strip() else ""
        reasons.append(f"{q.fail_class}: {first[:300]}")
    return tuple(reasons)


def last_event(events: Sequence[Mapping[str, object]], kind: str) -> Mapping[str, object] | None:
    for event in reversed(events):
        if event.get("type") == kind:
            return event
    return None


def count_dispatches_saved(events: Sequence[Mapping[str, object]]) -> int:
    """Stop-loss events: each one is a run that dispatched nothing."""
    return sum(1 for e in events if e.get("type") == "stop-loss")


def task_commits(events: Sequence[Mapping[str, object]]) -> set[str]:
    """Every commit the journal says this task's branch was put at: starts and task commits."""
    found = set()
    for event in events:
        if event.get("type") == "task-started" and event.get("intHead"):
            found.add(str(event["intHead"]))
        elif event.get("type") == "task-committed" and event.get("commit"):
            found.add(str(event["commit"]))
    return found


def last_commit(events: Sequence[Mapping[str, object]]) -> str | None:
    committed = last_event(events, "task-committed")
    return str(committed["commit"]) if committed and committed.get("commit") else None


def recorded_task(events: Sequence[Mapping[str, object]], task_id: str) -> Task | None:
    """The task as its last run recorded it (`task-started` keeps the definition it ran with)."""
    started = last_event(events, "task-started")
    if started is None or not isinstance(started.get("definition"), dict):
        return None
    d = started["definition"]
    from failres.engine.plan import Task

    return Task(id=task_id, title=str(d.get("title", task_id)), prompt=str(d.get("prompt", "")),
                files=tuple(d.get("files", ())), gate=d.get("gate"))
