"""Quarantine: the event, its lesson and its decision land in one store commit.

The lesson write never throws into the quarantine: if building the lesson or its
snapshot fails, the quarantine still completes, without them, and the failure is
logged.

A snapshot is a commit of the state the failure left (the judged tree, or what the
seat left in its workspace) under `refs/failres/snapshots/`. It may travel to a
shared remote, so it never carries a secret-bearing file (`.env*`, keys), and a
changed text file in which the redactor finds a secret is kept redacted.
"""

from __future__ import annotations

import logging
from dataclasses import field
from pathlib import Path
from typing import Any

import pygit2

from lessons.frozen import record
from failres.decisions.records import decision_put, make_decision
from failres.engine.runtime import TaskOutcome
from failres.engine.taxonomy import FIXER_SCOPE_VIOLATION, REPEATED_FAILURE_STOP, ScopeRequest
from failres.journal import event_put, make_event, sequence
from lessons.recall.lesson import lesson_put, make_lesson
from lessons.storage.records import change_of, new_id
from lessons.redaction.redact import is_secret_bearing_path, redact
from lessons.recall.signature import signature as make_signature

log = logging.getLogger("failres.quarantine")
SNAPSHOT_REFS = "refs/failres/snapshots"


@record
class Failure:
    """Why a task stops: its class, a message (first line = what the signature is made of)."""

    fail_class: str
    message: str
    rejected: tuple[str, ...] = ()
    requests: tuple[ScopeRequest, ...] = ()
    snapshot: str | None = field(default=None, compare=False)  # tree of the failing state
    # Who failed (implementer, fixer, patch), where a seat did: a class such as
    # fixer-scope-violation is any seat's, and the record names which one it was.
    seat: str | None = None


@record
class QuarantineInput:
    """What a quarantine needs to know about the run: plain values, so this module never imports the loop."""

    engine: Any  # the run's Engine: its store, repository and own ref moves
    slug: str
    task: str
    files: tuple[str, ...]
    int_head: str
    base: str
    conditions: Any  # ladder.Conditions: the keys stop-loss compares
    base_tree: str | None = None
    objects: Any = None  # the task's TaskObjects: where the failing state's objects are until a snapshot commits them
    configuration: bool = False  # the configuration's failure, not the task's (`ladder.is_configuration_failure`)


def snapshot_ref(slug: str, task: str, lesson_id: str) -> str:
    return f"{SNAPSHOT_REFS}/{slug}/{task}/{lesson_id}"


def take_snapshot(run: QuarantineInput, tree: str, lesson_id: str) -> str:
    """A commit of `tree` (secrets left out) on the task's start, kept reachable under a ref."""
    person = pygit2.Repository(str(Path(run.engine.git_dir)))
    # Built in the task's object directory; what the snapshot commit names is then copied
    # into the person's database, and nothing else of the failing state.
    repo = run.objects.repo() if run.objects is not None else person
    safe = secret_free_tree(repo, tree, run.base_tree)
    from lessons.storage.store import store_signature

    signature = store_signature(person)
    message = redact(f"failres: snapshot of {run.slug}/{run.task} at quarantine\n")
    commit = repo.create_commit(None, signature, signature, message, safe, [pygit2.Oid(hex=run.base)])
    if run.objects is not None:
        run.objects.bring_in(str(commit))
    repo = person
    ref = snapshot_ref(run.slug, run.task, lesson_id)
    # Noted before it is made: another task's tamper check may look in between.
    run.engine.own_moves.note(ref, str(commit))
    repo.create_reference(ref, commit, force=True)
    return str(commit)


def secret_free_tree(repo: pygit2.Repository, tree: str, base_tree: str | None) -> pygit2.Oid:
    """`tree` without secret-bearing files, and with changed text files redacted."""
    index = pygit2.Index()
    index.read_tree(repo[pygit2.Oid(hex=tree)])
    base = repo[pygit2.Oid(hex=base_tree)] if base_tree else None
    for entry in list(index):
        if is_secret_bearing_path(entry.path):
            index.remove(entry.path)
            continue
        if base is not None and _same_entry(base, entry):
            continue  # the person's own committed file, untouched by the seat
        blob = repo[entry.id]
        if not isinstance(blob, pygit2.Blob) or blob.is_binary:
            continue
        text = blob.data.decode("utf-8", "replace")
        cleaned = redact(text)
        if cleaned != text:
            index.add(pygit2.IndexEntry(entry.path, repo.create_blob(cleaned.encode("utf-8")), entry.mode))
    return index.write_tree(repo)


def _same_entry(base: pygit2.Tree, entry: pygit2.IndexEntry) -> bool:
    try:
        return base[entry.path].id == entry.id
    except KeyError:
        return False


def quarantine_task(run: QuarantineInput, failure: Failure) -> TaskOutcome:
    # Redact first, then cut: a secret clipped in half would keep its first characters.
    message = redact(failure.message.strip() or failure.fail_class)
    message = _bounded(message)
    signature = make_signature(failure.fail_class, message)
    lesson_id = new_id()
    puts = []
    lesson = None
    decision_id = None
    stop = failure.fail_class == REPEATED_FAILURE_STOP
    try:
        # A stop-loss stop refuses to repeat a failure that already has its lessons: it
        # is an event, not one more lesson (seven stops of one hopeless task were
        # seven identical lessons, counted and shown as seven outcomes).
        if not stop:
            snapshot = take_snapshot(run, failure.snapshot, lesson_id) if failure.snapshot else None
            lesson = make_lesson(slug=run.slug, task=run.task, fail_class=failure.fail_class, message=message,
                                 files=run.files, int_head=run.int_head, snapshot=snapshot,
                                 snapshotHoldsUserCode=snapshot is not None,
                                 **({"configuration": True} if run.configuration else {}))
            lesson["id"] = lesson_id
            puts.append(lesson_put(lesson))
    except Exception:  # the quarantine must complete whatever happened to its lesson
        log.exception("failres: writing the lesson of %s/%s failed", run.slug, run.task)
        lesson = None
    events = [make_event("quarantined", run.slug, run.task, failClass=failure.fail_class, signature=signature,
                         message=message, intHead=run.int_head, lesson=lesson["id"] if lesson else None,
                         scopeKey=run.conditions.scope_key, bindingsKey=run.conditions.bindings_key,
                         configKey=run.conditions.config_key,
                         **({"seat": failure.seat} if failure.seat else {}),
                         **({"configuration": True} if run.configuration else {}))]
    if failure.fail_class == FIXER_SCOPE_VIOLATION:
        files = list(dict.fromkeys([*failure.rejected, *(r.file for r in failure.requests)]))
        decision = make_decision(slug=run.slug, task=run.task, files=files,
                                 requests=[{"file": r.file, "reason": r.reason} for r in failure.requests],
                                 lesson=lesson["id"] if lesson else None)
        puts.append(decision_put(decision))
        decision_id = decision["id"]
        events.append(make_event("decision-requested", run.slug, run.task, decision=decision["id"], files=files))
    event_puts = [event_put(e) for e in sequence(events)]
    try:
        change = change_of([*puts, *event_puts])
    except Exception:  # a lesson or decision that cannot be encoded must not cost the quarantine
        log.exception("failres: encoding the records of %s/%s failed", run.slug, run.task)
        change = change_of(event_puts)
    run.engine.store.commit(change, f"failres: quarantine {run.slug}/{run.task} ({failure.fail_class})")
    state = "stopped" if stop else "quarantined"
    return TaskOutcome(run.slug, run.task, state, fail_class=failure.fail_class, message=message,
                       decision=decision_id, seat=failure.seat)


# A quarantine message carries the end of the seat's or gate's output; the head (what
# the signature reads) and the last part (where errors usually are) both matter.
_MESSAGE_HEAD = 1000
_MESSAGE_TAIL = 2000


def _bounded(message: str) -> str:
    if len(message) <= _MESSAGE_HEAD + _MESSAGE_TAIL + 100:
        return message
    return message[:_MESSAGE_HEAD] + "\n[...]\n" + message[-_MESSAGE_TAIL:]
