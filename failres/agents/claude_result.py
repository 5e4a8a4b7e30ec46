"""What Claude Code's `--output-format json` result says about a dispatch.

Claude Code exits 0 when its permission system refused every edit it tried (in a
workspace under `.git/` it calls each file "a sensitive file"; in acceptEdits mode
most commands "require approval"). Judged by its exit code alone, such a run looks
like an agent that did nothing, the gate goes red, a fixer meets the same refusal,
and the lesson blames the gate. The JSON result lists the refusals in
`permission_denials`, so failres can name the real failure (`seat-denied`) and the
calls that were refused.

The shape, as the real binary prints it (tests/data/claude_result/ holds captured
samples): one JSON object on stdout,

    {"type": "result", "subtype": "success", "is_error": false, "result": "<last text>",
     "session_id": "<uuid>", "num_turns": 3, "api_error_status": null,
     "permission_denials": [{"tool_name": "Edit", "tool_use_id": "toolu_...",
                             "tool_input": {"file_path": "/abs/path", ...}}], ...}

`subtype` stays "success" when calls were denied; an API error is `is_error: true`
with the error in `result` (and exit 1).
"""

from __future__ import annotations

import json
from lessons.frozen import record


# The input field that says what a call was about, per tool; the first present is shown.
_SUBJECT_FIELDS = ("file_path", "notebook_path", "command", "path", "pattern", "url")
_SUMMARY_LIMIT = 200


@record
class DeniedCall:
    """One tool call Claude Code's permissions refused."""

    tool: str
    summary: str  # what the call was about: a path, a command; bounded

    def __str__(self) -> str:
        return f"{self.tool} {self.summary}" if self.summary else self.tool


@record
class ClaudeResult:
    """The parts of a Claude Code result the loop needs."""

    session_id: str | None
    is_error: bool
    result_text: str
    denied: tuple[DeniedCall, ...]

    @property
    def was_denied(self) -> bool:
        return bool(self.denied)

    def denial_message(self) -> str:
        """One line for a quarantine message: how many calls were denied, and which."""
        shown = "; ".join(str(call) for call in self.denied[:5])
        more = f"; and {len(self.denied) - 5} more" if len(self.denied) > 5 else ""
        noun = "call" if len(self.denied) == 1 else "calls"
        return f"Claude Code's permissions denied {len(self.denied)} {noun}: {shown}{more}"


def _bounded(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SUMMARY_LIMIT else flat[: _SUMMARY_LIMIT - 3] + "..."


def _summary(tool_input: object) -> str:
    if not isinstance(tool_input, dict):
        return ""
    for field in _SUBJECT_FIELDS:
        value = tool_input.get(field)
        if isinstance(value, str) and value:
            return _bounded(value)
    return _bounded(json.dumps(tool_input, sort_keys=True)) if tool_input else ""


def _result_object(stdout_text: str) -> dict | None:
    """The result object: the whole output, else its last line that is one (a CLI may warn first)."""
    candidates = [stdout_text, *reversed(stdout_text.splitlines())]
    for candidate in candidates:
        candidate = candidate.strip()
        if not candidate.startswith("{"):
            continue
        try:
            document = json.loads(candidate)
        except (ValueError, RecursionError):  # a seat prints any bytes, deep nesting included
            continue
        if isinstance(document, dict) and document.get("type") == "result":
            return document
    return None


def claude_result(stdout_text: str) -> ClaudeResult | None:
    """Read a Claude Code `--output-format json` result; None when stdout holds none.

    None is not a failure of its own: a binding without `--output-format json`, or a
    run that died before printing, is judged by its exit code and the gate as before.
    """
    document = _result_object(stdout_text)
    if document is None:
        return None
    denials = document.get("permission_denials")
    denied = tuple(
        DeniedCall(tool=str(entry.get("tool_name") or "?"), summary=_summary(entry.get("tool_input")))
        for entry in (denials if isinstance(denials, list) else [])
        if isinstance(entry, dict)
    )
    session = document.get("session_id")
    text = document.get("result")
    return ClaudeResult(
        session_id=session if isinstance(session, str) and session else None,
        is_error=document.get("is_error") is True,
        result_text=text if isinstance(text, str) else "",
        denied=denied,
    )


def is_seat_denied(result: ClaudeResult | None, changed_paths: tuple[str, ...] | list[str]) -> bool:
    """A dispatch that was refused calls and changed nothing: `seat-denied`, not a red gate.

    A run that was denied one command but made its edits is judged by the gate as
    usual: a denial that did not stop the work is not the failure.
    """
    return result is not None and result.was_denied and not changed_paths
