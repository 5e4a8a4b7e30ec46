"""The supervisor: one small process between failres and a seat (or gate), so that no
process the seat starts outlives its dispatch.

    python -I -S supervise.py STATUS_FILE PARENT_PID UNSET -- ARGV...

A seat is code we do not control. It may start background processes, leave its
process group with `setsid`, double-fork, ignore SIGTERM, or kill its parent. A
process-group kill alone misses everything that left the group. On Linux this
process asks to be the *child subreaper* of everything below it
(`PR_SET_CHILD_SUBREAPER`): every orphan the seat leaves, however it got there, is
re-parented here instead of to init, so "every process of this dispatch" is simply
"every process below the supervisor". When the seat's main process exits (or
failres asks, with SIGTERM), the supervisor kills all of them — SIGTERM, a short
grace, then every one of them frozen with SIGSTOP until a sweep finds no new one, and
only then SIGKILL — reaps them, and only then exits. Its exit therefore means
that nothing of the dispatch is left running.

If failres itself dies (a hard kill), `PR_SET_PDEATHSIG` delivers SIGTERM here and
the supervisor tears the seat down the same way: an agent never keeps spending
after the run that started it is gone.

It runs by file path with `-I -S` (no site, no user paths): standard library only,
and nothing failres imports, so it starts in a few milliseconds. Elsewhere than
Linux it still runs the seat in a session of its own and kills that whole group.

UNSET names environment variables (comma-separated, or "-") to remove before the seat
starts: Python itself sets `LC_CTYPE` when it starts in the C locale, and a seat must
get exactly the environment failres chose.

The STATUS_FILE receives lines: `seat PID` once the seat started (failres records it,
so a later run can stop a seat whose failres was killed), and a final
`exit CODE SIGNAL ERROR` (`-` for none of them; the error is the rest of the line).
Plain words rather than JSON: importing json would cost this process most of its
start-up time.
"""

from __future__ import annotations

import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# How long processes get between SIGTERM and SIGKILL when a dispatch ends.
GRACE_SECONDS = 1.0
POLL_SECONDS = 0.02
FIRST_PAUSE_SECONDS = 0.0002

_stop_requested = False


class _Stop(Exception):
    """Raised by the signal handler to wake a blocking wait."""
# Exit statuses of the children reaped so far, by pid: the seat may be reaped while
# its leftovers are being cleaned up, and its status must not be lost then.
_reaped: dict[int, int] = {}


def _prctl(option: int, value: int) -> bool:
    import ctypes  # here: only a supervisor or a subreaper calls prctl, not every git a command runs

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _request_stop(signum: int, frame: object) -> None:
    global _stop_requested
    _stop_requested = True
    raise _Stop


def _write_status(path: str, record: dict) -> None:
    if "seat" in record:
        line = f"seat {record['seat']}"
    else:
        def word(value: object) -> str:
            return "-" if value is None else str(value)

        error = " ".join(str(record.get("error") or "-").split())
        line = f"exit {word(record.get('exit'))} {word(record.get('signal'))} {error}"
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    except OSError:
        pass


def children_of(pid: int) -> list[int]:
    """Every process whose parent is `pid`, zombies included (they still need reaping); from /proc.

    Each thread's `children` file answers at once; a kernel without them gets a scan
    of every process's `stat` (the same answer, a thousand files later).
    """
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children", encoding="ascii") as handle:
                found += [int(word) for word in handle.read().split()]
        except FileNotFoundError:
            return _children_by_scan(pid)
        except (OSError, ValueError):
            continue  # the thread ended while we looked
    return found


def _children_by_scan(pid: int) -> list[int]:
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    wanted = str(pid)
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue  # exited while we looked
        # The command name sits in parentheses and may itself hold spaces or ")".
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[1] == wanted:
            found.append(int(name))
    return found


def set_subreaper() -> bool:
    """Orphaned descendants re-parent to this process instead of init (Linux); False elsewhere."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def _reap() -> None:
    while True:
        try:
            pid, raw = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _reaped[pid] = raw


def _signal_all(me: int, seat_group: int, signum: int) -> bool:
    """Send `signum` to the seat's group and to every process below us; True if any was alive."""
    alive = False
    try:
        os.killpg(seat_group, signum)
        alive = True
    except (ProcessLookupError, PermissionError):
        pass
    for pid in children_of(me):
        try:
            os.kill(pid, signum)
            alive = True
        except (ProcessLookupError, PermissionError):
            pass
    return alive


def _nothing_left(me: int, seat_group: int) -> bool:
    _reap()
    if children_of(me):
        return False
    try:
        os.killpg(seat_group, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def descendants(root: int) -> list[int]:
    """Every process below `root`, found by walking each one's children (zombies included)."""
    found: list[int] = []
    seen = {root}
    todo = [root]
    while todo:
        for pid in children_of(todo.pop()):
            if pid not in seen:
                seen.add(pid)
                found.append(pid)
                todo.append(pid)
    return found


def freeze_and_kill(roots: list[int]) -> None:
    """Stop every process in the trees below `roots` (and the roots), until a sweep finds
    no new one, then kill them all; returns once none of them is left.

    A stopped process cannot fork, and a fork interrupted by the stop is undone by the
    kernel, so each sweep can only find what the last one missed: the loop ends, with no
    bound on rounds, however fast a chain forks or however it detaches (`setsid`, a
    double fork: everything stays below its subreaper). Only then does SIGKILL go out.
    """
    stopped: set[int] = set()
    while True:
        found = [pid for root in roots for pid in (root, *descendants(root))]
        new = [pid for pid in found if pid not in stopped]
        if not new:
            break
        for pid in new:
            try:
                os.kill(pid, signal.SIGSTOP)
            except (ProcessLookupError, PermissionError):
                pass
            stopped.add(pid)
    for pid in stopped:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def wait_dead(pids: list[int], seconds: float = 5.0) -> None:
    """Wait until each of `pids` has exited (gone, or a zombie awaiting its parent)."""
    give_up = time.monotonic() + seconds
    left = list(pids)
    while left and time.monotonic() < give_up:
        left = [pid for pid in left if _running(pid)]
        if left:
            time.sleep(POLL_SECONDS / 4)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:].split()[0] not in ("Z", "X")


def end_everything(me: int, seat_group: int) -> None:
    """TERM and a grace; then every process of the dispatch frozen and killed (`freeze_and_kill`).

    Returns only when nothing below the supervisor is left: killed processes' orphans
    arrive here and are reaped, and each pass freezes whatever it finds before killing.
    """
    if _nothing_left(me, seat_group):
        return
    _signal_all(me, seat_group, signal.SIGTERM)
    # What is left is most often already ending (a world's init outlives the world's own
    # exit by a moment): look again at once, then less and less often.
    give_up = time.monotonic() + GRACE_SECONDS
    pause = FIRST_PAUSE_SECONDS
    while time.monotonic() < give_up:
        if _nothing_left(me, seat_group):
            return
        time.sleep(pause)
        pause = min(pause * 2, POLL_SECONDS)
    while not _nothing_left(me, seat_group):
        try:
            os.killpg(seat_group, signal.SIGSTOP)
        except (ProcessLookupError, PermissionError):
            pass
        freeze_and_kill(children_of(me))
        try:
            os.killpg(seat_group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        time.sleep(POLL_SECONDS)


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[3] != "--":
        sys.stderr.write("usage: supervise.py STATUS_FILE PARENT_PID UNSET -- ARGV...\n")
        return 2
    status_file, parent, unset, command = argv[0], int(argv[1]), argv[2], argv[4:]
    for name in unset.split(","):
        if name and name != "-":
            os.environ.pop(name, None)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _request_stop)
    set_subreaper()
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        # failres died before the death signal was armed: start nothing.
        _write_status(status_file, {"exit": None, "signal": None, "error": "failres is gone"})
        return 1
    me = os.getpid()
    try:
        seat = os.fork()
    except OSError as error:
        _write_status(status_file, {"exit": 127, "signal": None, "error": f"cannot fork: {error.strerror}"})
        return 127
    if seat == 0:
        try:
            os.setsid()
            for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                signal.signal(signum, signal.SIG_DFL)
            os.execvp(command[0], command)
        except OSError as error:
            reason = error.strerror or str(error)
            os.write(2, f"cannot run {command[0]!r}: {reason}\n".encode(errors="replace"))
            os._exit(126 if isinstance(error, PermissionError) else 127)
    _write_status(status_file, {"seat": seat})
    while seat not in _reaped:
        try:
            if _stop_requested:
                end_everything(me, seat)
                _reap()
                if seat not in _reaped and not children_of(me):
                    # The stop's handler can interrupt between a wait that reaped the seat and
                    # the line that records it: its status is lost, and nothing is left to wait
                    # for. Looping on would spin for ever after failres is gone (it did, at 40%
                    # of a core, for as long as the machine was up).
                    break
                continue
            # Blocks until some child ends (the seat, or an orphan it left); a stop
            # request interrupts it through the handler.
            pid, raw = os.waitpid(-1, 0)
            _reaped[pid] = raw
        except _Stop:
            continue
        except ChildProcessError:
            break
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)  # the clean-up below runs to its end
    end_everything(me, seat)
    status = _reaped.get(seat)
    if status is None:
        _write_status(status_file, {"exit": None, "signal": None, "error": "lost track of the seat"})
        return 1
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        _write_status(status_file, {"exit": 128 + number, "signal": number, "error": None})
        return 128 + number
    code = os.WEXITSTATUS(status)
    _write_status(status_file, {"exit": code, "signal": None, "error": None})
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
