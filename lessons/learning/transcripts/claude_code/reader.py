"""Claude Code session files (JSONL, one record a line) read into the message model.

Claude Code records everything addressed to the model as a `user` line: the
person's words, tool results, slash commands and their output, task
notifications, system reminders, compaction summaries, hook feedback. Telling
these apart is this module's job (with `records`, which classifies each record
type, attachment and built-in tool, and `words`, which knows the wording of user
lines), and it labels each block with who produced it so nothing downstream has
to know Claude Code's format.

A tool result is paired with its call by id across the whole file, not by the
order of lines: parallel calls can be written after their results. A refusal is
the person's only where the result's own record (`toolUseResult`) says the CLI
refused the call at the person's word; text imitating that wording is content.

A transcript is evidence read after the fact, often while still being written:
a torn last line, an unknown record type or a malformed block is skipped and
counted in `Transcript.problems`, never raised. Only a file that cannot be read,
or of which no line is JSON, raises `InvalidInput`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lessons.errors import InvalidInput
from lessons.learning.transcripts.claude_code.records import (
    ATTACHMENTS,
    cli_tool_source,
    headless_reason,
    person_refused,
    record_role,
)
from lessons.learning.transcripts.claude_code.fields import background_id, not_by_a_person, result_text
from lessons.learning.transcripts.claude_code.order import conversation_order
from lessons.learning.transcripts.claude_code.subagents import subagent_source
from lessons.learning.transcripts.claude_code.words import COMPACTION_OPENING, classify_user_text, person_denial_reason
from lessons.learning.locality import DEFAULT_TRUSTED, TrustedCommands
from lessons.learning.messages import (
    Block,
    Message,
    Role,
    Source,
    Transcript,
    compact_json,
    scrub,
)
from lessons.learning.transcripts.reading import FileReader
from lessons.learning.provenance import ToolProvenance

FORMAT = "claude-code"
TOOL_INPUT_LIMIT = 2000

def load_claude_code(path: Path | str, *, trusted: TrustedCommands = DEFAULT_TRUSTED) -> Transcript:
    """Read one Claude Code session (or subagent) file; bad lines become problems.

    `trusted` are the commands whose output counts as the repository's own.
    """
    path = Path(path)
    reader = _SessionReader(path, ToolProvenance(trusted))
    lines = reader.json_lines()
    any_json = any(not line.error for line in lines)
    # Every call first, so a result written before its call still finds it.
    for line in lines:
        if isinstance(line.value, dict):
            reader.learn_calls(line.value)
    for line in conversation_order(lines):
        reader.take(line, reader.add_record)
    if not any_json:
        msg = f"{path} is not a transcript: no line of it is JSON"
        raise InvalidInput(msg, hint="a Claude Code session file has one JSON object per line")
    return reader.finish()


@dataclass(frozen=True)
class _Call:
    name: str
    arguments: object
    cwd: str
    id: str = ""


@dataclass
class _SessionReader(FileReader):
    """Accumulates one file's messages; internal to `load_claude_code`."""

    calls: dict[str, _Call] = field(default_factory=dict)
    # Words the person typed while the agent worked: waiting in the input queue,
    # then handed over (to be placed after the tool results they rode with).
    waiting: list[str] = field(default_factory=list)
    handed_over: list[tuple[str, str]] = field(default_factory=list)
    session_id: str = ""
    agent_id: str = ""
    # Whether this file's own conversation is a sidechain, from its first line
    # that says. Lines of the other kind are a different conversation
    # interleaved in the same file (older versions wrote subagents' lines into
    # the session file): the agent here saw only the subagent's final result.
    sidechain: bool | None = None
    headless: str = ""
    unknown_tools: set[str] = field(default_factory=set)
    # Queued words already handed over since the agent last spoke: the attachment that
    # later delivers the same words (`queued_command`) is the same words, not new ones.
    delivered: list[str] = field(default_factory=list)

    def learn_calls(self, record: dict) -> None:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if record.get("type") != "assistant" or not isinstance(content, list):
            return
        cwd = record.get("cwd") if isinstance(record.get("cwd"), str) else ""
        for item in content:
            if isinstance(item, dict) and item.get("type") == "tool_use" and isinstance(item.get("id"), str):
                name = item.get("name") if isinstance(item.get("name"), str) else ""
                self.calls.setdefault(item["id"], _Call(name, item.get("input"), cwd, item["id"]))

    def add_record(self, number: int, record: dict) -> None:
        if not self.session_id and isinstance(record.get("sessionId"), str):
            self.session_id = record["sessionId"]
        if not self.provenance.root and isinstance(record.get("cwd"), str) and record["cwd"].startswith("/"):
            # The directory the session started in is its tree: Claude Code records the
            # shell's directory on every line, and a later `cd` moves that, not the tree.
            self.provenance.root = record["cwd"]
        if not self.agent_id and isinstance(record.get("agentId"), str):
            self.agent_id = record["agentId"]
        if not self.headless:
            self.headless = headless_reason(record)
        kind = record.get("type")
        role = record_role(kind)
        if role == "conversation":
            self._conversation(number, record, kind)
        elif role == "queue":
            self._queue_operation(record)
        elif role == "attachment":
            self._attachment(number, record)
        elif role == "unknown":
            self.problem(number, f"unknown record type {str(kind)[:60]!r}")

    def _conversation(self, number: int, record: dict, role: Role) -> None:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, (str, list)):
            self.problem(number, f"{role} line without message content")
            return
        sidechain = record.get("isSidechain")
        if not isinstance(sidechain, bool):
            self.problem(number, "isSidechain not recorded")
        elif self.sidechain is None:
            self.sidechain = sidechain
        elif sidechain != self.sidechain:
            return
        if role == "assistant":
            self._hand_over_queued()
            self.delivered = []
            blocks = self._assistant_blocks(number, record, message, content)
        else:
            blocks = self._user_blocks(number, record, content, background_id(record))
            if not_by_a_person(record):
                blocks = [Block(b.kind, b.text, "harness") if b.source == "person" and b.kind == "text" else b
                          for b in blocks]
        if blocks:
            compact = record.get("isCompactSummary") is True or any(
                b.text.startswith(COMPACTION_OPENING) for b in blocks if b.source == "harness"
            )
            self._append(role, blocks, record, compact=compact, line=number)
        if role == "user" and any(b.kind in ("tool_result", "denial") for b in blocks):
            self._hand_over_queued()

    def _user_blocks(self, number: int, record: dict, content: str | list, background_id: str | None) -> list[Block]:
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content
        meta = any(
            record.get(k) is True
            for k in ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly")
        )
        blocks: list[Block] = []
        malformed = False
        for item in items:
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "text" and isinstance(item.get("text"), str):
                text = scrub(item["text"])
                if not meta:
                    blocks += classify_user_text(text)
                elif text.strip():
                    blocks.append(Block("text", text.strip(), "harness"))
            elif kind == "tool_result":
                blocks.append(self._tool_result(number, record, item, background_id))
            elif kind not in ("image", "document"):
                malformed = True
        if malformed:
            self.problem(number, "user line with an unrecognised content block")
        said = {b.text for b in blocks if b.kind == "text" and b.source == "person"}
        # Words delivered as an ordinary turn were not handed over mid-run.
        self.waiting = [w for w in self.waiting if w not in said]
        self.handed_over = [(w, ts) for w, ts in self.handed_over if w not in said]
        return blocks

    def _tool_result(self, number: int, record: dict, item: dict, background_id: str | None) -> Block:
        tool_use_id = item.get("tool_use_id") if isinstance(item.get("tool_use_id"), str) else ""
        text = scrub(result_text(item.get("content")))
        is_error = item.get("is_error") is True
        call = self.calls.get(tool_use_id)
        name = call.name if call else ""
        reason = person_denial_reason(text) if is_error and person_refused(record, name) else None
        if reason is not None:
            return Block("denial", reason, "person", name, tool_use_id, is_error=True)
        if call is None:
            self.problem(number, f"a tool result whose call ({tool_use_id[:60]!r}) is not in the file")
            return Block("tool_result", text, "unknown", name, tool_use_id, is_error=is_error)
        source = self._source_of(number, record, call)
        self.provenance.learn_output_files(tool_use_id, name, source, text, background_id)
        return Block("tool_result", text, source, name, tool_use_id, is_error=is_error)

    def _source_of(self, number: int, record: dict, call: _Call) -> Source:
        own = cli_tool_source(call.name)
        if own is not None:
            return own  # type: ignore[return-value]
        cwd = call.cwd or self.provenance.root
        arguments = call.arguments
        name = call.name
        if name == "Monitor" and isinstance(arguments, dict) and isinstance(arguments.get("command"), str):
            name = "Bash"  # it runs a command and streams its output: judged as that command
        source = self.provenance.source_of(name, arguments, cwd)
        if source == "subagent":
            return subagent_source(self.path, record, lambda p: load_claude_code(p, trusted=self.provenance.trusted))
        if source == "unknown" and call.name not in self.unknown_tools:
            self.unknown_tools.add(call.name)
            self.problem(number, f"a result of the tool {call.name[:60]!r}, which failres does not know")
        return source

    def _assistant_blocks(
        self, number: int, record: dict, message: dict, content: str | list
    ) -> list[Block]:
        # Synthetic messages (API errors, "No response requested.") are the
        # harness speaking in the agent's place.
        author = (
            "harness"
            if message.get("model") == "<synthetic>" or record.get("isApiErrorMessage")
            else "agent"
        )
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content
        blocks: list[Block] = []
        malformed = False
        for item in items:
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "text" and isinstance(item.get("text"), str):
                if item["text"].strip():
                    blocks.append(Block("text", scrub(item["text"]).strip(), author))
            elif kind == "tool_use" and isinstance(item.get("id"), str):
                name = item.get("name") if isinstance(item.get("name"), str) else ""
                rendered = compact_json(item.get("input"), TOOL_INPUT_LIMIT)
                blocks.append(Block("tool_use", "", author, scrub(name), item["id"], rendered))
            elif kind not in ("thinking", "redacted_thinking"):
                # Server-side tool results (a web search run by the API) would
                # arrive here as content: unknown content is a problem.
                malformed = True
        if malformed:
            self.problem(number, "assistant line with an unrecognised content block")
        return blocks

    def _queue_operation(self, record: dict) -> None:
        operation = record.get("operation")
        content = record.get("content")
        if operation == "enqueue" and isinstance(content, str):
            blocks = classify_user_text(scrub(content))
            if len(blocks) == 1 and blocks[0].source == "person" and blocks[0].kind == "text":
                self.waiting.append(blocks[0].text)
        elif operation in ("remove", "dequeue") and self.waiting:
            wanted = content.strip() if isinstance(content, str) else ""
            words = wanted if wanted in self.waiting else self.waiting[0]
            self.waiting.remove(words)
            stamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else ""
            self.handed_over.append((words, stamp))

    def _attachment(self, number: int, record: dict) -> None:
        attachment = record.get("attachment")
        kind = attachment.get("type") if isinstance(attachment, dict) else None
        source = ATTACHMENTS.get(kind) if isinstance(kind, str) else None
        if source is None:
            self.problem(number, f"attachment of a kind failres does not know, {str(kind)[:60]!r}")
            return
        if source in ("harness", "hook"):
            return  # the person's own environment, or their hooks: neither taints nor speaks
        if source != "person":
            # Third-party text the model read: kept so that it taints what follows.
            text = compact_json(attachment, TOOL_INPUT_LIMIT)
            self._append("user", [Block("text", text, source)], record, line=number)
            return
        prompt = attachment.get("prompt")
        origin = attachment.get("origin")
        by_person = not isinstance(origin, dict) or origin.get("kind") in (None, "human")
        by_person = by_person and not not_by_a_person(record)
        if not isinstance(prompt, str):
            self.problem(number, "queued command without text")
            return
        blocks = classify_user_text(scrub(prompt))
        if not by_person:
            blocks = [Block("text", b.text, "harness") for b in blocks]
        if by_person and [b.text for b in blocks if b.source == "person"] and all(
                b.text in self.delivered for b in blocks if b.source == "person"):
            self.delivered = [w for w in self.delivered if w not in {b.text for b in blocks}]
            return
        said = {b.text for b in blocks if b.source == "person"}
        self.waiting = [w for w in self.waiting if w not in said]
        self.handed_over = [(w, ts) for w, ts in self.handed_over if w not in said]
        if blocks:
            self._append("user", blocks, record, queued=True, line=number)

    def _hand_over_queued(self) -> None:
        for words, stamp in self.handed_over:
            self._append(
                "user", [Block("text", words, "person")], {"timestamp": stamp}, queued=True
            )
            self.delivered.append(words)
        self.handed_over = []

    def _append(
        self,
        role: Role,
        blocks: list[Block],
        record: dict,
        *,
        compact: bool = False,
        queued: bool = False,
        line: int = 0,
    ) -> None:
        def text_field(key: str) -> str:
            value = record.get(key)
            return value if isinstance(value, str) else ""

        self.messages.append(
            Message(
                index=len(self.messages),
                role=role,
                blocks=tuple(blocks),
                uuid=text_field("uuid"),
                parent_uuid=text_field("parentUuid"),
                timestamp=text_field("timestamp"),
                is_sidechain=record.get("isSidechain") is True,
                is_meta=record.get("isMeta") is True,
                is_compact_summary=compact,
                queued=queued,
                line=line,
            )
        )

    def finish(self) -> Transcript:
        self._hand_over_queued()
        in_subagents_dir = self.path.parent.name == "subagents" and self.path.name.startswith(
            "agent-"
        )
        reason = ""
        if self.sidechain is True:
            reason = "a subagent's sidechain (its lines are recorded isSidechain)"
        elif in_subagents_dir:
            reason = "a subagent's transcript (filed under subagents/)"
        session = self.session_id or self.path.stem
        if self.agent_id and reason:
            session = f"{session}/agent-{self.agent_id}"
        kind = "subagent" if reason else "batch" if self.headless else "interactive"
        return self.transcript(session, FORMAT, kind, reason or self.headless)
