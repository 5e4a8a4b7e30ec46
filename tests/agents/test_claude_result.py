"""Reading Claude Code's `--output-format json` result, on output captured from the real binary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failres.agents.claude_result import DeniedCall, claude_result, is_seat_denied
from failres.engine.seats import own_requests
from failres.engine.taxonomy import ScopeRequest

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "claude_result"


def sample(name: str) -> str:
    return (SAMPLES / f"{name}.json").read_text(encoding="utf-8")


def test_a_successful_edit_has_no_denials_and_keeps_session_and_text():
    result = claude_result(sample("success_edit"))
    assert result is not None
    assert result.session_id == "0937865a-bf63-47b0-afcd-ee9b3d9b38dc"
    assert result.result_text == "Changed it."
    assert not result.is_error and not result.was_denied


def test_an_edit_refused_as_a_sensitive_file_is_a_denial_naming_the_file():
    result = claude_result(sample("denied_sensitive"))
    assert result is not None
    assert result.denied == (DeniedCall("Edit", "/home/person/proj/.git/failres/worktrees/s/t1/app.py"),)
    assert result.result_text == "Changed it."  # the agent's own word says success; the denial says otherwise
    assert not result.is_error


def test_a_command_needing_approval_is_a_denial_naming_the_command():
    result = claude_result(sample("denied_bash"))
    assert result is not None
    assert result.denied == (DeniedCall("Bash", "python3 -c 'print(42)'"),)
    assert result.denial_message() == "Claude Code's permissions denied 1 call: Bash python3 -c 'print(42)'"


def test_an_api_error_is_an_error_with_its_message_and_no_denials():
    result = claude_result(sample("api_error"))
    assert result is not None
    assert result.is_error and not result.was_denied
    assert result.result_text == "API Error: 400 scripted refusal"


def test_the_result_is_found_after_lines_a_cli_printed_before_it():
    result = claude_result("warning: something\n" + sample("denied_bash").strip() + "\n")
    assert result is not None and result.was_denied


@pytest.mark.parametrize("stdout", ["", "plain text from a run without --output-format json\n", "{not json",
                                    '{"type": "assistant"}', "[]"])
def test_output_without_a_result_object_reads_as_none(stdout: str):
    assert claude_result(stdout) is None


def test_malformed_denial_entries_are_skipped_and_long_inputs_bounded():
    document = json.loads(sample("denied_bash"))
    document["permission_denials"] = ["junk", {"tool_name": "Bash", "tool_input": {"command": "x" * 500}},
                                      {"tool_input": {"other": 1}}]
    result = claude_result(json.dumps(document))
    assert result is not None
    assert [call.tool for call in result.denied] == ["Bash", "?"]
    assert len(result.denied[0].summary) == 200 and result.denied[0].summary.endswith("...")
    assert result.denied[1].summary == '{"other": 1}'


def test_the_denial_message_names_five_calls_and_counts_the_rest():
    document = json.loads(sample("denied_bash"))
    document["permission_denials"] = [{"tool_name": "Write", "tool_input": {"file_path": f"f{n}.py"}} for n in range(7)]
    result = claude_result(json.dumps(document))
    assert result is not None
    assert result.denial_message() == ("Claude Code's permissions denied 7 calls: Write f0.py; Write f1.py; "
                                       "Write f2.py; Write f3.py; Write f4.py; and 2 more")


def test_a_run_denied_its_calls_that_changed_nothing_is_seat_denied():
    denied = claude_result(sample("denied_sensitive"))
    assert is_seat_denied(denied, changed_paths=[])


def test_a_run_denied_one_call_that_still_made_its_edit_is_judged_by_the_gate():
    assert not is_seat_denied(claude_result(sample("denied_bash")), changed_paths=["app.py"])


def test_a_run_without_denials_or_without_a_result_is_not_seat_denied():
    assert not is_seat_denied(claude_result(sample("success_edit")), changed_paths=[])
    assert not is_seat_denied(None, changed_paths=[])


def test_a_scope_request_in_claudes_json_result_is_read_from_its_text_not_the_json_line():
    """Seen with the real CLI: read from the raw line, the reason ran on into the session id and usage."""
    document = json.loads(sample("success_edit"))
    document["result"] = "VALUE is wrong.\nSCOPE-REQUEST: src/other.py — VALUE feeds the sum"
    output = json.dumps(document, ensure_ascii=False) + "\n"

    assert own_requests(output, prompt="Make add() add.") == (ScopeRequest("src/other.py", "VALUE feeds the sum"),)


def test_a_scope_request_line_echoed_from_the_prompt_is_not_the_seats_own():
    prompt = "If README.md must change, print:\nSCOPE-REQUEST: README.md — why"
    assert own_requests("Working on it.\nSCOPE-REQUEST: README.md — why\nDone.\n", prompt) == ()
