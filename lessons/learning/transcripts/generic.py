"""The generic transcript format, and `load_transcript`, which reads any known format.

The generic format (specified in docs/transcript-format.md) is what another
harness emits so its sessions can be mined: one JSON object a line, each a
message from the person, the agent or a tool, with an optional header line
saying whose session it is. Unlike Claude Code's files it records provenance
directly: each tool result may say where it came from (`source`), and the
header says whether a person sat at the session (`kind`).

Like the Claude Code adapter it never raises for a bad line: the line is skipped
and counted in `Transcript.problems`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from lessons.errors import InvalidInput
from lessons.learning.transcripts.aider import FORMAT as AIDER
from lessons.learning.transcripts.aider import is_aider_history, load_aider
from lessons.learning.transcripts.claude_code import load_claude_code
from lessons.learning.transcripts.codex import FORMAT as CODEX
from lessons.learning.transcripts.codex import is_codex_rollout, load_codex
from lessons.learning.messages import (
    SOURCES,
    Block,
    Message,
    Problem,
    Role,
    Source,
    Transcript,
    TranscriptKind,
    compact_json,
    is_control_input,
    read_json_lines,
    scrub,
)
from lessons.learning.locality import DEFAULT_TRUSTED, TrustedCommands
from lessons.learning.transcripts.reading import FileReader
from lessons.learning.provenance import TRUSTED_SOURCES, ToolProvenance

FORMAT = "generic"
FORMAT_TAG = "failres.transcript/1"
DECLARED_KINDS: frozenset[str] = frozenset(("interactive", "subagent", "batch"))
TOOL_INPUT_LIMIT = 2000
# A whole-document (pretty-printed) transcript is read into memory at once.
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
_SNIFF_LINES = 50
_FORMATS_HINT = (
    "failres reads Claude Code session files, Codex CLI rollouts, aider chat histories and the format in "
    "docs/transcript-format.md"
)


def load_transcript(path: Path | str, *, trusted: TrustedCommands = DEFAULT_TRUSTED) -> Transcript:
    """Read a transcript in whichever known format it is written.

    `trusted` are the commands whose output counts as the repository's own.
    """
    path = Path(path)
    found = sniff_format(path)
    if found == FORMAT:
        return load_generic(path, trusted=trusted)
    if found == CODEX:
        return load_codex(path, trusted=trusted)
    if found == AIDER:
        return load_aider(path, trusted=trusted)
    return load_claude_code(path, trusted=trusted)


def sniff_format(path: Path) -> str:
    """`generic`, `claude-code`, `codex` or `aider`, from the first records; InvalidInput when none."""
    if is_aider_history(path):
        return AIDER
    try:
        for line in islice(read_json_lines(path), _SNIFF_LINES):
            record = line.value
            if not isinstance(record, dict):
                continue
            if is_codex_rollout([record]):
                return CODEX
            if "role" in record or (
                "type" not in record
                and any(k in record for k in ("session_id", "format", "messages"))
            ):
                return FORMAT
            if isinstance(record.get("type"), str) or "sessionId" in record:
                return "claude-code"
    except OSError as exc:
        msg = f"cannot read transcript {path}: {exc.strerror or exc}"
        raise InvalidInput(msg) from exc
    if isinstance(_whole_document(path), dict):
        return FORMAT
    msg = f"{path} is not a transcript in a format failres reads"
    raise InvalidInput(msg, hint=_FORMATS_HINT)


def load_generic(path: Path | str, *, trusted: TrustedCommands = DEFAULT_TRUSTED) -> Transcript:
    """Read a generic-format transcript (JSONL, or one JSON document)."""
    path = Path(path)
    reader = _GenericReader(path, ToolProvenance(trusted))
    any_json = False
    try:
        for line in read_json_lines(path):
            if line.error:
                reader.problem(line.number, line.error)
            else:
                any_json = True
                reader.add(line.number, line.value)
    except OSError as exc:
        msg = f"cannot read transcript {path}: {exc.strerror or exc}"
        raise InvalidInput(msg) from exc
    if not any_json:
        document = _whole_document(path)
        if not isinstance(document, dict):
            msg = f"{path} is not a transcript: neither JSONL nor one JSON document"
            raise InvalidInput(msg, hint=_FORMATS_HINT)
        reader = _GenericReader(path, ToolProvenance(trusted))
        reader.add(1, document)
    return reader.finish()


def _whole_document(path: Path) -> object:
    try:
        if path.stat().st_size > MAX_DOCUMENT_BYTES:
            return None
        return json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None


@dataclass
class _GenericReader(FileReader):
    """Accumulates one file's messages; internal to `load_generic`."""

    calls: dict[str, Block] = field(default_factory=dict)
    arguments: dict[str, object] = field(default_factory=dict)
    session_id: str = ""
    kind: TranscriptKind = "unknown"
    # Where the shell may be: the header's cwd, and wherever a `cd` may have taken it
    # (this format does not say whether the harness keeps one shell across calls,
    # so after a `cd` both the old and the new directory stay possible).
    cwds: frozenset[str] = frozenset(("",))
    records_seen: int = 0

    def add(self, number: int, record: object) -> None:
        first = self.records_seen == 0
        self.records_seen += 1
        if not isinstance(record, dict):
            self.problem(number, "not a JSON object")
        elif "role" in record:
            self._message(number, record)
        elif first:
            self._header(number, record)
        else:
            self.problem(number, "a line without a role")

    def _header(self, number: int, header: dict) -> None:
        session_id, kind, cwd = header.get("session_id"), header.get("kind"), header.get("cwd")
        self.session_id = session_id if isinstance(session_id, str) else ""
        self.provenance.root = cwd if isinstance(cwd, str) else ""
        self.cwds = frozenset((self.provenance.root,))
        if kind in DECLARED_KINDS:
            self.kind = kind
        elif kind is not None:
            self.problem(number, f"unknown kind {str(kind)[:40]!r}")
        messages = header.get("messages", [])
        if not isinstance(messages, list):
            self.problem(number, "messages is not a list")
            return
        for record in messages:
            self.records_seen += 1
            if isinstance(record, dict) and "role" in record:
                self._message(number, record)
            else:
                self.problem(number, "a message without a role")

    def _message(self, number: int, record: dict) -> None:
        role, text = record.get("role"), record.get("text", "")
        tool, tool_use_id = record.get("tool", ""), record.get("tool_use_id", "")
        stamp = record.get("ts", "")
        if not all(isinstance(v, str) for v in (text, tool, tool_use_id, stamp)):
            self.problem(number, "text, tool, tool_use_id and ts must be strings")
            return
        text, tool = scrub(text), scrub(tool)
        if role == "assistant":
            blocks = self._agent_blocks(record, text, tool, tool_use_id)
        elif role == "tool":
            blocks = [self._tool_result(number, record, text, tool, tool_use_id)]
        elif role == "user":
            blocks = self._user_blocks(number, record, text)
        else:
            self.problem(number, f"unknown role {str(role)[:40]!r}")
            return
        message_role: Role = "assistant" if role == "assistant" else "user"
        self.messages.append(
            Message(len(self.messages), message_role, tuple(blocks), timestamp=stamp)
        )

    def _agent_blocks(self, record: dict, text: str, tool: str, tool_use_id: str) -> list[Block]:
        blocks = [Block("text", text, "agent")] if text.strip() else []
        if tool or tool_use_id:
            call = Block(
                "tool_use",
                "",
                "agent",
                tool,
                tool_use_id,
                compact_json(record.get("input"), TOOL_INPUT_LIMIT),
            )
            self.calls[tool_use_id] = call
            self.arguments[tool_use_id] = record.get("input")
            blocks.append(call)
        return blocks

    def _tool_result(
        self, number: int, record: dict, text: str, tool: str, tool_use_id: str
    ) -> Block:
        call = self.calls.get(tool_use_id)
        name = tool or (call.tool_name if call else "")
        if record.get("denied") is True:
            return Block("denial", text.strip(), "person", name, tool_use_id, is_error=True)
        judged, after = self.provenance.judge(name, self.arguments.get(tool_use_id), self.cwds)
        self.cwds = self.cwds | after
        declared = self._declared_source(number, record)
        # A declaration can make a result stricter than its call implies, never
        # looser: "repo" on a WebFetch result stays web, on `curl` stays outside.
        # Only for a tool this code cannot judge is the declaration taken as is.
        if declared is None or (
            declared in TRUSTED_SOURCES and judged not in TRUSTED_SOURCES and judged != "unknown"
        ):
            source = judged
        else:
            source = declared
        return Block(
            "tool_result", text, source, name, tool_use_id, is_error=record.get("is_error") is True
        )

    def _user_blocks(self, number: int, record: dict, text: str) -> list[Block]:
        if record.get("interrupt") is True:
            return [Block("interrupt", text.strip(), "person")]
        source = self._declared_source(number, record) or "person"
        if source == "person" and is_control_input(text):
            # A slash command typed at the harness is the harness's business, whoever
            # the line says typed it: never words a rule could be made of.
            source = "harness"
        return [Block("text", text.strip(), source)] if text.strip() else []

    def _declared_source(self, number: int, record: dict) -> Source | None:
        source = record.get("source")
        if source is None:
            return None
        if source in SOURCES:
            return source
        self.problem(number, f"unknown source {str(source)[:40]!r}")
        return "unknown"

    def finish(self) -> Transcript:
        derived = (
            f"declared {self.kind} in the header" if self.kind in ("subagent", "batch") else ""
        )
        return self.transcript(self.session_id or self.path.stem, FORMAT, self.kind, derived)


def generic_lines(transcript: Transcript) -> list[str]:
    """A transcript written in the generic format, header first, one JSON text a line.

    What the format cannot say (Claude Code's uuids, the meta and queued flags)
    is left out; a tool result's source is written as judged, so it is declared.
    """
    header: dict[str, object] = {"format": FORMAT_TAG, "session_id": transcript.session_id}
    if transcript.kind != "unknown":
        header["kind"] = transcript.kind
    lines = [header]
    for message in transcript.messages:
        lines.extend(_generic_records(message))
    return [json.dumps(line, ensure_ascii=False, sort_keys=True) for line in lines]


def _generic_records(message: Message) -> list[dict[str, object]]:
    kinds = [b.kind for b in message.blocks]
    if message.role == "assistant" and kinds == ["text", "tool_use"]:
        # One line holds both, as it was read.
        said, call = message.blocks
        return [{**_generic_records(_only(message, call))[0], "text": said.text}]
    records: list[dict[str, object]] = []
    for block in message.blocks:
        record: dict[str, object]
        if block.kind == "tool_use":
            record = {
                "role": "assistant",
                "tool": block.tool_name,
                "tool_use_id": block.tool_use_id,
            }
            try:
                record["input"] = json.loads(block.tool_input)
            except ValueError:
                pass  # clipped when read: the call's name and id still pair it
        elif block.kind == "text" and message.role == "assistant":
            record = {"role": "assistant", "text": block.text}
        elif block.kind in ("tool_result", "denial"):
            record = {"role": "tool", "text": block.text, "tool_use_id": block.tool_use_id}
            record.update({"tool": block.tool_name} if block.tool_name else {})
            record.update({"denied": True} if block.kind == "denial" else {"source": block.source})
            record.update({"is_error": True} if block.is_error and block.kind != "denial" else {})
        elif block.kind == "interrupt":
            record = {"role": "user", "interrupt": True, "text": block.text}
        else:
            record = {"role": "user", "text": block.text, "source": block.source}
        if message.timestamp:
            record["ts"] = message.timestamp
        records.append(record)
    return records


def _only(message: Message, block: Block) -> Message:
    return Message(message.index, message.role, (block,), timestamp=message.timestamp)
