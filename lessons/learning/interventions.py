"""The moments a person stepped in on an agent's work, found in a transcript.

Pure: what counts as an intervention is decided here, over the message model,
and tested without a model or a store. Three triggers come from transcripts:

- **steer** -- the person's words arriving while the agent was mid-run (its last
  message called tools), beside or between tool results, or right after they
  interrupted it;
- **denial** -- the person refusing a tool call, or stopping the run and saying
  nothing more; their words are the reason they typed, or else the next thing
  they said when it corrects what was refused;
- **followup** -- the person's words after the agent ended its turn. Only a
  candidate: it may be a correction or simply the next task. Each is classified
  (`followups.classify_followup`) so that, without a model, only corrections are
  kept; with one, the reflector decides and is told to skip freely.

The fourth, **edit** (a person changing a task branch after the agent committed),
comes from git; `edit_intervention` is its pure half.

Never an intervention: the first words of a session (the task), and anything
the adapter did not label as the person's -- hook and policy refusals, slash
commands and their output, reminders, notifications, compaction summaries.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from lessons.errors import InvalidInput
from lessons.learning.followups import Followup, classify_followup
from lessons.learning.transcripts.generic import load_transcript
from lessons.learning.locality import DEFAULT_TRUSTED, TrustedCommands
from lessons.learning.messages import Block, Problem, Transcript, clip
from lessons.learning.provenance import SHELL_TOOLS, Origin, classify_origin
from lessons.learning.shell_text import refused_command

# Bounds keep every reflection small enough to read, and to send to a model,
# whatever a person pasted or a tool printed.
CONTEXT_LIMIT = 1500
AFTERMATH_LIMIT = 1000
WORDS_LIMIT = 2000
_SAID_LIMIT = 700
_CALL_LIMIT = 300
_CALLS_SHOWN = 5
_EDIT_FILES_SHOWN = 20

REFUSED_WITHOUT_WORDS = "(the person refused the tool call and said nothing more)"
STOPPED_WITHOUT_WORDS = "(the person stopped the run and said nothing more)"


class Trigger(StrEnum):
    STEER = "steer"
    DENIAL = "denial"
    FOLLOWUP = "followup"
    EDIT = "edit"


@dataclass(frozen=True)
class Intervention:
    """One moment a person stepped in.

    `message_index` is the message carrying the person's words (or their
    refusal when they said nothing): what provenance keys on, so a wrong index
    could classify a poisoned moment as clean. -1 for an edit, which has no
    transcript. `aftermath` is what the agent did next: without it a reflector
    cannot tell a correction from a question the agent then answered well.
    """

    trigger: Trigger
    message_index: int
    intervention: str
    context: str
    aftermath: str
    session_id: str
    # A denial: the first call the person refused (the others refused at the same
    # prompt went with it) -- its tool, and for a shell call the command's family.
    refused_tool: str = ""
    refused: str = ""
    # An edit: the files the person changed.
    files: tuple[str, ...] = ()
    # Words after the agent's turn (and after a stop): what they are without a model
    # (`lessons.learning.followups`); "" for other triggers.
    followup: str = ""
    # The line of the transcript file the person's words (or refusal) are on; 0 when unknown.
    line: int = 0
    # When the person spoke (the transcript's timestamp, "" when not recorded): how many
    # days a candidate rule was said on is part of its evidence.
    said_at: str = ""


@dataclass
class _Stop:
    """A person refusing calls or stopping the run, gathering what they said."""

    first_index: int
    last_index: int
    refused_ids: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    words: str = ""
    words_index: int = -1

    def awaits_words(self) -> bool:
        return not self.reasons and self.words_index < 0


def extract_interventions(transcript: Transcript) -> list[Intervention]:
    """Every intervention in a transcript, in the order they happened."""
    found: list[Intervention] = []
    stops: list[_Stop] = []
    open_stop: _Stop | None = None
    agent_has_worked = False  # before that, the person's words are the task
    mid_run = False  # the agent's latest message called tools
    last_agent_index = -1
    agent_said = ""
    for message in transcript.messages:
        if message.role == "assistant":
            calls = message.tool_uses()
            said = message.texts_by("agent").strip()
            if calls or said:
                agent_has_worked, mid_run, last_agent_index = True, bool(calls), message.index
                agent_said = said or agent_said
            continue
        for block in message.blocks:
            if block.kind not in ("denial", "interrupt"):
                continue
            # Refusals and an interrupt with no agent message between them are
            # one act: parallel calls refused at one prompt, then the stop.
            if open_stop is None or last_agent_index > open_stop.last_index:
                open_stop = _Stop(message.index, message.index)
                stops.append(open_stop)
            open_stop.last_index = message.index
            if block.kind == "interrupt":
                mid_run = False  # the run stopped: what the person says next follows it
            if block.kind == "denial":
                open_stop.refused_ids.append(block.tool_use_id)
                if block.text:
                    open_stop.reasons.append(block.text)
        words = message.texts_by("person").strip()
        if not words or not agent_has_worked:
            continue
        kind = classify_followup(words, agent_said)
        if open_stop is not None and open_stop.awaits_words():
            # The next words after a stop are its reason only when they correct what
            # was stopped; "ok", an answer or the next task leave the stop wordless.
            stop, open_stop = open_stop, None
            if not stop.refused_ids and kind is not Followup.ACKNOWLEDGEMENT:
                # An interrupt and the words typed next are one act: the person stopped the
                # run to redirect it ("[Request interrupted by user]", "create the beads").
                # The words are the steer, whatever they ask; the stop is no second,
                # wordless intervention.
                stops.remove(stop)
                found.append(_spoken(transcript, Trigger.STEER, message.index, words, kind))
                continue
            if kind is Followup.CORRECTION:
                stop.words, stop.words_index = words, message.index
                continue
        trigger = Trigger.STEER if mid_run else Trigger.FOLLOWUP
        found.append(_spoken(transcript, trigger, message.index, words, kind))
    found.extend(_refusal(transcript, stop) for stop in stops)
    return sorted(found, key=lambda i: i.message_index)


def edit_intervention(task: str, diff_text: str, files: Sequence[str]) -> Intervention:
    """The person changed the task branch after the agent's commit: the edit as an
    intervention, the (bounded) diff as its context."""
    shown = ", ".join(files[:_EDIT_FILES_SHOWN])
    more = len(files) - _EDIT_FILES_SHOWN
    summary = f"The person changed {len(files)} file(s) after the agent's commit: {shown}"
    if more > 0:
        summary += f" and {more} more"
    return Intervention(
        trigger=Trigger.EDIT,
        message_index=-1,
        intervention=clip(summary, WORDS_LIMIT),
        context=clip(diff_text, CONTEXT_LIMIT),
        aftermath="",
        session_id=task,
        files=tuple(files),
    )


def _spoken(transcript: Transcript, trigger: Trigger, index: int, words: str, kind: Followup) -> Intervention:
    return Intervention(
        trigger=trigger,
        message_index=index,
        intervention=clip(words, WORDS_LIMIT),
        context=_context_before(transcript, index, refused_ids=()),
        aftermath=_aftermath(transcript, index),
        session_id=transcript.session_id,
        followup=str(kind),
        line=transcript.messages[index].line,
        said_at=transcript.messages[index].timestamp,
    )


def _refusal(transcript: Transcript, stop: _Stop) -> Intervention:
    if stop.reasons:
        words = "\n".join(stop.reasons)
    elif stop.words:
        words = stop.words
    else:
        words = REFUSED_WITHOUT_WORDS if stop.refused_ids else STOPPED_WITHOUT_WORDS
    index = stop.words_index if stop.words_index >= 0 else stop.first_index
    tool, family = _refused_call(transcript, stop)
    return Intervention(
        trigger=Trigger.DENIAL,
        message_index=index,
        intervention=clip(words, WORDS_LIMIT),
        context=_context_before(transcript, stop.first_index, refused_ids=tuple(stop.refused_ids)),
        aftermath=_aftermath(transcript, index),
        session_id=transcript.session_id,
        refused_tool=tool,
        refused=family,
        followup=str(Followup.CORRECTION) if stop.words else "",
        line=transcript.messages[index].line,
        said_at=transcript.messages[index].timestamp,
    )


def _refused_call(transcript: Transcript, stop: _Stop) -> tuple[str, str]:
    """(tool, command) of the first call refused in a stop: the one the person was shown.

    Calls refused with it at the same prompt were refused along with it, unseen.
    """
    if not stop.refused_ids:
        return "", ""
    wanted = stop.refused_ids[0]
    for message in transcript.messages[: stop.first_index]:
        for call in message.tool_uses():
            if call.tool_use_id != wanted:
                continue
            try:
                arguments = json.loads(call.tool_input)
            except ValueError:
                arguments = None  # clipped when read: no command rather than a wrong one
            command = None
            if isinstance(arguments, dict):
                command = arguments.get("command", arguments.get("cmd"))
            if isinstance(command, str):
                return call.tool_name, refused_command(command)
            if call.tool_name in SHELL_TOOLS:
                return call.tool_name, ""
            return call.tool_name, call.tool_name
    return "", ""


def _context_before(transcript: Transcript, index: int, refused_ids: tuple[str, ...]) -> str:
    """What the agent was doing just before message `index`: its last words and
    the calls concerned (the refused ones, or those of its latest run)."""
    said = ""
    recent: list[Block] = []
    for message in reversed(transcript.messages[:index]):
        if message.role == "user":
            if message.texts_by("person"):
                break  # the previous time the person spoke: a new stretch of work
            continue
        recent[:0] = message.tool_uses()
        said = message.texts_by("agent").strip()
        if said:
            break
    if refused_ids:
        by_id = {
            b.tool_use_id: b
            for m in transcript.messages[:index]
            for b in m.tool_uses()
            if b.tool_use_id
        }
        calls = [by_id[i] for i in refused_ids if i in by_id]
        lines = [f"Refused: {_render_call(c)}" for c in calls]
    else:
        lines = [f"Called: {_render_call(c)}" for c in recent[-_CALLS_SHOWN:]]
    if said:
        lines.insert(0, f"The agent said: {clip(said, _SAID_LIMIT)}")
    return clip("\n".join(lines), CONTEXT_LIMIT)


def _aftermath(transcript: Transcript, index: int) -> str:
    """What the agent did after message `index`, up to the person's next act."""
    lines: list[str] = []
    size = 0
    for message in transcript.messages[index + 1 :]:
        if message.role == "user":
            if message.texts_by("person") or any(
                b.kind in ("denial", "interrupt") for b in message.blocks
            ):
                break
            continue
        said = message.texts_by("agent").strip()
        new = ([f"The agent said: {clip(said, _SAID_LIMIT)}"] if said else []) + [
            f"Called: {_render_call(c)}" for c in message.tool_uses()
        ]
        lines += new
        size += sum(len(line) + 1 for line in new)
        if size >= AFTERMATH_LIMIT:
            break
    return clip("\n".join(lines), AFTERMATH_LIMIT)


def _render_call(call: Block) -> str:
    return clip(f"{call.tool_name} {call.tool_input}".strip(), _CALL_LIMIT)


# ── Mining files ─────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class MinedIntervention:
    intervention: Intervention
    origin: Origin


@dataclass(frozen=True)
class MinedSession:
    """One transcript file and what was found in it.

    `error` is set (and the transcript empty) when the file could not be read
    as a transcript: mining goes on with the other files and the caller reports.
    """

    path: Path
    transcript: Transcript
    interventions: tuple[MinedIntervention, ...]
    error: str = ""


def mine(paths: Sequence[Path], *, trusted: TrustedCommands = DEFAULT_TRUSTED) -> list[MinedSession]:
    """Load each transcript (and the subagent sidechains filed beside a session),
    extract its interventions and classify each one's origin.

    A directory stands for its `*.jsonl` files. Order is deterministic: the
    paths as given, a directory's files sorted, each session followed by its
    sidechains sorted.
    """
    sessions: list[MinedSession] = []
    seen: set[Path] = set()
    for path in transcript_files(paths):
        key = path.resolve()
        if key in seen:
            continue
        seen.add(key)
        sessions.append(mine_file(path, trusted=trusted))
    return sessions


def mine_file(path: Path, *, trusted: TrustedCommands = DEFAULT_TRUSTED) -> MinedSession:
    try:
        transcript = load_transcript(path, trusted=trusted)
    except InvalidInput as exc:
        empty = Transcript(
            session_id=path.stem,
            messages=(),
            source_path=str(path),
            format="unreadable",
            problems=(Problem(0, str(exc), 0),),
        )
        return MinedSession(path, empty, (), error=str(exc))
    mined = tuple(
        MinedIntervention(i, classify_origin(transcript, i.message_index))
        for i in extract_interventions(transcript)
    )
    return MinedSession(path, transcript, mined)


PROBLEMS_SHOWN = 20


def problems_note(path: Path | str, problems: Sequence[Problem]) -> str:
    """One line saying which lines of a transcript were skipped and why ("" when none).

    Bounded, so a file of garbage costs one readable line, not a screenful.
    """
    readable = [p for p in problems if p.line > 0]
    if not readable:
        return ""
    shown = ", ".join(f"{p.line} ({p.reason})" for p in readable[:PROBLEMS_SHOWN])
    more = len(readable) - PROBLEMS_SHOWN
    tail = f" and {more} more" if more > 0 else ""
    first = readable[0]
    return (f"{path}: {len(readable)} line(s) not understood, so every intervention from line {first.line} "
            f"({first.reason}) on is untrusted: line {shown}{tail}")


def _files_in(folder: Path) -> list[Path]:
    """A folder's transcripts: its `*.jsonl` files, the Codex rollouts below it (a
    CODEX_HOME's `sessions/`), and an aider chat history in it."""
    found = sorted(folder.glob("*.jsonl"))
    found += [p for p in sorted(folder.glob("*/**/rollout-*.jsonl")) if p not in found]
    chat = folder / ".aider.chat.history.md"
    return found + ([chat] if chat.is_file() else [])


def transcript_files(paths: Iterable[Path]) -> list[Path]:
    """The files `mine` reads for these paths, in the order it reads them."""
    files: list[Path] = []
    for given in paths:
        path = Path(given)
        for candidate in _files_in(path) if path.is_dir() else [path]:
            files.append(candidate)
            sidechains = candidate.parent / candidate.stem / "subagents"
            files.extend(sorted(sidechains.glob("agent-*.jsonl")))
    return files
