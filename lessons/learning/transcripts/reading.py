"""What every adapter's reader gathers from one file, and the transcript it makes of it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lessons.errors import InvalidInput
from lessons.learning.messages import JsonLine, Message, Problem, Transcript, TranscriptKind, read_json_lines
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

    def json_lines(self) -> list[JsonLine]:
        """Every line of the file, read as JSON; InvalidInput when the file cannot be read."""
        try:
            return list(read_json_lines(self.path))
        except OSError as exc:
            msg = f"cannot read transcript {self.path}: {exc.strerror or exc}"
            raise InvalidInput(msg) from exc

    def take(self, line: JsonLine, add: Callable[[int, dict], None]) -> None:
        """The line's record to `add`; a problem where the line is not a JSON object."""
        if line.error:
            self.problem(line.number, line.error)
        elif not isinstance(line.value, dict):
            self.problem(line.number, "not a JSON object")
        else:
            add(line.number, line.value)

    def transcript(self, session_id: str, format: str, kind: TranscriptKind, reason: str) -> Transcript:
        return Transcript(session_id=session_id, messages=tuple(self.messages), source_path=str(self.path),
                          format=format, kind=kind, derived_reason=reason, problems=tuple(self.problems))
