"""Bindings for the real agent CLIs that work as written: `git failres init --agent X`.

Each recipe is commented TOML (a gate, a binding, the seats) that was run against the
real binary (tests/agents/), with every flag explained where it stands, because a
flag nobody understands is the first one a person deletes. The README shows exactly
these texts (a test compares them), so the documentation cannot drift from `init`.

Why the flags are what they are, in short (FACTS.md "Real agent CLIs" has the measurements):

- Claude Code in `-p --permission-mode acceptEdits` may edit files but is denied most
  commands, including the judge the fix prompt tells it to run; `--allowedTools` allows
  the gate's program (derived from the gate, `claude_bash_rules`). With
  `--output-format json` a run that was denied its edits is told apart from a red gate.
- Codex's `workspace-write` sandbox makes `.git` read-only and closes the network. Its
  shell is a login shell unless `allow_login_shell=false`: /etc/profile then resets PATH,
  and the judge the fix prompt names (`python3 -m pytest`) ran another python3 than the
  gate's (seen with the real CLI: "No module named pytest" where the gate passed).
- aider by default edits `.gitignore`, writes chat history and a tags cache into the
  repository and commits dirty files; each of those is switched off or moved into the
  dispatch directory.
- Every agent's own state goes into `{dispatch_dir}` (per dispatch, outside the
  workspace, kept with the dispatch's logs), so the workspace holds only the agent's
  edit and its session transcript can be found afterwards.
"""

from __future__ import annotations

import json
import textwrap
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePath

AGENTS: tuple[str, ...] = ("claude", "codex", "aider", "script")

# The hosts each agent's API answers on: the seat world's allow-list for a binding of it
# that lists none (`failres.sandbox.network`), and what its recipe writes. aider talks to
# whichever model the person chose, so its list is the common providers'.
API_HOSTS: dict[str, tuple[str, ...]] = {
    "claude": ("api.anthropic.com",),
    "codex": ("api.openai.com", "chatgpt.com", "auth.openai.com"),
    "aider": ("api.openai.com", "api.anthropic.com", "openrouter.ai", "api.deepseek.com",
              "generativelanguage.googleapis.com", "api.groq.com", "api.mistral.ai"),
}

DEFAULT_GATE: tuple[str, ...] = ("python3", "-m", "pytest", "-q")

# Allowing a shell is allowing every command: for these the rule also names the script.
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})

_COMMENT_COLUMN = 44


def gate_command_for(top_level_names: Iterable[str]) -> tuple[str, ...]:
    """The check a project of this shape usually runs, from the names at its top level alone
    (`gate_guess.guess_gate` reads the files too)."""
    from failres.agents.gate_guess import guess_gate

    return guess_gate(top_level_names, lambda _name: None).command


def claude_bash_rule(gate_command: Sequence[str]) -> str | None:
    """The `--allowedTools` rule that lets Claude Code run this gate: `Bash(python3:*)`.

    The rule is the gate's program (and, for a shell, its script) as a command prefix:
    the fixer may run the judge with any arguments, and nothing else that acceptEdits
    denies. None when the program itself is a placeholder, filled only at run time.
    """
    words: list[str] = []
    for argument in gate_command:
        if "{" in argument:
            break  # a placeholder is not a fixed prefix
        words.append(argument)
        if PurePath(words[0]).name not in _SHELLS or len(words) == 2:
            break
    if not words:
        return None
    return "Bash(" + " ".join(shlex.quote(word) for word in words) + ":*)"


def claude_bash_rules(gate_commands: Iterable[Sequence[str]]) -> tuple[str, ...]:
    """One rule per distinct gate program, in gate order."""
    rules: list[str] = []
    for command in gate_commands:
        rule = claude_bash_rule(command)
        if rule is not None and rule not in rules:
            rules.append(rule)
    return tuple(rules)


# ---- writing commented TOML ----

def _string(text: str) -> str:
    # A JSON string is a valid TOML basic string (same escapes, no "\/" from json.dumps).
    return json.dumps(text, ensure_ascii=False)


def _array(values: Sequence[str]) -> str:
    return "[" + ", ".join(_string(value) for value in values) + "]"


def _commented(code: str, comment: str) -> str:
    if not comment:
        return code
    return f"{code.ljust(_COMMENT_COLUMN - 1)} # {comment}"


def _command_lines(key: str, pieces: Sequence[tuple[Sequence[str], str]]) -> list[str]:
    """A multi-line array, one flag (with its value) per line, each with its reason."""
    lines = [f"{key} = ["]
    for words, comment in pieces:
        lines.append(_commented("  " + ", ".join(_string(word) for word in words) + ",", comment))
    lines.append("]")
    return lines


def _gate_lines(gate_command: Sequence[str], gate_env: Mapping[str, str] | None = None,
                comment: str = "") -> list[str]:
    # What `init` found of the guess (it could not run; a placeholder), wrapped as comment lines.
    said = textwrap.wrap(comment, width=_COMMENT_COLUMN + 40, initial_indent="# ", subsequent_indent="#   ")
    lines = [
        *said,
        "# The judge: exit 0 is green. Change the command to your project's own check.",
        "[gates.tests]",
        _commented(f"command = {_array(gate_command)}", ""),
        _commented('cwd = "worktree"', "run in the task's workspace, where the fixer runs it too"),
        'timeout = "15m"',
    ]
    if gate_env:
        table = ", ".join(f"{name} = {_string(value)}" for name, value in gate_env.items())
        lines.append(_commented(f"env = {{ {table} }}", "the package lives under src/"))
    return lines


def gate_toml(gate_command: Sequence[str], gate_env: Mapping[str, str] | None = None, comment: str = "") -> str:
    """The gate alone, as every recipe writes it: what plain `init` (no agent yet) writes too."""
    return "\n".join(_gate_lines(gate_command, gate_env, comment)) + "\n"


def _network_line(agent: str) -> list[str]:
    return [
        "# Inside the seat world only these hosts are reached (through failres's proxy); a local",
        '# model server is listed as "127.0.0.1:PORT", or found in the agent\'s own settings.',
        f"network = {_array(API_HOSTS[agent])}",
    ]


def _seat_lines(binding: str) -> list[str]:
    return [
        "[seats]",
        _commented(f'implementer = "{binding}"', "makes the change"),
        _commented(f'fixer = "{binding}"', "repairs a red gate (repair.max_attempts times)"),
    ]


def _claude_lines(gate_command: Sequence[str]) -> list[str]:
    rules = claude_bash_rules([gate_command])
    allowed: list[tuple[Sequence[str], str]] = []
    if rules:
        allowed.append((("--allowedTools", ",".join(rules)),
                        "the gate's program, so it can run the judge; other commands are denied"))
    lines = ["# Claude Code, non-interactive. Keep --allowedTools in step with the gate's program.",
             "[bindings.claude]"]
    lines += _command_lines("command", [
        (("claude",), ""),
        (("-p",), "print mode: one run on the prompt from stdin"),
        (("--permission-mode", "acceptEdits"), "edits need no approval; commands do"),
        *allowed,
        (("--output-format", "json"), "failres reads the denied calls from it"),
    ])
    lines += [
        _commented('env = { CLAUDE_CONFIG_DIR = "{dispatch_dir}/claude" }',
                   "its state and transcript, per dispatch"),
        "# `claude auth status` exits 0 once a login or an API key is configured: it proves",
        "# the binary starts and has credentials, not that the API answers.",
        'health = ["claude", "auth", "status"]',
        'timeout = "30m"',
        *_network_line("claude"),
    ]
    return lines


def _codex_lines() -> list[str]:
    lines = ["# Codex CLI, non-interactive; it never asks for approval in `exec`.", "[bindings.codex]"]
    lines += _command_lines("command", [
        (("codex", "exec"), "one run, then exit"),
        (("--sandbox", "workspace-write"), "writes in the workspace only; .git read-only"),
        (("-c", "allow_login_shell=false"), "its commands keep failres's PATH, as the gate does"),
        (("--color", "never"), "plain text in the kept logs"),
        (("-",), "the prompt from stdin"),
    ])
    lines += [
        _commented('env = { CODEX_HOME = "{dispatch_dir}/codex" }', "its state and session, per dispatch"),
        "# `codex login status` exits 0 once a login is stored in your CODEX_HOME: it proves the",
        "# binary starts and you are logged in, not that the API answers. If your key is only",
        '# in the environment, use ["codex", "--version"] (it proves only that the binary starts).',
        'health = ["codex", "login", "status"]',
        'timeout = "30m"',
        *_network_line("codex"),
    ]
    return lines


def _aider_lines() -> list[str]:
    lines = ["# aider, one message and exit. Its model and key come from your aider configuration.",
             "[bindings.aider]"]
    lines += _command_lines("command", [
        (("aider",), ""),
        (("--message-file", "{prompt_file}"), "the prompt; aider exits once it is answered"),
        (("--yes-always",), "nobody is at the terminal to answer"),
        (("--no-auto-commits",), "failres commits the tree it judged"),
        (("--no-dirty-commits",), "nor commit earlier seats' uncommitted work"),
        (("--no-gitignore",), "no .aider* line added to .gitignore"),
        (("--map-tokens", "0"), "no repository map, so no .aider.tags.cache"),
        (("--chat-history-file", "{dispatch_dir}/aider.chat.history.md"), "the transcript"),
        (("--input-history-file", "{dispatch_dir}/aider.input.history"), "kept out of the workspace too"),
        (("--llm-history-file", "{dispatch_dir}/aider.llm.history"), "every message to the model"),
        (("--no-auto-lint",), "the gate is the judge"),
        (("--no-suggest-shell-commands",), "it runs no commands of its own"),
        (("--no-detect-urls",), "a URL in the prompt is not fetched"),
        (("--no-check-update", "--no-show-release-notes", "--analytics-disable"), "no calls home"),
        (("--no-pretty",), "plain text in the kept logs"),
        (("--no-fancy-input",), "stdin is not a terminal"),
    ])
    lines += [
        "# `aider --version` proves only that the binary starts: aider has no offline login check.",
        'health = ["aider", "--version"]',
        'timeout = "30m"',
        *_network_line("aider"),
    ]
    return lines


def _script_lines() -> list[str]:
    return [
        "# Your own program, run in the task's workspace (a checkout of your repository): the",
        "# prompt is on stdin and in $FAILRES_PROMPT_FILE, the task in FAILRES_* variables.",
        "[bindings.script]",
        _commented('command = ["./tools/agent", "--task", "{task}", "--mode", "{mode}"]', ""),
        "# No health command: when the program looks down, the probe checks that it can be started.",
        'timeout = "30m"',
    ]


def recipe_toml(agent: str, gate_command: Sequence[str] = DEFAULT_GATE,
                gate_env: Mapping[str, str] | None = None, gate_comment: str = "") -> str:
    """The gate, binding and seats `init --agent AGENT` writes, as commented TOML.

    ValueError for an agent without a recipe (the caller names the choices).
    """
    if agent not in AGENTS:
        msg = f'no recipe for agent "{agent}"; known: {", ".join(AGENTS)}'
        raise ValueError(msg)
    binding = {
        "claude": lambda: _claude_lines(gate_command),
        "codex": _codex_lines,
        "aider": _aider_lines,
        "script": _script_lines,
    }[agent]()
    sections = [_gate_lines(gate_command, gate_env, gate_comment), binding, _seat_lines(agent)]
    return "\n\n".join("\n".join(section) for section in sections) + "\n"
