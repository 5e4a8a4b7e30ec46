"""Candidate rules without a model, and what the budget lets through.

Without a model nothing can infer a directive from a moment, but people repeat
themselves, and that is evidence code can count. Interventions that say the same
thing become one candidate with a count:

- steers with the same words (ignoring case, spacing and end punctuation);
- follow-ups that correct the agent (`lessons.learning.followups`), with the same
  directive: the rule's text is that directive (`followups.directive`), the person's
  sentence without the praise, agreement or paste around it; the evidence keeps the
  whole message;
- refusals of the same command family (`mix phx.server 2>&1 | head -80` and
  `mix phx.server` are one thing refused), quoting what the person said, if anything;
- a person's edits of the same file after the agent's commit, in two tasks or more.

Other follow-ups (acknowledgements, answers, the next task) are never proposed.

The budget never deadlocks learning: a candidate set keeps the live rules and takes
new ones strongest first while they fit, and says how many wait for room. Strength is
the person's evidence (`evidence_rank`): distinct sessions, then distinct days, then a
refusal or a steer over words after a turn. Never how many moments one session produced: a paste
the classifier read line by line, or a person repeating themselves in one sitting,
counts once (in a trial, pasted blocks filled every slot and the one rule said in three
sessions waited). What a person declined (a rejected proposal, the rules left out
of a partial acceptance) is not proposed again until its evidence changes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lessons.learning import directives
from lessons.learning.followups import Followup, classify_followup, directive, gives_rule
from lessons.learning.messages import clip
from lessons.learning.store_io import Reflection
from lessons.storage.records import derived_id
from lessons.rulebook.rules import Budget, Rule, budget_problem, one_line

WORDS_BASIS = "words/"
EDITS_BASIS = "edits/"
MIN_TASKS_FOR_AN_EDIT_RULE = 2
QUOTE_LIMIT = 240
_REASONS_QUOTED = 2
_TASKS_SHOWN = 3
# Words that say nothing on their own: a refusal or a stop without words.
_WORDLESS = ("(the person refused the tool call", "(the person stopped the run")
_END_PUNCTUATION = ".!?,;: \"'`"


def normalized(words: str) -> str:
    """Words as compared: case, spacing and surrounding punctuation do not make them differ."""
    return one_line(words).casefold().strip(_END_PUNCTUATION)


def _spoken(reflection: Reflection) -> str:
    words = one_line(reflection.intervention)
    return "" if not words or words.startswith(_WORDLESS) else words


@dataclass(frozen=True)
class _Group:
    key: tuple[str, ...]
    members: tuple[Reflection, ...]


def _corrects(reflection: Reflection, words: str) -> bool:
    """Whether the person's words correct the agent: as recorded, else read now (a
    reflection recorded before steers were classified carries no kind)."""
    kind = reflection.followup or classify_followup(words)
    return kind == Followup.CORRECTION


def _only_asks(words: str) -> bool:
    """Whether the directive of these words is questions alone ("Hiciste lo que te
    pedí?? Pudiste hacer el commit y push?", said after a refusal): a pushback, since the
    agent did not do what was asked, but nothing a later agent could keep as a rule."""
    said = [s for s in directives.sentences(directive(words)) if s.strip()]
    return bool(said) and all(s.rstrip().endswith(("?", "？")) for s in said)


def _group_key(reflection: Reflection) -> tuple[str, ...] | None:
    words = _spoken(reflection)
    if words and reflection.trigger in ("steer", "followup") and (_only_asks(words) or not gives_rule(words)):
        # Only questions, or only a report that the work is broken: a correction of this
        # agent, but no rule for a later one.
        return None
    if reflection.trigger == "steer":
        # Words typed mid-run are as often the next task or a question as a redirection: in
        # a trial on real aider histories "Hiciste lo que te pedí?? Pudiste hacer el commit y
        # push?" and a whole new task, typed after a refusal, were proposed as rules. Only
        # a steer that corrects the agent is one.
        return ("steer", normalized(words)) if words and _corrects(reflection, words) else None
    if reflection.trigger == "followup":
        if not words or reflection.followup != "correction":
            return None
        return ("followup", normalized(directive(reflection.intervention)))
    if reflection.trigger != "denial":
        return None
    names_command = reflection.refused != reflection.refused_tool
    if reflection.refused and (names_command or (words and not _only_asks(words))):
        return ("refused", reflection.refused_tool, reflection.refused)
    # A refusal without words of a call that names no command (an edit, a file aider
    # offered to create, a question aider asked) says only "not this one": in the trial
    # one became "Ask before using aider: a person refused it."
    if not words or reflection.refused or _only_asks(words):
        return None
    return ("stop", normalized(words))


def _quoted(texts: Iterable[str]) -> str:
    seen: dict[str, str] = {}
    for text in texts:
        seen.setdefault(normalized(text), text)
    return "; ".join(f'"{clip(t, QUOTE_LIMIT)}"' for t in list(seen.values())[:_REASONS_QUOTED])


def _render(group: _Group) -> str:
    kind = group.key[0]
    said = [w for w in (_spoken(r) for r in group.members) if w]
    # What was said mid-run may be a redirection or only more of the task, so it stays a
    # quote; but a quote of the directive, not of the thanks around it.
    if kind == "steer":
        return f"A person steered a run and said: {_quoted(directive(w) for w in said)}"
    if kind == "stop":
        return f"A person stopped a run and said: {_quoted(directive(w) for w in said)}"
    if kind == "followup":
        return one_line(directive(group.members[0].intervention))
    _, tool, family = group.key
    act = f"running `{family}`" if family and family != tool else f"using {tool}"
    # The count is the rule's evidence (`based_on_count`), not its words: a rule's text
    # stays the same as evidence grows, so more of it is not a new proposal.
    text = f"Ask before {act}: a person refused it"
    return f"{text} and said: {_quoted(said)}" if said else f"{text}."


def said_day(reflection: Reflection) -> str:
    """The day the person spoke (the transcript's time), else the day it was reflected."""
    return (reflection.said_at or reflection.created_at)[:10]


def evidence_rank(members: Sequence[Reflection]) -> tuple[int, int, int]:
    """How strongly people argued for a candidate: distinct sessions, distinct days, and
    whether anything but words after a turn is among them (a refusal, or a steer mid-run,
    is a person stopping the agent; words after its turn are read by rules and may be the
    next task). Higher is stronger; a session counts once."""
    return (len({r.session_id for r in members}), len({said_day(r) for r in members}),
            int(any(r.trigger != "followup" for r in members)))


def words_candidates(reflections: Iterable[Reflection]) -> tuple[Rule, ...]:
    """Without a model: one candidate per thing people said or refused, strongest first
    (`evidence_rank`), its count the sessions it was said in."""
    groups: dict[tuple[str, ...], list[Reflection]] = {}
    for reflection in sorted(reflections, key=lambda r: (r.created_at, r.id)):
        key = _group_key(reflection)
        if key is not None:
            groups.setdefault(key, []).append(reflection)
    ranked = sorted(groups.items(), key=lambda item: evidence_rank(item[1]), reverse=True)  # stable: earlier first
    rules = []
    for key, members in ranked:
        group = _Group(key, tuple(members))
        rules.append(Rule(text=_render(group), based_on_count=evidence_rank(members)[0],
                          sources=tuple(r.id for r in members), basis=WORDS_BASIS + derived_id("words", *key)))
    return tuple(rules)


def edit_candidates(reflections: Iterable[Reflection]) -> tuple[Rule, ...]:
    """Without a model: files people corrected after the agent's commit in two tasks or more."""
    by_file: dict[str, list[Reflection]] = {}
    for reflection in sorted(reflections, key=lambda r: (r.created_at, r.id)):
        if reflection.trigger == "edit":
            for path in dict.fromkeys(reflection.files):
                by_file.setdefault(path, []).append(reflection)
    rules = []
    for path in sorted(by_file):
        members = by_file[path]
        tasks = list(dict.fromkeys(r.session_id for r in members))
        if len(tasks) < MIN_TASKS_FOR_AN_EDIT_RULE:
            continue
        shown = ", ".join(tasks[:_TASKS_SHOWN]) + (" and more" if len(tasks) > _TASKS_SHOWN else "")
        rules.append(Rule(
            text=(f"People corrected the agent's change to `{path}` before landing it in {len(tasks)} tasks "
                  f"({shown}): follow the conventions of its current version."),
            based_on_count=len(tasks), sources=tuple(r.id for r in members), basis=EDITS_BASIS + path))
    return tuple(rules)


# ── the budget, and what people declined ─────────────────────────────────────


def fit_to_budget(previous: Sequence[Rule], candidate: Sequence[Rule], budget: Budget
                  ) -> tuple[tuple[Rule, ...], tuple[Rule, ...]]:
    """(what fits, what waits): the candidate without its weakest new rules while it
    grows past the budget. Live rules are never dropped to make room; only a person
    retires them."""
    known = {r.id for r in previous if r.id}
    fitted = list(candidate)
    new = [r for r in candidate if r.active() and r.id not in known]
    # Weakest first: least evidence, then latest in the candidate's order.
    order = {id(r): i for i, r in enumerate(candidate)}
    new.sort(key=lambda r: (r.based_on_count or 0, -order[id(r)]))
    waiting = []
    while new and budget_problem(previous, fitted, budget):
        weakest = new.pop(0)
        fitted.remove(weakest)
        waiting.append(weakest)
    return tuple(fitted), tuple(waiting)


def evidence_key(rule: Rule) -> str:
    """What a rule was argued from: its identity (basis, else text) and its sources."""
    return derived_id("evidence", rule.basis or rule.text, *sorted(rule.sources))


def changed_rules(before: Sequence[Rule], after: Sequence[Rule]) -> tuple[Rule, ...]:
    """The rules of `after` that are new or differ from their `before` version."""
    old = {r.id: r for r in before if r.id}
    return tuple(r for r in after if old.get(r.id) != r)


def withhold_declined(rules: Iterable[Rule], declined: frozenset[str]) -> tuple[Rule, ...]:
    """The rules whose evidence a person has not already declined."""
    return tuple(r for r in rules if evidence_key(r) not in declined)


def pool_key(domain: str, before: Sequence[Rule], evidence: Iterable[str]) -> str:
    """The learning pool a proposal was computed from: the live rules and the evidence.
    The same pool gives the same proposal, so a refused one is not proposed again
    until this changes."""
    rules = json.dumps([r.to_dict() for r in before], sort_keys=True)
    return derived_id("pool", domain, rules, *sorted(evidence))
