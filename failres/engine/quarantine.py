"""Quarantine: the event, its lesson and its decision land in one store commit.

The lesson write never throws into the quarantine: if building the
lesson or its snapshot fails, the quarantine still completes, without them, and
the failure is logged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from failres import gitops
from failres.decisions import decision_put, make_decision
from failres.engine.runtime import TaskOutcome
from failres.engine.taxonomy import FIXER_SCOPE_VIOLATION, ScopeRequest
from failres.journal import event_put, make_event, sequence
from lessons.lesson import lesson_put, make_lesson
from lessons.records import change_of, new_id
from lessons.redact import redact
from lessons.signature import signature as make_signature

if TYPE_CHECKING:
    from failres.engine.loop import TaskRun

log = logging.getLogger("failres.quarantine")
SNAPSHOT_REFS = "refs/failres/snapshots"


@dataclass(frozen=True)
class Failure:
    """Why a task stops: its class, a message (first line = what the signature is made of)."""

    fail_class: str
    message: str
    rejected: tuple[str, ...] = ()
    requests: tuple[ScopeRequest, ...] = ()
    restore: gitops.Baseline | None = field(default=None, compare=False)


def snapshot_ref(slug: str, task: str, lesson_id: str) -> str:
    return f"{SNAPSHOT_REFS}/{slug}/{task}/{lesson_id}"


def take_snapshot(run: TaskRun, lesson_id: str) -> str | None:
    """A commit of the task worktree as the failure left it, kept reachable under a ref."""
    if run.worktree is None:
        return None
    commit = gitops.snapshot_commit(run.worktree, f"failres: snapshot of {run.slug}/{run.task.id} at quarantine",
                                    parent=run.base or run.int_head)
    run.engine.repo.create_reference(snapshot_ref(run.slug, run.task.id, lesson_id), commit, force=True)
    return commit


def quarantine_task(run: TaskRun, failure: Failure) -> TaskOutcome:
    message = redact(failure.message.strip() or failure.fail_class)
    signature = make_signature(failure.fail_class, message)
    lesson_id = new_id()
    puts = []
    lesson = None
    decision_id = None
    try:
        # A stop-loss stop refuses to repeat a failure that already has its lessons: it
        # is an event, not one more lesson (seven stops of one hopeless task were
        # seven identical lessons, counted and shown as seven outcomes).
        if failure.fail_class != "repeated-failure-stop":
            snapshot = take_snapshot(run, lesson_id)
            lesson = make_lesson(slug=run.slug, task=run.task.id, fail_class=failure.fail_class, message=message,
                                 files=run.task.files, int_head=run.int_head, snapshot=snapshot,
                                 snapshotHoldsUserCode=snapshot is not None)
            lesson["id"] = lesson_id
            puts.append(lesson_put(lesson))
    except Exception:  # the quarantine must complete whatever happened to its lesson
        log.exception("failres: writing the lesson of %s/%s failed", run.slug, run.task.id)
        lesson = None
    events = [make_event("quarantined", run.slug, run.task.id, failClass=failure.fail_class, signature=signature,
                         message=message, intHead=run.int_head, lesson=lesson["id"] if lesson else None,
                         scopeKey=run.conditions.scope_key, bindingsKey=run.conditions.bindings_key)]
    if failure.fail_class == FIXER_SCOPE_VIOLATION:
        files = list(dict.fromkeys([*failure.rejected, *(r.file for r in failure.requests)]))
        decision = make_decision(slug=run.slug, task=run.task.id, files=files,
                                 requests=[{"file": r.file, "reason": r.reason} for r in failure.requests],
                                 lesson=lesson["id"] if lesson else None)
        puts.append(decision_put(decision))
        decision_id = decision["id"]
        events.append(make_event("decision-requested", run.slug, run.task.id, decision=decision["id"], files=files))
    event_puts = [event_put(e) for e in sequence(events)]
    try:
        change = change_of([*puts, *event_puts])
    except Exception:  # a lesson or decision that cannot be encoded must not cost the quarantine
        log.exception("failres: encoding the records of %s/%s failed", run.slug, run.task.id)
        change = change_of(event_puts)
    run.engine.store.commit(change, f"failres: quarantine {run.slug}/{run.task.id} ({failure.fail_class})")
    state = "stopped" if failure.fail_class == "repeated-failure-stop" else "quarantined"
    return TaskOutcome(run.slug, run.task.id, state, fail_class=failure.fail_class, message=message,
                       decision=decision_id)
