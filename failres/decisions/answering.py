"""Answering a decision: check the answer, then record it with its journal event.

Any JSON answer is recorded — a person's reasoning is worth keeping whatever its
shape — but only `{"scopeFiles": [paths]}` widens the task's scope, and only
with paths inside the repository and outside `scope.protected`. A refused answer
writes nothing at all. The answer and its `decision-answered` event land in one
store commit, so the journal (which labelling reads) and the decision never
disagree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

import pygit2

from failres.decisions.records import COLLECTION, WAITING, answer_put, proposal_put, scope_files_of
from failres.gitops.scope import matches_any
from failres.errors import UsageError
from failres.journal import event_put, make_event, sequence
from lessons.errors import NotFound
from lessons.jsontext import UnreadableJson
from lessons.jsontext import loads as loads_json
from lessons.storage.records import change_of, now_ts, read_record, resolve_id
from lessons.storage.store import Change, Store


@dataclass(frozen=True)
class AnswerResult:
    """The decision as it reads after the answer, and the paths the answer widens the scope by."""

    decision: dict
    widened: tuple[str, ...]
    store_commit: str


def answer_from_arguments(scope_files: Sequence[str], answer_json: str | None) -> object:
    """The answer a person gave on the command line: `--scope-files F...` or `--answer-json J`."""
    if scope_files and answer_json is not None:
        msg = "give either --scope-files or --answer-json, not both"
        raise UsageError(msg)
    if answer_json is not None:
        try:
            return loads_json(answer_json)
        except json.JSONDecodeError as exc:
            msg = f"--answer-json is not valid JSON: {exc.msg} at column {exc.colno}"
            raise UsageError(msg, hint='e.g. --answer-json \'{"scopeFiles": ["src/a.py"]}\'') from None
        except UnreadableJson as exc:
            msg = f"--answer-json cannot be recorded: {exc}"
            raise UsageError(msg, hint='e.g. --answer-json \'{"scopeFiles": ["src/a.py"]}\'') from None
    if not scope_files:
        msg = "no answer given"
        raise UsageError(msg, hint="use --scope-files PATH... or --answer-json JSON")
    return {"scopeFiles": list(scope_files)}


def widening_problem(paths: Sequence[str], protected: Sequence[str]) -> str | None:
    """Why these scope paths may not be granted, or None (pure)."""
    for path in paths:
        parts = PurePosixPath(path).parts
        if not path or "\0" in path:
            return f'"{path}" is not a path (empty, or holding a NUL byte)'
        if path.startswith("/") or ".." in parts:
            return f'"{path}" is not a path inside the repository (relative to its top)'
        if matches_any(path, protected):
            return f'"{path}" is protected by scope.protected; no decision may widen a scope into it'
    return None


def check_answer(answer: object, protected: Sequence[str]) -> tuple[str, ...]:
    """The paths `answer` widens by (empty for any other shape); UsageError for a forbidden path.

    A list of scope files that holds an empty path (an unset shell variable, say) is
    refused rather than recorded as an answer that widens nothing.
    """
    widened = scope_files_of(answer)
    if not widened and isinstance(answer, Mapping) and set(answer) == {"scopeFiles"}:
        files = answer["scopeFiles"]
        if isinstance(files, list) and any(isinstance(f, str) and not f.strip() for f in files):
            widened = tuple(f.strip() for f in files if isinstance(f, str))
    problem = widening_problem(widened, protected)
    if problem is not None:
        raise UsageError(problem, hint="nothing was recorded; answer again without that path")
    return widened


def _decision(store: Store, decision_id: str, tip: pygit2.Commit | None = None) -> dict:
    """The decision as of `tip` (default: the store's tip); NotFound when there is none."""
    decision = read_record(store, COLLECTION, decision_id, commit=tip)
    if decision is None:
        msg = f"no decision {decision_id}"
        raise NotFound(msg)
    return decision


def answer_decision(store: Store, protected: Sequence[str], prefix: str, answer: object, *, answered_by: str,
                    force: bool = False, accepted_proposal: str | None = None) -> AnswerResult:
    """Record `answer` to the decision whose id starts with `prefix`, with its journal event, in one commit."""
    widened = check_answer(answer, protected)
    decision_id = resolve_id(store, COLLECTION, prefix)
    ts = now_ts()

    def change(tip: pygit2.Commit | None) -> Change:
        decision = _decision(store, decision_id, tip)
        if decision.get("status") == "answered" and not force:
            msg = f"decision {decision_id} is answered already ({json.dumps(decision.get('answer'))})"
            raise UsageError(msg, hint="add --force to replace the answer; the earlier one stays in the history")
        extra = {"acceptedProposal": accepted_proposal} if accepted_proposal else {}
        event = make_event("decision-answered", str(decision["slug"]), str(decision["task"]), ts=ts,
                           decision=decision_id, answer=answer, answeredBy=answered_by, widens=list(widened),
                           **extra)
        return change_of([answer_put(decision_id, answer, answered_by, ts), *map(event_put, sequence([event]))])

    short = decision_id[:8]
    oid = store.commit(change, f"failres: answer decision {short} ({'widens scope' if widened else 'widens nothing'})")
    after = read_record(store, COLLECTION, decision_id) or {}
    return AnswerResult(after, widened, str(oid))


def accept_proposal(store: Store, protected: Sequence[str], prefix: str, *, answered_by: str) -> AnswerResult:
    """Record the resolver's proposal of a decision as the person's own answer."""
    decision_id = resolve_id(store, COLLECTION, prefix)
    decision = _decision(store, decision_id)
    proposal = decision.get("proposal")
    if decision.get("status") != "proposed" or not isinstance(proposal, Mapping) or "answer" not in proposal:
        status = decision.get("status")
        msg = f"decision {decision_id[:8]} has no proposal waiting (it is {status})"
        hint = "`git failres decisions propose ID` asks the resolver; or answer with --scope-files / --answer-json"
        raise UsageError(msg, hint=hint)
    return answer_decision(store, protected, decision_id, proposal["answer"], answered_by=answered_by,
                           accepted_proposal=str(proposal.get("by", "resolver")))


def propose_decision(store: Store, protected: Sequence[str], decision_id: str, answer: object, *,
                     proposed_by: str) -> None:
    """Record a resolver's answer as a proposal (and its journal event) in one commit; nothing widens."""
    check_answer(answer, protected)
    ts = now_ts()

    def change(tip: pygit2.Commit | None) -> Change:
        decision = _decision(store, decision_id, tip)
        if decision.get("status") not in WAITING:
            msg = f"decision {decision_id[:8]} is answered already"
            raise UsageError(msg)
        event = make_event("decision-proposed", str(decision["slug"]), str(decision["task"]), ts=ts,
                           decision=decision_id, proposal={"answer": answer, "by": proposed_by})
        return change_of([proposal_put(decision_id, answer, proposed_by, ts), *map(event_put, sequence([event]))])

    store.commit(change, f"failres: proposal for decision {decision_id[:8]} by {proposed_by}")


def decision_document(decision: Mapping[str, object]) -> dict:
    """A decision as `decisions --json` prints it: the contract's fields, and who answered when."""
    return {
        "id": decision.get("id"),
        "ts": decision.get("ts"),
        "slug": decision.get("slug"),
        "task": decision.get("task"),
        "kind": decision.get("kind"),
        "files": list(decision.get("files") or []),
        "requests": list(decision.get("requests") or []),
        "status": decision.get("status"),
        "answer": decision.get("answer"),
        "proposal": decision.get("proposal"),
        # camelCase in output like every field failres composes (docs/json.md); the stored
        # amendment keeps the names it was written with.
        "answeredBy": decision.get("answered_by"),
        "answeredAt": decision.get("answered_at"),
        "lesson": decision.get("lesson"),
    }
