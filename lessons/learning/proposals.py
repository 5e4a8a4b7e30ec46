"""Proposals: a rule change waiting for a person, with the evidence that argues for it.

Learning never changes live rules. A pass writes a proposal carrying the learned
rules it was computed from (`rules_before`), the candidate set (`rules`) and the
evidence; the live `rules/<domain>.learned.toml` changes only when a person
accepts, and then in the same store commit that marks the proposal accepted.
Because the proposal carries `rules_before`, the diff a reviewer reads is the
diff that was computed, and an acceptance refuses when the live rules moved in
the meantime (another proposal accepted, an undo): the candidate was argued
against rules that no longer exist.

The budget gate runs when a proposal is made: a candidate that grows a domain's
active learned rules past the budget is recorded as `rejected_by_gate`, with the
reason, and can never be accepted. Its reflections stay unconsumed, so the next
pass argues them again -- and must merge or retire to make room.

A status change is an amendment beside the proposal (first one wins), never an
edit, like every later fact in the store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import pygit2

from lessons.errors import InvalidInput
from lessons.learning.candidates import changed_rules, evidence_key
from lessons.learning.store_io import processed_put
from lessons.storage.records import (
    amendment_put,
    change_of,
    content_id,
    make_amendment,
    now_ts,
    read_collection,
    read_record,
    record_put,
    resolve_id,
)
from lessons.rulebook.rule_lineage import retire_rule
from lessons.rulebook.rules import (
    Budget,
    Rule,
    budget_problem,
    check_domain,
    domains_in,
    learned_size,
    load_rules,
    rule_from_dict,
    rules_in_force,
    rules_path,
    rules_toml,
)
from lessons.storage.store import Change, Store

COLLECTION = "proposals"
STATUSES = ("pending", "accepted", "rejected", "rejected_by_gate")
# How a candidate was computed: by a model from reflections, from the person's own
# words (no model configured), by counting resolved lessons only, or by a person
# retiring a rule.
MODES = ("model", "words", "counts", "retire")


@dataclass(frozen=True)
class Proposal:
    id: str
    domain: str
    status: str
    mode: str
    rules_before: tuple[Rule, ...]
    rules: tuple[Rule, ...]
    reflection_ids: tuple[str, ...]
    lesson_ids: tuple[str, ...]
    evidence: str
    created_at: str
    gate: str | None = None
    resolved_at: str | None = None
    reason: str | None = None
    # The learning pool it was computed from (see `lessons.learning.candidates.pool_key`).
    pool: str | None = None
    # Candidate rules that did not fit the budget and wait for room.
    waiting: int = 0
    # A partial acceptance: the rules a person took, and the changes they declined.
    accepted_rules: tuple[str, ...] | None = None
    declined_rules: tuple[str, ...] = ()

    def to_document(self) -> dict:
        doc = {
            "id": self.id, "ts": self.created_at, "created_at": self.created_at, "domain": self.domain,
            "status": self.status, "mode": self.mode,
            "rules_before": [r.to_dict() for r in self.rules_before], "rules": [r.to_dict() for r in self.rules],
            "reflection_ids": list(self.reflection_ids), "lesson_ids": list(self.lesson_ids),
            "evidence": self.evidence, "gate": self.gate, "resolved_at": self.resolved_at, "reason": self.reason,
            "pool": self.pool, "waiting": self.waiting,
        }
        if self.accepted_rules is not None:
            doc.update(accepted_rules=list(self.accepted_rules), declined_rules=list(self.declined_rules))
        return doc


def proposal_from_record(doc: Mapping[str, object]) -> Proposal:
    """A stored proposal. Rules that do not parse make the record unusable (InvalidInput):
    accepting a set nobody can read back would be accepting something unseen."""
    pid = str(doc.get("id", ""))

    def rules(key: str) -> tuple[Rule, ...]:
        raw = doc.get(key)
        if not isinstance(raw, list) or any(not isinstance(r, dict) for r in raw):
            msg = f"proposal {pid}: {key} is not a list of rules"
            raise InvalidInput(msg)
        return tuple(rule_from_dict(r, f"proposal {pid}: {key}[{i}]") for i, r in enumerate(raw))

    def strings(key: str) -> tuple[str, ...]:
        raw = doc.get(key)
        return tuple(str(x) for x in raw) if isinstance(raw, list) else ()

    def optional(key: str) -> str | None:
        value = doc.get(key)
        return value if isinstance(value, str) else None

    waiting = doc.get("waiting")

    return Proposal(
        # An unrecognised status is kept as it is: only "pending" can ever be accepted.
        id=pid, domain=str(doc.get("domain", "")), status=str(doc.get("status", "")),
        mode=str(doc.get("mode", "")), rules_before=rules("rules_before"), rules=rules("rules"),
        reflection_ids=strings("reflection_ids"), lesson_ids=strings("lesson_ids"),
        evidence=str(doc.get("evidence", "")), created_at=str(doc.get("created_at") or doc.get("ts") or ""),
        gate=optional("gate"), resolved_at=optional("resolved_at"), reason=optional("reason"),
        pool=optional("pool"), waiting=waiting if isinstance(waiting, int) and not isinstance(waiting, bool) else 0,
        accepted_rules=strings("accepted_rules") if isinstance(doc.get("accepted_rules"), list) else None,
        declined_rules=strings("declined_rules"),
    )


def make_proposal(domain: str, rules_before: Sequence[Rule], rules: Sequence[Rule], *, mode: str,
                  budget: Budget, reflection_ids: Sequence[str] = (), lesson_ids: Sequence[str] = (),
                  evidence: str = "", created_at: str | None = None, pool: str | None = None, waiting: int = 0,
                  taken: Callable[[str], bool] | None = None) -> Proposal:
    """A new proposal, its status decided by the budget gate (pure).

    Its id is derived from its content (`taken` tells which ids are in use), so the
    same evidence gives the same proposal in any repository.
    """
    if mode not in MODES:
        msg = f"unknown proposal mode {mode!r}"
        raise InvalidInput(msg)
    refused = budget_problem(rules_before, rules, budget)
    proposal = Proposal(
        id="", domain=check_domain(domain), status="rejected_by_gate" if refused else "pending",
        mode=mode, rules_before=tuple(rules_before), rules=tuple(rules), reflection_ids=tuple(reflection_ids),
        lesson_ids=tuple(lesson_ids), evidence=evidence, created_at=created_at or now_ts(), gate=refused,
        pool=pool, waiting=waiting,
    )
    return replace(proposal, id=content_id("proposal", proposal.to_document(), taken))


def write_proposal(store: Store, proposal: Proposal) -> pygit2.Oid | None:
    active, _ = learned_size(proposal.rules)
    message = f"failres: propose {proposal.domain} rules ({proposal.mode}, {active} active, {proposal.status})"
    if proposal.gate:
        message += f"\n\nRefused by the budget gate: {proposal.gate}"
    return store.commit(change_of([record_put(COLLECTION, proposal.to_document())]), message)


def read_proposals(store: Store) -> tuple[list[Proposal], list[str]]:
    """Every proposal, oldest first, and the records that could not be read."""
    result = read_collection(store, COLLECTION)
    found: list[Proposal] = []
    problems = [str(p) for p in result.problems]
    for doc in result.records:
        try:
            found.append(proposal_from_record(doc))
        except InvalidInput as exc:
            problems.append(str(exc))
    found.sort(key=lambda p: (p.created_at, p.id))
    return found, problems


def archived_proposals(store: Store) -> list[Proposal]:
    """Proposals reclaim moved to the archive: decided ones, whose refusals still count."""
    from lessons.bounds.archive import read_archived

    found = []
    for doc in read_archived(store, COLLECTION).records:
        try:
            found.append(proposal_from_record(doc))
        except InvalidInput:
            continue  # unreadable evidence of a refusal: the worst it costs is one proposal again
    return found


def find_proposal(store: Store, prefix: str, commit: pygit2.Commit | None = None) -> Proposal:
    """One proposal by id or unique prefix (at least 4 hex digits); InvalidInput otherwise."""
    pid = resolve_id(store, COLLECTION, prefix)
    doc = read_record(store, COLLECTION, pid, commit=commit)
    if doc is None:
        msg = f"no proposal with id {prefix}"
        raise InvalidInput(msg)
    return proposal_from_record(doc)


def is_stale(store: Store, proposal: Proposal, commit: pygit2.Commit | None = None) -> bool:
    """Whether the live learned rules moved since the proposal was computed."""
    return load_rules(store, proposal.domain, "learned", commit) != proposal.rules_before


def preview_block(store: Store, proposal: Proposal, domains: Sequence[str] | None = None,
                  budget: Budget | None = None) -> str:
    """The rules block a seat would read once this proposal is accepted (same render as prompts)."""
    return rules_in_force(store, domains, learned_override={proposal.domain: proposal.rules}, budget=budget).block


def rules_diff(before: Sequence[Rule], after: Sequence[Rule]) -> list[str]:
    """What a proposal changes, one line per rule, named by id (what `accept --only`
    takes): `+` added, `-` dropped, `~` retired; a rewritten rule is `-` then `+`.
    A rule that only gathered more evidence changes nothing a seat reads: no line."""
    old = {_key(r): r for r in before}
    new = {_key(r): r for r in after}
    lines = []
    for key, rule in new.items():
        prev = old.get(key)
        if prev is None:
            lines.append(f"+ {key}: {rule.text}{_evidence_note(rule)}")
        elif rule.retired_at and not prev.retired_at:
            lines.append(f"~ {key}: {rule.text} (retired: {rule.retired_reason})")
        elif prev.text != rule.text or prev.active() != rule.active():
            lines += [f"- {key}: {prev.text}", f"+ {key}: {rule.text}{_evidence_note(rule)}"]
    lines += [f"- {key}: {rule.text}" for key, rule in old.items() if key not in new]
    return lines


def _evidence_note(rule: Rule) -> str:
    return f" (evidence: {rule.based_on_count})" if rule.based_on_count else ""


def declined_keys(proposals: Iterable[Proposal]) -> frozenset[str]:
    """The evidence people declined: every change of a rejected proposal, and the changes
    left out of a partial acceptance. Proposed again only once that evidence changes."""
    keys: set[str] = set()
    for proposal in proposals:
        changed = changed_rules(proposal.rules_before, proposal.rules)
        if proposal.status == "rejected":
            keys.update(evidence_key(r) for r in changed)
        elif proposal.status == "accepted" and proposal.declined_rules:
            keys.update(evidence_key(r) for r in changed if r.id in proposal.declined_rules)
    return frozenset(keys)


def partial_rules(proposal: Proposal, only: Sequence[str]) -> tuple[tuple[Rule, ...], tuple[str, ...]]:
    """The rule set a person gets by taking only the changes to rules `only` (by id),
    and the ids of the changes they leave out. InvalidInput naming a rule the proposal
    does not change."""
    before = {_key(r): r for r in proposal.rules_before}
    after = {_key(r): r for r in proposal.rules}
    changes = [key for key in dict.fromkeys([*after, *before]) if before.get(key) != after.get(key)]
    unknown = [key for key in only if key not in changes]
    if unknown:
        msg = f"proposal {proposal.id} does not change a rule {unknown[0]}"
        listed = ", ".join(changes) or "none"
        raise InvalidInput(msg, hint=f"the rules it changes: {listed} (git failres proposals show {proposal.id})")
    taken = set(only)
    result: list[Rule] = []
    for key, rule in after.items():
        if key in taken or key not in changes:
            result.append(rule)
        elif key in before:
            result.append(before[key])  # its change declined: the live version stays
    # A rule the proposal drops stays unless its removal was taken.
    result += [rule for key, rule in before.items() if key not in after and key not in taken]
    return tuple(result), tuple(key for key in changes if key not in taken)


def _key(rule: Rule) -> str:
    """How a proposal names a rule: its id, or its text for a hand-written rule without one."""
    return rule.id or rule.text


def _resolution(store: Store, pid: str, sets: Mapping[str, object], message: str,
                check: Callable[[Proposal, pygit2.Commit | None], Change],
                clock: Callable[[], str] = now_ts) -> tuple[Proposal, pygit2.Oid]:
    stamp = clock()

    def change(tip: pygit2.Commit | None) -> Change:
        proposal = find_proposal(store, pid, tip)
        if proposal.status != "pending":
            why = f": {proposal.gate}" if proposal.gate else ""
            msg = f"proposal {pid} is {proposal.status}{why}; only a pending proposal can be resolved"
            raise InvalidInput(msg)
        extra = check(proposal, tip)
        amend = make_amendment(pid, {**sets, "resolved_at": stamp}, first_wins=True, ts=stamp)
        puts = [amendment_put(COLLECTION, pid, amend)]
        # The reflections are consumed whichever way a person decided: a rejected
        # lesson must not come back every pass. (A gate refusal is no decision.)
        puts += [processed_put(rid, pid, stamp) for rid in proposal.reflection_ids]
        records = change_of(puts)
        return Change({**records.puts, **extra.puts}, records.deletes | extra.deletes)

    oid = store.commit(change, message)
    if oid is None:  # cannot happen: an amendment always changes the tree
        msg = f"nothing was written for proposal {pid}"
        raise InvalidInput(msg)
    return find_proposal(store, pid), oid


def accept_proposal(store: Store, prefix: str, *, only: Sequence[str] | None = None, budget: Budget | None = None,
                    clock: Callable[[], str] = now_ts) -> tuple[Proposal, pygit2.Oid]:
    """Write the candidate as the live learned rules and mark the proposal accepted,
    in one commit. Refuses (InvalidInput) when the live rules moved since the proposal.

    With `only`, a person takes the changes to those rules (by id) and declines the
    rest: the live rules get just those, checked against the budget again, and the
    declined changes are not proposed again until their evidence changes.
    """
    proposal = find_proposal(store, prefix)
    rules, declined = (proposal.rules, ()) if only is None else partial_rules(proposal, only)
    if only is not None:
        refused = budget_problem(proposal.rules_before, rules, budget or Budget())
        if refused:
            msg = f"taking only {', '.join(only)} from proposal {proposal.id} would leave {refused}"
            raise InvalidInput(msg, hint="take fewer rules, or retire one first (git failres rules retire RULE_ID)")

    def check(current: Proposal, tip: pygit2.Commit | None) -> Change:
        if is_stale(store, current, tip):
            msg = f"the live learned rules of {current.domain} changed since proposal {current.id} was made"
            raise InvalidInput(msg, hint="run `git failres learn` again to propose against the current rules")
        return Change({rules_path(current.domain, "learned"): rules_toml(rules, current.domain)})

    sets: dict[str, object] = {"status": "accepted"}
    how = ""
    if only is not None:
        sets.update(accepted_rules=list(dict.fromkeys(only)), declined_rules=list(declined))
        how = f", only {', '.join(dict.fromkeys(only))}"
    return _resolution(store, proposal.id, sets,
                       f"failres: accept proposal {proposal.id} ({proposal.domain} rules{how})", check, clock)


def reject_proposal(store: Store, prefix: str, reason: str, *,
                    clock: Callable[[], str] = now_ts) -> tuple[Proposal, pygit2.Oid]:
    """Mark a pending proposal rejected, recording why. Live rules are untouched."""
    reason = " ".join(reason.split())
    if not reason:
        msg = "a rejection needs a reason (--reason)"
        raise InvalidInput(msg)
    proposal = find_proposal(store, prefix)
    return _resolution(store, proposal.id, {"status": "rejected", "reason": reason},
                       f"failres: reject proposal {proposal.id} ({proposal.domain} rules)",
                       lambda _p, _t: Change(), clock)


def propose_retirement(store: Store, rule_id: str, reason: str, budget: Budget, *,
                       clock: Callable[[], str] = now_ts) -> Proposal:
    """A person's request to retire one learned rule, as a proposal like any other."""
    stamp = clock()
    for domain in domains_in(store):
        live = load_rules(store, domain, "learned")
        if any(r.id == rule_id for r in live):
            proposal = make_proposal(domain, live, retire_rule(live, rule_id, reason, stamp), mode="retire",
                                     budget=budget, evidence=f"a person asked to retire {rule_id}: {reason}",
                                     created_at=stamp,
                                     taken=lambda pid: read_record(store, COLLECTION, pid) is not None)
            write_proposal(store, proposal)
            return proposal
    msg = f"no learned rule with id {rule_id}"
    raise InvalidInput(msg, hint="`git failres rules` lists the rules and their ids")
