"""Named failpoints at the step boundaries of a task and of the store: crash, fail or hang there on purpose.

"Nothing is lost" is a claim about every moment a process can die, so it is tested at
each of them: `FAILRES_FAILPOINT=name[:crash|:error|:hang][@N]` makes the Nth time this
process reaches the step `name` (the first, unless `@N`) kill the process outright
(`crash`, the default: SIGKILL, no `finally`, no flush, as an out-of-memory kill or a
power cut leaves it), raise an I/O error (`error`, what a full disk or a dead NFS mount
gives), or stop for good (`hang`, a frozen mount). Unset, a failpoint is one lookup in the
environment and nothing else.

Every name a call site uses is declared in `FAILPOINTS` with the boundary it marks; a
test holds the declarations and the call sites to each other, so a new step without a
failpoint, or a failpoint nobody declared, is noticed. The library declares the whole
list (the store's boundaries and the harness's) so that one place says what can be
crashed; `lessons` still never imports its harness.
"""

from __future__ import annotations

import errno
import os

VARIABLE = "FAILRES_FAILPOINT"

# name -> the step boundary it marks (crashing there leaves the step not yet done).
FAILPOINTS: dict[str, str] = {
    "workspace-made": "a task's workspace was checked out; nothing of the task is journaled yet",
    "preflight": "the gate is about to judge the integration head",
    "dispatch": "a seat is about to be started",
    "dispatch-done": "a seat has exited; its changes are not yet checked",
    "scope-check": "the seat's changes are about to be read from the workspace",
    "put-back": "the workspace is about to be put back to the task's tree",
    "gate": "the gate is about to judge the workspace",
    "commit": "the task's tree is about to become its branch's commit",
    "journal-write": "a journal event is about to be written to the store",
    "store-write": "a store commit is made and its ref is about to move",
    "index-write": "the store's query index is about to be written",
    "claim": "a task's claim is about to be pushed to the remote",
    "renewal": "a claim's renewal is about to be pushed",
    "publish": "a committed task's branch and claim are about to be pushed",
    "fold": "finished tasks' claims are about to be folded into the plan's record of finished tasks",
    "sync": "a merged store is about to be pushed to the remote",
    "land": "a task branch is about to be merged into the integration branch",
    "hook-stamp": "the merge hook is about to stamp what resolved a lesson",
    "reclaim": "the policy's reclaim is about to write",
    "import-batch": "a batch of an import is about to be written",
}

ACTIONS = ("crash", "error", "hang")
_hits: dict[str, int] = {}


class FailpointError(OSError):
    """The I/O error a failpoint raised on purpose."""


def parse(value: str) -> tuple[str, str, int] | None:
    """`name[:action][@N]` as (name, action, N); None for a value that names nothing this build has."""
    spec, _, count = value.strip().partition("@")
    name, _, action = spec.partition(":")
    action = action or "crash"
    try:
        nth = int(count) if count else 1
    except ValueError:
        return None
    if name not in FAILPOINTS or action not in ACTIONS or nth < 1:
        return None
    return name, action, nth


def failpoint(name: str) -> None:
    """The step `name` is reached: a no-op unless `FAILRES_FAILPOINT` names it."""
    value = os.environ.get(VARIABLE)
    if not value:
        return
    wanted = parse(value)
    if wanted is None or wanted[0] != name:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] != wanted[2]:
        return
    action = wanted[1]
    if action == "error":
        msg = f"failpoint {name}"
        raise FailpointError(errno.EIO, msg)
    if action == "hang":
        import time

        while True:
            time.sleep(3600)
    import signal

    os.kill(os.getpid(), signal.SIGKILL)
