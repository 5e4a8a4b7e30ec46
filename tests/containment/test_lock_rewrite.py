"""A task's lock file as `status` reads it while the run rewrites it.

The run rewrites its lock file when a seat starts and ends (the seat's pid and marker);
`status` reads it at any moment to show the live run's pid and to tell a live run from a
lost one. A read that met the rewrite half done once saw an empty file: the live run was
shown without its pid.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from failres.containment.locks import TaskLock, live_holder


def test_status_never_reads_a_live_runs_lock_without_its_pid(tmp_path: Path) -> None:
    git_dir = tmp_path / ".git"
    (git_dir / "failres" / "locks" / "rr").mkdir(parents=True)
    lock = TaskLock(git_dir, "rr", "t1")
    lock.acquire()
    done = threading.Event()

    def rewrite() -> None:
        for n in range(1500):  # long and short texts in turn, as seats start and end
            lock.record_seat(100000 + n, "m" * (n % 97)) if n % 2 else lock.record_seat(None, "")
        done.set()

    writer = threading.Thread(target=rewrite)
    writer.start()
    seen: list[int | None] = []
    try:
        while not done.is_set():
            holder = live_holder(git_dir, "rr", "t1")
            seen.append(holder.pid if holder is not None else -1)
    finally:
        writer.join()
        lock.release()
    assert len(seen) > 100
    assert set(seen) == {os.getpid()}
