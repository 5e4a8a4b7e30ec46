"""The agent's own print mode as the model behind `reflect` and `learn`, for `init --agent X --learn-with-agent`.

A person who runs Claude Code, Codex or aider already has a model and a login; asking them
for an API key and an endpoint before learning can distil a single directive would leave
learning on "none" for most. So `init` offers the agent itself, run once per prompt in
its non-interactive mode, as `[learning] provider = "command"`. Off unless asked for:
every reflection and every learn pass is then one paid call, which `init` says in one line.

Each command reads the prompt on stdin and answers on stdout (`CommandProvider`), may use
no tool and write nothing: learning needs words back, not edits.
"""

from __future__ import annotations

import json

# The argument lists, and why each flag is there.
LEARNING_COMMANDS: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "claude": (
        (("claude", "-p"), "print mode: one answer to the prompt on stdin"),
        (("--disallowedTools", "Bash,Edit,Write,NotebookEdit,WebFetch,WebSearch,Task"),
         "it answers, it does not act"),
    ),
    "codex": (
        (("codex", "exec"), "one run, then exit; the last message on stdout"),
        (("--sandbox", "read-only"), "it may read, never write"),
        (("--skip-git-repo-check", "--ephemeral"), "no session kept for a prompt about sessions"),
        (("--color", "never"), "plain text"),
        (("-",), "the prompt from stdin"),
    ),
    "aider": (
        (("aider", "--message-file", "/dev/stdin"), "the prompt from stdin; aider exits once it is answered"),
        (("--chat-mode", "ask"), "it answers and proposes no edit"),
        (("--dry-run", "--no-git", "--yes-always"), "and writes nothing, whatever it would have done"),
        (("--map-tokens", "0", "--no-pretty"), "no repository map, plain output"),
        (("--chat-history-file", "/dev/null", "--input-history-file", "/dev/null"), "no history of the prompt"),
        (("--no-check-update", "--analytics-disable", "--no-show-release-notes"), "no calls home"),
    ),
}

COST_NOTE = ("learning asks {agent} once per intervention reflected and once per learn pass: each is one paid "
             "call to the model {agent} uses")


def learning_command(agent: str) -> tuple[str, ...]:
    """The whole argument list for an agent with a learning recipe; KeyError otherwise."""
    return tuple(word for words, _ in LEARNING_COMMANDS[agent] for word in words)


def learning_toml(agent: str) -> str:
    """The `[learning]` section `init --agent AGENT --learn-with-agent` writes, commented."""
    lines = [f"# {COST_NOTE.format(agent=agent)}.", "[learning]",
             'provider = "command"', "command = ["]
    for words, why in LEARNING_COMMANDS[agent]:
        code = "  " + ", ".join(json.dumps(w, ensure_ascii=False) for w in words) + ","
        lines.append(f"{code.ljust(43)} # {why}")
    lines += ["]", 'timeout = "5m"']
    return "\n".join(lines) + "\n"
