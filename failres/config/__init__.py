"""Configuration: `.failres.toml` read strictly into frozen values.

`model` (the sections and `Config`, reading and where workspaces go), `schema` (how a
TOML table becomes a dataclass), `kinds` (the kinds of values), `knowledge` (the
`[policy]` and `[learning]` sections), `checks` (values that could hurt the
repository), `view` (`config show`), `durations`, `placeholders`.
"""
