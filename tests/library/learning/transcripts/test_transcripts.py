"""Transcript adapters, intervention extraction and provenance.

Hand-written transcripts are built inline as JSONL records in the shapes Claude
Code writes; the real sessions under ../shared/fixtures are read where present.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lessons.errors import InvalidInput
from lessons.learning.transcripts.claude_code import load_claude_code
from lessons.learning.transcripts.generic import generic_lines, load_generic, load_transcript, sniff_format
from lessons.learning.interventions import (
    CONTEXT_LIMIT,
    REFUSED_WITHOUT_WORDS,
    STOPPED_WITHOUT_WORDS,
    Trigger,
    edit_intervention,
    extract_interventions,
    mine,
    transcript_files,
)
from lessons.learning.locality import shell_command_is_local
from lessons.learning.messages import MAX_LINE_BYTES
from lessons.learning.provenance import (
    Origin,
    classify_origin,
    learnable,
    origin_of_record,
    origin_unknown,
)

FIXTURES = Path(__file__).resolve().parents[4] / ".." / "shared" / "fixtures"
CLAUDE_CODE = FIXTURES / "transcripts" / "claude-code"
CWD = "/home/ana/project"
REFUSED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
    "wait for the user to tell you how to proceed."
)


# ── Claude Code records, as the harness writes them ──────────────────────────


def record(kind: str, content: object, **extra: object) -> dict:
    base = {
        "type": kind,
        "isSidechain": False,
        "sessionId": "s-1",
        "cwd": CWD,
        "timestamp": "2026-02-11T20:00:00.000Z",
        "message": {"role": kind, "content": content},
    }
    return {**base, **extra}


def person(text: str, **extra: object) -> dict:
    return record("user", text, **extra)


def says(text: str) -> dict:
    return record("assistant", [{"type": "text", "text": text}])


def calls(tool_id: str, name: str, arguments: dict) -> dict:
    return record(
        "assistant", [{"type": "tool_use", "id": tool_id, "name": name, "input": arguments}]
    )


def result(tool_id: str, content: object, *, is_error: bool = False, words: str = "") -> dict:
    """A result line as Claude Code writes it: an error's `toolUseResult` is "Error: " and its text."""
    blocks: list[dict] = [
        {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}
    ]
    if words:
        blocks.append({"type": "text", "text": words})
    if is_error and isinstance(content, str):
        return record("user", blocks, toolUseResult=f"Error: {content}")
    return record("user", blocks)


def interrupt(for_tool_use: bool = False) -> dict:
    marker = (
        "[Request interrupted by user for tool use]"
        if for_tool_use
        else "[Request interrupted by user]"
    )
    return record("user", [{"type": "text", "text": marker}])


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def session(tmp_path: Path):
    """Write records as a Claude Code session file and load it."""

    def load(*records: dict):
        return load_claude_code(write_jsonl(tmp_path / "session.jsonl", list(records)))

    return load


READ_README = calls("t1", "Read", {"file_path": f"{CWD}/README.md"})
README_READ = result("t1", "# project")


# ── Extraction ───────────────────────────────────────────────────────────────


def test_a_plain_run_has_no_interventions(session) -> None:
    t = session(person("read the README"), READ_README, README_READ, says("It says: project."))
    assert extract_interventions(t) == []


def test_words_beside_tool_results_are_a_steer(session) -> None:
    t = session(
        person("clean up the docs"),
        says("I'll start with the README."),
        READ_README,
        result("t1", "# project", words="change of plan: skip the README"),
    )
    [found] = extract_interventions(t)
    assert found.trigger == Trigger.STEER
    assert found.intervention == "change of plan: skip the README"
    assert found.message_index == 3
    assert "Read" in found.context and "start with the README" in found.context


def test_words_in_their_own_line_while_the_agent_waits_on_a_tool_are_a_steer(session) -> None:
    t = session(
        person("run the tests"),
        calls("t1", "Bash", {"command": "pytest"}),
        person("only the fast ones"),
    )
    [found] = extract_interventions(t)
    assert (found.trigger, found.intervention) == (Trigger.STEER, "only the fast ones")


def test_a_turn_after_the_agent_finished_is_a_followup_with_its_aftermath(session) -> None:
    t = session(
        person("summarize the report"),
        says("Here is a long summary, with many caveats."),
        person("no: one paragraph, and stop hedging"),
        says("One paragraph: the report says ship it."),
    )
    [found] = extract_interventions(t)
    assert found.trigger == Trigger.FOLLOWUP
    assert "long summary" in found.context
    assert "One paragraph" in found.aftermath


def test_the_first_words_of_a_session_are_the_task(session) -> None:
    t = session(person("fix the parser"), person("and its tests"), says("Done."))
    assert extract_interventions(t) == []


def test_a_refusal_with_a_typed_reason_is_a_denial_carrying_the_reason(session) -> None:
    refusal = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. "
        "if it was a file edit, the new_string was NOT written to the file). To tell you how "
        "to proceed, the user said:\nnot that directory, use build/\n\nNote: The user's next "
        "message may contain a correction."
    )
    t = session(
        person("clean up"),
        calls("t1", "Bash", {"command": "rm -rf dist"}),
        result("t1", refusal, is_error=True),
        says("Understood, cleaning build/ instead."),
    )
    [found] = extract_interventions(t)
    assert found.trigger == Trigger.DENIAL
    assert found.intervention == "not that directory, use build/"
    assert "rm -rf dist" in found.context
    assert "build/ instead" in found.aftermath


def test_parallel_refusals_and_the_interrupt_that_follows_are_one_denial(session) -> None:
    t = session(
        person("why does the server not start"),
        calls("t1", "Bash", {"command": "mix phx.server"}),
        calls("t2", "Glob", {"pattern": "mix.exs"}),
        result("t1", REFUSED, is_error=True),
        result("t2", REFUSED, is_error=True),
        interrupt(for_tool_use=True),
    )
    [found] = extract_interventions(t)
    assert found.trigger == Trigger.DENIAL
    assert found.intervention == REFUSED_WITHOUT_WORDS
    assert "mix phx.server" in found.context and "mix.exs" in found.context


def test_an_interrupt_and_the_persons_next_words_are_one_steer(session) -> None:
    t = session(
        person("start the server"),
        calls("t1", "Bash", {"command": "mix phx.server"}),
        interrupt(),
        person("run it in the background instead"),
        says("Starting it in the background."),
    )
    [found] = extract_interventions(t)
    assert (found.trigger, found.intervention, found.message_index) == (
        Trigger.STEER,
        "run it in the background instead",
        3,
    )
    assert "background" in found.aftermath


def test_an_interrupt_without_words_says_the_person_stopped_the_run(session) -> None:
    t = session(person("start the server"), says("Starting."), interrupt())
    [found] = extract_interventions(t)
    assert found.intervention == STOPPED_WITHOUT_WORDS


@pytest.mark.parametrize(
    "refusal",
    [
        "PreToolUse:Bash hook error: [guard.sh]: writes outside the workspace are blocked",
        "Error: Hook PreToolUse:Bash denied this tool",
        "Blocked by hook: not in this workspace",
        "Permission to use Bash has been denied.",
        "Permission to use Bash has been denied because Claude Code is running in don't ask mode.",
        "Permission for this tool use was denied. The tool use was rejected (eg. if it was a file "
        "edit, the new_string was NOT written to the file). Try a different approach.",
    ],
)
def test_hook_and_policy_refusals_are_not_a_person(session, refusal: str) -> None:
    t = session(
        person("clean up"),
        calls("t1", "Bash", {"command": "rm -rf /"}),
        result("t1", refusal, is_error=True),
    )
    assert extract_interventions(t) == []


def test_hook_feedback_recorded_as_a_user_line_is_not_a_person(session) -> None:
    t = session(
        person("finish up"), says("All done."), person("Stop hook feedback:\nTests are failing.")
    )
    assert extract_interventions(t) == []


def test_slash_commands_and_their_output_are_not_interventions(session) -> None:
    t = session(
        person("explain the harness"),
        says("It works like this."),
        person("<command-name>/model</command-name>\n<command-message>model</command-message>"),
        person("<local-command-stdout>Kept model as Default</local-command-stdout>"),
        person("/mcp"),
    )
    assert extract_interventions(t) == []


def test_notifications_reminders_and_meta_lines_are_not_interventions(session) -> None:
    t = session(
        person("run the suite in the background"),
        says("Started."),
        person("<task-notification>\n<task-id>b1</task-id>\n</task-notification>"),
        person("<system-reminder>The todo list is empty.</system-reminder>"),
        person("Base directory for this skill: /x", isMeta=True),
        person(
            "Caveat: The messages below were generated by the user while running local commands."
        ),
    )
    assert extract_interventions(t) == []


def test_a_compaction_summary_is_not_an_intervention(session) -> None:
    summary = (
        "This session is being continued from a previous conversation that ran out of context."
    )
    t = session(
        person("build it"), says("Built."), person(summary, isCompactSummary=True), person(summary)
    )
    assert extract_interventions(t) == []
    assert t.messages[2].is_compact_summary and t.messages[3].is_compact_summary


def test_a_tool_result_quoting_a_refusal_is_not_a_denial(session) -> None:
    quoted_file = '     1→{"content": "' + REFUSED + ' The tool use was rejected"}'
    t = session(
        person("look at the fixture"),
        READ_README,
        result("t1", quoted_file),
        calls("t2", "Read", {"file_path": "notes.md"}),
        result("t2", "rejected: " + REFUSED, is_error=True),
    )
    assert extract_interventions(t) == []


def test_a_reminder_inside_the_persons_words_is_split_off(session) -> None:
    t = session(
        person("build it"),
        says("Built."),
        person("now add tests\n<system-reminder>Todo list changed.</system-reminder>"),
    )
    [found] = extract_interventions(t)
    assert found.intervention == "now add tests"


def test_choosing_to_clarify_a_question_is_not_a_refusal(session) -> None:
    clarify = (
        REFUSED.split(" STOP")[0]
        + " To tell you how to proceed, the user said:\nThe user wants to clarify these questions."
    )
    t = session(
        person("set up linting"),
        calls("t1", "AskUserQuestion", {"questions": []}),
        result("t1", clarify, is_error=True),
    )
    assert extract_interventions(t) == []


def test_words_typed_while_the_agent_worked_are_a_steer(session) -> None:
    t = session(
        person("commit the work"),
        calls("t1", "Bash", {"command": "git commit -m wip"}),
        {
            "type": "queue-operation",
            "operation": "enqueue",
            "content": "new tasks were added, tackle them",
        },
        {"type": "queue-operation", "operation": "remove"},
        result("t1", "[main 99b497c] wip"),
        calls("t2", "Bash", {"command": "git status"}),
    )
    [found] = extract_interventions(t)
    assert (found.trigger, found.intervention) == (
        Trigger.STEER,
        "new tasks were added, tackle them",
    )
    assert t.messages[found.message_index].queued
    assert found.message_index > 2, "placed after the tool result it was handed over with"


def test_queued_words_delivered_as_an_ordinary_turn_count_once(session) -> None:
    t = session(
        person("build it"),
        says("Built."),
        {"type": "queue-operation", "operation": "enqueue", "content": "now test it"},
        {"type": "queue-operation", "operation": "remove"},
        person("now test it"),
        says("Tested."),
    )
    assert [i.intervention for i in extract_interventions(t)] == ["now test it"]


def test_a_queued_command_attachment_is_the_persons_steer(session) -> None:
    attachment = {
        "type": "attachment",
        "attachment": {
            "type": "queued_command",
            "prompt": "docs too please",
            "origin": {"kind": "human"},
        },
    }
    t = session(person("sweep the code"), calls("t1", "Bash", {"command": "ls"}), attachment)
    [found] = extract_interventions(t)
    assert (found.trigger, found.intervention) == (Trigger.STEER, "docs too please")


def test_context_and_aftermath_stay_bounded(session) -> None:
    t = session(
        person("go"),
        says("x" * 50_000),
        calls("t1", "Write", {"file_path": "big.txt", "content": "y" * 50_000}),
        person("stop"),
        says("z" * 50_000),
    )
    [found] = extract_interventions(t)
    assert len(found.context) <= CONTEXT_LIMIT
    assert len(found.aftermath) <= 1000
    assert found.context.endswith("…") or "…" in found.context


def test_an_edit_is_an_intervention_with_the_diff_as_bounded_context() -> None:
    files = [f"src/m{i}.py" for i in range(25)]
    found = edit_intervention("release/t1", "+" * 10_000, files)
    assert found.trigger == Trigger.EDIT and found.session_id == "release/t1"
    assert "25 file(s)" in found.intervention and "src/m0.py" in found.intervention
    assert "and 5 more" in found.intervention
    assert len(found.context) == CONTEXT_LIMIT and found.context.startswith("+++")


# ── Provenance ───────────────────────────────────────────────────────────────


def origins(t) -> list[Origin]:
    return [classify_origin(t, i.message_index) for i in extract_interventions(t)]


def test_a_session_of_repository_tools_is_clean(session) -> None:
    t = session(
        person("tidy up"),
        READ_README,
        README_READ,
        calls("t2", "Bash", {"command": "git status && pytest -q 2>&1 | tail -5"}),
        result("t2", "1 passed"),
        says("Tidy."),
        person("also the changelog"),
    )
    assert origins(t) == [Origin.CLEAN]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("WebFetch", {"url": "https://example.com"}),
        ("WebSearch", {"query": "xterm scroll"}),
        ("mcp__tidewave__project_eval", {"code": "1"}),
        ("Task", {"prompt": "research"}),
        ("TaskOutput", {"task_id": "b1"}),
        ("SomeNewTool", {}),
        ("Bash", {"command": "curl -s https://example.com"}),
        ("Read", {"file_path": "/home/ana/Downloads/page.html"}),
    ],
)
def test_third_party_or_unclassifiable_results_before_the_intervention_make_it_untrusted(
    session, tool: str, arguments: dict
) -> None:
    t = session(
        person("look into it"),
        calls("t1", tool, arguments),
        result("t1", "a page"),
        says("Found it."),
        person("not like that"),
    )
    assert origins(t) == [Origin.UNTRUSTED]


def test_third_party_content_after_the_intervention_does_not_taint_it(session) -> None:
    t = session(
        person("fix it"),
        says("Fixed."),
        person("explain why"),
        calls("t1", "WebFetch", {"url": "https://example.com"}),
        result("t1", "a page"),
    )
    assert origins(t) == [Origin.CLEAN]


def test_a_steer_beside_a_fetched_page_is_untrusted(session) -> None:
    t = session(
        person("research"),
        calls("t1", "WebFetch", {"url": "https://x"}),
        result("t1", "a page", words="stop"),
    )
    assert origins(t) == [Origin.UNTRUSTED]


def test_a_result_without_its_call_is_untrusted(session) -> None:
    t = session(person("go"), result("t-orphan", "who knows"), says("Done."), person("again"))
    assert origins(t) == [Origin.UNTRUSTED]


def test_a_torn_line_before_the_intervention_makes_it_untrusted(tmp_path: Path) -> None:
    path = tmp_path / "torn.jsonl"
    lines = [
        json.dumps(person("go")),
        '{"type": "user", "message": {"content": "tor',
        json.dumps(says("Done.")),
        json.dumps(person("again")),
    ]
    path.write_text("\n".join(lines) + "\n")
    t = load_claude_code(path)
    assert [p.line for p in t.problems] == [2]
    assert origins(t) == [Origin.UNTRUSTED]


def test_a_torn_last_line_after_the_intervention_leaves_it_clean(tmp_path: Path) -> None:
    path = tmp_path / "torn.jsonl"
    path.write_text(
        "".join(json.dumps(r) + "\n" for r in (person("go"), says("Done."), person("again")))
        + '{"type": "assi'
    )
    t = load_claude_code(path)
    assert len(t.problems) == 1 and origins(t) == [Origin.CLEAN]


def test_an_unknown_record_type_before_the_intervention_makes_it_untrusted(session) -> None:
    t = session(
        person("go"), {"type": "web-clip", "content": "a page"}, says("Done."), person("again")
    )
    assert origins(t) == [Origin.UNTRUSTED]


def test_a_line_that_does_not_record_isSidechain_fails_closed(session) -> None:
    unmarked = says("Done.")
    del unmarked["isSidechain"]
    t = session(person("go"), unmarked, person("again"))
    assert origins(t) == [Origin.UNTRUSTED]


def test_an_index_outside_the_transcript_is_untrusted(session) -> None:
    t = session(person("go"), says("Done."))
    assert classify_origin(t, 2) == Origin.UNTRUSTED
    assert classify_origin(t, -1) == Origin.UNTRUSTED


def test_a_sidechain_is_derived(session) -> None:
    lines = [person("research"), says("Found."), person("more")]
    t = session(*({**line, "isSidechain": True} for line in lines))
    assert t.kind == "subagent"
    assert origins(t) == [Origin.DERIVED]


def test_sidechain_lines_interleaved_in_a_session_are_another_conversation(session) -> None:
    t = session(
        person("research the options"),
        calls("t1", "Task", {"prompt": "find the docs"}),
        {**person("find the docs"), "isSidechain": True},
        {**says("Found them."), "isSidechain": True},
        result("t1", "the docs say X"),
        says("The docs say X."),
    )
    assert t.kind == "interactive" and len(t.messages) == 4
    assert extract_interventions(t) == [], "the parent agent's prompt is not a person's steer"


def test_a_summary_opening_a_transcript_stands_for_unseen_history(session) -> None:
    summary = (
        "This session is being continued from a previous conversation that ran out of context."
    )
    t = session(person(summary, isCompactSummary=True), says("Continuing."), person("keep going"))
    assert origins(t) == [Origin.UNTRUSTED]


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "git status && git diff HEAD~1 --stat",
        "mix test 2>&1 | tail -5",
        "python -m pytest -q tests/",
        "git commit -m \"$(cat <<'EOF'\nfix: don't (break) it\nEOF\n)\"",
        "(cd sub && grep -rn todo .) # don't forget",
        "grep -n 'def .*:$' src/app.py",
    ],
)
def test_local_shell_commands_stay_in_the_repository(command: str) -> None:
    assert shell_command_is_local(command, CWD)


@pytest.mark.parametrize(
    "command",
    [
        "curl -s https://example.com",
        "git pull",
        "npm install left-pad",
        "bd show task-1",
        "cat ~/Downloads/page.html",
        "cat /tmp/other/notes",
        "tail /tmp/task.output",
        'echo "$(curl -s https://x)"',
        "ls `curl x`",
        "$(echo curl) https://x",
        "python -c 'import urllib.request'",
        "find . -exec curl {} \\;",
        'echo "<<EOF"\ncurl https://x\nEOF',
        'echo "unbalanced',
        "cat $HOME/.netrc",
        "cd && cat .netrc",
        "git -c core.pager=less log",
        "GIT_EXTERNAL_DIFF=/tmp/fetch.sh git diff",
    ],
)
def test_shell_commands_that_fetch_or_cannot_be_read_are_not_local(command: str) -> None:
    assert not shell_command_is_local(command, CWD)


def test_only_clean_is_learnable() -> None:
    assert learnable(Origin.CLEAN)
    assert not learnable(Origin.UNTRUSTED)
    assert not learnable(Origin.DERIVED)
    raw = "clean"
    assert not learnable(raw), "a raw string must go through origin_of_record first"  # type: ignore


def test_a_record_without_an_origin_loads_untrusted() -> None:
    assert origin_unknown() == Origin.UNTRUSTED
    assert origin_of_record({"trigger": "steer"}) is Origin.UNTRUSTED
    assert origin_of_record({"origin": "CLEAN"}) is Origin.UNTRUSTED
    assert origin_of_record({"origin": 1}) is Origin.UNTRUSTED
    assert origin_of_record({"origin": "clean"}) is Origin.CLEAN
    assert origin_of_record({"origin": "derived"}) is Origin.DERIVED


# ── The generic format ───────────────────────────────────────────────────────

GENERIC = [
    {"format": "failres.transcript/1", "session_id": "g-1", "kind": "interactive", "cwd": CWD},
    {"role": "user", "text": "Make the date tests pass.", "ts": "2026-03-01T10:00:00Z"},
    {
        "role": "assistant",
        "text": "Reading the parser.",
        "tool": "Read",
        "tool_use_id": "t1",
        "input": {"file_path": "src/dates.py"},
    },
    {"role": "tool", "tool_use_id": "t1", "text": "def parse(s): ..."},
    {
        "role": "assistant",
        "tool": "Bash",
        "tool_use_id": "t2",
        "input": {"command": "rm -rf build/"},
    },
    {"role": "tool", "tool_use_id": "t2", "denied": True, "text": "build/ holds the fixtures"},
    {"role": "assistant", "text": "Leaving build/ alone."},
    {"role": "user", "text": "and no new type hints in old files"},
]


def test_a_generic_transcript_yields_its_interventions_with_origins(tmp_path: Path) -> None:
    t = load_transcript(write_jsonl(tmp_path / "g.jsonl", GENERIC))
    assert (t.format, t.session_id, t.kind, t.problems) == ("generic", "g-1", "interactive", ())
    assert t.messages[2].blocks[0].source == "repo", "judged from the tool when not declared"
    found = extract_interventions(t)
    assert [(i.trigger, i.intervention) for i in found] == [
        (Trigger.DENIAL, "build/ holds the fixtures"),
        (Trigger.FOLLOWUP, "and no new type hints in old files"),
    ]
    assert origins(t) == [Origin.CLEAN, Origin.CLEAN]


def test_a_generic_transcript_round_trips(tmp_path: Path) -> None:
    original = load_generic(write_jsonl(tmp_path / "g.jsonl", GENERIC))
    again_path = tmp_path / "again.jsonl"
    again_path.write_text("\n".join(generic_lines(original)) + "\n")
    again = load_generic(again_path)
    assert again.messages == original.messages
    assert (again.session_id, again.kind) == (original.session_id, original.kind)
    assert extract_interventions(again) == extract_interventions(original)


def test_a_generic_transcript_may_be_one_json_document(tmp_path: Path) -> None:
    document = {**GENERIC[0], "messages": GENERIC[1:]}
    path = tmp_path / "g.json"
    path.write_text(json.dumps(document, indent=2))
    t = load_transcript(path)
    assert t.problems == () and len(extract_interventions(t)) == 2


@pytest.mark.parametrize(
    ("tool", "arguments", "declared", "expected"),
    [
        ("WebFetch", {"url": "https://x"}, "repo", Origin.UNTRUSTED),
        ("Bash", {"command": "curl -s https://x"}, "repo", Origin.UNTRUSTED),
        ("Read", {"file_path": "src/dates.py"}, "web", Origin.UNTRUSTED),
        ("house_search", {"q": "dates"}, "repo", Origin.CLEAN),
        ("house_search", {"q": "dates"}, None, Origin.UNTRUSTED),
    ],
)
def test_a_declared_source_can_tighten_a_result_never_loosen_it(
    tmp_path: Path, tool: str, arguments: dict, declared: str | None, expected: Origin
) -> None:
    tool_line = {"role": "tool", "tool_use_id": "w", "text": "a page"}
    if declared is not None:
        tool_line["source"] = declared
    lines = [
        GENERIC[0],
        {"role": "user", "text": "research it"},
        {"role": "assistant", "tool": tool, "tool_use_id": "w", "input": arguments},
        tool_line,
        {"role": "assistant", "text": "Found."},
        {"role": "user", "text": "good, now write it up"},
    ]
    t = load_generic(write_jsonl(tmp_path / "g.jsonl", lines))
    assert origins(t) == [expected]


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ({}, Origin.UNTRUSTED),
        ({"kind": "batch"}, Origin.DERIVED),
        ({"kind": "subagent"}, Origin.DERIVED),
    ],
)
def test_a_generic_transcript_is_clean_only_when_declared_interactive(
    tmp_path: Path, header: dict, expected: Origin
) -> None:
    lines = [
        {"session_id": "g", **header},
        {"role": "user", "text": "go"},
        {"role": "assistant", "text": "Done."},
        {"role": "user", "text": "again"},
    ]
    t = load_generic(write_jsonl(tmp_path / "g.jsonl", lines))
    assert origins(t) == [expected]


def test_load_transcript_tells_the_formats_apart(tmp_path: Path, session) -> None:
    generic = write_jsonl(tmp_path / "g.jsonl", GENERIC)
    claude = write_jsonl(tmp_path / "c.jsonl", [person("go"), says("Done.")])
    assert (sniff_format(generic), sniff_format(claude)) == ("generic", "claude-code")
    assert load_transcript(claude).format == "claude-code"


# ── Hostile input ────────────────────────────────────────────────────────────


def test_a_file_that_cannot_be_read_is_one_invalid_input_naming_it(tmp_path: Path) -> None:
    from lessons.learning.transcripts.codex import load_codex

    unreadable = tmp_path / "session.jsonl"
    unreadable.mkdir()  # opened as a file, a directory fails as a vanished or forbidden file does
    for load in (load_claude_code, load_codex):
        with pytest.raises(InvalidInput, match=f"^cannot read transcript {unreadable}: "):
            load(unreadable)


def test_binary_bytes_are_refused_as_not_a_transcript(tmp_path: Path) -> None:
    path = tmp_path / "binary.jsonl"
    path.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(InvalidInput, match="not a transcript"):
        load_transcript(path)
    with pytest.raises(InvalidInput):
        load_claude_code(path)


@pytest.mark.parametrize("make", [lambda p: p.write_text(""), lambda p: p.mkdir(), lambda p: None])
def test_empty_missing_or_directory_paths_raise_invalid_input(tmp_path: Path, make) -> None:
    path = tmp_path / "x.jsonl"
    make(path)
    with pytest.raises(InvalidInput):
        load_transcript(path)


def test_bad_lines_are_counted_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    good = [json.dumps(r).encode() for r in (person("go"), says("Done."), person("again"))]
    path.write_bytes(
        b"\n".join(
            [
                good[0],
                b"\xff\xfe not utf-8 \x80",
                b"[" * 100_000 + b"]" * 100_000,
                b"42",
                json.dumps(
                    {"type": "user", "isSidechain": False, "message": {"content": 7}}
                ).encode(),
                good[1],
                json.dumps(person("\ud800 lone surrogate")).encode(),
                good[2],
            ]
        )
    )
    t = load_transcript(path)
    reasons = [p.reason for p in t.problems]
    assert reasons[:4] == [
        "not UTF-8",
        "JSON nested too deeply",
        "not a JSON object",
        "user line without message content",
    ]
    assert [i.intervention for i in extract_interventions(t)] == ["? lone surrogate", "again"]
    json.dumps([m.blocks for m in t.messages], default=str).encode("utf-8")


def test_a_line_longer_than_the_limit_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    huge = json.dumps(person("x" * (MAX_LINE_BYTES + 10)))
    path.write_text("\n".join([json.dumps(person("go")), huge, json.dumps(says("Done."))]) + "\n")
    t = load_transcript(path)
    assert [p.line for p in t.problems] == [2] and "longer than" in t.problems[0].reason
    assert len(t.messages) == 2


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes_load_or_raise_invalid_input_only(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    try:
        t = load_transcript(path)
    except InvalidInput:
        return
    for found in extract_interventions(t):
        classify_origin(t, found.message_index)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    contents=st.lists(json_values, min_size=1, max_size=6),
    roles=st.lists(
        st.sampled_from(["user", "assistant", "queue-operation", "attachment"]),
        min_size=6,
        max_size=6,
    ),
)
def test_malformed_records_never_escape_as_exceptions(
    tmp_path: Path, contents: list, roles: list
) -> None:
    records = [
        {
            "type": roles[i],
            "isSidechain": False,
            "message": {"content": c},
            "operation": "remove",
            "attachment": c,
        }
        for i, c in enumerate(contents)
    ]
    path = write_jsonl(tmp_path / "fuzz.jsonl", [person("go"), *records])
    t = load_transcript(path)
    for found in extract_interventions(t):
        assert classify_origin(t, found.message_index) in set(Origin)


# ── Real Claude Code sessions ────────────────────────────────────────────────


@pytest.fixture
def real() -> Path:
    if not CLAUDE_CODE.is_dir():
        pytest.skip(
            f"real transcripts not present at {CLAUDE_CODE} (only in the development checkout)"
        )
    return CLAUDE_CODE


def test_real_sessions_load_without_problems(real: Path) -> None:
    for path in transcript_files([real]):
        assert load_transcript(path).problems == (), path.name


def test_real_refusal_of_two_parallel_calls_and_the_interrupt_are_one_denial(real: Path) -> None:
    t = load_transcript(real / "short.jsonl")
    [found] = extract_interventions(t)
    assert (found.trigger, found.intervention) == (Trigger.DENIAL, REFUSED_WITHOUT_WORDS)
    assert "mix phx.server 2>&1 | head -80" in found.context and "mix.exs" in found.context
    assert classify_origin(t, found.message_index) == Origin.CLEAN
    assert all("/model" not in i.intervention for i in extract_interventions(t))


def test_real_interrupts_take_the_words_that_followed_and_web_content_taints(real: Path) -> None:
    t = load_transcript(real / "tool_heavy.jsonl")
    first, second = extract_interventions(t)
    assert (first.trigger, second.trigger) == (Trigger.STEER, Trigger.DENIAL)
    assert first.intervention.startswith("scrolling back in xterm.js still does not work")
    assert second.intervention == STOPPED_WITHOUT_WORDS
    assert "WebFetch" in second.context
    # The first follows a shell read of /tmp; the second follows a web search.
    assert origins(t) == [Origin.UNTRUSTED, Origin.UNTRUSTED]


def test_real_interrupt_after_a_plan_and_the_words_after_it_are_one_steer(real: Path) -> None:
    t = load_transcript(real / "subagent.jsonl")
    [after] = extract_interventions(t)
    # The person stopped the run to say what to do instead: "create the beads" is the steer,
    # and the interrupt is no second intervention that "said nothing more".
    assert (after.trigger, after.intervention, after.followup) == (Trigger.STEER, "create the beads", "request")
    assert (
        classify_origin(t, after.message_index) == Origin.UNTRUSTED
    ), "WebSearch results came before"


def test_real_long_session_finds_the_denial_the_queued_steer_and_the_followup(real: Path) -> None:
    t = load_transcript(real / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    found = extract_interventions(t)
    assert [(i.trigger, i.intervention) for i in found] == [
        (Trigger.DENIAL, REFUSED_WITHOUT_WORDS),
        (Trigger.STEER, "check again"),
        (Trigger.STEER, "new beads for the epic were added. tackle them"),
        (Trigger.FOLLOWUP, "did you push?"),
    ]
    assert "TaskOutput" in found[0].context
    assert "Yes" in found[3].aftermath
    assert found[3].followup == "request"
    texts = " ".join(i.intervention for i in found)
    assert "task-notification" not in texts and "continued from a previous" not in texts


def test_real_session_with_a_quoted_refusal_and_a_compaction_has_no_interventions(
    real: Path,
) -> None:
    t = load_transcript(real / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    quoting = [
        b
        for m in t.messages
        for b in m.blocks
        if b.kind == "tool_result" and "doesn't want to proceed" in b.text
    ]
    assert quoting, "the fixture quotes a refusal inside a file it read"
    assert extract_interventions(t) == []


def test_real_subagent_sidechain_is_derived(real: Path) -> None:
    path = real / "258c7280-ae70-4798-800f-63464d01a85d" / "subagents" / "agent-a881341.jsonl"
    t = load_transcript(path)
    assert (t.kind, t.session_id) == (
        "subagent",
        "258c7280-ae70-4798-800f-63464d01a85d/agent-a881341",
    )
    assert {classify_origin(t, m.index) for m in t.messages} == {Origin.DERIVED}


def test_mining_reads_sidechains_beside_their_session_in_a_fixed_order(real: Path) -> None:
    sessions = mine([real / "258c7280-ae70-4798-800f-63464d01a85d.jsonl", real / "short.jsonl"])
    assert [s.path.name for s in sessions] == [
        "258c7280-ae70-4798-800f-63464d01a85d.jsonl",
        "agent-a881341.jsonl",
        "short.jsonl",
    ]
    assert [len(s.interventions) for s in sessions] == [4, 0, 1]
    assert sessions[2].interventions[0].origin == Origin.CLEAN


def test_mining_reports_an_unreadable_file_and_goes_on(tmp_path: Path) -> None:
    bad = tmp_path / "a.jsonl"
    bad.write_bytes(b"\x00\x01binary")
    good = write_jsonl(tmp_path / "b.jsonl", [person("go"), says("Done."), person("again")])
    first, second = mine([tmp_path])
    assert first.path == bad and "not a transcript" in first.error and first.interventions == ()
    assert second.path == good and second.error == "" and len(second.interventions) == 1


def test_claude_codes_own_listings_of_agents_and_skills_neither_taint_nor_warn(tmp_path):
    """Claude Code 2.1 opens a print-mode session with attachments listing the installed agents
    and skills, and ends it with a `last-prompt` record: the person's environment, not a third party's."""
    from lessons.learning.transcripts.claude_code import load_claude_code

    session = "11111111-2222-3333-4444-555555555555"
    lines = [
        {"type": "user", "sessionId": session, "cwd": "/repo", "uuid": "u1", "timestamp": "2026-11-30T10:00:00Z",
         "isSidechain": False,
         "message": {"role": "user", "content": "Fix the parser."}},
        {"type": "attachment", "sessionId": session, "attachment": {"type": "agent_listing_delta", "agents": []}},
        {"type": "attachment", "sessionId": session, "attachment": {"type": "skill_listing", "skills": ["pdf"]}},
        {"type": "assistant", "sessionId": session, "uuid": "a1", "timestamp": "2026-11-30T10:00:01Z",
         "isSidechain": False,
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}},
        {"type": "last-prompt", "sessionId": session, "lastPrompt": "Fix the parser."},
    ]
    path = tmp_path / f"{session}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    transcript = load_claude_code(path)
    assert transcript.problems == ()
    assert [m.role for m in transcript.messages] == ["user", "assistant"]
