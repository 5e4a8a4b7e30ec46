"""`init --agent X --learn-with-agent`: the agent's own print mode as learning's model.

The configuration init writes is loaded as it stands and run: a scripted executable with
the agent's name, first on PATH, is the agent; it records how it was called and what it
read, and answers as a model would. Nothing here needs the real CLI or a network.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from conftest import git
from failres.agents.learning_recipes import LEARNING_COMMANDS, learning_command
from failres.config.loading import load_config

DIRECTIVE = "Run the linter before reporting a change as done."
CORRECTION = "thanks, that works. Always run ruff before you say you're done."


def scripted_agent(folder: Path, name: str) -> Path:
    """An executable called `name` that notes its arguments and stdin, then answers both the
    reflector's and the learner's contract in one JSON object."""
    folder.mkdir(parents=True, exist_ok=True)
    reply = json.dumps({"skip": False, "reflexion": DIRECTIVE, "error_type": "premature-action", "confidence": 0.9,
                        "rules": [{"rule": DIRECTIVE, "confidence": 0.9, "based_on_count": 1}]})
    script = folder / name
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" >> "{folder}/argv"\n'
        f'cat > "{folder}/stdin.$$"\n'
        f"printf '%s\\n' 'Thinking it over.' '{reply}'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


def correction_session(folder: Path) -> Path:
    def rec(kind: str, content: object) -> dict:
        return {"type": kind, "isSidechain": False, "sessionId": "s1", "cwd": "/home/ana/project",
                "timestamp": "2026-02-11T20:00:00.000Z", "message": {"role": kind, "content": content}}

    folder.mkdir(parents=True, exist_ok=True)
    records = [rec("user", "tidy the docs"), rec("assistant", [{"type": "text", "text": "Done, the docs are tidy."}]),
               rec("user", CORRECTION), rec("assistant", [{"type": "text", "text": "ruff reports nothing."}])]
    (folder / "s1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


@pytest.mark.parametrize("agent", sorted(LEARNING_COMMANDS))
def test_learn_with_agent_writes_a_loadable_command_provider_and_says_what_it_costs(repo: Path, cli, agent: str):
    result = cli(repo, "init", "--agent", agent, "--learn-with-agent")
    assert result.code == 0, result.err
    learning = load_config(repo).learning
    assert (learning.provider, learning.command) == ("command", learning_command(agent))
    assert f"learning: learning asks {agent} once per intervention reflected and once per learn pass" in result.out


@pytest.mark.parametrize("agent", sorted(LEARNING_COMMANDS))
def test_without_the_flag_learning_stays_off_and_the_offer_is_one_line(repo: Path, cli, agent: str):
    result = cli(repo, "init", "--agent", agent)
    assert result.code == 0, result.err
    assert load_config(repo).learning.provider == "none"
    offers = [line for line in result.out.splitlines() if line.startswith("learning:")]
    assert len(offers) == 1 and 'provider = "command"' in offers[0]


def test_learn_with_agent_without_an_agent_is_refused_and_writes_nothing(repo: Path, cli):
    before = git(repo, "for-each-ref")
    result = cli(repo, "init", "--learn-with-agent")
    assert result.code == 2
    assert result.err.splitlines()[0] == "error: --learn-with-agent needs --agent claude|codex|aider"
    assert not (repo / ".failres.toml").exists()
    assert git(repo, "for-each-ref") == before


@pytest.mark.parametrize("agent", sorted(LEARNING_COMMANDS))
def test_the_written_provider_runs_the_agent_which_distils_the_directive_reflect_and_learn_use(
        repo: Path, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str):
    assert cli(repo, "init", "--agent", agent, "--learn-with-agent").code == 0
    bin_dir = scripted_agent(tmp_path / "bin", agent)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    reflected = cli(repo, "reflect", "--no-edits", str(correction_session(tmp_path / "sessions")), "--json")
    assert reflected.code == 0, reflected.err
    (doc,) = json.loads(reflected.out)
    assert (doc["reflexion_text"], doc["model_derived"], doc["intervention"]) == (DIRECTIVE, True, CORRECTION)
    # The agent was called exactly as the configuration says, with the prompt on stdin.
    assert (bin_dir / "argv").read_text().splitlines() == list(learning_command(agent)[1:])
    (prompt,) = [p.read_text() for p in bin_dir.glob("stdin.*")]
    assert CORRECTION in prompt and "DATA to analyse" in prompt
    learned = cli(repo, "learn", "--json")
    assert learned.code == 0, learned.err
    (behavior,) = [o for o in json.loads(learned.out) if o["domain"] == "behavior"]
    assert [r["text"] for r in behavior["proposal"]["rules"]] == [DIRECTIVE]
