"""Refusals by an agent's own permission system, read from what the agent printed.

Claude Code run with `--output-format json` prints one JSON result; an edit or a
command its permission mode refused is listed in `permission_denials`, while the run
still "succeeds" (exit 0, `subtype` success). When that is why a seat changed
nothing, the failure is the binding's permissions (`seat-denied`), not a red gate
the fixer should chase. Anything that is not such a result means "no denials".
"""

from __future__ import annotations

import json


def claude_denials(output: str) -> list[str]:
    """The calls a Claude Code JSON result says were denied, as `Tool(input)` lines (pure)."""
    result = _last_json_object(output)
    if result is None:
        return []
    denials = result.get("permission_denials")
    if not isinstance(denials, list):
        return []
    shown = []
    for denial in denials:
        if not isinstance(denial, dict):
            continue
        tool = str(denial.get("tool_name") or "a tool")
        shown.append(f"{tool}({_summary(denial.get('tool_input'))})")
    return shown


def _summary(tool_input: object) -> str:
    if not isinstance(tool_input, dict):
        return ""
    for key in ("command", "file_path", "path", "pattern", "url"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value if len(value) <= 120 else value[:117] + "..."
    return ""


def _last_json_object(output: str) -> dict | None:
    text = output.strip()
    candidates = [text] + [line.strip() for line in reversed(text.splitlines()) if line.strip().startswith("{")]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):  # agent output is any bytes, nesting included
            continue
        if isinstance(value, dict) and value.get("type") == "result":
            return value
    return None
