"""What each line, response item, event and tool of a Codex rollout is, as tables, and the
few readings of Codex's own wording the reader needs.

Codex persists a chosen subset of what happens in a session (its rollout policy): the
`response_item`s the model read, the `event_msg`s a resumed session needs (turns started,
aborted and rolled back, compactions, token counts), and `session_meta`/`turn_context`.
Approval requests are not persisted, so a person declining a call survives only as the
call's output, in Codex's own words ("exec command rejected by user"). Each table below
says who produced a thing, from its `type` or its tool's name, never from its text;
anything in none of them is unknown, reported, and untrusted from there on.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

__all__ = ["APPROVAL_EVENTS", "BOOKKEEPING_ITEMS", "BOOKKEEPING_LINES", "CALL_ITEMS", "OUTPUT_ITEMS",
           "PERSON_EVENTS", "TOOLS", "asks_a_person", "declined_by_person", "is_windows_path", "running_session",
           "shell_text", "windows_as_posix"]

# Line types besides `session_meta`, `response_item`, `event_msg` and `turn_context`, which
# the reader reads: Codex's own records of the session, never content the model read.
BOOKKEEPING_LINES: frozenset[str] = frozenset((
    "compacted",           # a compaction's summary; the lines it summarised are still in the file
    "world_state",         # the environment Codex saw (cwd, AGENTS.md, collaboration mode)
    "token_usage_record",
))
# `inter_agent_communication` lines are another agent's words to this one: read as `subagent`.

CALL_ITEMS: frozenset[str] = frozenset(("function_call", "custom_tool_call", "local_shell_call"))
OUTPUT_ITEMS: frozenset[str] = frozenset(("function_call_output", "custom_tool_call_output"))
# Response items that carry neither the person's words nor content from elsewhere.
BOOKKEEPING_ITEMS: frozenset[str] = frozenset((
    "reasoning",               # the agent's own thinking
    "ghost_snapshot",          # the commit Codex took of the tree, for /undo
    "compaction", "compaction_summary", "context_compaction",  # an encrypted summary of earlier lines
    "additional_tools",        # tool definitions offered to the model
    "tool_search_call", "tool_search_output",  # loading the schemas of deferred tools
    "image_generation_call",   # an image the model itself generated
))
# Events: `turn_aborted` and `thread_rolled_back` are the person's acts (the reader reads
# them); approval requests pair with the call they asked about (written by older versions
# only). Every other event is Codex's record of what the response items already hold.
PERSON_EVENTS: frozenset[str] = frozenset(("turn_aborted", "thread_rolled_back"))
APPROVAL_EVENTS: frozenset[str] = frozenset(("exec_approval_request", "apply_patch_approval_request"))

# What each of Codex's tools is, by name. `shell` kinds run a command given in the named
# argument (a string, or argv); `file` kinds read the path in the named argument; the rest
# are a source for every result of that tool.
TOOLS: Mapping[str, tuple[str, str]] = {
    "shell": ("shell", "command"),            # argv (`["bash", "-lc", "..."]`)
    "container.exec": ("shell", "command"),
    "local_shell": ("shell", "command"),      # a `local_shell_call`'s action
    "shell_command": ("shell", "command"),    # a command line, for the user's shell (PowerShell on Windows)
    "exec_command": ("shell", "cmd"),         # a command line, run as a process that may outlive the call
    "write_stdin": ("stdin", "session_id"),   # the agent's input to that process; its result is the process's output
    "view_image": ("file", "path"),
    "read_file": ("file", "file_path"),
    "list_dir": ("file", "dir_path"),
    "grep_files": ("file", "path"),
    "apply_patch": ("harness", ""),           # the result says which files the agent's patch changed
    "update_plan": ("harness", ""),           # the plan the agent keeps
    "request_user_input": ("harness", ""),    # the person's answers to the agent's questions: answers, not a correction
    "tool_search": ("harness", ""),
    "web_search": ("web", ""),
    "web_fetch": ("web", ""),
    # Code mode: `exec` runs a script that may call every other tool, and those nested calls
    # are not in the rollout; `wait` reads a script (or an agent) still running. Their
    # output is whatever the script gathered: from outside, whatever it says.
    "exec": ("outside", ""),
    "wait": ("outside", ""),
    # Other agents this one spawned or talks to: their conversations are not in this file.
    "spawn_agent": ("subagent", ""),
    "send_input": ("subagent", ""),
    "resume_agent": ("subagent", ""),
    "wait_agent": ("subagent", ""),
    "close_agent": ("subagent", ""),
    "list_mcp_resources": ("mcp", ""),
    "list_mcp_resource_templates": ("mcp", ""),
    "read_mcp_resource": ("mcp", ""),
}

# How Codex words a call the person declined at its approval prompt: the whole output,
# as Codex writes it when the decision was the person's ("rejected by user", normalised per
# tool). A command that ran never has an output of only these words: Codex puts its own
# header ("Exit code:", "Chunk ID:", "Wall time:") before what the command printed.
_DECLINED = {"shell": "exec command rejected by user", "apply_patch": "patch rejected by user"}
# Approval policies under which Codex puts calls to the person. `never` asks no one, and a
# table of rules (`{ reject = {...} }`, `{ granular = {...} }`) can decline a prompt without
# showing it: neither is read as the person deciding.
_ASKS = frozenset(("untrusted", "unless-trusted", "on-failure", "on-request"))


def asks_a_person(turn_context: Mapping[str, object]) -> bool:
    """Whether a turn's recorded settings let Codex ask the person to approve a call: one of
    the asking approval policies, and no automatic reviewer answering in their place."""
    policy = turn_context.get("approval_policy")
    reviewer = turn_context.get("approvals_reviewer", "user")
    return isinstance(policy, str) and policy in _ASKS and reviewer in (None, "user")


def declined_by_person(tool_kind: str, output: str, asked: bool) -> bool:
    """Whether an output is Codex recording that the person declined the call.

    `asked`: the turn let Codex ask the person (or an approval request for this very call
    was recorded). Only Codex's own shell and patch tools: the output of a code-mode script,
    an MCP server or any other tool is text its author chose, and is never a refusal."""
    wanted = _DECLINED.get(tool_kind)
    return asked and wanted is not None and output.strip() == wanted


_HEADER_END = re.compile(r"^Output:$", re.MULTILINE)
_RUNNING = re.compile(r"^Process running with session ID (\d+)$", re.MULTILINE)


def running_session(output: str) -> str | None:
    """The id of the process an `exec_command` (or `write_stdin`) left running, from Codex's
    header above the output, never from what the process printed below it."""
    end = _HEADER_END.search(output)
    match = _RUNNING.search(output[: end.start()] if end else output)
    return match.group(1) if match else None


_SHELLS = frozenset(("bash", "sh", "zsh", "dash", "fish"))
_POWERSHELLS = frozenset(("powershell", "powershell.exe", "pwsh", "pwsh.exe"))
_DRIVE = re.compile(r"(?<![\w/])([A-Za-z]):/")


def shell_text(command: object) -> str | None:
    """The command line a shell tool ran: the script of `bash -lc ...`/`powershell -Command ...`,
    an argv's words joined as typed, a string as is; None when there is none."""
    if isinstance(command, str):
        return command
    if not isinstance(command, list) or not command or not all(isinstance(w, str) for w in command):
        return None
    program = command[0].replace("\\", "/").rsplit("/", 1)[-1].lower()
    if program in _SHELLS and len(command) == 3 and command[1] in ("-c", "-lc"):
        return command[2]
    if program in _POWERSHELLS:
        flags = [i for i, w in enumerate(command) if w.lower() in ("-command", "-c")]
        return " ".join(command[flags[0] + 1:]) if flags else None
    return shlex.join(command)


def windows_as_posix(text: str) -> str:
    """A Windows command line or path as the POSIX reader can judge it: separators as `/`,
    drives as `/c:/`. Only for judging; PowerShell escapes with backquotes, which the reader
    refuses anyway, never with backslashes."""
    return _DRIVE.sub(lambda m: f"/{m.group(1).lower()}:/", text.replace("\\", "/"))


def is_windows_path(path: str) -> bool:
    return bool(re.match(r"[A-Za-z]:[\\/]", path)) or path.startswith("\\\\")
