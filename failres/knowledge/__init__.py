"""What rides in prompts and how it is learned.

`attach` wires lessons, rules and facts into an engine's prompts; `advisory` (past
outcomes), `lesson_views` (lessons as people read them), `learning` (the `reflect`,
`learn` and proposal commands' wiring), `outcome_evidence` (failres's own outcomes
as evidence for rules), `rules_export` (the rules in force, written into the file the
person's own agent reads) and `session_notes` (the sessions a person's agent noted as
they ended, for `reflect`).
"""
