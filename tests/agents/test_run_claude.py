"""The real Claude Code as both seats of `git failres run`, configured by `init --agent claude`.

What the person adds to point it at the scripted model is their environment: the
endpoint and a key (Claude Code reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_runs import model_server  # noqa: F401 - a fixture
from conftest import git
from loop_runs import (
    CALC,
    CONSTRAINED_PHRASE,
    FIX_PHRASE,
    OTHER_FILE,
    PROMPT_QUOTING_A_REQUEST,
    SLUG,
    TASK,
    PersonsProject,
    agent_on_path,  # noqa: F401 - a fixture
    assert_fixer_repaired,
    assert_request_became_decision,
    assert_violation_undone_and_retried,
)
from model_server import claude_tools, say



def read(path: str):
    return claude_tools(("Read", {"file_path": path}))


def edit(path: str, old: str, new: str):
    return claude_tools(("Edit", {"file_path": path, "old_string": old, "new_string": new}))


def bash(command: str):
    return claude_tools(("Bash", {"command": command, "description": "run it"}))


@pytest.fixture
def project(tmp_path: Path, cli, agent_on_path, monkeypatch: pytest.MonkeyPatch) -> PersonsProject:
    agent_on_path("claude")
    for name in ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_TELEMETRY", "DISABLE_AUTOUPDATER"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "dummy")
    return PersonsProject.create(tmp_path, "claude", cli)


def point_at(server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)


def test_claude_fixer_repairs_the_red_gate_its_implementer_left(project: PersonsProject, cli, model_server,
                                                                monkeypatch: pytest.MonkeyPatch):
    server = model_server(
        [read(CALC), edit(CALC, "a - b", "a * b"), say("add() now multiplies.")],
        by_phrase={FIX_PHRASE: [read(CALC), edit(CALC, "a * b", "a + b"), bash("python3 -m pytest -q"),
                                say("Fixed; the judge passes.")]})
    point_at(server, monkeypatch)

    result = project.run(cli)

    assert_fixer_repaired(project, result)
    # The fixer ran the judge its prompt names (the recipe allows the gate's program) and saw it pass.
    judge_result = server.scripted(phrase=FIX_PHRASE)[3].body["messages"][-1]["content"][0]
    assert judge_result["type"] == "tool_result" and "1 passed" in str(judge_result["content"])
    # Each dispatch's log holds the prompt Claude Code really got, and that dispatch's own transcript.
    implementer_log, fixer_log = project.dispatch_logs()
    for log, phrase, last_words in ((implementer_log, "", "add() now multiplies."),
                                    (fixer_log, FIX_PHRASE, "Fixed; the judge passes.")):
        prompt = (log / "prompt.md").read_text()
        assert prompt.strip() in server.scripted(phrase=phrase)[0].user_text()
        records = [json.loads(line) for line in (log / "transcript.jsonl").read_text().splitlines()]
        said = [r["message"]["content"] for r in records if r.get("type") in ("user", "assistant")]
        assert said[0].strip() == prompt.strip()
        assert said[-1] == [{"type": "text", "text": last_words}]
    fix_prompt = (fixer_log / "prompt.md").read_text()
    assert f"## {FIX_PHRASE}" in fix_prompt and "assert 6 == 5" in fix_prompt  # the judge's red output
    assert project.state(cli) == "committed"


def test_claude_scope_violation_gets_a_constrained_retry_that_names_the_file(project: PersonsProject, cli,
                                                                           model_server,
                                                                           monkeypatch: pytest.MonkeyPatch):
    server = model_server(
        [read(CALC), read(OTHER_FILE), edit(CALC, "a - b", "a + b"), edit(OTHER_FILE, "VALUE = 1", "VALUE = 2"),
         say("Fixed add() and bumped VALUE.")],
        by_phrase={CONSTRAINED_PHRASE: [read(CALC), edit(CALC, "a - b", "a + b"), say("Fixed add() only.")]})
    point_at(server, monkeypatch)

    result = project.run(cli)

    assert_violation_undone_and_retried(project, result, server)


def test_claude_scope_request_becomes_a_decision_and_the_quoted_example_does_not(project: PersonsProject, cli,
                                                                               model_server,
                                                                               monkeypatch: pytest.MonkeyPatch):
    server = model_server([read(OTHER_FILE),
                           say("add() is right; VALUE is not.\nSCOPE-REQUEST: src/other.py — VALUE feeds the sum")])
    point_at(server, monkeypatch)

    result = project.run(cli, PROMPT_QUOTING_A_REQUEST)

    assert_request_became_decision(project, result, cli)


def test_claude_denied_a_command_is_seat_denied_and_no_fixer_is_dispatched(project: PersonsProject, cli,
                                                                          model_server,
                                                                          monkeypatch: pytest.MonkeyPatch):
    server = model_server([bash("npm test"), say("I could not run the tests.")])
    point_at(server, monkeypatch)

    result = project.run(cli)

    assert result.code == 1
    [quarantined] = project.of_type("quarantined")
    assert quarantined["failClass"] == "seat-denied"
    assert "Bash npm test" in quarantined["message"]
    assert [e["seat"] for e in project.of_type("seat-dispatched")] == ["implementer"]
    assert [g for g in project.of_type("gate-result") if not g.get("preflight")] == []  # only the head's
    assert server.scripted()  # the denial came from a real run, not from a missing endpoint



def test_claude_transcripts_kept_with_the_logs_are_shown_by_logs_and_mined_by_reflect(
        project: PersonsProject, cli, model_server, monkeypatch: pytest.MonkeyPatch):
    server = model_server([read(CALC), edit(CALC, "a - b", "a * b"), say("add() now multiplies.")],
                          by_phrase={FIX_PHRASE: [read(CALC), edit(CALC, "a * b", "a + b"), say("Fixed.")]})
    point_at(server, monkeypatch)
    assert project.run(cli).code == 0
    logs = project.dispatch_logs()
    sessions = [json.loads((log / "seat.log").read_text())["session_id"] for log in logs]

    shown = cli(project.top, "logs", SLUG, TASK)
    mined = cli(project.top, "reflect")  # no paths: the dispatches' own transcripts

    assert shown.code == 0, shown.err
    assert "dispatch 1: implementer (claude), implement attempt 1" in shown.out
    assert "dispatch 2: fixer (claude), fix attempt 1" in shown.out
    assert shown.out.count(f"## {FIX_PHRASE}") == 1
    assert [line.split(": ", 1)[1] for line in shown.out.splitlines()
            if line.startswith("--- agent transcript:")] == [str(log / "transcript.jsonl") for log in logs]
    assert mined.code == 0, mined.err
    assert mined.out.startswith("mined 2 new session(s)")
    # Each dispatch is a session of its own in the learning loop's ledger, under its real id.
    ledger = git(project.top, "ls-tree", "-r", "--name-only", "refs/failres/store", "--", "mined").split()
    recorded = [json.loads(git(project.top, "show", f"refs/failres/store:{path}")) for path in ledger]
    assert sorted(entry["session_id"] for entry in recorded) == sorted(sessions)
    assert len(set(sessions)) == 2
