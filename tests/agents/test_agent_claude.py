"""The real Claude Code, run as `init --agent claude` binds it, against the scripted model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_runs import APP, make_workspace, run_health, run_recipe, model_server  # noqa: F401 - model_server is a fixture
from failres.agents.claude_result import claude_result, is_seat_denied
from failres.agents.homes import transcript_places
from failres.hostside.transcripts import find_transcripts
from model_server import claude_tools, say

PROMPT = "Make answer() return 2. (task s/t1)"


@pytest.fixture
def person(isolated_home: Path) -> Path:
    """A person whose Claude Code settings (in ~/.claude) name the endpoint and a key helper.

    Both reach the agent only if the per-dispatch config dir carries the person's
    settings over: otherwise it would have no key and no endpoint but the real API.
    """
    settings = isolated_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"apiKeyHelper": "echo person-key", "env": {}}))
    return isolated_home


def endpoint(person: Path, base_url: str) -> None:
    settings = person / ".claude" / "settings.json"
    document = json.loads(settings.read_text())
    document["env"] = {"ANTHROPIC_BASE_URL": base_url, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                       "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1"}
    settings.write_text(json.dumps(document))


def test_claude_recipe_edits_a_file_in_a_workspace_under_the_home_cache(person: Path, model_server, tmp_path: Path):
    workspace = make_workspace(person)
    app = str(workspace / "app.py")
    server = model_server([
        claude_tools(("Read", {"file_path": app})),
        claude_tools(("Edit", {"file_path": app, "old_string": "return 1", "new_string": "return 2"})),
        say("answer() now returns 2."),
    ])
    endpoint(person, server.base_url)

    dispatch = run_recipe("claude", workspace, tmp_path / "dispatch", PROMPT)

    assert dispatch.proc.returncode == 0, dispatch.proc.stderr
    assert (workspace / "app.py").read_text() == APP.replace("return 1", "return 2")
    assert dispatch.status() == " M app.py\n"  # its state went to the dispatch dir, none to the workspace
    result = claude_result(dispatch.proc.stdout)
    assert result is not None and not result.was_denied and not result.is_error
    assert result.result_text == "answer() now returns 2."
    first = server.scripted("/v1/messages")[0]
    assert PROMPT in json.dumps(first.body["messages"][0])
    assert {request.credential for request in server.scripted()} == {"person-key"}
    transcripts = find_transcripts(transcript_places(dispatch.argv, dispatch.env))
    assert [(agent, path.name) for agent, path in transcripts] == [("claude", f"{result.session_id}.jsonl")]
    assert transcripts[0][1].is_relative_to(tmp_path / "dispatch" / "claude" / "projects")


def test_claude_recipe_may_run_the_gates_program(person: Path, model_server, tmp_path: Path):
    workspace = make_workspace(person)
    server = model_server([
        claude_tools(("Bash", {"command": "python3 -c 'print(6 * 7)'", "description": "run the judge"})),
        say("ran it"),
    ])
    endpoint(person, server.base_url)

    dispatch = run_recipe("claude", workspace, tmp_path / "dispatch", PROMPT)

    result = claude_result(dispatch.proc.stdout)
    assert result is not None and result.denied == ()
    tool_result = server.scripted("/v1/messages")[1].body["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result" and tool_result["content"] == "42"


def test_claude_recipe_denies_commands_other_than_the_gates_and_reports_them(person: Path, model_server,
                                                                             tmp_path: Path):
    workspace = make_workspace(person)
    server = model_server([
        claude_tools(("Bash", {"command": "node -e 'console.log(1)'", "description": "not the judge"})),
        say("could not run it"),
    ])
    endpoint(person, server.base_url)

    dispatch = run_recipe("claude", workspace, tmp_path / "dispatch", PROMPT)

    assert dispatch.proc.returncode == 0
    result = claude_result(dispatch.proc.stdout)
    assert result is not None
    assert [(call.tool, call.summary) for call in result.denied] == [("Bash", "node -e 'console.log(1)'")]


def test_claude_reports_every_edit_denied_in_a_workspace_under_a_git_dir_yet_exits_0(person: Path, model_server,
                                                                                    tmp_path: Path):
    """Why workspaces left `.git/`: there Claude Code refuses every edit as a sensitive file."""
    workspace = person / "project" / ".git" / "failres" / "worktrees" / "s" / "t1"
    workspace.mkdir(parents=True)
    (workspace / "app.py").write_text(APP)
    app = str(workspace / "app.py")
    server = model_server([
        claude_tools(("Read", {"file_path": app})),
        claude_tools(("Edit", {"file_path": app, "old_string": "return 1", "new_string": "return 2"})),
        say("answer() now returns 2."),  # the agent's own word is no evidence
    ])
    endpoint(person, server.base_url)

    dispatch = run_recipe("claude", workspace, tmp_path / "dispatch", PROMPT)

    assert dispatch.proc.returncode == 0
    assert (workspace / "app.py").read_text() == APP
    result = claude_result(dispatch.proc.stdout)
    assert result is not None
    assert [(call.tool, call.summary) for call in result.denied] == [("Edit", app)]
    assert is_seat_denied(result, changed_paths=[])


def test_claude_health_probe_passes_with_a_configured_key_and_fails_without(person: Path):
    env = dict(os.environ)
    assert run_health("claude", env).returncode == 0  # the person's apiKeyHelper counts as a login
    (person / ".claude" / "settings.json").write_text("{}")
    assert run_health("claude", env).returncode == 1
