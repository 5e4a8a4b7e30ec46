"""The real Codex CLI as both seats of `git failres run`, configured by `init --agent codex`.

What the person adds to point it at the scripted model is their own Codex
configuration (`~/.codex/config.toml`: the model and a provider with its base URL),
which failres links into each dispatch's CODEX_HOME, and the provider's key in the
environment.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_runs import model_server  # noqa: F401 - a fixture
from loop_runs import (
    CONSTRAINED_PHRASE,
    FIX_PHRASE,
    PROMPT_QUOTING_A_REQUEST,
    PersonsProject,
    agent_on_path,  # noqa: F401 - a fixture
    assert_fixer_repaired,
    assert_request_became_decision,
    assert_violation_undone_and_retried,
)
from model_server import codex_exec, say



@pytest.fixture
def project(tmp_path: Path, cli, agent_on_path, isolated_home: Path,
            monkeypatch: pytest.MonkeyPatch) -> PersonsProject:
    agent_on_path("codex")
    monkeypatch.setenv("SCRIPTED_API_KEY", "dummy")
    return PersonsProject.create(tmp_path, "codex", cli)


def point_at(server, home: Path) -> None:
    """The person's ~/.codex/config.toml: their model, and a provider whose key is in the environment."""
    (home / ".codex").mkdir(exist_ok=True)
    (home / ".codex" / "config.toml").write_text(
        'model = "fake-model"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
        f'name = "Scripted"\nbase_url = "{server.base_url}/v1"\nenv_key = "SCRIPTED_API_KEY"\n')


def tool_outputs(request) -> list[str]:
    """What Codex sent back as the output of the model's tool calls, in the request's order."""
    return [str(item.get("output")) for item in request.body["input"] if item.get("type") == "function_call_output"]


def messages_in_rollout(path: Path) -> list[tuple[str, str]]:
    """(role, text) of each message in a Codex session rollout file, in order."""
    said = []
    for line in path.read_text().splitlines():
        payload = json.loads(line).get("payload") or {}
        if payload.get("type") == "message":
            said += [(payload["role"], part["text"]) for part in payload["content"] if "text" in part]
    return said


def test_codex_fixer_repairs_the_red_gate_its_implementer_left(project: PersonsProject, cli, model_server,
                                                               isolated_home: Path):
    server = model_server(
        [codex_exec("sed -i 's/a - b/a * b/' src/calc.py"), say("add() now multiplies.")],
        by_phrase={FIX_PHRASE: [codex_exec("sed -i 's/a [*] b/a + b/' src/calc.py"),
                                codex_exec("python3 -m pytest -q"), say("Fixed; the judge passes.")]})
    point_at(server, isolated_home)

    result = project.run(cli)

    assert_fixer_repaired(project, result)
    # The fixer ran the judge in its sandbox and saw it pass.
    assert "1 passed" in tool_outputs(server.scripted(phrase=FIX_PHRASE)[-1])[-1]
    implementer_log, fixer_log = project.dispatch_logs()
    for log, phrase, last_words in ((implementer_log, "", "add() now multiplies."),
                                    (fixer_log, FIX_PHRASE, "Fixed; the judge passes.")):
        prompt = (log / "prompt.md").read_text()
        assert prompt.strip() in server.scripted(phrase=phrase)[0].user_text()
        said = messages_in_rollout(log / "transcript.jsonl")  # Codex's session, from its CODEX_HOME
        assert prompt.strip() in [text.strip() for role, text in said if role == "user"]
        assert said[-1] == ("assistant", last_words)
    assert f"## {FIX_PHRASE}" in (fixer_log / "prompt.md").read_text()
    assert project.state(cli) == "committed"


def test_codex_scope_violation_gets_a_constrained_retry_that_names_the_file(project: PersonsProject, cli,
                                                                          model_server, isolated_home: Path):
    server = model_server(
        [codex_exec("sed -i 's/a - b/a + b/' src/calc.py && sed -i 's/VALUE = 1/VALUE = 2/' src/other.py"),
         say("Fixed add() and bumped VALUE.")],
        by_phrase={CONSTRAINED_PHRASE: [codex_exec("sed -i 's/a - b/a + b/' src/calc.py"), say("Fixed add() only.")]})
    point_at(server, isolated_home)

    result = project.run(cli)

    assert_violation_undone_and_retried(project, result, server)


def test_codex_scope_request_becomes_a_decision_and_the_echoed_example_does_not(project: PersonsProject, cli,
                                                                              model_server, isolated_home: Path):
    server = model_server([codex_exec("cat src/other.py"),
                           say("add() is right; VALUE is not.\nSCOPE-REQUEST: src/other.py — VALUE feeds the sum")])
    point_at(server, isolated_home)

    result = project.run(cli, PROMPT_QUOTING_A_REQUEST)

    assert_request_became_decision(project, result, cli)
    [log] = project.dispatch_logs()
    assert "SCOPE-REQUEST: README.md — why" in (log / "seat.log").read_text()  # Codex printed its prompt back
