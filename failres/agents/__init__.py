"""The real agent CLIs failres drives: how to call them, what they print, where they keep state.

`recipes` holds the bindings `git failres init --agent X` writes (and the README shows);
`claude_result` reads Claude Code's JSON result; `homes` gives each dispatch its own agent
config directory without logging the person out; `session_hook` is the hook Claude Code
runs as a person's own session ends (noting its transcript for `reflect`), which
`claude_settings` installs in `.claude/settings.local.json`. Everything here was measured against the
real binaries (tests/agents/); nothing in it runs an agent.
"""
