"""Where a subagent's result came from: judged from the subagent's own transcript.

A subagent's result is the end of another conversation. Claude Code files that
conversation beside the session (`<session>/subagents/agent-<id>.jsonl`) and names
it in the result's record (`toolUseResult.agentId`), so its provenance need not be
guessed: when the subagent's own conversation read nothing but trusted sources and
lost no line, its summary is as trusted as what it read. Without the file, or with
anything third-party or unknown in it, the result stays `subagent` (untrusted).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from lessons.learning.messages import Source, Transcript
from lessons.learning.provenance import TRUSTED_SOURCES

_AGENT_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")


def subagent_source(session_path: Path, record: dict, load: Callable[[Path], Transcript]) -> Source:
    """`repo` when the subagent named in the result's record read only trusted sources, else `subagent`.

    `load` reads a Claude Code file (the reader passes itself)."""
    result = record.get("toolUseResult")
    agent_id = result.get("agentId") if isinstance(result, dict) else None
    if not isinstance(agent_id, str) or not _AGENT_ID.fullmatch(agent_id):
        return "subagent"
    path = session_path.parent / session_path.stem / "subagents" / f"agent-{agent_id}.jsonl"
    if not path.is_file():
        return "subagent"
    try:
        transcript = load(path)
    except Exception:  # noqa: BLE001 - an unreadable subagent file proves nothing: untrusted
        return "subagent"
    if transcript.problems:
        return "subagent"
    clean = all(b.source in TRUSTED_SOURCES for m in transcript.messages for b in m.blocks)
    return "repo" if clean else "subagent"
