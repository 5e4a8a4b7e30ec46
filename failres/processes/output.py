"""What a child printed, kept bounded: its first and last bytes, as text safe to show.

A seat may print gigabytes, binary, escape sequences or a token cut in half. What is
kept is the head and the tail (`HeadAndTail`), read from one merged pipe so stdout
and stderr stay in the order they were written (`read_until_done`), and shown only as
plain text with the cut words left out (`ProcessResult.text`): this is where a child's
output enters everything failres keeps (journal, lessons, prompts, signatures, report),
so its terminal escapes end here. Only the dispatch's own log file keeps the bytes as
they were (`ProcessResult.raw_text`).
"""

from __future__ import annotations

import os
import selectors
import subprocess
import threading
import time
from collections.abc import Callable
from typing import BinaryIO, Protocol

from lessons.frozen import record
from lessons.redaction.redact import without_cut_word
from lessons.terminal import plain_text

# Exit code a shell reports for a command it cannot run; callers and people already read
# 127 as "no such program", so a seat we could not start looks the same.
EXIT_NOT_FOUND = 127

_READ_CHUNK = 65536
# How often the read loop wakes to check the deadline and whether the process exited.
POLL_SECONDS = 0.05
# After the main process exits, a pipe that stays silent this long is held only by
# leftovers (a background child that inherited stdout); waiting for its EOF could hang.
_QUIET_AFTER_EXIT_SECONDS = 0.2
# ...and a leftover that keeps writing cannot keep us reading forever either.
_DRAIN_AFTER_EXIT_MAX_SECONDS = 2.0


class Watch(Protocol):
    """Something to look at on every turn of the read loop (the supervisor's status file)."""

    def poll(self) -> None: ...


@record
class ProcessResult:
    """What a finished (or killed) child did, with its merged output cut to head and tail."""

    argv: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    signal: int | None
    duration: float
    head: bytes
    tail: bytes
    total_bytes: int
    truncated: bool
    not_found: bool

    @property
    def omitted_bytes(self) -> int:
        """How many bytes of output lie between head and tail and were not kept."""
        return self.total_bytes - len(self.head) - len(self.tail)

    @property
    def text(self) -> str:
        """The kept output as printable text: safe for a terminal and for a JSON record."""
        if not self.truncated:
            return printable_text(self.head + self.tail)
        # The cut went through whatever word it met; what is left of a token could be a
        # secret too short to be recognised, so the cut word goes on either side.
        head = without_cut_word(printable_text(self.head), cut_at="end")
        if head and not head.endswith("\n"):
            head += "\n"
        marker = f"[... {self.omitted_bytes} bytes omitted ...]\n"
        return head + marker + without_cut_word(printable_text(self.tail), cut_at="start")

    @property
    def raw_text(self) -> str:
        """The kept output as the child wrote it, escapes and all, for the dispatch's own log.

        Undecodable bytes survive as surrogates (encode with `surrogateescape` to get them
        back); the cut words go as in `text`.
        """
        head = self.head.decode("utf-8", "surrogateescape")
        tail = self.tail.decode("utf-8", "surrogateescape")
        if not self.truncated:
            return head + tail
        head = without_cut_word(head, cut_at="end")
        if head and not head.endswith("\n"):
            head += "\n"
        return head + f"[... {self.omitted_bytes} bytes omitted ...]\n" + without_cut_word(tail, cut_at="start")


def printable_text(data: bytes) -> str:
    """Decode `data` as UTF-8 and keep it as the plain text a terminal showed (`lessons.terminal`).

    Output ends up in terminals and in git records. Escape sequences (colours, titles,
    hyperlinks) could rewrite a person's screen and are formatting, not content; NUL bytes
    break tools that read records as C strings. They are removed whole, where they once
    became U+FFFD and left `[31m` in every line of a coloured pytest run. A progress line
    redrawn with carriage returns keeps its last state.
    """
    return plain_text(data.decode("utf-8", errors="replace"))


class HeadAndTail:
    """Keeps the first `head_limit` bytes and a ring of the last `tail_limit` after them."""

    def __init__(self, head_limit: int, tail_limit: int, *, live: BinaryIO | None = None,
                 live_limit: int = 0) -> None:
        self.head_limit = head_limit
        self.tail_limit = tail_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.live = live
        self.live_left = live_limit

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.live is not None and self.live_left > 0:
            self._copy_live(chunk[: self.live_left])
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk[-self.tail_limit :] if self.tail_limit else b""
        excess = len(self.tail) - self.tail_limit
        if excess > 0:
            # bytearray deletes from the front without copying the rest (it moves a start
            # offset), so this ring costs O(chunk), not O(tail_limit), per read.
            del self.tail[:excess]

    def _copy_live(self, chunk: bytes) -> None:
        # A copy for whoever follows the run; losing it must never cost the run.
        try:
            self.live.write(chunk)
            self.live.flush()
        except (OSError, ValueError):
            self.live = None
            return
        self.live_left -= len(chunk)


def not_started(command: tuple[str, ...], reason: str, *, duration: float) -> ProcessResult:
    head = f"cannot run {command[0]!r}: {reason}\n".encode()
    return ProcessResult(
        argv=command,
        exit_code=EXIT_NOT_FOUND,
        timed_out=False,
        signal=None,
        duration=duration,
        head=head,
        tail=b"",
        total_bytes=len(head),
        truncated=False,
        not_found=True,
    )


def start_stdin_writer(child: subprocess.Popen[bytes], data: bytes | None) -> threading.Thread | None:
    """Write stdin from a thread: a child that never reads must not stop us reading its output."""
    if data is None or child.stdin is None:
        return None
    stdin = child.stdin

    def write_then_close() -> None:
        try:
            stdin.write(data)
        except OSError:
            # BrokenPipe: the child closed stdin early or is gone. Reading is its choice.
            pass
        try:
            stdin.close()
        except OSError:
            pass

    # Daemon: if some escaped process keeps the pipe open unread, the writer may block
    # forever; it must not keep the interpreter alive.
    writer = threading.Thread(target=write_then_close, name="stdin-writer", daemon=True)
    writer.start()
    return writer


def read_until_done(child: subprocess.Popen[bytes], output: HeadAndTail, *, deadline: float,
                     cancelled: Callable[[], bool] | None, watch: Watch) -> bool:
    """Read the merged output until EOF and the supervisor's exit, the deadline, or a cancel.

    Returns True when the run must be stopped (deadline passed or cancelled) while the
    supervisor was still running. The supervisor exits only once every process of the
    dispatch is gone, so its EOF and exit are the end of the dispatch.
    """
    assert child.stdout is not None
    pipe = child.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(pipe, selectors.EVENT_READ)
        eof = False
        exited_at: float | None = None
        # `cancelled` is asked at most once a poll: a gate that prints a line at a time (pytest's
        # dots) woke this loop 70 times a task, and each ask reads the task's lock and cancel
        # files (about 0.2 ms of cpu). A cancel is still seen within a poll, as on a quiet pipe.
        next_look = 0.0
        while True:
            watch.poll()
            now = time.monotonic()
            if exited_at is None and child.poll() is not None:
                exited_at = now
            if exited_at is not None and (eof or now - exited_at >= _DRAIN_AFTER_EXIT_MAX_SECONDS):
                # Normally EOF comes with the exit; a writer that outlived a killed
                # supervisor must not hold us: the sweep after this run ends it.
                return False
            if exited_at is None and now >= deadline:
                return True
            if exited_at is None and cancelled is not None and now >= next_look:
                next_look = now + POLL_SECONDS
                if cancelled():
                    return True
            if eof:
                # Everything closed the pipe: wait for the supervisor's exit itself, which
                # comes at once unless it is still cleaning up.
                try:
                    child.wait(timeout=min(POLL_SECONDS, max(deadline - now, 0.001)))
                except subprocess.TimeoutExpired:
                    pass
                continue
            wait = _QUIET_AFTER_EXIT_SECONDS if exited_at is not None else min(POLL_SECONDS, max(deadline - now, 0))
            if not selector.select(wait):
                if exited_at is not None:
                    return False
                continue
            chunk = os.read(pipe, _READ_CHUNK)
            if not chunk:
                eof = True
                continue
            output.feed(chunk)


def drain_remaining(child: subprocess.Popen[bytes], output: HeadAndTail) -> None:
    """Keep what was written before the end; every writer is gone, so this is quick."""
    assert child.stdout is not None
    pipe = child.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(pipe, selectors.EVENT_READ)
        give_up_at = time.monotonic() + _DRAIN_AFTER_EXIT_MAX_SECONDS
        while time.monotonic() < give_up_at and selector.select(_QUIET_AFTER_EXIT_SECONDS):
            chunk = os.read(pipe, _READ_CHUNK)
            if not chunk:
                break
            output.feed(chunk)
    child.stdout.close()
