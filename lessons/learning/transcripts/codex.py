"""Codex CLI rollout files (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`) read into
the message model.

A rollout is one JSON object a line, `{"timestamp", "type", "payload"}`. What the model
read is in the `response_item` lines (messages, tool calls and their outputs);
`session_meta` says where and how the session was started, `turn_context` how each turn
was run (its directory, whether Codex could ask the person to approve a call); the
person's acts besides their words are two events: stopping a turn (`turn_aborted`) and
undoing turns (`thread_rolled_back`). Everything else is Codex's own bookkeeping and is
skipped without a warning. What each of these is lives in `codex_records`, as tables;
what is truly unknown (a line type, a response item or a tool no table names) is
reported with its line and type, and every intervention after it is untrusted.

Who spoke is recorded, never guessed from text: `user` messages are the person's,
except the context Codex itself injects (`<environment_context>`, the AGENTS.md
instructions, `<user_instructions>`), which opens with its own tags; `developer`
messages are the harness. A session started by `codex exec` (`source: "exec"`) is a
run nobody sat at: derived. A refusal is the person's only where the turn let Codex ask
the person (`approval_policy` other than `never`, no automatic reviewer) and a shell or
patch call's whole output is Codex's sentence for a declined approval; an output a
script, a server or a command could have written is never one.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from lessons.errors import InvalidInput
from lessons.learning.locality import DEFAULT_TRUSTED, TrustedCommands
from lessons.learning.messages import Block, Message, Role, Source, Transcript, compact_json, \
    is_control_input, scrub
from lessons.learning.transcripts.codex_records import APPROVAL_EVENTS, BOOKKEEPING_ITEMS, \
    BOOKKEEPING_LINES, CALL_ITEMS, OUTPUT_ITEMS, PERSON_EVENTS, TOOLS, asks_a_person, declined_by_person, \
    is_windows_path, running_session, shell_text, windows_as_posix
from lessons.learning.transcripts.reading import FileReader
from lessons.learning.provenance import ToolProvenance

FORMAT = "codex"
TOOL_INPUT_LIMIT = 2000

# Context Codex writes as a `user` message before the person's words.
_INJECTED_OPENINGS = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>",
                      "<turn_aborted>", "<user_shell_command>", "<skills_instructions>")
# A turn the person stopped (Escape); a turn `replaced`, ended by review or by a budget is
# Codex's own doing.
_STOPPED_BY_PERSON = frozenset(("interrupted",))


@dataclass(frozen=True)
class _Call:
    name: str
    arguments: object
    cwd: str
    asked: bool  # the turn let Codex ask the person to approve it


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
    reader.cwd, reader.asks = "", False
    for line in lines:
        reader.take(line, reader.add)
    return reader.finish()


@dataclass
class _RolloutReader(FileReader):
    calls: dict[str, _Call] = field(default_factory=dict)
    approval_requests: set[str] = field(default_factory=set)
    # Processes an `exec_command` left running, by the session id Codex gave them, with
    # the provenance of the command that started them.
    processes: dict[str, Source] = field(default_factory=dict)
    session_id: str = ""
    headless: str = ""
    subagent: str = ""
    cwd: str = ""
    windows: bool = False
    asks: bool = False

    def learn(self, record: dict) -> None:
        payload = record.get("payload")
        if not isinstance(payload, dict):
            return
        kind = payload.get("type")
        if record.get("type") == "session_meta":
            self._meta(payload)
        elif record.get("type") == "turn_context":
            self._turn(payload)
        elif record.get("type") == "response_item" and kind in CALL_ITEMS:
            call_id = payload.get("call_id") or payload.get("id")
            if isinstance(call_id, str):
                name = payload.get("name") if isinstance(payload.get("name"), str) else "local_shell"
                arguments = payload.get("arguments", payload.get("input", payload.get("action")))
                if isinstance(arguments, str) and kind == "function_call":
                    try:
                        arguments = json.loads(arguments)
                    except ValueError:
                        pass
                self.calls.setdefault(call_id, _Call(name, arguments, self.cwd, self.asks))
        elif record.get("type") == "event_msg" and kind in APPROVAL_EVENTS and isinstance(payload.get("call_id"), str):
            self.approval_requests.add(payload["call_id"])

    def add(self, number: int, record: dict) -> None:
        kind = record.get("type")
        payload = record.get("payload")
        if kind == "session_meta":
            return  # read with the calls, before any line
        if kind == "turn_context" and isinstance(payload, dict):
            self._turn(payload)
        elif kind == "response_item" and isinstance(payload, dict):
            self._item(number, payload)
        elif kind == "event_msg" and isinstance(payload, dict):
            self._event(number, payload)
        elif kind == "inter_agent_communication":
            # Another agent's words to this one: its conversation is not in this file.
            self._append("user", [Block("text", compact_json(payload, 500), "subagent")], number)
        elif kind not in BOOKKEEPING_LINES:
            self.problem(number, f"unknown line type {str(kind)[:60]!r}")

    def _meta(self, payload: dict) -> None:
        self.session_id = self.session_id or str(payload.get("id") or "")
        cwd = payload.get("cwd")
        if isinstance(cwd, str) and not self.provenance.root:
            self.windows = is_windows_path(cwd)
            self.provenance.root = self.cwd = self._posix(cwd)
        source = payload.get("source")
        if isinstance(source, dict) and "subagent" in source:
            self.subagent = "a subagent's rollout (its session_meta names it a subagent)"
        elif source == "exec" or payload.get("originator") == "codex_exec":
            self.headless = "a headless run (`codex exec`: nobody sat at it)"

    def _turn(self, payload: dict) -> None:
        if isinstance(payload.get("cwd"), str):
            self.cwd = self._posix(payload["cwd"])
        self.asks = asks_a_person(payload)

    def _posix(self, path: str) -> str:
        return windows_as_posix(path) if self.windows else path

    def _event(self, number: int, event: dict) -> None:
        kind = event.get("type")
        if kind not in PERSON_EVENTS:
            return
        if kind == "turn_aborted" and event.get("reason") in _STOPPED_BY_PERSON:
            self._append("user", [Block("interrupt", "[interrupted by the person]", "person")], number)
        elif kind == "thread_rolled_back":
            turns = event.get("num_turns")
            count = turns if isinstance(turns, int) and turns > 0 else 1
            said = f"[the person rolled back the last {count} turn{'s' if count != 1 else ''}]"
            self._append("user", [Block("interrupt", said, "person")], number)

    def _item(self, number: int, item: dict) -> None:
        kind = item.get("type")
        if kind == "message":
            self._message(number, item)
        elif kind in CALL_ITEMS:
            call_id = item.get("call_id") or item.get("id") or ""
            call = self.calls.get(call_id)
            name, arguments = (call.name, call.arguments) if call else ("", None)
            block = Block("tool_use", "", "agent", scrub(name), str(call_id), compact_json(arguments, TOOL_INPUT_LIMIT))
            self._append("assistant", [block], number)
        elif kind in OUTPUT_ITEMS:
            self._output(number, item)
        elif kind == "web_search_call":
            self._append("user", [Block("tool_result", compact_json(item.get("action"), 500), "web", "web_search")],
                         number)
        elif kind == "agent_message":
            # Another agent's message in this thread: its conversation is not here.
            self._append("user", [Block("text", compact_json(item.get("content"), 500), "subagent")], number)
        elif kind not in BOOKKEEPING_ITEMS:
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
        text = scrub(_output_text(item.get("output")))
        call = self.calls.get(call_id)
        if call is None:
            self.problem(number, f"an output whose call ({call_id[:60]!r}) is not in the file")
            self._append("user", [Block("tool_result", text, "unknown", "", call_id)], number)
            return
        kind = TOOLS.get(call.name, ("", ""))[0]
        refusal_kind = "apply_patch" if call.name == "apply_patch" else kind
        if declined_by_person(refusal_kind, text, call.asked or call_id in self.approval_requests):
            self._append("user", [Block("denial", "", "person", call.name, call_id, is_error=True)], number)
            return
        source = self._source(number, call)
        if kind == "shell" or call.name == "write_stdin":
            running = running_session(text)
            if running is not None:
                self.processes[running] = source
        self._append("user", [Block("tool_result", text, source, call.name, call_id)], number)

    def _source(self, number: int, call: _Call) -> Source:
        kind, argument = TOOLS.get(call.name, ("", ""))
        arguments = call.arguments if isinstance(call.arguments, dict) else {}
        cwd = call.cwd or self.provenance.root
        if kind == "shell":
            command = shell_text(arguments.get(argument))
            workdir = arguments.get("workdir", arguments.get("working_directory"))
            if command is None or (workdir is not None and not isinstance(workdir, str)):
                return "outside"
            if workdir:
                workdir = posixpath.normpath(posixpath.join(cwd, self._posix(workdir)))
                if not self.provenance.place(frozenset((cwd,))).inside(workdir):
                    return "outside"  # `ls` run in ~/Downloads names no path, and lists downloads
                cwd = workdir
            return self.provenance.source_of("Bash", {"command": self._posix(command)}, cwd)
        if kind == "stdin":
            # Polling a process (no characters) reads its output: the command's provenance.
            # Typing into it makes it do what the agent typed, which nothing here reads.
            process = arguments.get(argument)
            chars = arguments.get("chars", "")
            known = self.processes.get(str(process)) if isinstance(process, (int, str)) else None
            if known is None:
                return "unknown"
            return known if chars in ("", None) else "outside"
        if kind == "file":
            path = arguments.get(argument)
            named = self._posix(path) if isinstance(path, str) else path
            return self.provenance.source_of("Read", {"file_path": named}, cwd)
        if kind:
            return kind  # type: ignore[return-value]
        if call.name.startswith("mcp__") or "__" in call.name:
            return "mcp"
        self.problem(number, f"an output of the tool {call.name[:60]!r}, which failres does not know")
        return "unknown"

    def _append(self, role: Role, blocks: list[Block], line: int) -> None:
        self.messages.append(Message(index=len(self.messages), role=role, blocks=tuple(blocks), line=line))

    def finish(self) -> Transcript:
        reason = self.subagent or self.headless
        kind = "subagent" if self.subagent else "batch" if self.headless else "interactive"
        return self.transcript(f"codex/{self.session_id or self.path.stem}", FORMAT, kind, reason)


def _output_text(output: object) -> str:
    """An output as the model read it: a string, the text items of a list (an image is
    `[image]`), or an older version's `{"content", "success"}`."""
    if isinstance(output, dict):
        output = output.get("content_items", output.get("content", ""))
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        parts = []
        for item in output:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
            elif isinstance(item, dict):
                parts.append(f"[{str(item.get('type', 'item'))[:40].removeprefix('input_')}]")
        return "\n".join(parts)
    return compact_json(output, TOOL_INPUT_LIMIT)
