"""Decisions: questions failres cannot answer alone.

`records` (a decision, its answer, a resolver's proposal, what widens a scope),
`answering` (checking and recording an answer), `resolver_seat` (asking the resolver
agent for a proposal) and `resolver_prompt` (its prompt, and reading its reply).
"""
