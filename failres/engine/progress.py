"""How a run reports where it is: the loop calls `step`, a renderer decides what to show."""

from __future__ import annotations

import shlex
import signal
import sys
import time
from collections.abc import Sequence
from typing import Protocol, TextIO

# The last step a task reports: how its run ended. A display shows it as the task's
# final state (a Ctrl-C reads `interrupted`, never a neutral "done").
FINAL_STEPS = frozenset({"committed", "quarantined", "stopped", "interrupted", "pending", "landed", "done"})


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
        if step in FINAL_STEPS:
            self.started.pop(key, None)


def resume_line(signum: int | None, plan: object, task_ids: Sequence[str] = ()) -> str:
    """The one line a stopped run leaves: what stopped it and the command that resumes it."""
    try:
        name = signal.Signals(signum or signal.SIGINT).name
    except ValueError:
        name = f"signal {signum}"
    command = " ".join(["git failres run", shlex.quote(str(plan)), *(f"--task {shlex.quote(t)}" for t in task_ids)])
    return f"failres: interrupted by {name}; resume with: {command}"
