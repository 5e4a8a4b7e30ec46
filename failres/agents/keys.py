"""The environment variables the agent CLIs read their API keys from, and the CI jobs' own credentials.

An agent's key belongs to its seat alone. The gate runs the code the seat wrote (a
test the agent added runs with the gate's environment), so a key left there is one
`print(os.environ)` away from the agent's output and the logs; a CI job's own token
(GitLab's `CI_JOB_TOKEN`, an Actions runtime token) is one `git push` away from the
person's branches. These names are what the engine keeps out of every gate's and
setup's environment (`engine.gates.gate_env`) and, for the CI credentials, out of the
seats' too (`engine.seats.seat_env`); `doctor` reads the same table to say whether an
agent is logged in.
"""

from __future__ import annotations

AGENT_KEYS: dict[str, tuple[str, ...]] = {
    "claude": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
    "codex": ("OPENAI_API_KEY", "CODEX_API_KEY"),
    "aider": ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY"),
}

# Every agent's, whichever the configuration runs: a gate needs none of them.
AGENT_KEY_VARIABLES = frozenset(name for names in AGENT_KEYS.values() for name in names)

# What GitHub Actions and GitLab CI put in a job's environment that can act on the
# repository or the project: no seat or gate needs one, and `git failres ci` gives
# failres's own pushes their credential another way (FAILRES_PUSH_TOKEN, which the
# FAILRES_ prefix already keeps from them).
CI_CREDENTIALS = frozenset({
    "GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL", "CI_JOB_TOKEN", "CI_JOB_JWT", "CI_JOB_JWT_V1", "CI_JOB_JWT_V2",
    "CI_REGISTRY_PASSWORD", "CI_DEPENDENCY_PROXY_PASSWORD", "CI_DEPLOY_PASSWORD", "CI_REPOSITORY_URL",
})
