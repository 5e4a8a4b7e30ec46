"""What the store knows, wired into a run: advisory lessons, rules, facts, and the ledger.

Everything here is advisory context or bookkeeping; none of it may cost a task its
run, so each hook logs and degrades to "nothing to add" when the store cannot answer.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from failres.config.loading import effective_policy_of

if TYPE_CHECKING:
    from failres.engine.runtime import Engine, TaskOutcome
    from lessons.rulebook.rules import RulesInForce

log = logging.getLogger("failres.knowledge.attach")


def attach_knowledge(engine: Engine) -> None:
    from failres.knowledge.advisory import advisory_for
    from lessons.bounds.facts import facts_block
    from lessons.rulebook.ledger import record_outcome
    from lessons.bounds.policy import reaches_archive
    from lessons.rulebook.rules import Budget, rules_in_force

    policy = effective_policy_of(engine.config, os.environ).policy
    store = engine.store
    domains = list(engine.config.learning.domains) or None
    budget = Budget(max_rules=engine.config.learning.max_rules, max_chars=engine.config.learning.max_chars)
    engine.advisory = advisory_for(engine, limit=policy.lessons_per_prompt,
                                   include_archived=reaches_archive(policy, "retrieval"))
    shown: dict[str, RulesInForce] = {}

    def rules_block() -> str:
        try:
            rules = rules_in_force(store, domains, budget=budget)
        except Exception:
            log.exception("failres: reading the rules failed; prompts go without them")
            return ""
        shown["last"] = rules  # the set the ledger measures is the set the prompt carried
        return rules.block

    def facts() -> str:
        try:
            return facts_block(store, policy)
        except Exception:
            log.exception("failres: reading the facts failed; prompts go without them")
            return ""

    def measure(outcome: TaskOutcome) -> None:
        rules = shown.pop("last", None)
        if rules is None or not rules.block:
            return
        try:
            record_outcome(store, rules.block_hash, rules.rule_ids, outcome.state, slug=outcome.slug,
                           task=outcome.task, failClass=outcome.fail_class)
        except Exception:
            log.exception("failres: recording the rules' outcome failed")

    engine.rules_block = rules_block
    engine.facts_block = facts
    engine.on_outcome = measure
