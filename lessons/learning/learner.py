"""The learner: evidence in, a candidate rule set out, written as a proposal.

Two kinds of rule, owned by two different writers:

- **Directives**, argued from clean reflections. With a model, one call rewrites
  the domain's directives with the new reflections absorbed (merging, resolving
  contradictions); without one, the person's own words of each clean steer or
  denial are proposed as they were said. Follow-up turns and edits need a model
  to be read as corrections at all, so without one they stay evidence only.
- **Counted rules**, computed by code from resolved lessons: per failure class and
  package, what resolved them, with counts ("When gate-not-green-after-fixer
  failures in package src were resolved, it was by scope-widened (3 of 4)"). A
  model never rewrites these; it sees them as context.

Only clean reflections are ever read here (`unprocessed_learnable`): untrusted
and derived ones are excluded by structure, before any prompt is built, and there
is no setting that changes that. Whatever comes out goes through the budget gate
into a proposal; nothing here writes live rules.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from lessons.learning.messages import clip
from lessons.learning.reflector import DATA_NOTICE, extract_json_object, fence
from lessons.learning.store_io import BEHAVIOR, CODE, Reflection, read_reflections, unprocessed_learnable
from lessons.lesson import read_lessons
from lessons.proposals import Proposal, make_proposal, read_proposals, write_proposal
from lessons.providers import Provider
from lessons.records import now_ts
from lessons.rules import Budget, Rule, finalize_rules, load_rules, one_line
from lessons.store import Store

log = logging.getLogger(__name__)

# Lessons are about how tasks failed and what resolved them: how agents should
# work here, so their counted rules belong to the behavior domain.
LESSONS_DOMAIN = BEHAVIOR
COUNTED_BASIS = "lessons/"
# One resolved lesson is an anecdote; a rule needs the same resolution twice.
MIN_LESSONS_FOR_A_RULE = 2
WORDS_LIMIT = 240
_EVIDENCE_CONTEXT_LIMIT = 400
# Words that say nothing on their own: a refusal or a stop without words.
_WORDLESS = ("(the person refused the tool call", "(the person stopped the run")
_WORDS_VERBS = {"steer": "steered a run and said", "denial": "refused an agent's action and said"}

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


# ── counting resolved lessons ────────────────────────────────────────────────


@dataclass(frozen=True)
class ResolvedGroup:
    """Resolved lessons of one failure class in one package, and what resolved them."""

    fail_class: str
    package: str
    total: int
    resolutions: tuple[tuple[str, int], ...]  # most frequent first
    lesson_ids: tuple[str, ...]


def group_resolved_lessons(lessons: Iterable[Mapping[str, object]]) -> list[ResolvedGroup]:
    """Groups by (failure class, package), largest first, ties by class then package."""
    groups: dict[tuple[str, str], list[Mapping[str, object]]] = {}
    for lesson in lessons:
        resolved = lesson.get("resolved_by")
        if not isinstance(resolved, list) or not resolved:
            continue
        key = (str(lesson.get("failClass") or "unknown"), str(lesson.get("package") or ""))
        groups.setdefault(key, []).append(lesson)
    out = []
    for (fail_class, package), members in groups.items():
        counts: Counter[str] = Counter()
        for lesson in members:
            counts.update({str(kind) for kind in lesson["resolved_by"]})  # type: ignore[union-attr]
        ranked = tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        ids = tuple(sorted(str(lesson.get("id", "")) for lesson in members))
        out.append(ResolvedGroup(fail_class, package, len(members), ranked, ids))
    out.sort(key=lambda g: (-g.total, g.fail_class, g.package))
    return out


def counted_rule(group: ResolvedGroup) -> Rule | None:
    """The rule a group argues for; None when it is too small or nothing known resolved it."""
    known = [(kind, n) for kind, n in group.resolutions if kind != "unknown"]
    if group.total < MIN_LESSONS_FOR_A_RULE or not known:
        return None
    where = f"package {group.package}" if group.package else "this repository"
    how = " and ".join(f"{kind} ({n} of {group.total})" for kind, n in known)
    return Rule(text=f"When {group.fail_class} failures in {where} were resolved, it was by {how}.",
                based_on_count=group.total, sources=group.lesson_ids,
                basis=f"{COUNTED_BASIS}{group.fail_class}/{group.package}")


def counted_rules(lessons: Iterable[Mapping[str, object]], limit: int) -> tuple[Rule, ...]:
    """The strongest counted rules, at most `limit`: the rest of the budget stays for
    what people said."""
    rules = [r for r in (counted_rule(g) for g in group_resolved_lessons(lessons)) if r is not None]
    return tuple(rules[:limit])


def words_rules(reflections: Iterable[Reflection]) -> tuple[Rule, ...]:
    """Without a model: the person's own words of each clean steer or denial, as said."""
    rules = []
    for r in reflections:
        words = one_line(r.intervention)
        if r.trigger not in _WORDS_VERBS or not words or words.startswith(_WORDLESS):
            continue
        rules.append(Rule(text=f'A person {_WORDS_VERBS[r.trigger]}: "{clip(words, WORDS_LIMIT)}"',
                          based_on_count=1, sources=(r.id,)))
    return tuple(rules)


def is_counted(rule: Rule) -> bool:
    return bool(rule.basis and rule.basis.startswith(COUNTED_BASIS))


def compose_candidate(previous: Sequence[Rule], *, directives: Sequence[Rule] | None, added: Sequence[Rule],
                      counted: Sequence[Rule], sources: Sequence[str], now: str) -> tuple[Rule, ...]:
    """The candidate set: directives (the model's rewrite, or the live ones kept) plus
    any added ones, then the counted rules recomputed; lineage carried by
    `finalize_rules`, retired rules kept as they are."""
    live_directives = [r for r in previous if r.retired_at is None and not is_counted(r)]
    kept = list(live_directives if directives is None else directives)
    return finalize_rules([*kept, *added, *counted], previous, sources, now)


# ── one learning pass ────────────────────────────────────────────────────────


@dataclass(frozen=True)
class LearnOutcome:
    """What a pass did for one domain: the proposal it wrote, or why it wrote none."""

    domain: str
    proposal: Proposal | None = None
    note: str = ""
    unusable: bool = False


def learn_domain(store: Store, domain: str, provider: Provider | None, budget: Budget, *,
                 clock: Callable[[], str] = now_ts) -> LearnOutcome:
    """Compute a candidate for `domain` from the store's evidence and write it as a proposal.

    Raises CorruptRecord when a rules file of the domain cannot be read (a person
    must fix it first) and ProviderError when the model cannot be asked.
    """
    tip = store.commit_at()
    previous = load_rules(store, domain, "learned", tip)
    user = load_rules(store, domain, "user", tip)
    reflections_all, _ = read_reflections(store, tip)
    fresh = unprocessed_learnable(reflections_all, domain)
    lessons = read_lessons(store)[0] if domain == LESSONS_DOMAIN else []
    counted = counted_rules(lessons, max(1, budget.max_rules // 3))
    now = clock()
    directives: Sequence[Rule] | None = None
    added: Sequence[Rule] = ()
    mode = "counts"
    if fresh and provider is not None:
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
        added = words_rules(fresh)
        mode = "words"
    candidate = compose_candidate(previous, directives=directives, added=added, counted=counted,
                                  sources=[r.id for r in fresh], now=now)
    if candidate == previous and not (mode == "model" and fresh):
        return LearnOutcome(domain, note="nothing new to learn")
    lesson_ids = sorted({i for r in counted for i in r.sources})
    duplicate = _pending_duplicate(store, domain, previous, candidate)
    if duplicate is not None:
        return LearnOutcome(domain, note=f"proposal {duplicate.id} already proposes this")
    proposal = make_proposal(
        domain, previous, candidate, mode=mode, budget=budget, reflection_ids=[r.id for r in fresh],
        lesson_ids=lesson_ids, evidence=_evidence(mode, fresh, counted), created_at=now,
    )
    write_proposal(store, proposal)
    return LearnOutcome(domain, proposal)


def learn(store: Store, domains: Sequence[str] | None, provider: Provider | None, budget: Budget) -> list[LearnOutcome]:
    """One pass per domain: the given ones, else every domain with fresh clean evidence
    (and the lessons domain, whose counts may have moved)."""
    if not domains:
        reflections, _ = read_reflections(store)
        domains = sorted({r.domain for r in reflections if r.learnable() and not r.is_processed} | {LESSONS_DOMAIN})
    return [learn_domain(store, domain, provider, budget) for domain in domains]


def _pending_duplicate(store: Store, domain: str, before: Sequence[Rule], candidate: Sequence[Rule]) -> Proposal | None:
    texts = [(r.text, r.retired_at is None) for r in candidate]
    for proposal in read_proposals(store)[0]:
        if (proposal.domain == domain and proposal.status == "pending" and proposal.rules_before == tuple(before)
                and [(r.text, r.retired_at is None) for r in proposal.rules] == texts):
            return proposal
    return None


def _evidence(mode: str, reflections: Sequence[Reflection], counted: Sequence[Rule]) -> str:
    parts = []
    if reflections:
        kinds = Counter(r.trigger for r in reflections)
        listed = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
        how = "read by a model" if mode == "model" else "the person's own words"
        parts.append(f"{len(reflections)} clean reflection(s) ({listed}), {how}")
    if counted:
        total = sum(r.based_on_count or 0 for r in counted)
        parts.append(f"{len(counted)} counted rule(s) from {total} resolved lesson(s)")
    return "; ".join(parts) or "no new evidence"
