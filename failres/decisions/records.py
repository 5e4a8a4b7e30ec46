"""Decisions: questions failres cannot answer alone, asked of a person.

A `fixer-scope-violation` quarantine raises a scope decision naming the rejected
files and any `SCOPE-REQUEST:` the seat printed. Only an answer of the exact shape
`{"scopeFiles": [paths]}` widens the task's scope; every other shape is recorded
and widens nothing (fail closed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from lessons.storage.records import (
    Put,
    amendment_put,
    make_amendment,
    new_id,
    now_ts,
    read_collection,
    read_record,
    record_put,
)
from lessons.storage.store import Store

COLLECTION = "decisions"


def make_decision(*, slug: str, task: str, files: Sequence[str], requests: Sequence[Mapping[str, str]],
                  lesson: str | None = None, ts: str | None = None) -> dict:
    return {
        "id": new_id(),
        "ts": ts or now_ts(),
        "slug": slug,
        "task": task,
        "kind": "scope",
        "files": sorted(set(files)),
        "requests": [{"file": r["file"], "reason": r.get("reason", "")} for r in requests],
        "status": "open",
        "answer": None,
        "lesson": lesson,
    }


def decision_put(decision: Mapping[str, object]) -> Put:
    return record_put(COLLECTION, decision)


def answer_put(decision_id: str, answer: object, answered_by: str, ts: str | None = None) -> Put:
    amend = make_amendment(decision_id, {"status": "answered", "answer": answer, "answered_at": ts or now_ts(),
                                         "answered_by": answered_by}, ts=ts)
    return amendment_put(COLLECTION, decision_id, amend)


# A decision waits for a person while it is "open" or "proposed" (a resolver proposed an
# answer that a person has not yet taken).
WAITING = ("open", "proposed")


def proposal_put(decision_id: str, answer: object, proposed_by: str, ts: str | None = None) -> Put:
    """A resolver's proposed answer: recorded beside the decision, widening nothing until a person accepts it."""
    stamp = ts or now_ts()
    amend = make_amendment(decision_id, {"status": "proposed",
                                         "proposal": {"answer": answer, "by": proposed_by, "at": stamp}}, ts=stamp)
    return amendment_put(COLLECTION, decision_id, amend)


def scope_files_of(answer: object) -> tuple[str, ...]:
    """The paths an answer widens the scope by: only `{"scopeFiles": [str, ...]}` counts."""
    if not isinstance(answer, Mapping) or set(answer) != {"scopeFiles"}:
        return ()
    files = answer["scopeFiles"]
    if not isinstance(files, list) or not files or not all(isinstance(f, str) and f.strip() for f in files):
        return ()
    return tuple(f.strip() for f in files)


def read_decisions(store: Store) -> tuple[list[dict], list[str]]:
    """All decisions, oldest first, and the files that could not be read."""
    result = read_collection(store, COLLECTION)
    records = sorted(result.records, key=lambda d: (str(d.get("ts", "")), str(d.get("id", ""))))
    return records, [str(p) for p in result.problems]


def widened_files(decisions: Iterable[Mapping[str, object]], slug: str, task: str) -> tuple[str, ...]:
    """Every path answered decisions of this task add to its scope, in answer order."""
    out: list[str] = []
    for decision in decisions:
        if decision.get("slug") != slug or decision.get("task") != task or decision.get("status") != "answered":
            continue
        for path in scope_files_of(decision.get("answer")):
            if path not in out:
                out.append(path)
    return tuple(out)


def task_decisions_from_store(store: Store, slug: str, task: str) -> list[dict]:
    """Every decision of one task, each read from the store itself, oldest first.

    What widens a task's scope must come from store commits. The SQLite index only
    says which decisions to look at: each one is then read (with its answer) from
    the store tip, and kept only when the record itself names this task. A forged
    or stale index row can hide a decision (widening less) but never add an answer.
    """
    from lessons.recall.retrieval import task_decisions

    found = []
    for candidate in task_decisions(store, slug, task):
        decision_id = str(candidate.get("id", ""))
        try:
            record = read_record(store, COLLECTION, decision_id)
        except Exception:  # noqa: BLE001 - an unreadable record widens nothing
            continue
        if record is not None and record.get("slug") == slug and record.get("task") == task:
            found.append(record)
    return sorted(found, key=lambda d: (str(d.get("ts", "")), str(d.get("id", ""))))
