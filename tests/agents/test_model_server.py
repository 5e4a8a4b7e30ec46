"""The scripted model server itself: which step answers a request, and what goes over the wire."""

from __future__ import annotations

import json
import urllib.request

from agent_runs import model_server  # noqa: F401 - a fixture
from model_server import ModelServer, anthropic_turns, claude_tools, codex_exec, responses_turns, say


def post(server: ModelServer, path: str, body: dict, headers: dict | None = None) -> list[dict | str]:
    """POST and read the SSE stream back as its data payloads."""
    request = urllib.request.Request(server.base_url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    payloads: list[dict | str] = []
    for line in text.splitlines():
        if line.startswith("data: "):
            data = line[len("data: "):]
            payloads.append(data if data == "[DONE]" else json.loads(data))
    return payloads


def without_ids(value):
    """The payload without its ids: each reply gets fresh ones, the answer is the rest."""
    if isinstance(value, dict):
        return {key: without_ids(item) for key, item in value.items() if key != "id"}
    if isinstance(value, list):
        return [without_ids(item) for item in value]
    return value


def test_anthropic_step_is_the_number_of_assistant_turns_so_a_retry_gets_the_same_answer(model_server):
    server = model_server([claude_tools(("Read", {"file_path": "/w/a.py"})), say("second")])
    body = {"model": "m", "stream": True, "tools": [{"name": "Read"}], "messages": [{"role": "user", "content": "hi"}]}
    first, retried = post(server, "/v1/messages?beta=true", body), post(server, "/v1/messages?beta=true", body)
    assert without_ids(first) == without_ids(retried)
    tool_start = next(event for event in first if event.get("type") == "content_block_start"
                      and event["content_block"]["type"] == "tool_use")
    assert tool_start["content_block"]["name"] == "Read"
    assert first[-2]["delta"]["stop_reason"] == "tool_use"
    body["messages"] += [{"role": "assistant", "content": []}, {"role": "user", "content": []}]
    second = post(server, "/v1/messages", body)
    assert [event["delta"]["text"] for event in second if event.get("type") == "content_block_delta"] == ["second"]
    assert [request.step for request in server.requests] == [0, 0, 1]


def test_an_anthropic_request_offering_no_tools_is_answered_outside_the_script(model_server):
    server = model_server([say("scripted")])
    post(server, "/v1/messages", {"model": "m", "messages": [{"role": "user", "content": "title?"}]})
    assert server.scripted() == [] and len(server.requests) == 1


def test_a_responses_turn_of_a_message_and_its_tool_calls_counts_once():
    body = {"input": [
        {"type": "message", "role": "user"},
        {"type": "reasoning"}, {"type": "message", "role": "assistant"}, {"type": "function_call"},
        {"type": "function_call_output"},
        {"type": "custom_tool_call"}, {"type": "custom_tool_call_output"},
    ]}
    assert responses_turns(body) == 2
    assert anthropic_turns({"messages": [{"role": "user"}, {"role": "assistant"}, {"role": "user"}]}) == 1


def test_responses_stream_carries_a_function_call_and_completes(model_server):
    server = model_server([codex_exec("ls")])
    events = post(server, "/v1/responses", {"model": "m", "input": [{"type": "message", "role": "user"}]},
                  headers={"Authorization": "Bearer person-key"})
    done = [event["item"] for event in events if event["type"] == "response.output_item.done"]
    assert done == [{"type": "function_call", "id": "fc_resp1_0", "call_id": "call_resp1_0", "name": "exec_command",
                     "arguments": '{"cmd": "ls"}', "status": "completed"}]
    assert events[-1]["type"] == "response.completed"
    assert server.requests[0].credential == "person-key"


def test_chat_completions_are_answered_in_request_order_and_end_with_done(model_server):
    server = model_server([say("one"), say("two")])
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}
    answers = [post(server, "/v1/chat/completions", body) for _ in range(3)]
    texts = [events[0]["choices"][0]["delta"]["content"] for events in answers]
    assert texts == ["one", "two", "Done."]  # past the script: a closing turn, so the agent stops
    assert all(events[-1] == "[DONE]" for events in answers)


def test_a_conversation_holding_a_phrase_is_answered_by_that_phrases_own_script(model_server):
    server = model_server([say("implementing")], by_phrase={"Repair attempt 1": [say("fixing"), say("fixed")]})
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "# Task\n## Repair attempt 1\n"}]}
    other = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "# Task\n"}]}
    answers = [post(server, "/v1/chat/completions", b) for b in (body, other, body)]
    texts = [events[0]["choices"][0]["delta"]["content"] for events in answers]
    assert texts == ["fixing", "implementing", "fixed"]  # aider's request count is kept per script
    assert [request.phrase for request in server.scripted()] == ["Repair attempt 1", "", "Repair attempt 1"]


def test_a_phrase_said_only_by_the_assistant_does_not_choose_the_script(model_server):
    server = model_server([claude_tools(("Read", {"file_path": "a.py"})), say("default")],
                          by_phrase={"Repair attempt 1": [say("fixer")]})
    body = {"model": "m", "stream": True, "tools": [{"name": "Read"}], "messages": [
        {"role": "user", "content": "# Task"},
        {"role": "assistant", "content": [{"type": "text", "text": "Repair attempt 1"}]},
        {"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]}
    events = post(server, "/v1/messages?beta=true", body)
    texts = [event["delta"]["text"] for event in events if event.get("type") == "content_block_delta"]
    assert texts == ["default"]
