"""`git failres reflect` as a person runs it: what it reports about the transcripts it read,
and what it never takes for a person's words."""

from __future__ import annotations

import json
from pathlib import Path

from lessons.learning.store_io import read_reflections
from lessons.storage.store import Store

TOP = "/home/ana/project"


def write_lines(path: Path, lines: list[object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def claude(kind: str, content: object) -> dict:
    return {"type": kind, "isSidechain": False, "sessionId": "s-1", "cwd": TOP,
            "timestamp": "2026-02-11T20:00:00.000Z", "message": {"role": kind, "content": content}}


def test_skipped_lines_are_reported_with_their_numbers_and_unknown_record_types_by_name(
        repo: Path, tmp_path: Path, cli) -> None:
    path = write_lines(tmp_path / "t" / "s.jsonl", [
        claude("user", "tidy up"),
        '{"type": "assistant", "mess',
        {"type": "web-clip", "content": "a page"},
        claude("assistant", [{"type": "text", "text": "Tidied."}]),
        claude("user", "no, not the changelog"),
    ])
    out = cli(repo, "reflect", str(path), "--json")
    assert out.code == 0, out.err
    (warning,) = [line for line in out.err.splitlines() if "not understood" in line]
    assert warning == (f"warning: {path}: 2 line(s) not understood, so every intervention from line 2 (not JSON) "
                       "on is untrusted: line 2 (not JSON), 3 (unknown record type 'web-clip')")
    (recorded,) = json.loads(out.out)
    assert recorded["origin"] == "untrusted"


def test_a_generic_transcript_reports_its_bad_lines_too(repo: Path, tmp_path: Path, cli) -> None:
    path = write_lines(tmp_path / "t" / "g.jsonl", [
        {"format": "failres.transcript/1", "session_id": "g", "kind": "interactive", "cwd": TOP},
        {"role": "user", "text": "go"},
        {"text": "no role"},
        {"role": "robot", "text": "beep"},
        {"role": "assistant", "text": "Done."},
    ])
    out = cli(repo, "reflect", str(path), "--json")
    assert out.code == 0
    assert "line 3 (a line without a role), 4 (unknown role 'robot')" in out.err


def test_a_session_already_mined_is_not_reported_again(repo: Path, tmp_path: Path, cli) -> None:
    path = write_lines(tmp_path / "t" / "s.jsonl", [claude("user", "go"), "not json"])
    assert "1 line(s) not understood" in cli(repo, "reflect", str(path)).err
    assert "not understood" not in cli(repo, "reflect", str(path)).err


def test_a_slash_command_in_a_generic_transcript_is_never_an_intervention(repo: Path, tmp_path: Path, cli) -> None:
    path = write_lines(tmp_path / "t" / "g.jsonl", [
        {"format": "failres.transcript/1", "session_id": "g", "kind": "interactive", "cwd": TOP},
        {"role": "user", "text": "make the tests pass"},
        {"role": "assistant", "tool": "Read", "tool_use_id": "a", "input": {"file_path": "src/a.py"}},
        {"role": "tool", "tool_use_id": "a", "text": "x = 1"},
        {"role": "user", "text": "/model"},
        {"role": "user", "text": "/compact keep the test names", "source": "person"},
        {"role": "user", "text": "\u001b[A"},
        {"role": "assistant", "text": "Done."},
        {"role": "user", "text": "/clear"},
    ])
    out = cli(repo, "reflect", str(path), "--json")
    assert out.code == 0 and json.loads(out.out) == []
    learned = cli(repo, "learn", "--json")
    assert all(o["proposal"] is None for o in json.loads(learned.out))
    assert read_reflections(Store(repo))[0] == []
