"""How a run reports where it is: the loop calls `step`, a renderer decides what to show."""

from __future__ import annotations

import sys
import time
from typing import Protocol, TextIO


class Progress(Protocol):
    def step(self, slug: str, task: str, step: str, *, seat: str | None = None,
             attempt: int | None = None) -> None: ...


class NullProgress:
    """Says nothing (`--quiet`, tests, the hooks)."""

    def step(self, slug: str, task: str, step: str, *, seat: str | None = None,
             attempt: int | None = None) -> None:
        return None


class LineProgress:
    """One plain line per step, for logs and pipes (not a terminal)."""

    def __init__(self, stream: TextIO | None = None, clock=time.monotonic) -> None:
        self.stream = stream or sys.stderr
        self.clock = clock
        self.started: dict[tuple[str, str], float] = {}

    def step(self, slug: str, task: str, step: str, *, seat: str | None = None,
             attempt: int | None = None) -> None:
        key = (slug, task)
        now = self.clock()
        start = self.started.setdefault(key, now)
        parts = [f"{slug}/{task}", step]
        if seat:
            parts.append(seat)
        if attempt is not None:
            parts.append(f"attempt {attempt}")
        parts.append(f"{now - start:.1f}s")
        line = "[failres] " + "  ".join(parts) + "\n"
        self.stream.write(line)  # one write per line: lines of concurrent tasks never interleave
        self.stream.flush()
        if step == "done":
            self.started.pop(key, None)
