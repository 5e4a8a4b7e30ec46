"""Rules: the short, person-approved directives that ride in every seat's prompt.

`rules` reads and renders the rules files, `rule_lineage` carries a rule's identity across
rewrites of the whole set and retires it, `ledger` writes down what came of work done under
each rule set, so a proposal can cite it; `managed_block` writes the rules into the block of
a file people's own agents read (AGENTS.md, CLAUDE.md, CONVENTIONS.md).
"""

__all__ = ["ledger", "managed_block", "rule_lineage", "rules"]
