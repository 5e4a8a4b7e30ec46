"""The real aider, run as `init --agent aider` binds it, against the scripted model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_runs import APP, git, make_workspace, run_health, run_recipe, model_server  # noqa: F401 - model_server is a fixture
from failres.agents.homes import transcript_places
from failres.hostside.transcripts import find_transcripts
from model_server import aider_replace

PROMPT = "Make answer() return 2. (task s/t1)"

# The model names a file that is not in the chat yet: aider adds it (--yes-always) and asks
# again, so a real run takes two turns for one edit; the script answers both the same way.
EDIT = aider_replace("app.py", APP, APP.replace("return 1", "return 2"), text="Changing answer().")


@pytest.fixture
def person(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A person whose ~/.aider.conf.yml names the model (the endpoint is set per test)."""
    metadata = isolated_home / ".aider.model.metadata.json"
    metadata.write_text(json.dumps({"openai/fake-model": {
        "max_input_tokens": 32000, "max_output_tokens": 4096, "input_cost_per_token": 0,
        "output_cost_per_token": 0, "litellm_provider": "openai", "mode": "chat"}}))
    # litellm would download its price list at import; the local copy it ships is enough.
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return isolated_home


def endpoint(person: Path, base_url: str) -> None:
    (person / ".aider.conf.yml").write_text(
        "model: openai/fake-model\nedit-format: diff\n"
        f"openai-api-base: {base_url}/v1\nopenai-api-key: person-key\n"
        f"model-metadata-file: {person / '.aider.model.metadata.json'}\nshow-model-warnings: false\n")


def test_aider_recipe_leaves_only_its_edit_in_the_workspace(person: Path, model_server, tmp_path: Path):
    workspace = make_workspace(person)
    server = model_server([EDIT, EDIT])
    endpoint(person, server.base_url)

    dispatch = run_recipe("aider", workspace, tmp_path / "dispatch", PROMPT)

    assert dispatch.proc.returncode == 0, dispatch.proc.stdout + dispatch.proc.stderr
    assert (workspace / "app.py").read_text() == APP.replace("return 1", "return 2")
    # No .gitignore line, no chat history, no tags cache, no commit: only the edit.
    assert dispatch.status() == " M app.py\n"
    assert git(workspace, "log", "--format=%s") == "base\n"
    assert PROMPT in json.dumps(server.scripted()[0].body["messages"])
    assert {request.credential for request in server.scripted()} == {"person-key"}
    transcripts = find_transcripts(transcript_places(dispatch.argv, dispatch.env))
    assert sorted(path.name for _, path in transcripts) == ["aider.chat.history.md", "aider.llm.history"]
    assert PROMPT in (tmp_path / "dispatch" / "aider.chat.history.md").read_text()


def test_aider_recipe_commits_nothing_of_a_workspace_an_earlier_seat_left_dirty(person: Path, model_server,
                                                                               tmp_path: Path):
    workspace = make_workspace(person)
    (workspace / "notes.py").write_text("NOTE = 1\n")  # the implementer's uncommitted work, before a fix
    server = model_server([EDIT, EDIT])
    endpoint(person, server.base_url)

    dispatch = run_recipe("aider", workspace, tmp_path / "dispatch", PROMPT)

    assert dispatch.proc.returncode == 0
    assert git(workspace, "log", "--format=%s") == "base\n"
    assert dispatch.status() == " M app.py\n?? notes.py\n"


def test_aider_health_probe_proves_only_that_the_binary_starts(person: Path):
    assert not (person / ".aider.conf.yml").exists()  # no model, no key: the probe passes all the same
    result = run_health("aider", dict(os.environ))
    assert result.returncode == 0
    assert result.stdout.startswith("aider ")
