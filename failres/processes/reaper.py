"""failres as the last line of defence against processes a seat leaves behind.

Every seat and gate runs under a supervisor that kills everything below it when the
dispatch ends. A hostile seat can kill its supervisor first; its orphans then go to
the nearest *subreaper* above. `become_subreaper` makes failres that subreaper (on
Linux), so those orphans arrive here instead of at init, and `sweep_leftovers`
kills every child of failres that failres did not start itself.

"Started by failres" is known exactly: every process failres starts goes through
`spawn`, which records its pid until it has been waited for. A child that is not
in that record arrived by re-parenting, so it is a leftover of some dispatch.
Children that were already there when failres became a subreaper (a test's own
helper process, say) are never touched.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from failres.processes.supervise import children_of, freeze_and_kill, set_subreaper

_GRACE_SECONDS = 0.5
_FIRST_PAUSE_SECONDS = 0.0002
_LAST_PAUSE_SECONDS = 0.01

_lock = threading.Lock()
_ours: set[int] = set()
_before: set[int] | None = None  # children that predate becoming a subreaper


def become_subreaper() -> bool:
    """Ask the kernel to re-parent orphaned descendants to this process; False where unsupported."""
    global _before
    with _lock:
        if _before is None:
            _before = set(children_of(os.getpid()))
    return set_subreaper()


def spawn(argv: list[str], **popen: object) -> subprocess.Popen[bytes]:
    """`subprocess.Popen`, with the child recorded as failres's own until `forget` or a sweep sees it gone."""
    with _lock:
        child = subprocess.Popen(argv, **popen)  # noqa: S603 - argv lists only, never a shell
        _ours.add(child.pid)
    return child


def forget(pid: int) -> None:
    with _lock:
        _ours.discard(pid)


@contextmanager
def owned(child: subprocess.Popen[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    try:
        yield child
    finally:
        forget(child.pid)


def run_owned(argv: list[str], *, input: bytes | None = None, **popen: object) -> subprocess.CompletedProcess[bytes]:
    """`subprocess.run` with output captured, through `spawn` (for git and other short helpers)."""
    child = spawn(argv, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)
    with owned(child):
        out, err = child.communicate(input)
    return subprocess.CompletedProcess(argv, child.returncode, out, err)


def leftovers() -> list[int]:
    """Children of failres it did not start: orphans of seats whose supervisor is gone.

    The children are listed *before* failres's own are read, under the lock `spawn`
    holds from fork to record: a child another thread is starting right now is then
    either not listed yet or already recorded, never taken for a leftover.
    """
    if _before is None:
        return []
    me = os.getpid()
    children = children_of(me)
    with _lock:
        mine = set(_ours) | _before
    found = [pid for pid in children if pid not in mine]
    if not found:
        return []
    # One reaped meanwhile by its owner is no longer ours to signal.
    still = set(children_of(me))
    return [pid for pid in found if pid in still]


def sweep_leftovers() -> list[int]:
    """Freeze, kill and reap every leftover child and everything below it; returns the pids found.

    Each leftover's whole tree is stopped until a sweep finds no new process, then
    killed (`supervise.freeze_and_kill`): a chain that forks faster than it can be
    killed, or ignores SIGTERM, gets no round to outlast. Killing re-parents their
    children here, so sweeps repeat until one finds no leftover at all.
    """
    swept: list[int] = []
    while True:
        found = leftovers()
        if not found:
            break
        swept += [pid for pid in found if pid not in swept]
        freeze_and_kill(found)
        # Most leftovers are already on their way out (a world's init ends a moment after
        # the world's own exit): look again at once, then less and less often.
        give_up = time.monotonic() + _GRACE_SECONDS
        pause = _FIRST_PAUSE_SECONDS
        while time.monotonic() < give_up and _reap(found):
            time.sleep(pause)
            pause = min(pause * 2, _LAST_PAUSE_SECONDS)
        if _reap(found):
            # Killed but not yet gone (a process the kernel holds in uninterruptible
            # sleep): wait on, rather than leave it.
            time.sleep(_GRACE_SECONDS)
    return swept


def _reap(pids: list[int]) -> list[int]:
    """Reap whichever of `pids` have exited; return those still running."""
    running = []
    for pid in pids:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        if done == 0:
            running.append(pid)
    return running
