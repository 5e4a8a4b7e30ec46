"""What happens when a task lands.

`land` (merging a task branch), `label` (stamping tasks merged some other way),
`outcome_labels` (what resolved each lesson, read from the journal), `person_edits`
(what a person changed between an agent's commit and the landing), `trailers`, and
`gc` (what landed tasks no longer need).
"""
