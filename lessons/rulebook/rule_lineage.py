"""Rule lineage: identity carried across rewrites of a whole set, and retirement.

A learning pass rewrites a domain's learned rules as a whole, so identity must
survive the rewrite: a restated rule keeps its id (what the validation ledger keys
on), its `created_at` and its sources; a new one gets an id derived from what it is;
a retired rule is never rewritten, resurrected or erased.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace

from lessons.errors import InvalidInput
from lessons.storage.records import derived_id
from lessons.rulebook.rules import Rule, one_line


def mint_rule_id(now: str, rule: Rule, taken: Collection[str] = ()) -> str:
    """`r-YYYYMMDD-<8 hex>`: readable in a diff, the day it entered the store and a digest
    of what it is (its basis, else its text), so the same rule learned from the same
    evidence gets the same id in any repository. A counter only when that id is taken."""
    day = now[:10].replace("-", "")
    for counter in range(10_000):
        digest = derived_id("rule", rule.basis or one_line(rule.text), *([str(counter)] if counter else []))
        rule_id = f"r-{day}-{digest[:8]}"
        if rule_id not in taken:
            return rule_id
    msg = "no free rule id"
    raise InvalidInput(msg)


def finalize_rules(new_rules: Sequence[Rule], previous: Sequence[Rule], batch_sources: Sequence[str],
                   now: str, mint: Callable[[str, Rule, Collection[str]], str] = mint_rule_id) -> tuple[Rule, ...]:
    """Carry identity across a rewrite of the whole set.

    A new rule with the text (or, for counted rules, the basis) of a previous one
    is that rule restated: it keeps its id, created_at and -- unless the pass named
    its own -- its sources. Any other rule is new: a fresh id, now, and the batch's
    sources. A retired rule is never rewritten and never resurrected: restating it
    yields it unchanged, still retired, and leaving it out carries it over as it
    is, so no pass can erase what retirement recorded.
    """
    by_text = {p.text: p for p in previous}
    by_basis = {p.basis: p for p in previous if p.basis}
    out: list[Rule] = []
    claimed: set[int] = set()  # a previous rule is restated at most once: ids stay unique
    for rule in new_rules:
        text = one_line(rule.text)
        if not text or any(r.text == text for r in out):
            continue
        prev = by_text.get(text) or (by_basis.get(rule.basis) if rule.basis else None)
        if prev is not None and id(prev) in claimed:
            if prev.retired_at is not None:
                continue  # the retired rule is already in the result, unchanged
            prev = None  # a second restatement of one rule is a rule of its own
        if prev is not None:
            claimed.add(id(prev))
        if prev is not None and prev.retired_at is not None:
            out.append(prev)
        elif prev is not None and prev.id:
            out.append(replace(rule, text=text, id=prev.id, created_at=prev.created_at,
                               sources=rule.sources or prev.sources))
        else:
            taken = {r.id for r in (*previous, *out) if r.id}
            out.append(replace(rule, text=text, id=mint(now, replace(rule, text=text), taken), created_at=now,
                               sources=rule.sources or tuple(batch_sources)))
    for prev in previous:
        if prev.retired_at is not None and id(prev) not in claimed:
            out.append(prev)
    return tuple(out)


def retire_rule(rules: Sequence[Rule], rule_id: str, reason: str, now: str) -> tuple[Rule, ...]:
    """The set with one rule retired (kept, never rendered). InvalidInput if no such active rule."""
    if not reason.strip():
        msg = "retiring a rule needs a reason"
        raise InvalidInput(msg)
    matches = [r for r in rules if r.id == rule_id]
    if not matches:
        msg = f"no learned rule with id {rule_id}"
        raise InvalidInput(msg)
    if matches[0].retired_at is not None:
        msg = f"rule {rule_id} is already retired ({matches[0].retired_reason})"
        raise InvalidInput(msg)
    return tuple(replace(r, retired_at=now, retired_reason=one_line(reason)) if r.id == rule_id else r
                 for r in rules)
