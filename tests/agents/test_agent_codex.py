"""The real Codex CLI, run as `init --agent codex` binds it, against the scripted model."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from agent_runs import APP, agent_binary, git, make_workspace, run_health, run_recipe, model_server  # noqa: F401 - model_server is a fixture
from failres.agents.homes import transcript_places
from failres.hostside.transcripts import find_transcripts
from model_server import codex_exec, codex_patch, say

PROMPT = "Make answer() return 2. (task s/t1)"


def log_in(home: Path) -> None:
    """The person logs in the way Codex offers (`codex login --with-api-key`), into ~/.codex."""
    env = dict(os.environ, CODEX_HOME=str(home / ".codex"))
    (home / ".codex").mkdir(exist_ok=True)
    subprocess.run([str(agent_binary("codex")), "login", "--with-api-key"], input="person-key", env=env,
                   check=True, capture_output=True, text=True, timeout=60)


def choose_endpoint(home: Path, base_url: str, model: str = "fake-model") -> None:
    """The person's ~/.codex/config.toml: their model and a provider that uses their login."""
    (home / ".codex").mkdir(exist_ok=True)
    (home / ".codex" / "config.toml").write_text(
        f'model = "{model}"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
        f'name = "Scripted"\nbase_url = "{base_url}/v1"\nrequires_openai_auth = true\n')


def test_codex_recipe_edits_a_file_with_its_shell_tool_as_the_logged_in_person(isolated_home: Path, model_server,
                                                                               tmp_path: Path):
    workspace = make_workspace(isolated_home)
    server = model_server([codex_exec("sed -i 's/return 1/return 2/' app.py"), say("answer() now returns 2.")])
    log_in(isolated_home)
    choose_endpoint(isolated_home, server.base_url)

    dispatch = run_recipe("codex", workspace, tmp_path / "dispatch", PROMPT)

    assert dispatch.proc.returncode == 0, dispatch.proc.stderr
    assert (workspace / "app.py").read_text() == APP.replace("return 1", "return 2")
    assert dispatch.status() == " M app.py\n"
    assert PROMPT in json.dumps(server.scripted("/v1/responses")[0].body["input"])
    # The per-dispatch CODEX_HOME saw the person's auth.json and config.toml through the links.
    assert {request.credential for request in server.scripted()} == {"person-key"}
    transcripts = find_transcripts(transcript_places(dispatch.argv, dispatch.env))
    assert [agent for agent, _ in transcripts] == ["codex"]
    assert transcripts[0][1].is_relative_to(tmp_path / "dispatch" / "codex" / "sessions")
    assert PROMPT in transcripts[0][1].read_text()


def test_codex_recipe_applies_a_patch_when_the_model_is_offered_apply_patch(isolated_home: Path, model_server,
                                                                          tmp_path: Path):
    workspace = make_workspace(isolated_home)
    patch = "*** Begin Patch\n*** Update File: app.py\n@@\n def answer():\n-    return 1\n+    return 2\n*** End Patch\n"
    server = model_server([codex_patch(patch), say("patched")])
    log_in(isolated_home)
    choose_endpoint(isolated_home, server.base_url, model="gpt-5.5")  # a model Codex knows: apply_patch offered

    dispatch = run_recipe("codex", workspace, tmp_path / "dispatch", PROMPT)

    assert dispatch.proc.returncode == 0, dispatch.proc.stderr
    offered = {tool.get("name") for tool in server.scripted()[0].body["tools"]}
    assert "apply_patch" in offered
    assert (workspace / "app.py").read_text() == APP.replace("return 1", "return 2")
    assert dispatch.status() == " M app.py\n"


def test_codex_recipe_sandbox_keeps_the_workspaces_git_dir_read_only(isolated_home: Path, model_server,
                                                                    tmp_path: Path):
    workspace = make_workspace(isolated_home)
    head = git(workspace, "rev-parse", "HEAD")
    (workspace / "app.py").write_text(APP.replace("1", "3"))
    server = model_server([
        codex_exec("git -c user.name=a -c user.email=a@b commit -qam sneaky; echo exit=$?"),
        say("tried to commit"),
    ])
    log_in(isolated_home)
    choose_endpoint(isolated_home, server.base_url)

    run_recipe("codex", workspace, tmp_path / "dispatch", PROMPT)

    assert git(workspace, "rev-parse", "HEAD") == head
    tool_output = json.dumps(server.scripted()[1].body["input"][-1])
    assert "exit=0" not in tool_output and "exit=" in tool_output


def test_codex_health_probe_passes_once_the_person_is_logged_in(isolated_home: Path):
    env = dict(os.environ)
    (isolated_home / ".codex").mkdir()
    assert run_health("codex", env).returncode == 1
    log_in(isolated_home)
    assert run_health("codex", env).returncode == 0


def test_codex_recipe_starts_for_a_person_who_never_logged_in(isolated_home: Path, model_server, tmp_path: Path):
    """With nothing to link, the dispatch's CODEX_HOME still exists: Codex refuses to start without it."""
    workspace = make_workspace(isolated_home)
    server = model_server([say("nothing to do")])
    choose_endpoint(isolated_home, server.base_url)
    (isolated_home / ".codex" / "config.toml").write_text(
        (isolated_home / ".codex" / "config.toml").read_text().replace("requires_openai_auth = true", ""))

    dispatch = run_recipe("codex", workspace, tmp_path / "dispatch", PROMPT, timeout=120)

    assert dispatch.proc.returncode == 0, dispatch.proc.stderr
    assert server.scripted("/v1/responses")
