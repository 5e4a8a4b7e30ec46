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

from collections.abc import Mapping
from enum import StrEnum

from lessons.learning.locality import path_is_inside, shell_command_is_local
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
# repository-local only while that path lies inside the session's directory:
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
# Everything else -- TaskOutput and BashOutput (background output whose command
# is not in the call), Skill (instructions loaded from wherever the skill was
# installed), any tool added after this table -- is unknown, hence untrusted.


def source_of_tool_result(tool_name: str, tool_input: object, cwd: str) -> Source:
    """Where a tool's result came from, judged from the call alone.

    `cwd` is the directory the session worked in ("" when not recorded: then
    only relative paths count as inside).
    """
    arguments = tool_input if isinstance(tool_input, Mapping) else {}
    if not tool_name:
        return "unknown"
    if tool_name.startswith("mcp__"):
        return "mcp"
    if tool_name in WEB_TOOLS:
        return "web"
    if tool_name in SUBAGENT_TOOLS:
        return "subagent"
    if tool_name in HARNESS_TOOLS:
        return "harness"
    if tool_name in FILE_TOOLS:
        paths = [arguments.get(key) for key in FILE_TOOLS[tool_name]]
        inside = all(p is None or (isinstance(p, str) and path_is_inside(p, cwd)) for p in paths)
        return "repo" if inside else "outside"
    if tool_name in SHELL_TOOLS:
        # The shell is the one tool that is both everyday-local and a fetcher
        # (curl, git pull, package installs). Rejecting it wholesale would make
        # nearly every session untrusted; trusting it wholesale would let any
        # fetched page through. So each command is read, and only one made of
        # recognised local programs on paths inside the tree stays local.
        command = arguments.get("command")
        local = isinstance(command, str) and shell_command_is_local(command, cwd)
        return "repo" if local else "outside"
    return "unknown"


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
