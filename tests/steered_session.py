"""A Claude Code transcript in which a person steered the agent: one clean reflection once
mined, for the tests that need a session to learn from (`reflect`, then `learn`)."""

from __future__ import annotations

import json
from pathlib import Path

STEER = "use the fixture, never the live database"
CWD = "/home/ana/project"  # where the session ran: nowhere on this machine, so it belongs to any repository


def steered_session(path: Path, session: str = "s-1") -> Path:
    """Write the transcript at `path`: a Read whose result carries the person's words."""
    def record(kind: str, content: object) -> dict:
        return {"type": kind, "isSidechain": False, "sessionId": session, "cwd": CWD,
                "timestamp": "2026-02-11T20:00:00.000Z", "message": {"role": kind, "content": content}}
    path.parent.mkdir(parents=True, exist_ok=True)
    records = [record("user", "clean up the docs"),
               record("assistant", [{"type": "tool_use", "id": "t1", "name": "Read",
                                     "input": {"file_path": f"{CWD}/README.md"}}]),
               record("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "# project",
                                "is_error": False}, {"type": "text", "text": STEER}]),
               record("assistant", [{"type": "text", "text": "Using the fixture."}])]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path
