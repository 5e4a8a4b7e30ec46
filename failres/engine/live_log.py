"""`live.log`: a seat's output as it arrives, redacted before it reaches the disk.

`logs --follow` reads a dispatch's output while the seat runs. A seat can print a token
and kill failres the next moment, so nothing may reach `live.log` in clear, even for a
while: the copy is written line by line, each run of complete lines redacted first (a
line still being written waits, up to a bound past which it is redacted as it stands).
A run that died with a `live.log` on disk (killed before the seat ended) has it
redacted once more when the next `status` or `run` finds the run lost.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from failres import beneath
from lessons.redaction.redact import redact

# A line longer than this is redacted and written in pieces (a secret longer than
# this cannot be told from its context anyway).
_MAX_PENDING = 64 * 1024


class RedactingLive:
    """A binary writer that redacts whole lines before they go to `out`."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.pending = b""

    def write(self, chunk: bytes) -> int:
        self.pending += chunk
        cut = self.pending.rfind(b"\n") + 1
        if cut == 0 and len(self.pending) > _MAX_PENDING:
            # A long line is cut short of its end by more than any known value is long: a value
            # that straddled the cut was once written in two halves, each too short to be found.
            cut = len(self.pending) - _held_back()
        if cut:
            ready, self.pending = self.pending[:cut], self.pending[cut:]
            self.out.write(_redacted(ready))
        return len(chunk)

    def flush(self) -> None:
        self.out.flush()

    def close(self) -> None:
        if self.pending:
            self.out.write(_redacted(self.pending))
            self.pending = b""
        self.out.close()


def _held_back() -> int:
    """How many bytes of a cut line wait for the next chunk: the longest known value, spread, and then some."""
    from lessons.redaction.known_secrets import known_values

    longest = max((len(v.encode("utf-8")) for v in known_values()), default=0)
    return min(_MAX_PENDING // 2, 4 * longest + 256)


def _redacted(data: bytes) -> bytes:
    return redact(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def clean_live_logs(git_dir: Path, slug: str, task: str) -> None:
    """Redact every `live.log` a lost run of the task left (its writer may have died mid-line)."""
    root = git_dir / "failres" / "logs" / slug / task  # `dispatch_logs.logs_root`, which imports this module
    if not root.is_dir():
        return
    for directory, _dirs, names in os.walk(root):
        if "live.log" not in names:
            continue
        relative = Path(directory, "live.log").relative_to(git_dir)
        try:
            data = beneath.read_regular(git_dir / relative)
            beneath.replace_file(git_dir, relative, _redacted(data))
        except (OSError, beneath.Planted):
            continue
