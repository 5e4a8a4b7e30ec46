"""The learning commands `init --learn-with-agent` writes, run with the real pinned CLIs
against the scripted model: the prompt goes in on stdin, the reflector's JSON comes back
on stdout, and nothing is written where the command runs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from agent_runs import agent_binary, model_server  # noqa: F401 - model_server is a fixture
from failres.agents.learning_recipes import learning_toml
from failres.config.loading import parse_config
from lessons.learning.interventions import Intervention, Trigger
from lessons.learning.providers import provider_from_config
from lessons.learning.reflector import ask_reflector
from model_server import say

CORRECTION = "thanks, that works. Always run ruff before you say you're done."
DIRECTIVE = "Run the linter before reporting a change as done."
REPLY = json.dumps({"skip": False, "reflexion": DIRECTIVE, "error_type": "premature-action", "confidence": 0.8})


def person_with(agent: str, home: Path, base_url: str) -> dict[str, str]:
    """The person's own configuration of the agent, pointing at the scripted model."""
    env = dict(os.environ, PATH=f"{agent_binary(agent).parent}{os.pathsep}{os.environ['PATH']}")
    if agent == "claude":
        env.update(ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="person-key", CLAUDE_CONFIG_DIR=str(home / ".claude"),
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1")
    elif agent == "codex":
        (home / ".codex").mkdir()
        (home / ".codex" / "config.toml").write_text(
            'model = "fake-model"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
            f'name = "Scripted"\nbase_url = "{base_url}/v1"\nenv_key = "SCRIPTED_KEY"\n')
        env.update(CODEX_HOME=str(home / ".codex"), SCRIPTED_KEY="person-key")
    else:
        metadata = home / ".aider.model.metadata.json"
        metadata.write_text(json.dumps({"openai/fake-model": {
            "max_input_tokens": 32000, "max_output_tokens": 4096, "input_cost_per_token": 0,
            "output_cost_per_token": 0, "litellm_provider": "openai", "mode": "chat"}}))
        (home / ".aider.conf.yml").write_text(
            f"model: openai/fake-model\nopenai-api-base: {base_url}/v1\nopenai-api-key: person-key\n"
            f"model-metadata-file: {metadata}\nshow-model-warnings: false\n")
        env.update(LITELLM_LOCAL_MODEL_COST_MAP="True")
    return env


@pytest.mark.parametrize("agent", ["claude", "codex", "aider"])
def test_the_agents_print_mode_answers_the_reflector_and_writes_nothing(agent: str, isolated_home: Path,
                                                                        model_server, tmp_path: Path):
    server = model_server([say(REPLY), say(REPLY), say(REPLY)])
    env = person_with(agent, isolated_home, server.base_url)
    settings = parse_config(learning_toml(agent), "learning").learning
    where = tmp_path / "repo"
    where.mkdir()
    subprocess.run(["git", "init", "-q", str(where)], check=True)
    provider = provider_from_config(settings, cwd=str(where))
    provider = type(provider)(provider.argv, timeout=180, cwd=provider.cwd, env=env)
    moment = Intervention(trigger=Trigger.FOLLOWUP, message_index=3, intervention=CORRECTION,
                          context="The agent said: done", aftermath="", session_id="s1", followup="correction")
    verdict = ask_reflector(provider, moment)
    assert verdict is not None and verdict.reflexion == DIRECTIVE
    assert any(CORRECTION in json.dumps(request.body) for request in server.scripted())
    assert sorted(p.name for p in where.iterdir()) == [".git"]
