"""Whether an agent `init --agent X` wrote a binding for can run here, and how to make it.

A recipe that names a program the machine does not have is a configuration that fails at
the first dispatch, long after the person left the terminal where `init` ran. So `init`
asks at once: is the program on PATH, and, for the agents that have an offline check of
their own (the same commands the recipes use as `health`), is the person logged in. It
still writes the configuration (the person may install the agent afterwards), and says
what is missing with the line that installs it; `run --dry-run` names the same line.

The checks run the person's own agent in the person's own environment, with a timeout:
they read the person's login, never change it, and never reach the network on their own
(`claude auth status` and `codex login status` read local state).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath

from failres.agents.program_path import not_found_detail, not_found_fix

# How each recipe's program is installed for a person's own use (the packages tests/agents/
# install pins), and how its login is made. The script recipe's program is the person's own.
INSTALL: dict[str, str] = {
    "claude": "npm install -g @anthropic-ai/claude-code",
    "codex": "npm install -g @openai/codex",
    "aider": "pipx install aider-chat (or: python3 -m pip install --user aider-chat)",
}
LOGIN_CHECK: dict[str, tuple[str, ...]] = {
    "claude": ("claude", "auth", "status"),
    "codex": ("codex", "login", "status"),
}
LOGIN: dict[str, str] = {
    "claude": "claude auth login (or set ANTHROPIC_API_KEY)",
    "codex": "codex login (or: printenv OPENAI_API_KEY | codex login --with-api-key)",
}
PROGRAM: dict[str, str] = {"claude": "claude", "codex": "codex", "aider": "aider", "script": "./tools/agent"}

_CHECK_TIMEOUT = 20.0


@dataclass(frozen=True)
class AgentReadiness:
    """What `init --agent X` found of X on this machine."""

    agent: str
    program: str
    path: str | None  # where the program is; None when it is not there
    logged_in: bool | None  # None: not asked (not installed, or the agent has no offline check)
    install: str  # how to get the program ("" for the person's own script)
    login: str  # how to log in ("" where there is no login to make)

    @property
    def ready(self) -> bool:
        return self.path is not None and self.logged_in is not False

    def problem(self) -> tuple[str, str] | None:
        """(what is missing, how to fix it), or None when nothing is."""
        if self.path is None:
            if self.agent == "script":
                return (f'the script binding\'s program "{self.program}" is not in this repository yet',
                        "write your agent there (it gets the prompt on stdin), or change [bindings.script] command")
            # The same words as `doctor` and `run --dry-run` (`program_path`): one rule for where a program is.
            return (f"{self.agent} is not installed here: {not_found_detail(self.program)}",
                    f"{not_found_fix(self.program, self.install)}; the configuration is written and works once it is")
        if self.logged_in is False:
            check = " ".join(LOGIN_CHECK[self.agent])
            return (f"{self.agent} is installed ({self.path}) but not logged in: `{check}` says so",
                    f"log in: {self.login}")
        return None

    def document(self) -> dict[str, object]:
        return {"agent": self.agent, "program": self.program, "path": self.path, "loggedIn": self.logged_in,
                "ready": self.ready, "install": self.install or None}


def install_hint(program: str) -> str | None:
    """How to install a recipe's program, by its name ("claude", "/usr/bin/codex"); None for others."""
    name = PurePath(program).name
    for agent, binary in PROGRAM.items():
        if agent in INSTALL and name == binary:
            return INSTALL[agent]
    return None


def _login_status(command: tuple[str, ...], environ: Mapping[str, str],
                  run: Callable[..., subprocess.CompletedProcess]) -> bool | None:
    try:
        proc = run(list(command), stdin=subprocess.DEVNULL, capture_output=True, env=dict(environ),
                   timeout=_CHECK_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None  # it could not say: neither a login nor its absence is known
    return proc.returncode == 0


def agent_readiness(agent: str, top: Path, environ: Mapping[str, str] | None = None,
                    run: Callable[..., subprocess.CompletedProcess] = subprocess.run) -> AgentReadiness:
    """Look for `agent`'s program (on PATH; the script's under `top`) and ask its login status."""
    env = os.environ if environ is None else environ
    program = PROGRAM[agent]
    if agent == "script":
        candidate = top / program
        found = str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None
        return AgentReadiness(agent, program, found, None, "", "")
    found = shutil.which(program, path=env.get("PATH", os.defpath))
    logged_in = None
    if found is not None and agent in LOGIN_CHECK:
        logged_in = _login_status((found, *LOGIN_CHECK[agent][1:]), env, run)
    return AgentReadiness(agent, program, found, logged_in, INSTALL.get(agent, ""), LOGIN.get(agent, ""))
