"""The learner: evidence in, a candidate rule set out, written as a proposal.

Two kinds of rule, owned by two different writers:

- **Directives**, argued from clean reflections. With a model, one call rewrites
  the domain's directives with the new reflections absorbed (merging, resolving
  contradictions); without one, what people said or refused is grouped and
  counted (`lessons.learning.candidates`): one candidate per thing said, never
  one quote per moment. Without a model only follow-ups the classifier reads as
  corrections (`lessons.learning.followups`) are grouped; the others never became
  reflections.
- **Counted rules**, computed by code from failres's own outcomes: which failures
  landed tasks hit and what resolved them (`lessons.learning.outcomes`). A model
  never rewrites these; it sees them as context.

Only clean reflections are ever read here (`unprocessed_learnable`): untrusted
and derived ones are excluded by structure, before any prompt is built, and there
is no setting that changes that. Whatever comes out is fitted to the budget
(strongest evidence first; the rest waits) and goes through the budget gate into
a proposal; nothing here writes live rules. The same evidence never makes the
same proposal twice: a pending or refused one is named instead.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from lessons.learning.candidates import (
    changed_rules,
    edit_candidates,
    evidence_key,
    fit_to_budget,
    pool_key,
    withhold_declined,
    words_candidates,
)
from lessons.learning.messages import clip
from lessons.learning.outcomes import ResolvedOutcome, is_counted, outcome_from_lesson, outcome_rules
from lessons.learning.reflector import DATA_NOTICE, extract_json_object, fence
from lessons.learning.store_io import BEHAVIOR, CODE, Reflection, read_reflections, unprocessed_learnable
from lessons.recall.lesson import read_lessons
from lessons.learning.proposals import COLLECTION as PROPOSALS
from lessons.learning.proposals import (
    Proposal,
    archived_proposals,
    declined_keys,
    make_proposal,
    read_proposals,
    rules_diff,
    write_proposal,
)
from lessons.learning.providers import Provider
from lessons.storage.records import now_ts, read_record
from lessons.rulebook.rule_lineage import finalize_rules
from lessons.rulebook.rules import Budget, Rule, learned_size, load_rules, one_line
from lessons.storage.store import Store

log = logging.getLogger(__name__)

# Lessons are about how tasks failed and what resolved them: how agents should
# work here, so their counted rules belong to the behavior domain.
LESSONS_DOMAIN = BEHAVIOR
_EVIDENCE_CONTEXT_LIMIT = 400

LEARNER_FRAME = (
    "You maintain the learned rules for AI coding agents working in one git repository. "
    "Reflections -- lessons drawn from moments a person corrected an agent -- accumulate between "
    "your runs. Rewrite the LEARNED directives: absorb the new reflections, merge overlapping "
    "rules, resolve contradictions (prefer more evidence, then more recent), and drop rules too "
    "narrow to ever apply again."
)
CODE_LEARNER_FRAME = (
    "You maintain the learned rules about how code is written in one git repository. Reflections "
    "-- preferences inferred from edits people made to AI agents' commits before merging them -- "
    "accumulate between your runs. Rewrite the LEARNED directives: absorb the new reflections, "
    "merge overlapping rules, resolve contradictions (prefer more evidence, then more recent), and "
    "drop rules too narrow to ever apply again."
)
LEARNER_RULES = (
    "The person's own rules are IMMUTABLE context: never copy, restate, merge or contradict them; "
    "the learned set covers only what they do not. Counted rules are computed by code from resolved "
    "failures: context, not yours to rewrite. Retired rules were measured harmful: never restate or "
    "re-derive them.\n\n"
    "Rules are reusable directives about how to work, not restatements of one incident. Prefer rules "
    "supported by more than one reflection; a single reflection becomes a rule only when its lesson "
    "is unambiguous. Fewer, well-scoped rules beat many overlapping ones. Never exceed {max_rules} "
    "rules, and keep the whole set under about {max_chars} characters."
)
LEARNER_CONTRACT = (
    'Reply with one JSON object and nothing else:\n{"rules": [{"rule": "<directive>", "confidence": '
    '<0.0-1.0>, "based_on_count": <how many reflections support it>}]}\n'
    "An empty list is a valid answer when no reflection deserves a rule yet."
)


def learner_frame(domain: str) -> str:
    """The code frame for the code domain; every other domain fails toward the general one."""
    return CODE_LEARNER_FRAME if domain == CODE else LEARNER_FRAME


def _listed(rules: Iterable[Rule], empty: str = "(none)") -> str:
    lines = []
    for rule in rules:
        note = f" (retired: {rule.retired_reason})" if rule.retired_at and rule.retired_reason else ""
        lines.append(f"- {rule.text}{note}")
    return "\n".join(lines) or empty


def learner_prompt(domain: str, *, user: Sequence[Rule], counted: Sequence[Rule], directives: Sequence[Rule],
                   retired: Sequence[Rule], reflections: Sequence[Reflection], budget: Budget) -> str:
    """The whole prompt of one learning pass; pure."""
    evidence = "\n".join(
        f"- [{r.trigger} / {r.error_type or 'unknown'}] while: "
        f"{clip(' '.join(r.context.split()), _EVIDENCE_CONTEXT_LIMIT)} -- person: "
        f"{clip(' '.join(r.intervention.split()), _EVIDENCE_CONTEXT_LIMIT)} -- lesson: {r.reflexion_text}"
        for r in reflections
    ) or "(none)"
    return "\n\n".join([
        learner_frame(domain),
        LEARNER_RULES.format(max_rules=budget.max_rules, max_chars=budget.max_chars),
        f"Domain: {domain}",
        "## The person's rules (immutable, context only)\n" + _listed(user),
        "## Counted rules (computed from resolved failures, context only)\n" + _listed(counted),
        "## Retired rules (immutable, measured harmful)\n" + _listed(retired),
        "## Current learned directives (to be rewritten)\n" + _listed(directives),
        DATA_NOTICE,
        fence(f"new reflections ({len(reflections)})", evidence),
        LEARNER_CONTRACT,
    ]) + "\n"


def parse_learner_reply(text: str) -> tuple[Rule, ...] | None:
    """The rules in a reply; None when it is unusable (as distinct from a deliberate
    empty set). Blank and repeated rules are dropped."""
    reply = extract_json_object(text, ("rules",))
    if reply is None or not isinstance(reply.get("rules"), list):
        return None
    rules: list[Rule] = []
    for item in reply["rules"]:
        if not isinstance(item, Mapping):
            continue
        text_value = item.get("rule", item.get("text"))
        words = one_line(text_value) if isinstance(text_value, str) else ""
        if not words or any(r.text == words for r in rules):
            continue
        confidence = item.get("confidence")
        count = item.get("based_on_count")
        rules.append(Rule(
            text=words,
            confidence=min(max(float(confidence), 0.0), 1.0)
            if isinstance(confidence, (int, float)) and not isinstance(confidence, bool) else None,
            based_on_count=count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None,
        ))
    return tuple(rules)


# ── one learning pass ────────────────────────────────────────────────────────


def compose_candidate(previous: Sequence[Rule], *, directives: Sequence[Rule] | None, added: Sequence[Rule],
                      counted: Sequence[Rule], sources: Sequence[str], now: str) -> tuple[Rule, ...]:
    """The candidate set: directives (the model's rewrite, or the live ones kept) plus
    any added ones, then the counted rules recomputed; lineage carried by
    `finalize_rules`, retired rules kept as they are."""
    live_directives = [r for r in previous if r.retired_at is None and not is_counted(r)]
    kept = list(live_directives if directives is None else directives)
    return finalize_rules([*kept, *added, *counted], previous, sources, now)


@dataclass(frozen=True)
class LearnOutcome:
    """What a pass did for one domain: the proposal it wrote, or why it wrote none,
    and how many candidate rules wait for room in the budget."""

    domain: str
    proposal: Proposal | None = None
    note: str = ""
    unusable: bool = False
    waiting: int = 0


def learn_domain(store: Store, domain: str, provider: Provider | None, budget: Budget, *,
                 outcomes: Sequence[ResolvedOutcome] | None = None,
                 clock: Callable[[], str] = now_ts) -> LearnOutcome:
    """Compute a candidate for `domain` from the store's evidence and write it as a proposal.

    `outcomes` are the resolved lessons with what the caller's records add (see
    `lessons.learning.outcomes`); None reads the bare lessons. Raises CorruptRecord
    when a rules file of the domain cannot be read (a person must fix it first) and
    ProviderError when the model cannot be asked.
    """
    tip = store.commit_at()
    previous = load_rules(store, domain, "learned", tip)
    user = load_rules(store, domain, "user", tip)
    reflections_all, _ = read_reflections(store, tip)
    fresh = unprocessed_learnable(reflections_all, domain)
    proposals = [p for p in read_proposals(store)[0] if p.domain == domain]
    # A refusal outlives its proposal's move to the archive.
    declined = declined_keys([*proposals, *(p for p in archived_proposals(store) if p.domain == domain)])
    counted: tuple[Rule, ...] = ()
    if domain == LESSONS_DOMAIN:
        if outcomes is None:
            outcomes = [o for o in (outcome_from_lesson(x) for x in read_lessons(store)[0]) if o is not None]
        counted = withhold_declined(outcome_rules(outcomes), declined)
    now = clock()
    directives: Sequence[Rule] | None = None
    added: Sequence[Rule] = ()
    mode = "counts"
    if fresh and provider is not None:
        pool = pool_key(domain, previous, [r.id for r in fresh] + [evidence_key(r) for r in counted])
        repeated = _same_pool(proposals, pool)
        if repeated is not None:
            return LearnOutcome(domain, note=repeated)
        prompt = learner_prompt(domain, user=user, counted=counted,
                                directives=[r for r in previous if r.active() and not is_counted(r)],
                                retired=[r for r in previous if r.retired_at], reflections=fresh, budget=budget)
        reply = provider.complete(prompt)
        directives = parse_learner_reply(reply)
        if directives is None:
            log.warning("unusable learner reply for %s: %r", domain, reply[:200])
            return LearnOutcome(domain, note="the learner's reply held no usable rule set", unusable=True)
        mode = "model"
    elif fresh:
        found = edit_candidates(fresh) if domain == CODE else words_candidates(fresh)
        added = withhold_declined(found, declined)
        mode = "words"
    candidate = compose_candidate(previous, directives=directives, added=added, counted=counted,
                                  sources=[r.id for r in fresh], now=now)
    fitted, waiting = fit_to_budget(previous, candidate, budget)
    if not rules_diff(previous, fitted):
        return LearnOutcome(domain, note=_nothing_new(previous, waiting, budget), waiting=len(waiting))
    fresh_ids = {r.id for r in fresh}
    if mode == "model":
        consumed = sorted(fresh_ids)  # the model read them all: its rewrite answers every one
    else:
        consumed = sorted({s for r in changed_rules(previous, fitted) for s in r.sources} & fresh_ids)
        mode = "words" if consumed else "counts"
    lesson_ids = sorted({i for r in fitted if is_counted(r) for i in r.sources})
    if mode != "model":
        pool = pool_key(domain, previous, [evidence_key(r) for r in changed_rules(previous, fitted)])
        repeated = _same_pool(proposals, pool)
        if repeated is not None:
            return LearnOutcome(domain, note=repeated, waiting=len(waiting))
    evidence = _evidence(mode, [r for r in fresh if r.id in consumed], [r for r in fitted if is_counted(r)], waiting)
    proposal = make_proposal(
        domain, previous, fitted, mode=mode, budget=budget, reflection_ids=consumed, lesson_ids=lesson_ids,
        evidence=evidence, created_at=now, pool=pool, waiting=len(waiting),
        taken=lambda pid: read_record(store, PROPOSALS, pid) is not None,
    )
    write_proposal(store, proposal)
    return LearnOutcome(domain, proposal, waiting=len(waiting))


def learn(store: Store, domains: Sequence[str] | None, provider: Provider | None, budget: Budget, *,
          outcomes: Sequence[ResolvedOutcome] | None = None,
          clock: Callable[[], str] = now_ts) -> list[LearnOutcome]:
    """One pass per domain: the given ones, else every domain with fresh clean evidence
    (and the lessons domain, whose counts may have moved)."""
    if not domains:
        reflections, _ = read_reflections(store)
        domains = sorted({r.domain for r in reflections if r.learnable() and not r.is_processed} | {LESSONS_DOMAIN})
    return [learn_domain(store, domain, provider, budget, outcomes=outcomes, clock=clock) for domain in domains]


def _same_pool(proposals: Sequence[Proposal], pool: str) -> str | None:
    """Why nothing is proposed when this very pool was proposed before, and is waiting or refused."""
    for proposal in proposals:
        if proposal.pool != pool:
            continue
        if proposal.status == "pending":
            return f"proposal {proposal.id} already proposes this"
        if proposal.status == "rejected_by_gate":
            return (f"proposal {proposal.id} was refused by the budget gate for this same evidence "
                    f"({proposal.gate}); nothing new until the evidence or the live rules change")
    return None


def _nothing_new(previous: Sequence[Rule], waiting: Sequence[Rule], budget: Budget) -> str:
    if not waiting:
        return "nothing new to learn"
    active, _ = learned_size(previous)
    return (f"nothing fits: {len(waiting)} candidate rule(s) wait for room in the budget "
            f"({active} of {budget.max_rules} active rules); retire one to make room "
            "(git failres rules retire RULE_ID)")


def _evidence(mode: str, reflections: Sequence[Reflection], counted: Sequence[Rule],
              waiting: Sequence[Rule]) -> str:
    parts = []
    if reflections:
        kinds = Counter(r.trigger for r in reflections)
        listed = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
        how = "read by a model" if mode == "model" else "grouped by what they say"
        parts.append(f"{len(reflections)} clean reflection(s) ({listed}), {how}")
    if counted:
        lessons = sum(len(r.sources) for r in counted)
        parts.append(f"{len(counted)} rule(s) counted from {lessons} resolved lesson(s)")
    if waiting:
        parts.append(f"{len(waiting)} more candidate(s) wait for room in the budget")
    return "; ".join(parts) or "no new evidence"
