"""Where an intervention's evidence came from, decided by code and failing closed.

A learned rule outlives the conversation it came from and rides, as advisory
context, in the prompt of every later run, where nothing checks it again. One
sentence from a fetched web page, surviving into a lesson, would be an injection
with an unlimited half-life. So a reflection may feed learning only when its
conversation is `clean`: a person's own interactive session in which no
third-party content had entered before the moment the person stepped in.

The decision reads the transcript's recorded structure (which tool produced
each result, which conversation is a sidechain, which lines were lost) and never
its prose: text claiming to come from the person does not make it theirs. Every
doubt resolves to `untrusted`; there is deliberately no setting that loosens it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from lessons.learning.locality import DEFAULT_TRUSTED, Place, TrustedCommands, read_shell_command
from lessons.learning.messages import Source, Transcript


class Origin(StrEnum):
    # No third-party content had entered the conversation at the intervention.
    CLEAN = "clean"
    # Third-party content was in context, or provenance could not be
    # established. Kept as readable evidence, never learned from.
    UNTRUSTED = "untrusted"
    # Not a person correcting an agent: a subagent's sidechain or a batch run.
    # Learning from an agent correcting itself is a feedback loop, not a lesson.
    DERIVED = "derived"


def origin_unknown() -> Origin:
    """The origin of anything whose provenance cannot be established.

    Records written before the field existed, torn transcripts, indexes that
    point nowhere: unknown is never clean.
    """
    return Origin.UNTRUSTED


def origin_of_record(record: Mapping[str, object]) -> Origin:
    """A stored reflection's origin; a missing or unrecognised value loads as untrusted.

    A default of clean here would grandfather every old record past the gate.
    """
    value = record.get("origin")
    if isinstance(value, str) and value in Origin.__members__.values():
        return Origin(value)
    return origin_unknown()


def learnable(origin: Origin) -> bool:
    """Whether learning may consume a reflection of this origin: only clean ones.

    Compared by identity, so a raw string read from a record is refused until
    it has gone through `origin_of_record`.
    """
    return origin is Origin.CLEAN


# Sources whose content is the person's, the agent's own, the working tree's,
# or the local harness and hook scripts the person configured. Anything else
# (web, MCP, a subagent's unseen conversation, a tool reaching outside the
# tree, anything unclassified) is third-party or unknown.
TRUSTED_SOURCES: frozenset[str] = frozenset(("person", "agent", "harness", "hook", "repo"))

# Tools that touch files, keyed to the argument naming the path. They stay
# repository-local only while that path lies inside the session's tree:
# `Read ~/Downloads/page.html` is fetched content by another road.
FILE_TOOLS: Mapping[str, tuple[str, ...]] = {
    "Read": ("file_path",),
    "Edit": ("file_path",),
    "MultiEdit": ("file_path",),
    "Write": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    "NotebookRead": ("notebook_path",),
    "Grep": ("path",),
    "Glob": ("path",),
    "LS": ("path",),
}
# A Write's result says the file was written and, at most, echoes what the agent
# wrote: nothing of the file's old content comes back, wherever it lies. (An Edit
# shows the lines around the change, which is the file's content: not listed.)
ECHOING_TOOLS: frozenset[str] = frozenset(("Write",))
# The harness's own bookkeeping: its results are written by the harness or
# answered by the person, never fetched.
HARNESS_TOOLS: frozenset[str] = frozenset(
    (
        "TodoWrite",
        "TodoRead",
        "EnterPlanMode",
        "ExitPlanMode",
        "AskUserQuestion",
        "KillShell",
        "KillBash",
    )
)
WEB_TOOLS: frozenset[str] = frozenset(("WebFetch", "WebSearch"))
# A subagent's result is the end of a conversation this transcript cannot see;
# whatever it fetched arrives here summarised, so it counts as third-party.
SUBAGENT_TOOLS: frozenset[str] = frozenset(("Task", "Agent"))
SHELL_TOOLS: frozenset[str] = frozenset(("Bash",))
# Tools that read the output of a command started in the background, keyed to the
# argument naming it: their result is that command's output, so it has that
# command's provenance, and an id this session never started is unknown.
BACKGROUND_READERS: Mapping[str, tuple[str, ...]] = {
    "TaskOutput": ("task_id",),
    "BashOutput": ("bash_id", "shell_id"),
}
# Everything else -- Skill (instructions loaded from wherever the skill was
# installed), any tool added after this table -- is unknown, hence untrusted.


@dataclass
class ToolProvenance:
    """Judges each tool result of one session from its call, learning as the session goes.

    `root` is the session's tree (the directory it started in). What it learns is
    exact provenance for output that reaches the agent by a second road: a command
    run in the background (read later by id, or from the file the harness named),
    and a result too long to show, spilled by the harness into a file named after
    the call. Such output has the provenance of the command that produced it; a
    file or an id it never saw produced stays outside or unknown.
    """

    trusted: TrustedCommands = DEFAULT_TRUSTED
    root: str = ""
    files: dict[str, Source] = field(default_factory=dict)
    background: dict[str, Source] = field(default_factory=dict)

    def place(self, cwds: frozenset[str]) -> Place:
        readable = frozenset(path for path, source in self.files.items() if source in TRUSTED_SOURCES)
        return Place(self.root, cwds, readable)

    def source_of(self, tool_name: str, tool_input: object, cwd: str | frozenset[str]) -> Source:
        """Where a tool's result came from. `cwd`: the directory (or directories) the call ran in."""
        cwds = cwd if isinstance(cwd, frozenset) else frozenset((cwd,))
        return self.judge(tool_name, tool_input, cwds)[0]

    def judge(self, tool_name: str, tool_input: object, cwds: frozenset[str]) -> tuple[Source, frozenset[str]]:
        """The result's source, and where the shell may be afterwards (for a Bash call)."""
        arguments = tool_input if isinstance(tool_input, Mapping) else {}
        place = self.place(cwds)
        if not tool_name:
            return "unknown", cwds
        if tool_name.startswith("mcp__"):
            return "mcp", cwds
        if tool_name in WEB_TOOLS:
            return "web", cwds
        if tool_name in SUBAGENT_TOOLS:
            return "subagent", cwds
        if tool_name in HARNESS_TOOLS:
            return "harness", cwds
        if tool_name in BACKGROUND_READERS:
            ids = [arguments.get(key) for key in BACKGROUND_READERS[tool_name] if arguments.get(key) is not None]
            known = [self.background.get(i) for i in ids if isinstance(i, str)]
            return (known[0] if len(known) == 1 and known[0] else "unknown"), cwds
        if tool_name in FILE_TOOLS:
            paths = [arguments.get(key) for key in FILE_TOOLS[tool_name]]
            if any(p is not None and not isinstance(p, str) for p in paths):
                return "outside", cwds
            named = [p for p in paths if p]
            spilled = [self.files.get(posixpath.normpath(p)) if posixpath.isabs(p) else None for p in named]
            if named and all(spilled) and tool_name not in ECHOING_TOOLS | {"Edit", "MultiEdit", "NotebookEdit"}:
                return _weakest(s for s in spilled if s), cwds
            if all(place.inside(p) for p in named):
                return "repo", cwds
            return ("harness" if tool_name in ECHOING_TOOLS else "outside"), cwds
        if tool_name in SHELL_TOOLS:
            # The shell is the one tool that is both everyday-local and a fetcher
            # (curl, git pull, package installs). Rejecting it wholesale would make
            # nearly every session untrusted; trusting it wholesale would let any
            # fetched page through. So each command is read, and only one made of
            # recognised local programs on paths inside the tree stays local.
            command = arguments.get("command")
            if not isinstance(command, str):
                return "outside", cwds
            verdict = read_shell_command(command, place, self.trusted)
            return ("repo" if verdict.local else "outside"), verdict.cwds
        return "unknown", cwds

    def learn_output_files(self, tool_use_id: str, tool_name: str, source: Source, result_text: str,
                           background_id: str | None) -> None:
        """Remember where this call's output can be read again, with this call's provenance.

        `background_id` is the harness's structured record of a background run (never
        taken from the text alone: a command can print anything). The spill file must
        be named after this very call, in a `tool-results` directory.
        """
        if background_id and tool_name in SHELL_TOOLS:
            # Asked for (`run_in_background`) or moved there by the harness when the
            # command ran long: either way the harness recorded the id, not the command.
            self.background[background_id] = source
            match = _BACKGROUND_OUTPUT.search(result_text)
            if match and posixpath.basename(match.group(1)) == f"{background_id}.output":
                self.files[posixpath.normpath(match.group(1))] = source
        match = _SPILLED_OUTPUT.search(result_text)
        if match and tool_use_id:
            path = posixpath.normpath(match.group(1))
            if posixpath.basename(path) == f"{tool_use_id}.txt" and path.split("/")[-2:-1] == ["tool-results"]:
                self.files[path] = source


# How the harness says where output went (Claude Code's wording).
_BACKGROUND_OUTPUT = re.compile(r"Output is being written to: (/\S+)")
_SPILLED_OUTPUT = re.compile(r"(?:Full output )?saved to: (/\S+)")


def _weakest(sources: Iterable[Source]) -> Source:
    """The least trusted of several sources (an untrusted one wins)."""
    found = list(sources)
    for source in found:
        if source not in TRUSTED_SOURCES:
            return source
    return found[0] if found else "unknown"


def classify_origin(transcript: Transcript, message_index: int) -> Origin:
    """The origin of an intervention riding in `transcript.messages[message_index]`.

    Derived for subagents and batch runs; untrusted when anything at or before
    that message is third-party, unclassifiable, or was lost; clean otherwise.
    The intervention's own message is included: text arriving beside a fetched
    page arrives with it.
    """
    if transcript.kind in ("subagent", "batch"):
        return Origin.DERIVED
    if not 0 <= message_index < len(transcript.messages):
        return origin_unknown()
    upto = transcript.messages[: message_index + 1]
    if any(m.is_sidechain for m in upto):
        return Origin.DERIVED
    if transcript.kind != "interactive":
        return origin_unknown()
    if any(p.before_message <= message_index for p in transcript.problems):
        return origin_unknown()
    agent_seen = False
    for message in upto:
        if message.is_compact_summary and not agent_seen:
            # A summary opening the transcript stands for a conversation this
            # file does not hold; whatever that conversation saw is unknown.
            return origin_unknown()
        for block in message.blocks:
            if block.source not in TRUSTED_SOURCES:
                return Origin.UNTRUSTED
        agent_seen = agent_seen or message.role == "assistant"
    return Origin.CLEAN
