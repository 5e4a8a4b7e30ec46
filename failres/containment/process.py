"""Run a seat or a gate as a child process, with bounded output and a hard deadline.

Seats are agents we do not control: they may print gigabytes, print binary, never read
stdin, leave background processes behind, leave their process group with `setsid`,
double-fork, ignore SIGTERM or kill their parent. Whatever they do, this module returns
in bounded time with bounded memory, and when it returns no process the child started
is alive: the child runs under a supervisor (`supervise.py`) that is the subreaper of
everything below it, and a supervisor that was itself killed leaves its orphans to
failres, which `reaper` makes the subreaper in turn and sweeps after every run.
"""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from signal import SIGKILL, SIGTERM
from typing import BinaryIO

from failres.containment import reaper
from lessons.redact import without_cut_word

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
SUPERVISOR = Path(__file__).with_name("supervise.py")


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
        # The cut went through whatever word it met; what is left of a token could be a
        # secret too short to be recognised, so the cut word goes on either side.
        head = without_cut_word(printable_text(self.head), cut_at="end")
        if head and not head.endswith("\n"):
            head += "\n"
        marker = f"[... {self.omitted_bytes} bytes omitted ...]\n"
        return head + marker + without_cut_word(printable_text(self.tail), cut_at="start")


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


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin_data: bytes | None,
    timeout: float,
    head_bytes: int = 65536,
    tail_bytes: int = 65536,
    cancelled: Callable[[], bool] | None = None,
    on_start: Callable[[int], None] | None = None,
    live: BinaryIO | None = None,
    live_limit: int = 0,
    supervised: bool = True,
) -> ProcessResult:
    """Run `argv` in `cwd` with exactly `env`, feed it `stdin_data`, and wait at most `timeout`.

    stdout and stderr arrive merged through one pipe, so their order is the order the
    child wrote them. A program that cannot be started is reported (`not_found`), not
    raised: for a seat that is a fact to classify. A missing `cwd` is a caller's bug and
    raises.

    The child runs under the supervisor (`supervise.py`), which makes sure that when
    this function returns no process the child started is still alive. `cancelled` is
    polled while it runs (a cancel or a signal ends it early, like a timeout);
    `on_start` is told the seat's process id (its group id too) as soon as it runs;
    `live`, when given, receives a copy of the output as it arrives, up to `live_limit`
    bytes (for `logs --follow`).

    `supervised=False` is for commands the person wrote themselves (a gate, a setup):
    the child runs in a session of its own, that whole process group is ended when it
    exits, and what left the group is swept by failres as subreaper. It saves starting
    the supervisor; it gives up only the supervisor's answer to a hard kill of failres.
    """
    command = _checked_argv(argv)
    _check_limits(timeout=timeout, head_bytes=head_bytes, tail_bytes=tail_bytes)
    if not Path(cwd).is_dir():
        msg = f"working directory for {command[0]!r} does not exist: {cwd}"
        raise NotADirectoryError(msg)
    started = time.monotonic()
    problem = _launch_problem(command[0], cwd, env)
    if problem is not None:
        return _not_started(command, problem, duration=time.monotonic() - started)

    if not supervised:
        return _run_direct(command, cwd=cwd, env=env, stdin_data=stdin_data, started=started, timeout=timeout,
                           output=_HeadAndTail(head_bytes, tail_bytes, live=live, live_limit=live_limit),
                           cancelled=cancelled)
    with tempfile.TemporaryDirectory(prefix="failres-supervise-") as scratch:
        status_file = Path(scratch) / "status"
        supervisor = _start_supervisor(command, cwd=cwd, env=env, stdin_data=stdin_data, status_file=status_file)
        if supervisor is None:
            return _not_started(command, "cannot start the supervisor", duration=time.monotonic() - started)
        writer = _start_stdin_writer(supervisor, stdin_data)
        output = _HeadAndTail(head_bytes, tail_bytes, live=live, live_limit=live_limit)
        watch = _StartWatch(status_file, on_start)
        stopped = _read_until_done(supervisor, output, deadline=started + timeout, cancelled=cancelled, watch=watch)
        if stopped:
            _stop_supervisor(supervisor, status_file)
        supervisor.wait()
        _drain_remaining(supervisor, output)
        if writer is not None:
            writer.join(timeout=_TERM_GRACE_SECONDS)
        watch.poll()
        final = _final_status(status_file)
        _kill_seat_groups(status_file)
    duration = time.monotonic() - started
    reaper.sweep_leftovers()

    code = final.get("exit") if final else supervisor.returncode
    exit_code, killed_by = _exit_status(code, final.get("signal") if final else None, timed_out=stopped)
    return ProcessResult(
        argv=command,
        exit_code=exit_code,
        timed_out=stopped,
        signal=killed_by,
        duration=duration,
        head=bytes(output.head),
        tail=bytes(output.tail),
        total_bytes=output.total,
        truncated=output.total > len(output.head) + len(output.tail),
        not_found=False,
    )


def _run_direct(command: tuple[str, ...], *, cwd: Path, env: Mapping[str, str], stdin_data: bytes | None,
                started: float, timeout: float, output: _HeadAndTail,
                cancelled: Callable[[], bool] | None) -> ProcessResult:
    """A trusted command in a session of its own; its whole group ends with it."""
    try:
        child = reaper.spawn(list(command), cwd=cwd, env=dict(env),
                             stdin=subprocess.DEVNULL if stdin_data is None else subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as error:
        return _not_started(command, error.strerror or str(error), duration=time.monotonic() - started)
    writer = _start_stdin_writer(child, stdin_data)
    stopped = _read_until_done(child, output, deadline=started + timeout, cancelled=cancelled,
                               watch=_StartWatch(Path(os.devnull), None))
    _end_group(child)
    child.wait()
    reaper.forget(child.pid)
    _drain_remaining(child, output)
    if writer is not None:
        writer.join(timeout=_TERM_GRACE_SECONDS)
    duration = time.monotonic() - started
    reaper.sweep_leftovers()
    exit_code, killed_by = _exit_status(child.returncode, None, timed_out=stopped)
    return ProcessResult(argv=command, exit_code=exit_code, timed_out=stopped, signal=killed_by, duration=duration,
                         head=bytes(output.head), tail=bytes(output.tail), total_bytes=output.total,
                         truncated=output.total > len(output.head) + len(output.tail), not_found=False)


def _end_group(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child's process group, then SIGKILL whatever of it is still alive after a grace.

    The leader is reaped as it goes: its zombie would otherwise keep the group "alive".
    """
    group = child.pid
    child.poll()
    try:
        os.killpg(group, SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    give_up = time.monotonic() + _TERM_GRACE_SECONDS
    while time.monotonic() < give_up:
        child.poll()
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        except PermissionError:
            break
        time.sleep(_POLL_SECONDS / 5)
    try:
        os.killpg(group, SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _checked_argv(argv: Sequence[str]) -> tuple[str, ...]:
    command = tuple(os.fspath(part) for part in argv)
    if not command or not command[0]:
        msg = "cannot run an empty command"
        raise ValueError(msg)
    if any("\0" in part for part in command):
        msg = f"cannot run {command[0]!r}: an argument holds a NUL byte"
        raise ValueError(msg)
    return command


def _check_limits(*, timeout: float, head_bytes: int, tail_bytes: int) -> None:
    if not timeout > 0:
        msg = f"timeout must be a positive number of seconds, got {timeout!r}"
        raise ValueError(msg)
    if head_bytes < 0 or tail_bytes < 0:
        msg = f"head_bytes and tail_bytes must not be negative, got {head_bytes}, {tail_bytes}"
        raise ValueError(msg)


def _launch_problem(program: str, cwd: Path, env: Mapping[str, str]) -> str | None:
    """Why `program` cannot be started, in the words exec would use, or None.

    Checked before the supervisor starts, so a missing agent or gate is told apart
    from one that ran and failed (exit 127 from a shell means either).
    """
    if os.sep in program:
        path = Path(cwd, program)
        if not path.exists():
            return "No such file or directory"
        if path.is_dir() or not os.access(path, os.X_OK):
            return "Permission denied"
        return None
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        return "No such file or directory"
    return None


def _not_started(command: tuple[str, ...], reason: str, *, duration: float) -> ProcessResult:
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


def _start_supervisor(command: tuple[str, ...], *, cwd: Path, env: Mapping[str, str], stdin_data: bytes | None,
                      status_file: Path) -> subprocess.Popen[bytes] | None:
    # Python coerces a C locale by setting LC_CTYPE in its own environment; the seat must
    # not inherit a variable failres never gave it.
    unset = "LC_CTYPE" if "LC_CTYPE" not in env else "-"
    supervisor = [sys.executable, "-I", "-S", str(SUPERVISOR), str(status_file), str(os.getpid()), unset, "--",
                  *command]
    try:
        return reaper.spawn(
            supervisor,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL if stdin_data is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            # Its own session: a terminal's Ctrl-C reaches failres, which stops the seat
            # on purpose (journaled), rather than the seat dying on its own.
            start_new_session=True,
        )
    except OSError:
        return None


class _StartWatch:
    """Reads the seat's pid from the supervisor's status file once, and tells `on_start`."""

    def __init__(self, status_file: Path, on_start: Callable[[int], None] | None) -> None:
        self.status_file = status_file
        self.on_start = on_start
        self.seat: int | None = None

    def poll(self) -> None:
        if self.seat is not None or self.on_start is None:
            return
        for record in _status_records(self.status_file):
            if isinstance(record.get("seat"), int):
                self.seat = record["seat"]
                self.on_start(self.seat)
                return


def _status_records(status_file: Path) -> list[dict]:
    """The supervisor's status lines (`seat PID`, `exit CODE SIGNAL ERROR`) as records."""
    try:
        text = status_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    records: list[dict] = []
    for line in text.split("\n")[:-1]:  # the last piece may still be being written
        words = line.split(" ", 3)
        if words[0] == "seat" and len(words) == 2 and words[1].isdigit():
            records.append({"seat": int(words[1])})
        elif words[0] == "exit" and len(words) == 4:
            records.append({"exit": _number(words[1]), "signal": _number(words[2]),
                            "error": None if words[3] == "-" else words[3]})
    return records


def _number(word: str) -> int | None:
    try:
        return int(word)
    except ValueError:
        return None


def _final_status(status_file: Path) -> dict | None:
    for record in reversed(_status_records(status_file)):
        if "exit" in record:
            return record
    return None


def _stop_supervisor(supervisor: subprocess.Popen[bytes], status_file: Path) -> None:
    """Ask the supervisor to end the dispatch; if it does not, end it and the seat's group ourselves."""
    _signal_process(supervisor.pid, SIGTERM)
    try:
        supervisor.wait(timeout=_TERM_GRACE_SECONDS * 3)
        return
    except subprocess.TimeoutExpired:
        pass
    seats = [r["seat"] for r in _status_records(status_file) if isinstance(r.get("seat"), int)]
    for group in seats:
        try:
            os.killpg(group, SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    _signal_process(supervisor.pid, SIGKILL)


def _kill_seat_groups(status_file: Path) -> None:
    """Belt and braces after the supervisor's own clean-up: nothing of the seat's group survives."""
    for record in _status_records(status_file):
        if isinstance(record.get("seat"), int):
            try:
                os.killpg(record["seat"], SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _signal_process(pid: int, signal_number: int) -> None:
    try:
        os.kill(pid, signal_number)
    except (ProcessLookupError, PermissionError):
        pass


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


def _read_until_done(child: subprocess.Popen[bytes], output: _HeadAndTail, *, deadline: float,
                     cancelled: Callable[[], bool] | None, watch: _StartWatch) -> bool:
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
        while True:
            watch.poll()
            now = time.monotonic()
            if exited_at is None and child.poll() is not None:
                exited_at = now
            if exited_at is not None and (eof or now - exited_at >= _DRAIN_AFTER_EXIT_MAX_SECONDS):
                # Normally EOF comes with the exit; a writer that outlived a killed
                # supervisor must not hold us: the sweep after this run ends it.
                return False
            if exited_at is None and (now >= deadline or (cancelled is not None and cancelled())):
                return True
            if eof:
                # Everything closed the pipe: wait for the supervisor's exit itself, which
                # comes at once unless it is still cleaning up.
                try:
                    child.wait(timeout=min(_POLL_SECONDS, max(deadline - now, 0.001)))
                except subprocess.TimeoutExpired:
                    pass
                continue
            wait = _QUIET_AFTER_EXIT_SECONDS if exited_at is not None else min(_POLL_SECONDS, max(deadline - now, 0))
            if not selector.select(wait):
                if exited_at is not None:
                    return False
                continue
            chunk = os.read(pipe, _READ_CHUNK)
            if not chunk:
                eof = True
                continue
            output.feed(chunk)


def _drain_remaining(child: subprocess.Popen[bytes], output: _HeadAndTail) -> None:
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


def _exit_status(code: int | None, signal_number: int | None, *, timed_out: bool) -> tuple[int | None, int | None]:
    """(exit_code, signal) as reported: a stopped child has no exit code of its own.

    A child killed by a signal we did not send gets the shell's 128+N, so callers that only
    look at the exit code still see a failure.
    """
    killed_by = signal_number
    if code is not None and code < 0:  # the supervisor itself died of a signal
        killed_by = -code
        code = 128 + killed_by
    if timed_out:
        return None, killed_by
    return code, killed_by
