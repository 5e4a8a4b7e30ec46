"""failres's own ref moves, written down before they happen, so a run never takes them for a seat's.

A run's tamper check undoes every ref a dispatch changed that failres did not move
itself. A person works on meanwhile: `land` in another terminal merges into `main`,
`gc` deletes landed branches, `sync` and `decide` append to the store. Each of those
moves goes into a journal beside the store, `<git dir>/failres/moves.log`, one JSON
line per move (`ref`, `old`, `new`, the writer's `pid`), written *before* the move and
through `beneath` (never through a link a seat planted there). A move still under way
(`git merge` in the person's checkout: its commit is not known before it is made) is
written as `pending` first and `done` after; a tamper check that finds one pending
waits for it to end.

Every store write of this process goes in as well (`install` registers with
`lessons.storage.store`), and into an in-process record, so the store's history can be
checked commit by commit: the store moved from `old` to `new` by failres alone when
every commit on the way is one failres wrote. A record a seat appended with plain git
breaks that chain, however many of failres's own appends follow it.

A writer below a seat's supervisor records nothing (those commands refuse to run
there anyway). Without a sandbox a seat can still write this file by absolute path:
README names that limit.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePath

from failres import beneath

JOURNAL = PurePath("failres", "moves.log")
# Past this size the next writer starts the journal afresh (a run reading from an
# offset beyond the end reads it from the start).
_MAX_BYTES = 1024 * 1024
_PENDING_WAIT_SECONDS = 60.0

_lock = threading.Lock()
_pairs: set[tuple[str, str | None, str | None]] = set()  # (ref, old, new) moved by this process
_installed = False


def note(git_dir: Path, ref: str, old: str | None, new: str | None, *, pending: bool = False) -> None:
    """Record one of failres's own moves of `ref`, before it is made."""
    with _lock:
        if not pending:
            _pairs.add((ref, old, new))
    if _below_a_seat():
        return
    entry = {"ref": ref, "old": old, "new": new, "pid": os.getpid()}
    if pending:
        entry["pending"] = True
    try:
        path = Path(git_dir) / JOURNAL
        if path.is_file() and path.stat().st_size > _MAX_BYTES:
            beneath.replace_file(Path(git_dir), JOURNAL, b"")
        beneath.make_dirs(Path(git_dir), JOURNAL.parent)
        beneath.append_file(Path(git_dir), JOURNAL, (json.dumps(entry, sort_keys=True) + "\n").encode())
    except (OSError, beneath.Planted):
        pass  # the move itself is never refused for want of its note; a run then reports it


@contextmanager
def moving(git_dir: Path, ref: str, old: str | None) -> Iterator[list[str | None]]:
    """Around a move whose result is known only after it (a `git merge`): pending before, done after.

    The caller puts the new target into the yielded list.
    """
    note(git_dir, ref, old, None, pending=True)
    result: list[str | None] = []
    try:
        yield result
    finally:
        note(git_dir, ref, old, result[0] if result else old)


def note_prefix(git_dir: Path, prefix: str) -> None:
    """Record that failres is about to move refs under `prefix` it cannot name beforehand (a fetch)."""
    note(git_dir, prefix + "*", None, None)


def install() -> None:
    """Have every store write of this process noted (once per process)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    from lessons.storage.store_view import MOVE_OBSERVERS

    MOVE_OBSERVERS.append(_store_moved)


def _store_moved(git_dir: Path, ref: str, old: object, new: object) -> None:
    note(git_dir, ref, None if old is None else str(old), None if new is None else str(new))


def offset(git_dir: Path) -> int:
    try:
        return (Path(git_dir) / JOURNAL).stat().st_size
    except OSError:
        return 0


def since(git_dir: Path, start: int) -> list[dict]:
    """The journal's entries written from byte `start` on (all of them when it was started afresh)."""
    try:
        data = beneath.read_regular(Path(git_dir) / JOURNAL)
    except (OSError, beneath.Planted):
        return []
    if start > len(data):
        start = 0
    entries = []
    for line in data[start:].splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("ref"), str):
            entries.append(entry)
    return entries


class Window:
    """failres's own moves from one moment on: this process's, and the journal's."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self.start = offset(git_dir)

    def pairs(self) -> set[tuple[str, str | None, str | None]]:
        self._wait_for_pending()
        with _lock:
            found = set(_pairs)
        for entry in since(self.git_dir, self.start):
            if not entry.get("pending"):
                found.add((entry["ref"], entry.get("old"), entry.get("new")))
        return found

    def _wait_for_pending(self) -> None:
        give_up = time.monotonic() + _PENDING_WAIT_SECONDS
        while time.monotonic() < give_up:
            entries = since(self.git_dir, self.start)
            done = {(e["ref"], e.get("old"), e.get("pid")) for e in entries if not e.get("pending")}
            waiting = [e for e in entries if e.get("pending") and (e["ref"], e.get("old"), e.get("pid")) not in done
                       and _alive(e.get("pid"))]
            if not waiting:
                return
            time.sleep(0.05)

    def chain(self, ref: str, old: str | None, new: str | None) -> bool:
        """Did failres's own moves take `ref` from `old` to `new`, step by step?"""
        pairs = self.pairs()
        if any(r.endswith("*") and ref.startswith(r[:-1]) for r, _, _ in pairs):
            return True
        steps = {(o, n) for r, o, n in pairs if r == ref}
        current, seen = old, set()
        while current != new:
            following = [n for o, n in steps if o == current and n not in seen]
            if not following:
                return False
            # More than one way on (two tasks' appends raced): any that reaches `new` will do.
            if new in following:
                return True
            seen.add(current)
            current = following[0]
        return True

    def own_targets(self, ref: str) -> set[str | None]:
        return {n for r, _, n in self.pairs() if r == ref}


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_below: list[bool] = []


def _below_a_seat() -> bool:
    """Whether this process runs below a seat's supervisor (asked once: a process's ancestry stays)."""
    if not _below:
        from failres.processes.ancestry import seat_supervisor

        _below.append(seat_supervisor() is not None)
    return _below[0]
