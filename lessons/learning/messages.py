"""One model of a recorded agent conversation, whatever harness recorded it.

Every transcript format is read into these frozen dataclasses by its adapter
(`claude_code.py`, `generic.py`), so that deciding what a person did
(`interventions.py`) and what the agent had seen (`provenance.py`) is written
once, against this model, and never against one harness's file layout.

The adapter is where a format's quirks are understood and labelled: who wrote
each block (`Block.source`), whether a tool result was a person refusing the call
(`kind="denial"`) or a person stopping the run (`kind="interrupt"`). Everything
downstream reads those labels and never re-guesses them from the text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

BlockKind = Literal["text", "tool_use", "tool_result", "denial", "interrupt"]
Role = Literal["user", "assistant"]
TranscriptKind = Literal["interactive", "subagent", "batch", "unknown"]

# Who produced a block. Authors of words: `person` (typed by a human), `agent`
# (the model), `harness` (text the agent's harness generated: reminders,
# notifications, slash-command echoes, compaction summaries), `hook` (the
# person's configured hook scripts). Where a tool result came from: `repo` (the
# working tree), `harness` (the harness's own bookkeeping tools), `web`, `mcp`
# (an MCP server), `subagent` (another conversation, unseen from this one),
# `outside` (a local tool that reached, or may have reached, beyond the working
# tree), `unknown` (not recorded and not classifiable). In a subagent's
# transcript the "person" is the agent that instructed it, which is why such
# transcripts are derived and never learned from.
Source = Literal[
    "person", "agent", "harness", "hook", "repo", "web", "mcp", "subagent", "outside", "unknown"
]
SOURCES: frozenset[str] = frozenset(
    ("person", "agent", "harness", "hook", "repo", "web", "mcp", "subagent", "outside", "unknown")
)

# A line longer than this is skipped as a problem instead of being parsed: a
# transcript is evidence, not something worth exhausting memory for.
MAX_LINE_BYTES = 16 * 1024 * 1024
ELLIPSIS = "…"


@dataclass(frozen=True)
class Block:
    """One piece of a message.

    `text` is the words (for a tool call: empty; for a denial: the person's
    reason, empty when they gave none). `tool_input` is the call's arguments as
    compact JSON, kept for context, clipped.
    """

    kind: BlockKind
    text: str = ""
    source: Source = "unknown"
    tool_name: str = ""
    tool_use_id: str = ""
    tool_input: str = ""
    is_error: bool = False


@dataclass(frozen=True)
class Message:
    """One recorded message: a transcript line, or a person's queued words.

    `queued` marks words a person typed while the agent was working, which the
    harness handed over between tool calls rather than recording as a turn.
    """

    index: int
    role: Role
    blocks: tuple[Block, ...]
    uuid: str = ""
    parent_uuid: str = ""
    timestamp: str = ""
    is_sidechain: bool = False
    is_meta: bool = False
    is_compact_summary: bool = False
    queued: bool = False
    # The line of the file it was read from (0 when not one line): evidence a person can open.
    line: int = 0

    def texts_by(self, source: Source) -> str:
        """The text blocks one author wrote in this message, joined."""
        return "\n".join(b.text for b in self.blocks if b.kind == "text" and b.source == source)

    def tool_uses(self) -> tuple[Block, ...]:
        return tuple(b for b in self.blocks if b.kind == "tool_use")


@dataclass(frozen=True)
class Problem:
    """A line an adapter skipped, and where it sat.

    `before_message` is the index the next loaded message got: whatever the
    skipped line held was in the conversation from that message on, which is
    what provenance needs to know.
    """

    line: int
    reason: str
    before_message: int


@dataclass(frozen=True)
class Transcript:
    """A whole recorded conversation.

    `kind` says whose conversation it is: `interactive` (a person and an
    agent), `subagent` (an agent instructed by another agent), `batch` (a run
    nobody sat at), `unknown` (not recorded). `derived_reason` says why a
    transcript is not interactive, for reports.
    """

    session_id: str
    messages: tuple[Message, ...]
    source_path: str
    format: str
    kind: TranscriptKind = "unknown"
    derived_reason: str = ""
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True)
class JsonLine:
    """One non-blank line of a JSONL file: its parsed value, or why it has none."""

    number: int
    value: object = None
    error: str = ""


def read_json_lines(path: Path) -> Iterator[JsonLine]:
    """Parse a JSONL file line by line, never raising for a line's content.

    Raises OSError when the file cannot be read at all; the adapters turn that
    into `InvalidInput`.
    """
    with path.open("rb") as stream:
        number = 0
        while True:
            raw = stream.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                _skip_rest_of_line(stream)
                yield JsonLine(number, error=f"longer than {MAX_LINE_BYTES} bytes")
                continue
            if raw.strip():
                yield parse_json_line(number, raw)


def parse_json_line(number: int, raw: bytes) -> JsonLine:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return JsonLine(number, error="not UTF-8")
    try:
        return JsonLine(number, json.loads(text))
    except RecursionError:
        return JsonLine(number, error="JSON nested too deeply")
    except ValueError:
        return JsonLine(number, error="not JSON")


def _skip_rest_of_line(stream: BinaryIO) -> None:
    while True:
        chunk = stream.readline(MAX_LINE_BYTES)
        if not chunk or chunk.endswith(b"\n"):
            return


# "/model", "/mcp", "/review the diff": a command to the harness, not words to the agent.
_SLASH_COMMAND = re.compile(r"/[\w:.-]+(?:\s|$)")


# Terminal key sequences (arrows, function keys) that leak into recorded input.
_ESCAPE_SEQUENCE = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O.|.)?")


def is_control_input(text: str) -> bool:
    """Whether a person's line is control input rather than words to the agent: a slash
    command for the harness, or keys with no letter or digit in them once terminal
    escape sequences are gone (an arrow key, a lone "?"). Neither says anything a rule
    could be made of."""
    stripped = text.strip()
    words = _ESCAPE_SEQUENCE.sub("", stripped)
    return bool(_SLASH_COMMAND.match(stripped)) or not any(ch.isalnum() for ch in words)


def scrub(text: str) -> str:
    """Text safe to store: JSON may carry lone surrogates, which UTF-8 cannot."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, marked when cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + ELLIPSIS


def compact_json(value: object, limit: int) -> str:
    """A call's arguments on one line, for context; never raises."""
    try:
        rendered = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (RecursionError, ValueError, TypeError):
        rendered = "(arguments could not be rendered)"
    return clip(scrub(rendered), limit)
