"""The real aider as both seats of `git failres run`, configured by `init --agent aider`.

What the person adds to point it at the scripted model is their own aider
configuration, `~/.aider.conf.yml` (the model, the endpoint, a key, the model's
metadata), which the recipe leaves to them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_runs import model_server  # noqa: F401 - a fixture
from loop_runs import (
    BROKEN,
    CALC,
    CONSTRAINED_PHRASE,
    FIXED,
    FIX_PHRASE,
    OTHER,
    OTHER_FILE,
    PROMPT_QUOTING_A_REQUEST,
    WRONG,
    PersonsProject,
    agent_on_path,  # noqa: F401 - a fixture
    assert_fixer_repaired,
    assert_request_became_decision,
    assert_violation_undone_and_retried,
)
from model_server import Step, aider_replace, say



def reply(step: Step) -> list[Step]:
    """One answer, given twice: a reply naming a file not yet in the chat makes aider add the
    file and ask again (measured), so each dispatch takes two requests for one edit."""
    return [step, step]


@pytest.fixture
def project(tmp_path: Path, cli, agent_on_path, isolated_home: Path,
            monkeypatch: pytest.MonkeyPatch) -> PersonsProject:
    agent_on_path("aider")
    metadata = isolated_home / ".aider.model.metadata.json"
    metadata.write_text(json.dumps({"openai/fake-model": {
        "max_input_tokens": 32000, "max_output_tokens": 4096, "input_cost_per_token": 0,
        "output_cost_per_token": 0, "litellm_provider": "openai", "mode": "chat"}}))
    # litellm would download its price list at import; the copy it ships is enough.
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return PersonsProject.create(tmp_path, "aider", cli)


def point_at(server, home: Path) -> None:
    (home / ".aider.conf.yml").write_text(
        "model: openai/fake-model\nedit-format: diff\n"
        f"openai-api-base: {server.base_url}/v1\nopenai-api-key: dummy\n"
        f"model-metadata-file: {home / '.aider.model.metadata.json'}\nshow-model-warnings: false\n")


def test_aider_fixer_repairs_the_red_gate_its_implementer_left(project: PersonsProject, cli, model_server,
                                                               isolated_home: Path):
    server = model_server(reply(aider_replace(CALC, BROKEN, WRONG, text="add() now multiplies.")),
                          by_phrase={FIX_PHRASE: reply(aider_replace(CALC, WRONG, FIXED, text="add() adds."))})
    point_at(server, isolated_home)

    result = project.run(cli)

    assert_fixer_repaired(project, result)
    implementer_log, fixer_log = project.dispatch_logs()
    for log, phrase in ((implementer_log, ""), (fixer_log, FIX_PHRASE)):
        prompt = (log / "prompt.md").read_text()
        assert prompt.strip() in server.scripted(phrase=phrase)[0].user_text()
        # aider's chat history, kept from {dispatch_dir}: the prompt as a "####" block, then the reply.
        history = "\n".join(line.rstrip() for line in (log / "transcript.md").read_text().splitlines())
        assert "\n".join(f"#### {line}".rstrip() for line in prompt.strip().splitlines()) in history
        assert f"{CALC}\n```\n<<<<<<< SEARCH" in history
    assert f"## {FIX_PHRASE}" in (fixer_log / "prompt.md").read_text()
    assert project.state(cli) == "committed"


def test_aider_scope_violation_gets_a_constrained_retry_that_names_the_file(project: PersonsProject, cli,
                                                                          model_server, isolated_home: Path):
    both = aider_replace(CALC, BROKEN, FIXED, text="Fixing add() and VALUE.")
    both = Step(text=both.text + "\n" + aider_replace(OTHER_FILE, OTHER, "VALUE = 2\n").text)
    server = model_server(reply(both),
                          by_phrase={CONSTRAINED_PHRASE: reply(aider_replace(CALC, BROKEN, FIXED, text="add() only."))})
    point_at(server, isolated_home)

    result = project.run(cli)

    assert_violation_undone_and_retried(project, result, server)


def test_aider_scope_request_becomes_a_decision_and_the_quoted_example_does_not(project: PersonsProject, cli,
                                                                                model_server, isolated_home: Path):
    server = model_server(reply(say("add() is right; VALUE is not.\n"
                                    "SCOPE-REQUEST: src/other.py — VALUE feeds the sum")))
    point_at(server, isolated_home)

    result = project.run(cli, PROMPT_QUOTING_A_REQUEST)

    assert_request_became_decision(project, result, cli)
