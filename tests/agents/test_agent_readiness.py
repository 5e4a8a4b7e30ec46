"""`init --agent X` says whether X can run here (on PATH, logged in) and how to install it; the
configuration is written all the same, and `run --dry-run` names the same install line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import run_failres

# Read now: the isolated_home fixture moves HOME before each test.
AGENTS_BIN = Path(os.environ.get("FAILRES_TEST_AGENTS")
                  or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "failres" / "test-agents"
                  ) / "bin"
BARE_PATH = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])  # git, python; no agents
PLAN = 'slug = "s"\n[[tasks]]\nid = "t1"\nprompt = "p"\nfiles = ["README.md"]\n'


def env_with(path: str, **extra: str) -> dict[str, str]:
    return {**os.environ, "PATH": path, **extra}


def init_json(repo: Path, agent: str, env: dict[str, str]):
    proc = run_failres(repo, "init", "--agent", agent, "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr.splitlines()


@pytest.mark.parametrize(("agent", "install"), [
    ("claude", "npm install -g @anthropic-ai/claude-code"),
    ("codex", "npm install -g @openai/codex"),
    ("aider", "pipx install aider-chat (or: python3 -m pip install --user aider-chat)"),
])
def test_an_agent_not_on_path_is_named_with_its_install_line_and_the_config_is_written(
        plain_repo: Path, agent: str, install: str) -> None:
    document, err = init_json(plain_repo, agent, env_with(BARE_PATH))
    assert document["wroteConfig"] and f"[bindings.{agent}]" in (plain_repo / ".failres.toml").read_text()
    assert document["agent"] == {"agent": agent, "program": agent, "path": None, "loggedIn": None, "ready": False,
                                 "install": install}
    assert err == [f'warning: {agent} is not installed here: "{agent}" is not on PATH',
                   f"hint: install it: {install}; or name it in the command as a program on PATH, or a path from "
                   "the repository top; the configuration is written and works once it is"]
    (plain_repo / "plan.toml").write_text(PLAN)
    dry = run_failres(plain_repo, "run", "plan.toml", "--dry-run", env=env_with(BARE_PATH))
    assert dry.returncode == 2
    assert f'the implementer seat\'s program "{agent}" cannot be found: install it: {install}; or name it in the ' \
           "command as a program on PATH, or a path from the repository top" in dry.stdout + dry.stderr


def test_the_people_output_ends_with_what_is_missing(plain_repo: Path) -> None:
    proc = run_failres(plain_repo, "init", "--agent", "claude", env=env_with(BARE_PATH))
    assert proc.returncode == 0 and proc.stdout.startswith("wrote ")
    assert proc.stderr.splitlines()[-1].startswith("hint: install it: npm install -g @anthropic-ai/claude-code")


def real(name: str) -> Path:
    binary = AGENTS_BIN / name
    if not binary.exists():
        pytest.skip(f"the real {name} is not installed (bash tests/agents/install.sh)")
    return binary


def test_the_real_claude_without_a_login_is_found_and_said_to_be_logged_out(plain_repo: Path, tmp_path: Path) -> None:
    real("claude")
    env = env_with(f"{AGENTS_BIN}{os.pathsep}{BARE_PATH}", HOME=str(tmp_path), CLAUDE_CONFIG_DIR=str(tmp_path / "c"))
    env.pop("ANTHROPIC_API_KEY", None)
    document, err = init_json(plain_repo, "claude", env)
    assert document["agent"]["path"] == str(AGENTS_BIN / "claude")
    assert (document["agent"]["loggedIn"], document["agent"]["ready"]) == (False, False)
    assert err == [f"warning: claude is installed ({AGENTS_BIN / 'claude'}) but not logged in: "
                   "`claude auth status` says so",
                   "hint: log in: claude auth login (or set ANTHROPIC_API_KEY)"]


def test_the_real_claude_with_a_key_is_ready_and_init_says_nothing_more(plain_repo: Path, tmp_path: Path) -> None:
    real("claude")
    env = env_with(f"{AGENTS_BIN}{os.pathsep}{BARE_PATH}", HOME=str(tmp_path), CLAUDE_CONFIG_DIR=str(tmp_path / "c"),
                   ANTHROPIC_API_KEY="sk-ant-not-a-real-key")
    document, err = init_json(plain_repo, "claude", env)
    assert (document["agent"]["loggedIn"], document["agent"]["ready"], err) == (True, True, [])


def test_the_real_codex_without_a_login_is_said_to_be_logged_out(plain_repo: Path, tmp_path: Path) -> None:
    real("codex")
    env = env_with(f"{AGENTS_BIN}{os.pathsep}{BARE_PATH}", HOME=str(tmp_path), CODEX_HOME=str(tmp_path / "codex"))
    env.pop("OPENAI_API_KEY", None)
    (tmp_path / "codex").mkdir()
    document, err = init_json(plain_repo, "codex", env)
    assert (document["agent"]["loggedIn"], document["agent"]["ready"]) == (False, False)
    assert err[-1] == "hint: log in: codex login (or: printenv OPENAI_API_KEY | codex login --with-api-key)"


def test_the_real_aider_has_no_login_check_and_is_ready_once_found(plain_repo: Path, tmp_path: Path) -> None:
    real("aider")
    document, err = init_json(plain_repo, "aider", env_with(f"{AGENTS_BIN}{os.pathsep}{BARE_PATH}",
                                                            HOME=str(tmp_path)))
    assert (document["agent"]["loggedIn"], document["agent"]["ready"], err) == (None, True, [])


def test_the_script_recipe_asks_for_the_persons_own_program(plain_repo: Path) -> None:
    document, err = init_json(plain_repo, "script", env_with(BARE_PATH))
    assert document["agent"]["ready"] is False
    assert err[0] == 'warning: the script binding\'s program "./tools/agent" is not in this repository yet'
    agent = plain_repo / "tools" / "agent"
    agent.parent.mkdir()
    agent.write_text("#!/bin/sh\ncat >/dev/null\n")
    agent.chmod(0o755)
    proc = run_failres(plain_repo, "init", "--agent", "script", "--force", "--json", env=env_with(BARE_PATH))
    assert (json.loads(proc.stdout)["agent"]["ready"], proc.stderr) == (True, "")
