"""The sessions the person's own Claude Code noted as they ended, for `reflect` to mine.

The `SessionEnd` hook (`failres.agents.session_hook`) writes one note per transcript
under `<git dir>/failres/sessions/`; `reflect`, given no paths, mines the transcripts
the notes name besides the ones it finds itself, and removes each note once its
transcript was mined (or is gone). A note is removed by its own name only, so a session
that ends while `reflect` runs leaves a note the next `reflect` reads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from failres.agents.session_hook import NOTES_DIR

_MAX_NOTES = 1000  # a queue nobody reflected on for years is read a thousand at a time
_MAX_NOTE_BYTES = 64 * 1024


@dataclass(frozen=True)
class SessionNote:
    note: Path
    transcript: Path
    session_id: str = ""


def notes_dir(git_dir: Path) -> Path:
    return git_dir.joinpath(*NOTES_DIR)


def queued_sessions(git_dir: Path) -> tuple[list[SessionNote], list[str]]:
    """(the notes whose transcript can be read, a problem line for each one dropped)."""
    folder = notes_dir(git_dir)
    if not folder.is_dir():
        return [], []
    found, problems = [], []
    for path in sorted(folder.glob("*.json"))[:_MAX_NOTES]:
        try:
            if path.stat().st_size > _MAX_NOTE_BYTES:
                raise ValueError("too large")
            note = json.loads(path.read_text(encoding="utf-8"))
            transcript = Path(note["transcript_path"])
        except (OSError, ValueError, KeyError, TypeError):
            problems.append(f"{path}: unreadable session note; removed")
            path.unlink(missing_ok=True)
            continue
        if not transcript.is_file():
            problems.append(f"{transcript}: the noted session's transcript is gone; note removed")
            path.unlink(missing_ok=True)
            continue
        found.append(SessionNote(path, transcript, str(note.get("session_id") or "")))
    return found, problems


def new_paths(notes: list[SessionNote], chosen: list[Path]) -> list[Path]:
    """The noted transcripts `chosen` does not already hold (a file, or a folder above it)."""
    held = [p.resolve() for p in chosen]
    return [n.transcript for n in notes
            if not any(n.transcript.resolve() == h or n.transcript.resolve().is_relative_to(h) for h in held)]


def forget(notes: list[SessionNote]) -> None:
    for note in notes:
        note.note.unlink(missing_ok=True)
