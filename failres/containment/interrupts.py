"""Stopping a run on purpose: Ctrl-C, SIGTERM, SIGHUP, or `git failres cancel`.

A signal handler does nothing but set a flag. Everything that waits (a seat, a
gate, a probe's back-off) polls that flag and returns early; the loop then raises
`Interrupted` at its next step, journals an `interrupted` event, and cleans up. So a
stop always goes through the same, ordinary code path: the seat's processes end,
the task becomes `interrupted` (the next `run` resumes it), and the process exits
with 128 + the signal's number.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(Exception):
    """The run was told to stop; `reason` is `signal` or `cancel`."""

    def __init__(self, reason: str, signum: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.signum = signum


class StopFlag:
    """Set once, by a signal or by code; read from any thread."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.signum: int | None = None

    def set(self, signum: int | None = None) -> None:
        if not self._event.is_set():
            self.signum = signum
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking as soon as the flag is set; True when it is."""
        return self._event.wait(seconds)

    @property
    def exit_code(self) -> int:
        return 128 + int(self.signum or signal.SIGINT)


@contextmanager
def stop_on_signals(flag: StopFlag) -> Iterator[StopFlag]:
    """While inside, SIGINT/SIGTERM/SIGHUP set `flag` instead of killing the process.

    Only the main thread may install handlers; elsewhere (a test calling the CLI
    from a thread) the flag is still honoured, just not set by signals.
    """
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return
    previous = {}
    for signum in STOP_SIGNALS:
        previous[signum] = signal.signal(signum, lambda number, frame: flag.set(number))
    try:
        yield flag
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
