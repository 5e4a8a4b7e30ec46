"""Whether this process was started by a seat or a gate: some ancestor is a seat's supervisor,
or was started with a seat's or a gate's marker in its environment.

Every process a seat starts, however it detaches (`setsid`, a double fork), stays below
its supervisor, the subreaper of the dispatch (`supervise.py`). A seat that runs
`git failres decide` on its own decision, or a nested `git failres run`, is such a
process; the commands that change the store or the repository refuse it, because a
person decides and only the run that dispatched the seat records what it did.

Read from /proc: where there is none, nothing is refused (the tamper check still is).
"""

from __future__ import annotations

import os
from pathlib import Path

SUPERVISOR_NAME = "supervise.py"
# In a gate's (and its setup's) environment: a gate runs the seat's code, unsupervised.
GATE_MARKER = "FAILRES_GATE"
# The markers a process started for a dispatch carries in the environment it was
# started with; /proc/PID/environ shows that one, whatever the process changed since.
_MARKERS = (b"FAILRES_GATE=", b"FAILRES_DISPATCH=")
_MAX_DEPTH = 128


def seat_supervisor(pid: int | None = None) -> int | None:
    """The pid of the seat supervisor above `pid` (default: this process), or None.

    Numbers are read from /proc, not from os.getppid(): inside a seat's own PID
    namespace those differ, and /proc speaks for the namespace it was mounted in.
    """
    current = _self() if pid is None else pid
    own = current
    for _ in range(_MAX_DEPTH):
        if current <= 1:
            return None
        try:
            argv = Path(f"/proc/{current}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{current}/stat").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        if (current != own and any(_is_supervisor(arg) for arg in argv[:6])) or _marked(current):
            return current
        current = _ppid(stat)
    return None


def _marked(pid: int) -> bool:
    """Whether `pid` was started with a gate's or a seat's marker in its environment."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return any(environ.startswith(marker) or b"\0" + marker in environ for marker in _MARKERS)


def _self() -> int:
    try:
        return int(os.readlink("/proc/self"))
    except (OSError, ValueError):
        return 0


def _parent_of(pid: str) -> int:
    try:
        return _ppid(Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return 0


def _ppid(stat: str) -> int:
    try:
        return int(stat[stat.rfind(")") + 2:].split()[1])
    except (ValueError, IndexError):
        return 0


def _is_supervisor(arg: bytes) -> bool:
    name = os.fsdecode(arg)
    return name.endswith(os.sep + SUPERVISOR_NAME) and Path(name).parent.name == "processes"
