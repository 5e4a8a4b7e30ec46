"""A runner's store pushes: at most one per interval while it runs, and a last one that lands.

Each runner used to sync the store after every task. With eight runners finishing tasks
at once, 60% of those store pushes lost the race (each sync's lease on the remote store tip
is beaten by whoever pushed first), and a sync that lost eight times in a row gave up: the
records waited, unpushed, for a later run. Now a finished task only marks the store as
having records to push; the runner pushes it at most once per `interval`, so fifty runners
make fifty pushes an interval whatever the number of tasks, and a push carries every
record since the last one. A push that loses the race is not tried again at once (each
try is a fetch, a merge and a push, and every runner retrying at once is what made eight
losses in a row): the records wait for the next interval, which doubles (jittered) after
each loss and falls back after a push that lands, so a crowd of runners spreads its store
pushes out until they fit. At the end of the run, the last push is tried again, with a
jittered backoff, until it lands or the person interrupts (then what is not pushed is said,
and `git failres sync REMOTE` pushes it later): only a refusal the remote makes for itself
(a hook, a permission) or a damaged remote store ends it sooner, since asking again would
only get the same answer.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path

from failres.errors import Busy, FailresError, GitError
from failres.gitops.git import try_git
from failres.remote.sync import StoreRefused, sync_store, tracking_ref
from lessons.errors import StoreDamaged

log = logging.getLogger("failres.remote")

FLUSH_BACKOFF_START = 0.5
FLUSH_BACKOFF_CAP = 30.0


def flush_pause(failures: int, draw: float) -> float:
    """Seconds before the next try of the last push, after `failures` in a row: doubling, capped, jittered."""
    return min(FLUSH_BACKOFF_CAP, FLUSH_BACKOFF_START * 2 ** min(failures - 1, 16)) * (0.5 + draw / 2)


def unpushed_commits(top: Path, ref: str, remote: str) -> int:
    """How many store commits this clone holds that the remote's store (as last seen) does not."""
    tracking = tracking_ref(remote, ref)
    has_tracking = try_git(top, ["rev-parse", "--verify", "--quiet", tracking]).returncode == 0
    done = try_git(top, ["rev-list", "--count", ref, *([f"^{tracking}"] if has_tracking else [])])
    return int(done.stdout.strip() or 0) if done.returncode == 0 else 0


class StorePusher:
    """Whether the store has records to push, and the pushes themselves (called by one thread)."""

    def __init__(self, top: Path, ref: str, remote: str, *, interval: float, snapshots: bool,
                 clock: Callable[[], float] = time.monotonic, draw: Callable[[], float] = random.random) -> None:
        self.top, self.ref, self.remote = top, ref, remote
        self.interval = interval
        self.snapshots = snapshots
        self._clock, self._draw = clock, draw
        self._waiting = threading.Event()  # set by task threads: records to push
        self._last = float("-inf")
        self._wait = interval  # the interval now: longer after each lost push, back to `interval` after one lands
        self.syncs = 0  # sync attempts made (each: one fetch, one push or more)
        self.retries = 0  # store pushes lost to another runner's

    def records_waiting(self) -> None:
        self._waiting.set()

    def push_if_due(self) -> None:
        """One sync when records wait and the last was an interval ago; a failure waits for the next."""
        if not self._waiting.is_set() or self._clock() - self._last < self._wait:
            return
        self._last = self._clock()
        self._waiting.clear()
        try:
            self._sync_once(attempts=1)
            self._wait = self.interval
        except Busy:
            self._waiting.set()
            self.retries += 1
            self._wait = min(self._wait * 2, self.interval * 32) * (0.5 + self._draw())
        except (FailresError, StoreDamaged) as error:
            self._waiting.set()
            log.warning("failres: syncing the store with %s failed (tried again later): %s", self.remote, error)

    def _sync_once(self, attempts: int) -> None:
        self.syncs += 1
        result = sync_store(self.top, self.ref, self.remote, snapshots=self.snapshots, attempts=attempts)
        self.retries += result.retries

    def flush(self, stop: threading.Event) -> bool:
        """The last push: tried until it lands, the remote refuses it for itself, or `stop` is set.
        True when the remote holds every record of this store."""
        failures = 0
        while True:
            try:
                self._sync_once(attempts=1)
                self._waiting.clear()
                return True
            except (StoreRefused, StoreDamaged) as error:
                log.warning("failres: the store was not pushed to %s: %s", self.remote, error)
                break
            except Busy:
                failures += 1
                self.retries += 1  # lost to another runner's push: the pause spreads the crowd out
            except GitError as error:
                failures += 1
                log.warning("failres: syncing the store with %s failed, trying again: %s", self.remote, error)
            if stop.wait(flush_pause(failures, self._draw())):
                break
        left = unpushed_commits(self.top, self.ref, self.remote)
        if left:
            log.warning("failres: %d store commit%s not on %s yet (every record is in this clone's store): "
                        "run `git failres sync %s`", left, "" if left == 1 else "s", self.remote, self.remote)
        return left == 0
