"""A scripted model endpoint for the real agent CLIs: the only thing their tests fake.

Claude Code, Codex CLI and aider are real programs; what they talk to is this
standard-library HTTP server on 127.0.0.1, which replays a script instead of
thinking. It speaks the three wire protocols those CLIs use (measured, see
FACTS.md "Real agent CLIs"):

    POST /v1/messages           Anthropic Messages, SSE stream       (Claude Code)
    POST /v1/responses          OpenAI Responses, SSE stream         (Codex CLI)
    POST /v1/chat/completions   OpenAI Chat Completions, SSE stream  (aider)

A script is a list of steps; each step is what the model says in one turn: some
text, tool calls, or both (`Step`). Which step answers a request is decided by the
request itself, not by a counter, wherever the protocol allows it: step N answers a
conversation that already holds N assistant turns, so a client that retries a
request gets the same answer again. aider's prompt carries example assistant turns
of its own, so there the step is the number of earlier requests instead.

One server can play several agents in turn (the implementer, then the fixer of a
task): `by_phrase` maps a phrase of a conversation's user messages (say, the fix
prompt's "Repair attempt 1") to that conversation's own script; a conversation
holding none of the phrases gets `script`. aider's request count is kept per script.

Every request is logged (`ModelServer.requests`), so a test can assert on what the
agent really sent: that the prompt arrived, which tools were offered, what a tool
call returned.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model makes: a function tool with JSON input, or a custom tool with text."""

    name: str
    input: dict[str, Any] | str


@dataclass(frozen=True)
class Step:
    """What the model says in one turn."""

    text: str = ""
    tools: tuple[ToolCall, ...] = ()


# ---- steps a test writes, one helper per tool the CLIs offer ----

def say(text: str) -> Step:
    return Step(text=text)


def claude_tools(*calls: tuple[str, dict[str, Any]], text: str = "") -> Step:
    """Claude Code tool calls: ("Read", {"file_path": ...}), ("Edit", {...}), ("Bash", {"command": ...})."""
    return Step(text=text, tools=tuple(ToolCall(name, arguments) for name, arguments in calls))


def codex_exec(cmd: str, text: str = "") -> Step:
    """Codex's shell tool (offered for a model name it does not know)."""
    return Step(text=text, tools=(ToolCall("exec_command", {"cmd": cmd}),))


def codex_patch(patch: str, text: str = "") -> Step:
    """Codex's apply_patch custom tool (offered for models it knows), input `*** Begin Patch ...`."""
    return Step(text=text, tools=(ToolCall("apply_patch", patch),))


def aider_replace(path: str, search: str, replace: str, text: str = "") -> Step:
    """aider's diff edit format: a SEARCH/REPLACE block under the file's path."""
    block = f"{path}\n```\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"
    return Step(text=(text + "\n\n" if text else "") + block)


# ---- which step answers a request ----

_MODEL_OUTPUT_ITEMS = {"function_call", "custom_tool_call", "local_shell_call", "reasoning"}


def anthropic_turns(body: dict) -> int:
    """Assistant turns already in an Anthropic Messages request."""
    return sum(1 for message in body.get("messages", []) if message.get("role") == "assistant")


def responses_turns(body: dict) -> int:
    """Model turns already in an OpenAI Responses request.

    One turn may come back as several input items (a message and its tool calls):
    a run of consecutive model-output items counts once.
    """
    turns, in_output = 0, False
    items = body.get("input", [])
    for item in items if isinstance(items, list) else []:
        is_output = item.get("type") in _MODEL_OUTPUT_ITEMS or (
            item.get("type", "message") == "message" and item.get("role") == "assistant")
        if is_output and not in_output:
            turns += 1
        in_output = is_output
    return turns


# ---- the wire formats ----

def _sse(event: str | None, data: dict | str) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def anthropic_events(step: Step, model: str, message_id: str) -> Iterator[bytes]:
    """The Messages stream for one step: each text and tool call is a content block."""
    usage = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    yield _sse("message_start", {"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}})
    index = 0
    if step.text or not step.tools:
        yield _sse("content_block_start", {"type": "content_block_start", "index": index,
                                           "content_block": {"type": "text", "text": ""}})
        yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                           "delta": {"type": "text_delta", "text": step.text}})
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    for number, call in enumerate(step.tools):
        yield _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": f"toolu_{message_id}_{number}", "name": call.name, "input": {}}})
        yield _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps(call.input)}})
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    stop_reason = "tool_use" if step.tools else "end_turn"
    yield _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                 "usage": {"output_tokens": 5}})
    yield _sse("message_stop", {"type": "message_stop"})


def _responses_items(step: Step, response_id: str) -> list[dict]:
    items: list[dict] = []
    if step.text:
        items.append({"type": "message", "id": f"msg_{response_id}", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": step.text, "annotations": []}]})
    for number, call in enumerate(step.tools):
        call_id = f"call_{response_id}_{number}"
        if isinstance(call.input, str):
            items.append({"type": "custom_tool_call", "id": f"ctc_{response_id}_{number}", "call_id": call_id,
                          "name": call.name, "input": call.input, "status": "completed"})
        else:
            items.append({"type": "function_call", "id": f"fc_{response_id}_{number}", "call_id": call_id,
                          "name": call.name, "arguments": json.dumps(call.input), "status": "completed"})
    return items


def responses_events(step: Step, model: str, response_id: str) -> Iterator[bytes]:
    """The Responses stream for one step: each item added, text streamed, each item done, completed."""
    response = {"id": response_id, "object": "response", "created_at": 0, "model": model, "output": []}
    yield _sse("response.created", {"type": "response.created", "response": {**response, "status": "in_progress"}})
    items = _responses_items(step, response_id)
    for index, item in enumerate(items):
        if item["type"] == "message":
            yield _sse("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                                      "item": {**item, "status": "in_progress", "content": []}})
            yield _sse("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                      "output_index": index, "content_index": 0, "delta": step.text})
        else:
            yield _sse("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                                      "item": item})
        yield _sse("response.output_item.done", {"type": "response.output_item.done", "output_index": index,
                                                 "item": item})
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    yield _sse("response.completed", {"type": "response.completed", "response": {
        **response, "status": "completed", "output": items, "usage": usage}})


def chat_events(step: Step, model: str, completion_id: str) -> Iterator[bytes]:
    """The Chat Completions stream for one step: the text in one chunk, then the finish and [DONE]."""
    def chunk(delta: dict, finish: str | None) -> dict:
        return {"id": completion_id, "object": "chat.completion.chunk", "created": 0, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield _sse(None, chunk({"role": "assistant", "content": step.text}, None))
    yield _sse(None, chunk({}, "stop"))
    yield _sse(None, "[DONE]")


# ---- the server ----

@dataclass
class LoggedRequest:
    """One request as the agent sent it."""

    method: str
    path: str
    body: dict
    step: int | None  # the script step that answered it; None for a request outside the script
    credential: str = ""  # the key the agent sent (x-api-key, or the bearer token): whose login it used
    phrase: str = ""  # the `by_phrase` key whose script answered it; "" for the default script

    def user_text(self) -> str:
        """Everything the user side of the conversation said: the prompt, tool results."""
        return user_text(self.body)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def user_text(body: dict) -> str:
    """The text of a request's user-role messages (Messages and Chat `messages`, Responses `input`)."""
    items = body.get("messages") if isinstance(body.get("messages"), list) else body.get("input")
    if not isinstance(items, list):
        return ""
    return "\n".join(text for item in items if isinstance(item, dict) and item.get("role") == "user"
                     for text in _strings(item.get("content")))


@dataclass
class ModelServer:
    """The scripted endpoint; `start()` binds a free port on 127.0.0.1."""

    script: list[Step]
    by_phrase: dict[str, list[Step]] = field(default_factory=dict)
    requests: list[LoggedRequest] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _chat_requests: dict[str, int] = field(default_factory=dict)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _httpd: ThreadingHTTPServer | None = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ModelServer:
        server = self

        class Handler(_Handler):
            model_server = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        # A short poll interval: shutdown() waits up to one interval, at every test's teardown.
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="model-server",
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def scripted(self, path: str | None = None, *, phrase: str | None = None) -> list[LoggedRequest]:
        """The requests that a script step answered (optionally only those to `path`, or of one script)."""
        return [request for request in self.requests
                if request.step is not None and (path is None or request.path.split("?")[0] == path)
                and (phrase is None or request.phrase == phrase)]

    def phrase_of(self, body: dict) -> str:
        """The first `by_phrase` key the conversation's user messages hold, else ""."""
        said = user_text(body)
        return next((phrase for phrase in self.by_phrase if phrase in said), "")

    def step_for(self, turns: int, phrase: str = "") -> Step:
        """Step `turns` of the script; past its end, a closing text turn so the agent stops."""
        script = self.by_phrase[phrase] if phrase else self.script
        return script[turns] if turns < len(script) else Step(text="Done.")

    def answer(self, method: str, path: str, body: dict,
               credential: str = "") -> tuple[int | None, Iterable[bytes] | dict]:
        """The step number and the reply (an SSE stream, or a JSON body) for one request."""
        route = path.split("?")[0]
        number = next(self._ids)
        model = str(body.get("model", "fake-model"))
        phrase = self.phrase_of(body)
        step_number: int | None = None
        reply: Iterable[bytes] | dict
        if route == "/v1/messages/count_tokens":
            reply = {"input_tokens": 10}
        elif route == "/v1/messages":
            # A request offering no tools is Claude Code's own chatter (a title, a summary):
            # answer it plainly, without spending a step of the script.
            if body.get("tools"):
                step_number = anthropic_turns(body)
                reply = anthropic_events(self.step_for(step_number, phrase), model, f"msg{number}")
            else:
                reply = anthropic_events(Step(text="Scripted."), model, f"msg{number}")
        elif route == "/v1/responses":
            step_number = responses_turns(body)
            reply = responses_events(self.step_for(step_number, phrase), model, f"resp{number}")
        elif route == "/v1/chat/completions":
            with self._lock:
                step_number = self._chat_requests.get(phrase, 0)
                self._chat_requests[phrase] = step_number + 1
            reply = chat_events(self.step_for(step_number, phrase), model, f"chatcmpl{number}")
        elif route.endswith("/models"):
            reply = {"object": "list", "data": [{"id": model, "object": "model"}]}
        else:
            reply = {}
        with self._lock:
            self.requests.append(LoggedRequest(method, path, body, step_number, credential,
                                               phrase if step_number is not None else ""))
        return step_number, reply


class _Handler(BaseHTTPRequestHandler):
    model_server: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
        pass  # the request log is ModelServer.requests; stderr would interleave with pytest's

    def _send_json(self, status: int, document: dict) -> None:
        payload = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _credential(self) -> str:
        bearer = self.headers.get("Authorization", "")
        return self.headers.get("x-api-key") or bearer.removeprefix("Bearer ").strip()

    def do_HEAD(self) -> None:  # noqa: N802 - the stdlib's name
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802
        _, reply = self.model_server.answer("GET", self.path, {})
        self._send_json(200, reply if isinstance(reply, dict) else {})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, {"error": {"message": "the body is not JSON"}})
            return
        _, reply = self.model_server.answer("POST", self.path, body if isinstance(body, dict) else {},
                                            credential=self._credential())
        if isinstance(reply, dict):
            self._send_json(200, reply)
            return
        # A stream has no length: close the connection to end it, which every client accepts.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in reply:
            self.wfile.write(event)
            self.wfile.flush()
        self.close_connection = True
