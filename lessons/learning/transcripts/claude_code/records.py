"""What each Claude Code record type and attachment kind is, as one table.

Claude Code writes far more than the conversation into a session file: its own
bookkeeping (titles, file backups, progress of tools and hooks, the permission
mode), the person's words waiting in its input queue, and attachments it adds to
what the model reads (reminders of its task list, the tools and skills at hand, a
file the person mentioned, an MCP server's instructions). Each is classified here
by who produced it, from its `type` (and an attachment's `type`), never from its
text:

- `bookkeeping` -- the CLI's own records; the model never reads them as content;
- `harness` -- text the CLI adds for the model from the person's own environment
  (their task list, their installed skills and agents, their files): trusted, and
  never the person's words;
- `hook` -- output of the hooks the person configured;
- `person` -- words a person typed;
- `mcp` -- content from an MCP server: third-party, so it taints what follows (an MCP
  server's instructions are configuration the person installed: `harness`, see the table).

Anything not in these tables is unknown: the reader reports it, naming the line
and the type, and every intervention after it is untrusted.
"""

from __future__ import annotations

from collections.abc import Mapping

# Record types besides `user`, `assistant`, `queue-operation` and `attachment`,
# which the reader reads for their content.
BOOKKEEPING_RECORDS: frozenset[str] = frozenset((
    "progress",               # a running tool's or hook's progress; the model reads the result instead
    "system",                 # timing, compaction boundaries, API errors, local command echoes
    "file-history-snapshot",  # backups of files before an edit (for /rewind)
    "attribution-snapshot",   # which lines the agent wrote, for commit attribution
    "summary",                # a title-like summary of an earlier conversation
    "custom-title",
    "title",
    "ai-title",
    "tag",
    "last-prompt",            # the last prompt typed, kept for the prompt box
    "permission-mode",        # the person switched the permission mode
    "mode",                   # the input mode (normal, plan, ...)
    "agent-name",
    "agent-color",
    "agent-setting",
    "pr-link",
    "frame-link",
    "bridge-session",         # the remote-control bridge's session id
    "relocated",              # the session was moved to another directory
    "ended-by-model",
    "speculation-accept",
    "isolation-latch",
    "worktree-state",         # the worktree a session runs in
    "content-replacement",    # a long result replaced by a reference, in the model's copy only
    "fork-context-ref",       # a fork's pointer to the conversation it forked from
    "marble-origami-commit",  # context collapse: which earlier lines stand summarised
    "marble-origami-snapshot",
    "marble-origami-reset",
))

# Attachment kinds and who produced them.
ATTACHMENTS: Mapping[str, str] = {
    "queued_command": "person",         # words typed while the agent worked (or a notification: `origin.kind`)
    "task_reminder": "harness",         # the CLI's reminder of its own task list
    "todo_reminder": "harness",
    "task_status": "subagent",          # a background agent's progress, in its own summary
    "deferred_tools_delta": "harness",  # which tools can be loaded on demand
    "skill_listing": "harness",         # the skills the person installed
    "dynamic_skill": "harness",
    "invoked_skills": "harness",
    "agent_listing_delta": "harness",   # the subagent types the person has
    "agent_mention": "harness",         # the person named a subagent type with @
    "command_permissions": "harness",   # tools a slash command or skill may use
    "compact_file_reference": "harness",  # a file read before compaction, named again
    "file": "harness",                  # a file the person @-mentioned: their own file
    "directory": "harness",             # a directory the person @-mentioned: its listing
    "already_read_file": "harness",
    "pdf_reference": "harness",
    "plan_file_reference": "harness",   # the plan the session keeps in the person's plans folder
    "edited_text_file": "harness",      # a file changed on disk since it was read
    "edited_image_file": "harness",
    "opened_file_in_ide": "harness",    # what the person's editor showed
    "selected_lines_in_ide": "harness",
    "selected_lines_in_diff": "harness",
    "diagnostics": "harness",           # the editor's or language server's findings on the person's code
    "nested_memory": "harness",         # a CLAUDE.md of the tree
    "relevant_memories": "harness",     # the person's own memory files
    "memory_update": "harness",
    "plan_mode": "harness",
    "plan_mode_exit": "harness",
    "plan_mode_reentry": "harness",
    "auto_mode": "harness",
    "auto_mode_exit": "harness",
    "date_change": "harness",
    "critical_system_reminder": "harness",
    "output_style": "harness",
    "token_usage": "harness",
    "output_token_usage": "harness",
    "total_tokens_reminder": "harness",
    "budget_usd": "harness",
    "max_turns_reached": "harness",
    "context_efficiency": "harness",
    "context_tip": "harness",
    "tool_search_usage_reminder": "harness",
    "ultrathink_effort": "harness",
    "ultra_effort_enter": "harness",
    "ultra_effort_exit": "harness",
    "workflow_keyword_request": "harness",
    "structured_output": "harness",
    "goal_status": "harness",
    # The instructions of an MCP server the person installed, sent when it connects (the
    # delta names servers added or gone since the last one). They are configuration, like
    # the server's tool descriptions, which ride in every request and are never in the
    # file: the person chose the server, and nothing the agent did asked for this text.
    # What the server answers to a call (its tool results, its resources) is its content
    # and taints what follows.
    "mcp_instructions_delta": "harness",
    "hook_success": "hook",
    "hook_additional_context": "hook",
    "hook_blocking_error": "hook",
    "hook_non_blocking_error": "hook",
    "hook_error_during_execution": "hook",
    "hook_stopped_continuation": "hook",
    "hook_cancelled": "hook",
    "hook_deferred_tool": "hook",
    "hook_system_message": "hook",
    "hook_permission_decision": "hook",
    "async_hook_response": "hook",
    "mcp_resource": "mcp",              # a resource an MCP server returned: its content
}

# Where a result of the CLI's own tools comes from; tools that touch files, the shell,
# the web, MCP servers and subagents are judged per call (`lessons.learning.provenance`).
CLI_TOOLS: Mapping[str, str] = {
    # its task list, kept by the CLI
    "TodoWrite": "harness", "TodoRead": "harness", "TaskCreate": "harness", "TaskUpdate": "harness",
    "TaskList": "harness", "TaskGet": "harness", "TaskStop": "harness", "KillShell": "harness",
    "KillBash": "harness",
    # loading the schemas of tools the CLI deferred; a skill the person installed
    "ToolSearch": "harness", "Skill": "harness", "SlashCommand": "harness",
    # plan mode and questions the person answers
    "EnterPlanMode": "harness", "ExitPlanMode": "harness", "AskUserQuestion": "harness",
}
# A desktop app's own session bookkeeping, offered to the model as MCP tools.
CLI_TOOL_PREFIXES: tuple[str, ...] = ("mcp__ccd_session__",)


def record_role(kind: object) -> str:
    """`conversation`, `queue`, `attachment`, `bookkeeping` or `unknown` for a record's `type`."""
    if kind in ("user", "assistant"):
        return "conversation"
    if kind == "queue-operation":
        return "queue"
    if kind == "attachment":
        return "attachment"
    return "bookkeeping" if kind in BOOKKEEPING_RECORDS else "unknown"


def cli_tool_source(name: str) -> str | None:
    """The source of a result of one of the CLI's own tools; None for any other tool."""
    if name in CLI_TOOLS:
        return CLI_TOOLS[name]
    return "harness" if name.startswith(CLI_TOOL_PREFIXES) else None


# How Claude Code records, in the result line's `toolUseResult`, that the person
# refused the call at its permission prompt: "User rejected tool use" when they said
# nothing, and its refusal sentence after "Error: " when they typed a reason. A
# refusal by policy (`--disallowedTools`, a permission print mode cannot ask for) is
# recorded "Error: Permission to use ...", a hook's and a failing command's as their
# own errors. An MCP server's error is recorded "Error: " + whatever the server said,
# which can be the refusal sentence word for word: so a refusal of an MCP call is
# never read as the person's (it fails closed: the result is the server's content).
PERSON_REFUSAL_RECORD = "User rejected tool use"
_REFUSAL_OPENINGS = (
    "The user doesn't want to proceed with this tool use.",
    "The user doesn't want to take this action right now.",
    "The agent proposed a plan that was rejected by the user.",
)


def person_refused(record: Mapping[str, object], tool_name: str) -> bool:
    """Whether the result line's structured record says the person refused the call."""
    recorded = record.get("toolUseResult")
    if recorded == PERSON_REFUSAL_RECORD:
        return True
    if not isinstance(recorded, str) or not tool_name or tool_name.startswith("mcp__"):
        return False
    return recorded.startswith("Error: ") and recorded[len("Error: "):].startswith(_REFUSAL_OPENINGS)


# Entry points of sessions nobody sat at: print mode (`claude -p`) and the SDKs.
def headless_reason(record: Mapping[str, object]) -> str:
    """Why a record belongs to a run nobody sat at ("" when it does not say so)."""
    entry = record.get("entrypoint")
    if isinstance(entry, str) and entry.startswith("sdk"):
        return f"a headless run (entrypoint {entry!r}: print mode or an SDK)"
    if record.get("promptSource") == "sdk":
        return "a headless run (its prompt came from the SDK)"
    return ""
