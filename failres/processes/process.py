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
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from signal import SIGKILL, SIGTERM
from typing import BinaryIO

from failres.processes import reaper
from failres.processes.supervise import descendants, freeze_and_kill, wait_dead
from failres.processes.output import (
    EXIT_NOT_FOUND,
    POLL_SECONDS,
    HeadAndTail,
    ProcessResult,
    drain_remaining,
    not_started,
    printable_text,
    read_until_done,
    start_stdin_writer,
)

__all__ = ["EXIT_NOT_FOUND", "ProcessResult", "printable_text", "run_process"]

# Time a process group gets between SIGTERM and SIGKILL.
_TERM_GRACE_SECONDS = 2.0
# The first look again after a SIGTERM; each later one waits twice as long.
_FIRST_PAUSE_SECONDS = 0.0002
SUPERVISOR = Path(__file__).with_name("supervise.py")


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

    `supervised=False` is for commands the person wrote themselves (a gate, a setup),
    and for a seat world (`failres.sandbox`), whose PID namespace ends with it and whose
    bubblewrap dies with failres: the child runs in a session of its own, that whole
    process group is ended when it exits, and what left the group is swept by failres
    as subreaper. It saves starting the supervisor; outside a world it gives up only the
    supervisor's answer to a hard kill of failres.
    """
    command = _checked_argv(argv)
    _check_limits(timeout=timeout, head_bytes=head_bytes, tail_bytes=tail_bytes)
    if not Path(cwd).is_dir():
        msg = f"working directory for {command[0]!r} does not exist: {cwd}"
        raise NotADirectoryError(msg)
    started = time.monotonic()
    problem = _launch_problem(command[0], cwd, env)
    if problem is not None:
        return not_started(command, problem, duration=time.monotonic() - started)

    if not supervised:
        return _run_direct(command, cwd=cwd, env=env, stdin_data=stdin_data, started=started, timeout=timeout,
                           output=HeadAndTail(head_bytes, tail_bytes, live=live, live_limit=live_limit),
                           cancelled=cancelled, on_start=on_start)
    with tempfile.TemporaryDirectory(prefix="failres-supervise-") as scratch:
        status_file = Path(scratch) / "status"
        supervisor = _start_supervisor(command, cwd=cwd, env=env, stdin_data=stdin_data, status_file=status_file)
        if supervisor is None:
            return not_started(command, "cannot start the supervisor", duration=time.monotonic() - started)
        writer = start_stdin_writer(supervisor, stdin_data)
        output = HeadAndTail(head_bytes, tail_bytes, live=live, live_limit=live_limit)
        watch = _StartWatch(status_file, on_start)
        stopped = read_until_done(supervisor, output, deadline=started + timeout, cancelled=cancelled, watch=watch)
        if stopped:
            _stop_supervisor(supervisor, status_file)
        supervisor.wait()
        drain_remaining(supervisor, output)
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
                started: float, timeout: float, output: HeadAndTail, cancelled: Callable[[], bool] | None,
                on_start: Callable[[int], None] | None = None) -> ProcessResult:
    """A command in a session of its own; its whole group ends with it."""
    try:
        child = reaper.spawn(list(command), cwd=cwd, env=dict(env),
                             stdin=subprocess.DEVNULL if stdin_data is None else subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as error:
        return not_started(command, error.strerror or str(error), duration=time.monotonic() - started)
    if on_start is not None:
        on_start(child.pid)
    writer = start_stdin_writer(child, stdin_data)
    stopped = read_until_done(child, output, deadline=started + timeout, cancelled=cancelled,
                               watch=_StartWatch(Path(os.devnull), None))
    _end_group(child)
    child.wait()
    reaper.forget(child.pid)
    drain_remaining(child, output)
    if writer is not None:
        writer.join(timeout=_TERM_GRACE_SECONDS)
    duration = time.monotonic() - started
    reaper.sweep_leftovers()
    exit_code, killed_by = _exit_status(child.returncode, None, timed_out=stopped)
    return ProcessResult(argv=command, exit_code=exit_code, timed_out=stopped, signal=killed_by, duration=duration,
                         head=bytes(output.head), tail=bytes(output.tail), total_bytes=output.total,
                         truncated=output.total > len(output.head) + len(output.tail), not_found=False)


def _end_group(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child's process group, then freeze and kill whatever of it is still alive after a grace.

    The leader is reaped as it goes: its zombie would otherwise keep the group "alive".
    What is still below the child, in the group or not, is frozen before it is killed
    (`supervise.freeze_and_kill`), and waited for, so its orphans have reached failres
    (the subreaper) before the sweep that follows looks for them.
    """
    group = child.pid
    child.poll()
    try:
        os.killpg(group, SIGTERM)
    except (ProcessLookupError, PermissionError):
        _freeze_below(child)
        return
    give_up = time.monotonic() + _TERM_GRACE_SECONDS
    pause = _FIRST_PAUSE_SECONDS
    while time.monotonic() < give_up:
        child.poll()
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        except PermissionError:
            break
        time.sleep(pause)
        pause = min(pause * 2, POLL_SECONDS / 5)
    _freeze_below(child)
    try:
        os.killpg(group, SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _freeze_below(child: subprocess.Popen[bytes]) -> None:
    below = descendants(child.pid)
    if below:
        freeze_and_kill(below)
        wait_dead(below)


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
