"""What rides in prompts and how it is learned.

`attach` wires lessons, rules and facts into an engine's prompts; `advisory` (past
outcomes), `lesson_views` (lessons as people read them), `learning` (the `reflect`,
`learn` and proposal commands' wiring) and `outcome_evidence` (failres's own outcomes
as evidence for rules).
"""
