"""Running the real agent CLIs through the recipes, the way the loop dispatches a seat.

The binaries come from tests/agents/install.sh (pinned versions, cached under
$FAILRES_TEST_AGENTS, default ~/.cache/failres/test-agents). On a person's machine
without them the tests skip and say how to install them; under CI=true a missing
binary fails the run, so a broken install can never pass as "skipped".

What a test configures is what a person would: their own agent configuration in
their (isolated) home, which the per-dispatch agent homes must carry over. The
recipe's command line is run exactly as `init --agent` writes it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from failres.hostside.logins import prepare_agent_homes
from failres.agents.recipes import recipe_toml
from failres.config.loading import parse_config
from failres.config.placeholders import render_command
from model_server import ModelServer, Step

# Read now: the isolated_home fixture removes FAILRES_* and moves HOME before each test.
_AGENTS_ROOT = Path(os.environ.get("FAILRES_TEST_AGENTS")
                    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "failres" / "test-agents")
AGENTS_BIN = _AGENTS_ROOT / "bin"
IN_CI = os.environ.get("CI", "").lower() == "true"

WORKSPACE_IN_CACHE = Path(".cache/failres/workspaces/repo-0123abcd/s/t1")
APP = "def answer():\n    return 1\n"


def agent_binary(name: str) -> Path:
    """The installed CLI `name`; skip (or, under CI=true, fail) when it is not there."""
    path = AGENTS_BIN / name
    if path.exists() and os.access(path, os.X_OK):
        return path
    found = shutil.which(name)
    if found:
        return Path(found)
    reason = f"{name} is not installed (run tests/agents/install.sh; looked in {AGENTS_BIN} and on PATH)"
    if IN_CI:
        pytest.fail(f"CI=true: {reason}")
    pytest.skip(reason)


# A fixture here, not in a conftest.py: a second conftest module would shadow tests/conftest.py
# for the test modules that import from it. Test modules import it by name.
@pytest.fixture
def model_server() -> Iterator[Callable[..., ModelServer]]:
    """Start a scripted model server; every one started is stopped after the test.

    `model_server(script)`, or `model_server(script, by_phrase={phrase: script})` for a
    server that plays more than one dispatch (see ModelServer).
    """
    started: list[ModelServer] = []

    def start(script: list[Step], by_phrase: dict[str, list[Step]] | None = None) -> ModelServer:
        server = ModelServer(script, dict(by_phrase or {})).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make_workspace(home: Path, relative: Path = WORKSPACE_IN_CACHE) -> Path:
    """A task workspace as failres lays it out: a git repository of its own, one commit."""
    workspace = home / relative
    workspace.mkdir(parents=True)
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "app.py").write_text(APP)
    git(workspace, "add", "app.py")
    git(workspace, "commit", "-q", "-m", "base")
    return workspace


@dataclass
class Dispatch:
    """One run of a recipe's binding, and where it left its things."""

    proc: subprocess.CompletedProcess
    workspace: Path
    dispatch_dir: Path
    argv: list[str]
    env: dict[str, str]

    def status(self) -> str:
        """The workspace's `git status`, untracked and ignored files included."""
        return git(self.workspace, "status", "--porcelain", "--ignored", "--untracked-files=all")


def run_recipe(agent: str, workspace: Path, dispatch_dir: Path, prompt: str, *,
               person_env: Mapping[str, str] | None = None, gate: tuple[str, ...] | None = None,
               timeout: float = 180) -> Dispatch:
    """Dispatch the `init --agent AGENT` binding once, the way the loop does.

    Placeholders filled (in the command and in the binding's env), the prompt on stdin
    and in the prompt file, the FAILRES_* variables set, the agent's home prepared.
    """
    binary_dir = str(agent_binary(agent).parent)
    config = parse_config(recipe_toml(agent, gate) if gate else recipe_toml(agent), "recipe")
    binding = config.bindings[agent]
    dispatch_dir.mkdir(parents=True, exist_ok=True)
    prompt_file = dispatch_dir / "prompt.md"
    prompt_file.write_text(prompt)
    values = {"worktree": str(workspace), "slug": "s", "task": "t1", "mode": "implement", "attempt": "1",
              "prompt_file": str(prompt_file), "dispatch_dir": str(dispatch_dir), "repo": ""}
    person = dict(os.environ if person_env is None else person_env)
    person["PATH"] = binary_dir + os.pathsep + person.get("PATH", "")
    env = dict(person)
    env.update({name: render_command([value], values)[0] for name, value in binding.env.items()})
    env.update({"FAILRES_SLUG": "s", "FAILRES_TASK": "t1", "FAILRES_MODE": "implement", "FAILRES_ATTEMPT": "1",
                "FAILRES_WORKTREE": str(workspace), "FAILRES_PROMPT_FILE": str(prompt_file)})
    prepare_agent_homes(env, person, Path(person["HOME"]))
    argv = render_command(binding.command, values)
    proc = subprocess.run(argv, cwd=workspace, env=env, input=prompt, capture_output=True, text=True,
                          timeout=timeout)
    return Dispatch(proc, workspace, dispatch_dir, argv, env)


def run_health(agent: str, env: Mapping[str, str]) -> subprocess.CompletedProcess:
    """The recipe's health command, as the probe runs it."""
    binding = parse_config(recipe_toml(agent), "recipe").bindings[agent]
    probe_env = dict(env)
    probe_env["PATH"] = str(agent_binary(agent).parent) + os.pathsep + probe_env.get("PATH", "")
    return subprocess.run(list(binding.health), env=probe_env, capture_output=True, text=True, timeout=120)
