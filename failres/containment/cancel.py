"""Cancelling a live run from elsewhere: ask first, signal only a run that does not answer.

The running loop polls its task's cancel request between steps and while a seat or
gate runs, stops the seat's processes, journals `interrupted` (reason `cancel`) and
moves on to the plan's next task. A run that does not release its lock in time (it
hangs in something that does not poll) gets SIGTERM, which stops the whole process
the same clean way.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path

from failres.containment.locks import live_holder, locked_tasks, request_cancel, wait_released
from failres.errors import UsageError


@dataclass(frozen=True)
class Cancelled:
    slug: str
    task: str
    pid: int | None
    stopped: bool
    signalled: bool


def cancel_runs(git_dir: Path, slug: str, task: str | None, *, wait: float) -> list[Cancelled]:
    """Cancel the live run of `slug/task` (or of every task of `slug`); UsageError when none runs."""
    tasks = [task] if task else locked_tasks(git_dir, slug)
    live = [(t, live_holder(git_dir, slug, t)) for t in tasks]
    live = [(t, holder) for t, holder in live if holder is not None]
    if not live:
        what = f"{slug}/{task}" if task else f"no task of {slug}"
        msg = f"{what} is not running" if task else f"{what} is running"
        raise UsageError(msg, hint="`git failres status` shows each task's state")
    for t, _ in live:
        request_cancel(git_dir, slug, t)
    done = []
    for t, holder in live:
        stopped = wait_released(git_dir, slug, t, wait)
        signalled = False
        if not stopped and holder.pid:
            signalled = _signal(holder.pid)
            stopped = wait_released(git_dir, slug, t, max(wait, 5.0))
        done.append(Cancelled(slug, t, holder.pid, stopped, signalled))
    return done


def _signal(pid: int) -> bool:
    try:
        os.kill(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return False
    return True
