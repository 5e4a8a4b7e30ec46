"""Run a seat or a gate as a child process, with bounded output and a hard deadline.

Seats are agents we do not control: they may print gigabytes, print binary, never read
stdin, leave background processes behind, or ignore SIGTERM. Whatever they do, this
module returns in bounded time with bounded memory and leaves no process of the child's
process group alive. (A process that deliberately leaves the group with `setsid` escapes
any group kill; it can no longer hold us up, because reading stops on a quiet pipe.)
"""

from __future__ import annotations

import os
import selectors
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from signal import SIGKILL, SIGTERM

# Exit code a shell reports for a command it cannot run; callers and people already read
# 127 as "no such program", so a seat we could not start looks the same.
EXIT_NOT_FOUND = 127

_READ_CHUNK = 65536
# How often the read loop wakes to check the deadline and whether the process exited.
_POLL_SECONDS = 0.05
# After the main process exits, a pipe that stays silent this long is held only by
# leftovers (a background child that inherited stdout); waiting for its EOF could hang.
_QUIET_AFTER_EXIT_SECONDS = 0.2
# ...and a leftover that keeps writing cannot keep us reading forever either.
_DRAIN_AFTER_EXIT_MAX_SECONDS = 2.0
# Time a process group gets between SIGTERM and SIGKILL.
_TERM_GRACE_SECONDS = 2.0


@dataclass(frozen=True)
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
        head = printable_text(self.head)
        if head and not head.endswith("\n"):
            head += "\n"
        marker = f"[... {self.omitted_bytes} bytes omitted ...]\n"
        return head + marker + printable_text(self.tail)


def printable_text(data: bytes) -> str:
    """Decode `data` as UTF-8 and neutralise every control character but newline and tab.

    Output ends up in terminals and in git records. Raw escape sequences (ESC, and the C1
    range some terminals also obey) could rewrite a person's screen, and NUL bytes break
    tools that read records as C strings, so all of them become U+FFFD. Carriage returns
    become newlines: progress bars redraw a line with them, and each state stays readable.
    """
    text = data.decode("utf-8", errors="replace")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.translate(_CONTROL_TO_REPLACEMENT)


_CONTROL_TO_REPLACEMENT = {
    code: "\ufffd"
    for code in (*range(0x00, 0x20), *range(0x7F, 0xA0))
    if code not in (ord("\n"), ord("\t"))
}


class _HeadAndTail:
    """Keeps the first `head_limit` bytes and a ring of the last `tail_limit` after them."""

    def __init__(self, head_limit: int, tail_limit: int) -> None:
        self.head_limit = head_limit
        self.tail_limit = tail_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
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


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin_data: bytes | None,
    timeout: float,
    head_bytes: int = 65536,
    tail_bytes: int = 65536,
) -> ProcessResult:
    """Run `argv` in `cwd` with exactly `env`, feed it `stdin_data`, and wait at most `timeout`.

    stdout and stderr arrive merged through one pipe, so their order is the order the
    child wrote them. A program that cannot be started is reported (`not_found`), not
    raised: for a seat that is a fact to classify. A missing `cwd` is a caller's bug and
    raises.
    """
    command = _checked_argv(argv)
    _check_limits(timeout=timeout, head_bytes=head_bytes, tail_bytes=tail_bytes)
    if not Path(cwd).is_dir():
        msg = f"working directory for {command[0]!r} does not exist: {cwd}"
        raise NotADirectoryError(msg)

    started = time.monotonic()
    try:
        child = subprocess.Popen(
            command,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL if stdin_data is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            # Its own process group, so the whole tree it spawns can be signalled at once.
            start_new_session=True,
        )
    except OSError as error:
        return _not_started(command, error, duration=time.monotonic() - started)

    writer = _start_stdin_writer(child, stdin_data)
    output = _HeadAndTail(head_bytes, tail_bytes)
    timed_out = _read_until_done(child, output, deadline=started + timeout)
    # Always, not only on timeout: a leftover seat process still editing the worktree
    # after the gate has judged it would make the verdict stale.
    _end_process_group(child)
    child.wait()  # the group leader is gone by now; this only collects its status
    _drain_remaining(child, output)
    if writer is not None:
        writer.join(timeout=_TERM_GRACE_SECONDS)
    duration = time.monotonic() - started

    exit_code, killed_by = _exit_status(child.returncode, timed_out=timed_out)
    return ProcessResult(
        argv=command,
        exit_code=exit_code,
        timed_out=timed_out,
        signal=killed_by,
        duration=duration,
        head=bytes(output.head),
        tail=bytes(output.tail),
        total_bytes=output.total,
        truncated=output.total > len(output.head) + len(output.tail),
        not_found=False,
    )


def _checked_argv(argv: Sequence[str]) -> tuple[str, ...]:
    command = tuple(os.fspath(part) for part in argv)
    if not command or not command[0]:
        msg = "cannot run an empty command"
        raise ValueError(msg)
    return command


def _check_limits(*, timeout: float, head_bytes: int, tail_bytes: int) -> None:
    if not timeout > 0:
        msg = f"timeout must be a positive number of seconds, got {timeout!r}"
        raise ValueError(msg)
    if head_bytes < 0 or tail_bytes < 0:
        msg = f"head_bytes and tail_bytes must not be negative, got {head_bytes}, {tail_bytes}"
        raise ValueError(msg)


def _not_started(command: tuple[str, ...], error: OSError, *, duration: float) -> ProcessResult:
    reason = error.strerror or str(error)
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


def _start_stdin_writer(child: subprocess.Popen[bytes], data: bytes | None) -> threading.Thread | None:
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


def _read_until_done(child: subprocess.Popen[bytes], output: _HeadAndTail, *, deadline: float) -> bool:
    """Read the merged output until EOF, the deadline, or a quiet pipe after exit.

    Returns True when the deadline passed while the main process was still running.
    """
    assert child.stdout is not None
    pipe = child.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(pipe, selectors.EVENT_READ)
        exited_at: float | None = None
        while True:
            now = time.monotonic()
            if exited_at is None and child.poll() is not None:
                exited_at = now
            if exited_at is None:
                if now >= deadline:
                    return True
                wait = min(_POLL_SECONDS, deadline - now)
            else:
                if now - exited_at >= _DRAIN_AFTER_EXIT_MAX_SECONDS:
                    return False
                wait = _QUIET_AFTER_EXIT_SECONDS
            if not selector.select(wait):
                if exited_at is not None:
                    return False
                continue
            chunk = os.read(pipe, _READ_CHUNK)
            if not chunk:
                # EOF: every writer closed the pipe. The main process may still be running
                # (it closed its stdout); keep waiting for it, bounded by the deadline.
                return _wait_for_exit(child, deadline=deadline)
            output.feed(chunk)


def _wait_for_exit(child: subprocess.Popen[bytes], *, deadline: float) -> bool:
    remaining = deadline - time.monotonic()
    try:
        child.wait(timeout=max(remaining, 0))
    except subprocess.TimeoutExpired:
        return True
    return False


def _end_process_group(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child's whole process group, then SIGKILL whatever is still alive."""
    group = child.pid  # start_new_session made the child its group's leader
    if not _group_has_live_members(group, child):
        return
    if not _signal_group(group, SIGTERM):
        return
    if _wait_for_group_to_die(group, child):
        return
    _signal_group(group, SIGKILL)
    # Signals are delivered asynchronously: without waiting, a killed process can still be
    # running when we return and touch the worktree the caller is about to judge.
    _wait_for_group_to_die(group, child)


def _wait_for_group_to_die(group: int, child: subprocess.Popen[bytes]) -> bool:
    give_up_at = time.monotonic() + _TERM_GRACE_SECONDS
    while time.monotonic() < give_up_at:
        if not _group_has_live_members(group, child):
            return True
        time.sleep(_POLL_SECONDS)
    return False


def _signal_group(group: int, signal_number: int) -> bool:
    try:
        os.killpg(group, signal_number)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # a member changed its user; the others got the signal
    return True


def _group_has_live_members(group: int, child: subprocess.Popen[bytes]) -> bool:
    """Whether any process of the group is still running (zombies do not count).

    `killpg(group, 0)` alone is not enough: orphans are re-parented to an init that may
    never reap them, and their zombies keep the group "alive" for as long as the machine
    runs — every seat would then pay the whole SIGTERM grace. Where /proc exists, ask it.
    """
    child.poll()  # reap the main process so it does not count as a member itself
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for entry in os.scandir(proc):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue  # exited while we looked
        # The command name sits in parentheses and may itself contain spaces or ")".
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(group) and fields[0] not in ("Z", "X"):
            return True
    return False


def _drain_remaining(child: subprocess.Popen[bytes], output: _HeadAndTail) -> None:
    """Keep what was written before the group died, without waiting on escaped holders."""
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


def _exit_status(returncode: int | None, *, timed_out: bool) -> tuple[int | None, int | None]:
    """(exit_code, signal) as reported: a timed-out child has no exit code of its own.

    A child killed by a signal we did not send gets the shell's 128+N, so callers that only
    look at the exit code still see a failure.
    """
    killed_by = -returncode if returncode is not None and returncode < 0 else None
    if timed_out:
        return None, killed_by
    if killed_by is not None:
        return 128 + killed_by, killed_by
    return returncode, None
