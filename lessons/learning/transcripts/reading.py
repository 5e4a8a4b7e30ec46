"""What every adapter's reader gathers from one file, and the transcript it makes of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lessons.learning.messages import Message, Problem, Transcript, TranscriptKind
from lessons.learning.provenance import ToolProvenance

__all__ = ["FileReader"]


@dataclass
class FileReader:
    """One file's messages and the problems met on the way; each format's reader adds its own state."""

    path: Path
    provenance: ToolProvenance
    messages: list[Message] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def problem(self, line: int, reason: str) -> None:
        """A line that could not be read: it costs that line, placed before the next message."""
        self.problems.append(Problem(line, reason, len(self.messages)))

    def transcript(self, session_id: str, format: str, kind: TranscriptKind, reason: str) -> Transcript:
        return Transcript(session_id=session_id, messages=tuple(self.messages), source_path=str(self.path),
                          format=format, kind=kind, derived_reason=reason, problems=tuple(self.problems))
