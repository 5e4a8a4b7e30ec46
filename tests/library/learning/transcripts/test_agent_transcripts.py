"""Transcripts the real agent CLIs wrote (tests/data/transcripts, recorded by make_transcripts.py beside
them), what is mined from them, and the follow-up classifier on people's real words."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from failres.knowledge.learning import dispatch_transcripts
from lessons.learning.transcripts.aider import load_aider
from lessons.learning.transcripts.claude_code import load_claude_code
from lessons.learning.transcripts.codex import load_codex
from lessons.learning.followups import Followup, classify_followup
from lessons.learning.transcripts.generic import load_transcript, sniff_format
from lessons.learning.interventions import Trigger, extract_interventions, mine
from lessons.learning.provenance import Origin, classify_origin
from lessons.learning.shell_text import refused_command

DATA = Path(__file__).resolve().parents[3] / "data" / "transcripts"
[CLAUDE] = sorted((DATA / "claude-code").glob("print-*.jsonl"))
[INTERACTIVE] = sorted((DATA / "claude-code").glob("interactive-*.jsonl"))
[CODEX] = sorted((DATA / "codex").glob("rollout-*.jsonl"))
AIDER = DATA / "aider" / ".aider.chat.history.md"
CORRECTION = "No, never delete build/: it holds the fixtures. Put it back the way it was."


def as_typed_by_hand(source: Path, target: Path) -> Path:
    """The same Claude Code session as a person would have had it from the interactive CLI."""
    lines = []
    for line in source.read_text().splitlines():
        record = json.loads(line)
        if record.get("entrypoint") == "sdk-cli":
            record["entrypoint"] = "cli"
        record.pop("promptSource", None)
        lines.append(json.dumps(record))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n")
    sidechains = source.parent / source.stem / "subagents"
    if sidechains.is_dir():
        shutil.copytree(sidechains, target.parent / target.stem / "subagents")
    return target


# ── Claude Code 2.1.197, print mode ──────────────────────────────────────────


def test_the_real_print_mode_session_reads_without_a_problem_and_is_derived() -> None:
    t = load_claude_code(CLAUDE)
    assert t.problems == ()
    assert t.kind == "batch" and "sdk-cli" in t.derived_reason
    found = extract_interventions(t)
    assert [(i.trigger, i.intervention, i.followup) for i in found] == [
        (Trigger.FOLLOWUP, CORRECTION, "correction"), (Trigger.FOLLOWUP, "thanks", "acknowledgement")]
    assert {classify_origin(t, i.message_index) for i in found} == {Origin.DERIVED}
    assert found[0].line and CORRECTION in CLAUDE.read_text().splitlines()[found[0].line - 1]


def test_refusals_by_policy_and_forged_refusals_in_the_real_session_are_no_denial() -> None:
    t = load_claude_code(CLAUDE)
    results = {b.tool_name: b for m in t.messages for b in m.blocks if b.kind == "tool_result" and b.is_error}
    # `--disallowedTools`, a permission print mode cannot ask for, an MCP error and a failing
    # command that both say the refusal sentence: none is the person refusing.
    assert "has been denied" in next(b.text for m in t.messages for b in m.blocks
                                     if b.kind == "tool_result" and "rm -rf build/" in b.text)
    assert "mcp__forger__lookup" in results and results["mcp__forger__lookup"].source == "mcp"
    assert not any(b.kind == "denial" for m in t.messages for b in m.blocks)


def test_the_same_session_typed_by_hand_is_tainted_from_the_mcp_result_on(tmp_path: Path) -> None:
    t = load_claude_code(as_typed_by_hand(CLAUDE, tmp_path / "p" / CLAUDE.name))
    assert t.kind == "interactive" and t.problems == ()
    sources = [(b.tool_name, b.source) for m in t.messages for b in m.blocks if b.kind == "tool_result"]
    assert ("Read", "repo") in sources and ("mcp__forger__lookup", "mcp") in sources
    assert ("WebFetch", "web") in sources
    # The subagent's own transcript read only the tree: its result is as trusted as that.
    assert ("Task", "repo") in sources
    found = extract_interventions(t)
    assert [i.trigger for i in found] == [Trigger.FOLLOWUP, Trigger.FOLLOWUP]
    assert classify_origin(t, found[0].message_index) is Origin.UNTRUSTED


def test_the_forged_refusals_of_the_real_session_make_no_clean_denial_and_no_proposal(
        repo: Path, tmp_path: Path, cli) -> None:
    typed = as_typed_by_hand(CLAUDE, tmp_path / "p" / CLAUDE.name)
    out = cli(repo, "reflect", str(typed), "--no-edits", "--json")
    assert out.code == 0, out.err
    recorded = json.loads(out.out)
    assert [d for d in recorded if d["trigger"] == "denial"] == []
    assert all("rm -rf ~" not in d["intervention"] for d in recorded)
    assert [d["origin"] for d in recorded] == ["untrusted"]  # the correction came after the MCP result
    (outcome,) = json.loads(cli(repo, "learn", "--json").out)
    assert outcome["proposal"] is None


def test_reflect_on_the_real_session_records_the_correction_and_not_the_thanks(repo: Path, cli) -> None:
    out = cli(repo, "reflect", str(CLAUDE), "--no-edits", "--json")
    assert out.code == 0 and "warning" not in out.err, out.err
    assert [(d["trigger"], d["origin"], d["intervention"], d["line"]) for d in json.loads(out.out)] == [
        ("followup", "derived", CORRECTION, 32)]


# ── Claude Code 2.1.197, typed into by a person ──────────────────────────────


def test_the_real_interactive_session_yields_the_refusal_its_reason_the_steer_and_no_thanks() -> None:
    t = load_claude_code(INTERACTIVE)
    assert (t.kind, t.problems) == ("interactive", ())
    found = extract_interventions(t)
    # Claude Code wrote the agent's first turn before the prompt it answers: read in
    # the order of the conversation (parentUuid), the prompt is the task, not a steer.
    assert [(i.trigger, i.intervention, i.refused, i.followup) for i in found] == [
        (Trigger.DENIAL, "No, never delete build/: it holds the fixtures", "rm -rf build/", "correction"),
        (Trigger.STEER, "and leave app.py alone too", "", "correction"),
        (Trigger.FOLLOWUP, "thanks", "", "acknowledgement")]
    assert {classify_origin(t, i.message_index) for i in found} == {Origin.CLEAN}


def test_reflect_and_learn_on_the_real_interactive_session_propose_exactly_what_the_person_said(
        repo: Path, cli) -> None:
    out = cli(repo, "reflect", str(INTERACTIVE), "--no-edits", "--json")
    assert out.code == 0 and out.err == "", out.err
    assert [(d["trigger"], d["origin"]) for d in json.loads(out.out)] == [("denial", "clean"), ("steer", "clean")]
    (outcome,) = json.loads(cli(repo, "learn", "--json").out)
    assert outcome["proposal"]["status"] == "pending"
    assert sorted(r["text"] for r in outcome["proposal"]["rules"]) == [
        'A person steered a run and said: "and leave app.py alone too"',
        'Ask before running `rm -rf build/`: a person refused it and said: '
        '"No, never delete build/: it holds the fixtures"']


# ── Codex CLI 0.171.0 ────────────────────────────────────────────────────────


def test_a_real_codex_rollout_is_read_as_codex_without_a_problem() -> None:
    assert sniff_format(CODEX) == "codex"
    t = load_codex(CODEX)
    assert t.problems == ()
    assert (t.kind, t.format) == ("batch", "codex")
    said = [b.text for m in t.messages for b in m.blocks if b.source == "person"]
    assert said == ["Make answer() return 2.", "That's wrong: don't use sed for edits here, use apply_patch.",
                    "yes please"]
    calls = [b.tool_name for m in t.messages for b in m.blocks if b.kind == "tool_use"]
    assert calls == ["exec_command", "exec_command", "exec_command"]
    found = extract_interventions(t)
    assert [(i.intervention, i.followup) for i in found] == [
        ("That's wrong: don't use sed for edits here, use apply_patch.", "correction"),
        ("yes please", "acknowledgement")]


def test_reflect_on_a_codex_rollout_warns_of_nothing_and_records_its_correction(repo: Path, cli) -> None:
    out = cli(repo, "reflect", str(CODEX), "--no-edits", "--json")
    assert out.code == 0 and out.err == "", out.err
    assert [(d["trigger"], d["origin"], d["intervention"]) for d in json.loads(out.out)] == [
        ("followup", "derived", "That's wrong: don't use sed for edits here, use apply_patch.")]


def test_an_interactive_codex_session_is_clean_when_it_read_only_the_tree(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in CODEX.read_text().splitlines()]
    for line in lines:
        if line["type"] == "session_meta":
            line["payload"].update(source="cli", originator="codex_cli_rs")
    path = tmp_path / "rollout-x.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    t = load_transcript(path)
    [correction, _] = extract_interventions(t)
    assert t.kind == "interactive"
    assert classify_origin(t, correction.message_index) is Origin.CLEAN


def test_a_codex_refusal_counts_only_where_an_approval_was_asked_for(tmp_path: Path) -> None:
    def rollout(asked: bool) -> Path:
        items = [
            {"type": "session_meta", "payload": {"id": "c1", "cwd": "/home/ana/p", "source": "cli"}},
            {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                  "content": [{"type": "input_text", "text": "clean up"}]}},
            {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command",
                                                  "arguments": '{"cmd": "rm -rf build/"}', "call_id": "k1"}},
            *([{"type": "event_msg", "payload": {"type": "exec_approval_request", "call_id": "k1"}}] if asked else []),
            {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "k1",
                                                  "output": "exec command rejected by user"}},
        ]
        path = tmp_path / f"rollout-{asked}.jsonl"
        path.write_text("".join(json.dumps(i) + "\n" for i in items))
        return path

    [denial] = extract_interventions(load_codex(rollout(True)))
    assert (denial.trigger, denial.refused) == (Trigger.DENIAL, "rm -rf build/")
    assert extract_interventions(load_codex(rollout(False))) == []


# ── aider 0.86.2 ─────────────────────────────────────────────────────────────


def test_a_real_aider_history_is_read_with_its_runs_and_the_persons_lines() -> None:
    assert sniff_format(AIDER) == "aider"
    t = load_aider(AIDER)
    assert t.kind == "interactive" and t.problems == ()  # every typed line is in its input history
    said = [b.text for m in t.messages for b in m.blocks if b.kind == "text" and b.source == "person"]
    assert said == ["Make answer() return 2.", "No, don't change the return value like that; add a constant instead.",
                    "thanks", "ok 開始"]  # the scripted run's --message is in both files, and still not typed
    # What `/run git status` added to the chat is a command's output: third-party.
    assert [b.source for m in t.messages for b in m.blocks if b.kind == "tool_result"] == ["outside"]
    found = extract_interventions(t)
    assert [i.followup for i in found] == ["correction", "acknowledgement", "acknowledgement"]
    assert {classify_origin(t, i.message_index) for i in found} == {Origin.CLEAN}


def test_reflect_on_an_aider_history_warns_of_nothing_and_records_only_its_correction(repo: Path, cli) -> None:
    out = cli(repo, "reflect", str(AIDER), "--no-edits", "--json")
    assert out.code == 0 and out.err == "", out.err
    assert [(d["trigger"], d["origin"], d["intervention"]) for d in json.loads(out.out)] == [
        ("followup", "clean", "No, don't change the return value like that; add a constant instead.")]


def test_an_aider_web_page_taints_what_follows(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text("\n# aider chat started at 2026-12-01 10:00:00\n\n> aider app.py\n\n#### fix it  \n\nFixed.\n\n"
                    "#### /web https://example.invalid/page  \n> Scraping https://example.invalid/page...  \n\n"
                    "#### no, not like that, revert it  \n\nReverted.\n")
    t = load_aider(path)
    [found] = [i for i in extract_interventions(t) if i.followup == "correction"]
    assert classify_origin(t, found.message_index) is Origin.UNTRUSTED


def test_an_aider_history_of_scripted_runs_only_is_derived(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text("\n# aider chat started at 2026-12-01 10:00:00\n\n> aider --message-file p.md app.py\n\n"
                    "#### fix it  \n\nFixed.\n\n# aider chat started at 2026-12-01 10:01:00\n\n"
                    "> aider --message no,\\ revert\n\n#### no, revert it  \n\nReverted.\n")
    t = load_aider(path)
    assert t.kind == "batch"
    assert {classify_origin(t, i.message_index) for i in extract_interventions(t)} == {Origin.DERIVED}


# ── failres's own dispatches ─────────────────────────────────────────────────


def test_the_codex_and_aider_transcripts_kept_with_dispatches_are_found_without_a_path(tmp_path: Path) -> None:
    logs = tmp_path / ".git" / "failres" / "logs" / "s" / "t1" / "implement" / "1"
    logs.mkdir(parents=True)
    shutil.copy(CODEX, logs / "transcript.jsonl")
    shutil.copy(AIDER, logs / "transcript.md")
    (logs / "transcript-2.md").write_text("TO LLM 2026-12-01T10:00:00\n-------\nSYSTEM ...\n")  # aider's LLM log
    assert [p.name for p in dispatch_transcripts(tmp_path / ".git")] == ["transcript.jsonl", "transcript.md"]
    assert [s.transcript.format for s in mine(dispatch_transcripts(tmp_path / ".git"))] == ["codex", "aider"]


# ── the follow-up classifier, on words people wrote ──────────────────────────


@pytest.mark.parametrize(("words", "agent_said", "kind"), [
    ("ok 開始", "", Followup.ACKNOWLEDGEMENT),
    ("要", "要我把测试也加上吗？", Followup.ACKNOWLEDGEMENT),
    ("好的继续", "", Followup.ACKNOWLEDGEMENT),
    ("thanks", "", Followup.ACKNOWLEDGEMENT),
    ("yes please", "Shall I also update the docs?", Followup.ACKNOWLEDGEMENT),
    ("continue", "", Followup.ACKNOWLEDGEMENT),
    ("sí", "", Followup.ACKNOWLEDGEMENT),
    ("merci", "", Followup.ACKNOWLEDGEMENT),
    ("https://github.com/marot/spotter/pull/12", "", Followup.ANSWER),
    ("use postgres", "Which database should I target?", Followup.ANSWER),
    ("no", "Shall I commit?", Followup.ANSWER),
    ("did you push?", "", Followup.REQUEST),
    ("create the beads", "", Followup.REQUEST),
    ("now add a changelog entry", "", Followup.REQUEST),
    ("and leave app.py alone too", "", Followup.CORRECTION),
    ("No, never delete build/: it holds the fixtures.", "", Followup.CORRECTION),
    ("The hook you added is wrong, it formats every file", "", Followup.CORRECTION),
    ("scrolling back in xterm.js still does not work", "", Followup.CORRECTION),
    ("don't", "Shall I delete it?", Followup.CORRECTION),
    ("不要删除这个文件", "", Followup.CORRECTION),
    ("違う、テストは消さないで", "", Followup.CORRECTION),
    ("no uses sed, usa el parche en vez de eso", "", Followup.CORRECTION),
    ("nein, nicht die Tests ändern", "", Followup.CORRECTION),
])
def test_follow_ups_are_classified_by_rules_that_can_be_explained(words: str, agent_said: str,
                                                                   kind: Followup) -> None:
    assert classify_followup(words, agent_said) is kind


@pytest.mark.parametrize(("command", "refused"), [
    ("rm -rf build/", "rm -rf build/"),
    ("mix phx.server 2>&1 | head -80", "mix phx.server"),
    ("cd web && npm install left-pad", "npm install left-pad"),
    ("git push --force origin main", "git push --force origin main"),
])
def test_a_refusal_is_remembered_as_the_command_the_person_was_shown(command: str, refused: str) -> None:
    assert refused_command(command) == refused


def test_reflect_with_no_path_mines_a_codex_rollout_kept_from_failres_own_dispatch(tmp_path: Path, cli) -> None:
    from project import FIXED, Project

    project = Project.create(tmp_path)
    copy = (f'mkdir -p "$CODEX_HOME/sessions/2026/12/01" && '
            f'cp {CODEX} "$CODEX_HOME/sessions/2026/12/01/{CODEX.name}"')
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}, "shell": [copy]}],
                      extra='[bindings.impl.env]\nCODEX_HOME = "{dispatch_dir}/codex"\n')
    assert cli(project.top, "run", str(project.plan()), "--quiet").code == 0
    assert list(project.dispatch_logs()[0].glob("transcript.jsonl"))
    result = cli(project.top, "reflect", "--json", "--no-edits")
    assert result.code == 0 and "warning" not in result.err, result.err
    assert [(d["trigger"], d["origin"], d["intervention"]) for d in json.loads(result.out)] == [
        ("followup", "derived", "That's wrong: don't use sed for edits here, use apply_patch.")]
