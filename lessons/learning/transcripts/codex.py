"""Codex CLI rollout files (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`) read into
the message model.

A rollout is one JSON object a line, `{"timestamp", "type", "payload"}`. What the model
read is in the `response_item` lines (messages, function and custom tool calls and
their outputs); `session_meta` says where and how the session was started; everything
else (`event_msg`, `turn_context`, `world_state`, token records) is the CLI's own
bookkeeping and is skipped without a warning. What is truly unknown (a line type or
a response item this reader does not know) is reported with its line and type, and
every intervention after it is untrusted.

Who spoke is recorded, never guessed from text: `user` messages are the person's,
except the context Codex itself injects (`<environment_context>`, the AGENTS.md
instructions, `<user_instructions>`), which opens with its own tags; `developer`
messages are the harness. A session started by `codex exec` (`source: "exec"`) is a
run nobody sat at: derived. A refusal is the person's only where the rollout
recorded an approval request for that very call (`exec_approval_request`,
`apply_patch_approval_request`) and the output says it was rejected; Codex's `exec`
never asks, so its sessions hold none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from lessons.errors import InvalidInput
from lessons.learning.locality import DEFAULT_TRUSTED, TrustedCommands
from lessons.learning.messages import Block, Message, Role, Source, Transcript, compact_json, \
    is_control_input, scrub
from lessons.learning.transcripts.reading import FileReader
from lessons.learning.provenance import ToolProvenance

FORMAT = "codex"
TOOL_INPUT_LIMIT = 2000

BOOKKEEPING_LINES = frozenset(("event_msg", "turn_context", "world_state", "token_usage_record", "compacted"))
# Response items that carry nothing the person said and no content from elsewhere.
_AGENT_ITEMS = frozenset(("reasoning",))
# Context Codex writes as a `user` message before the person's words.
_INJECTED_OPENINGS = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>",
                      "<turn_aborted>", "<user_shell_command>", "<skills_instructions>")
# Codex's shell tools, and the argument holding the command (a string, or argv).
_SHELL_TOOLS = {"exec_command": "cmd", "shell": "command", "local_shell": "command", "container.exec": "command"}
# Its own bookkeeping tools: a plan it keeps, a patch it applied (the result echoes the change).
_HARNESS_TOOLS = frozenset(("update_plan", "apply_patch", "write_stdin"))
_APPROVAL_EVENTS = frozenset(("exec_approval_request", "apply_patch_approval_request"))
_REJECTED = ("exec command rejected by user", "patch rejected by user")


def is_codex_rollout(first_records: list[object]) -> bool:
    """Whether the opening records are a Codex rollout's (`session_meta` with a payload)."""
    return any(isinstance(r, dict) and r.get("type") == "session_meta" and isinstance(r.get("payload"), dict)
               for r in first_records)


def load_codex(path: Path | str, *, trusted: TrustedCommands = DEFAULT_TRUSTED) -> Transcript:
    """Read one Codex rollout; bad lines become problems."""
    path = Path(path)
    reader = _RolloutReader(path, ToolProvenance(trusted))
    lines = reader.json_lines()
    if not any(not line.error for line in lines):
        msg = f"{path} is not a transcript: no line of it is JSON"
        raise InvalidInput(msg)
    for line in lines:  # every call and approval first: outputs pair with them by id
        if isinstance(line.value, dict):
            reader.learn(line.value)
    for line in lines:
        reader.take(line, reader.add)
    return reader.finish()


@dataclass
class _RolloutReader(FileReader):
    calls: dict[str, tuple[str, object, str]] = field(default_factory=dict)
    asked: set[str] = field(default_factory=set)
    session_id: str = ""
    headless: str = ""
    subagent: str = ""
    cwd: str = ""

    def learn(self, record: dict) -> None:
        payload = record.get("payload")
        if not isinstance(payload, dict):
            return
        kind = payload.get("type")
        if record.get("type") == "response_item" and kind in ("function_call", "custom_tool_call", "local_shell_call"):
            call_id = payload.get("call_id") or payload.get("id")
            if isinstance(call_id, str):
                name = payload.get("name") if isinstance(payload.get("name"), str) else "local_shell"
                arguments = payload.get("arguments", payload.get("input", payload.get("action")))
                if isinstance(arguments, str) and kind == "function_call":
                    try:
                        arguments = json.loads(arguments)
                    except ValueError:
                        pass
                self.calls.setdefault(call_id, (name, arguments, self.cwd))
        elif record.get("type") == "event_msg" and kind in _APPROVAL_EVENTS and isinstance(payload.get("call_id"), str):
            self.asked.add(payload["call_id"])

    def add(self, number: int, record: dict) -> None:
        kind = record.get("type")
        payload = record.get("payload")
        if kind == "session_meta" and isinstance(payload, dict):
            self._meta(payload)
        elif kind == "turn_context" and isinstance(payload, dict) and isinstance(payload.get("cwd"), str):
            self.cwd = payload["cwd"]
        elif kind == "response_item" and isinstance(payload, dict):
            self._item(number, payload)
        elif kind == "event_msg" and isinstance(payload, dict) and payload.get("type") == "turn_aborted":
            if payload.get("reason") == "interrupted":
                self._append("user", [Block("interrupt", "[interrupted by the person]", "person")], number)
        elif kind not in BOOKKEEPING_LINES:
            self.problem(number, f"unknown line type {str(kind)[:60]!r}")

    def _meta(self, payload: dict) -> None:
        self.session_id = self.session_id or str(payload.get("id") or "")
        if isinstance(payload.get("cwd"), str) and not self.provenance.root:
            self.provenance.root = self.cwd = payload["cwd"]
        source = payload.get("source")
        if isinstance(source, dict) and "subagent" in source:
            self.subagent = "a subagent's rollout (its session_meta names it a subagent)"
        elif source == "exec" or payload.get("originator") == "codex_exec":
            self.headless = "a headless run (`codex exec`: nobody sat at it)"

    def _item(self, number: int, item: dict) -> None:
        kind = item.get("type")
        if kind == "message":
            self._message(number, item)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            call_id = item.get("call_id") or item.get("id") or ""
            name, arguments, _ = self.calls.get(call_id, ("", None, ""))
            block = Block("tool_use", "", "agent", scrub(name), str(call_id), compact_json(arguments, TOOL_INPUT_LIMIT))
            self._append("assistant", [block], number)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(number, item)
        elif kind == "web_search_call":
            self._append("user", [Block("tool_result", compact_json(item.get("action"), 500), "web", "web_search")],
                         number)
        elif kind not in _AGENT_ITEMS:
            self.problem(number, f"unknown response item {str(kind)[:60]!r}")

    def _message(self, number: int, item: dict) -> None:
        role = item.get("role")
        content = item.get("content")
        texts = [scrub(c["text"]) for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)] \
            if isinstance(content, list) else []
        text = "\n".join(t for t in texts if t.strip()).strip()
        if not text:
            return
        if role == "assistant":
            self._append("assistant", [Block("text", text, "agent")], number)
        elif role == "user":
            by_harness = text.startswith(_INJECTED_OPENINGS) or is_control_input(text)
            self._append("user", [Block("text", text, "harness" if by_harness else "person")], number)
        elif role in ("developer", "system"):
            self._append("user", [Block("text", text, "harness")], number)
        else:
            self.problem(number, f"message of an unknown role {str(role)[:60]!r}")

    def _output(self, number: int, item: dict) -> None:
        call_id = item.get("call_id") if isinstance(item.get("call_id"), str) else ""
        output = item.get("output")
        if isinstance(output, dict):
            output = output.get("content", "")
        text = scrub(output if isinstance(output, str) else compact_json(output, TOOL_INPUT_LIMIT))
        if call_id not in self.calls:
            self.problem(number, f"an output whose call ({call_id[:60]!r}) is not in the file")
            self._append("user", [Block("tool_result", text, "unknown", "", call_id)], number)
            return
        name, arguments, cwd = self.calls[call_id]
        if call_id in self.asked and text.strip().startswith(_REJECTED):
            self._append("user", [Block("denial", "", "person", name, call_id, is_error=True)], number)
            return
        self._append("user", [Block("tool_result", text, self._source(number, name, arguments, cwd), name, call_id)],
                     number)

    def _source(self, number: int, name: str, arguments: object, cwd: str) -> Source:
        if name in _HARNESS_TOOLS:
            return "harness"
        if name in _SHELL_TOOLS:
            command = arguments.get(_SHELL_TOOLS[name]) if isinstance(arguments, dict) else None
            if isinstance(command, list) and all(isinstance(w, str) for w in command):
                command = " ".join(command[2:]) if command[:2] in (["bash", "-lc"], ["bash", "-c"]) else \
                    " ".join(command)
            return self.provenance.source_of("Bash", {"command": command}, cwd or self.provenance.root)
        if name.startswith("mcp__") or "__" in name:
            return "mcp"
        self.problem(number, f"an output of the tool {name[:60]!r}, which failres does not know")
        return "unknown"

    def _append(self, role: Role, blocks: list[Block], line: int) -> None:
        self.messages.append(Message(index=len(self.messages), role=role, blocks=tuple(blocks), line=line))

    def finish(self) -> Transcript:
        reason = self.subagent or self.headless
        kind = "subagent" if self.subagent else "batch" if self.headless else "interactive"
        return self.transcript(f"codex/{self.session_id or self.path.stem}", FORMAT, kind, reason)
