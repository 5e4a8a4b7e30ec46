"""One runner's hold on one task: renewed while the task runs, given up the moment it is lost.

The holder renews its claim every third of the lease by a compare-and-swap push from
the claim commit it last wrote. It knows, without trusting any other machine's clock,
when it may have lost the task: once a whole lease has passed on its own monotonic
clock since the start of its last renewal that landed, another runner may have taken
it, so from then on it is lost. A renewal the remote refuses means someone moved the
claim: a person's cancel (the task stops as `cancel`) or a runner that took it over
(`lost`). Either way the loop reads `stop_reason` while its seat and gate run, stops
them, and the task's result is never published: `publish` pushes the task branch and
the finished claim in one atomic push leased on the claim this holder holds, so a
late result is refused by the remote itself.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from failres.remote.claims import Claim
from failres.remote.transport import RemoteClaims, Unreachable
from lessons.failpoints import failpoint

log = logging.getLogger("failres.remote")


def utc_now() -> datetime:
    return datetime.now(UTC)


class Hold:
    """The claim this runner holds on one task, and the thread that renews it."""

    def __init__(self, claims: RemoteClaims, claim: Claim, lease: float, *, pushed_at: float,
                 branch_tip: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.claims = claims
        self.claim = claim
        self.lease = lease
        self.branch_tip = branch_tip  # the remote task branch when the claim was taken: its lease
        self._clock = clock
        self._deadline = pushed_at + lease
        self._reason: str | None = None
        self._finished = False
        self._turn = threading.Lock()  # a renewal and the final push never interleave
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._renew_loop, name=f"failres-claim-{claim.task}", daemon=True)

    def start(self) -> Hold:
        self._thread.start()
        return self

    @property
    def interval(self) -> float:
        return self.lease / 3

    def stop_reason(self) -> str | None:
        """None while the task is this runner's; `cancel` or `lost` once it is not."""
        if self._finished:
            return None
        if self._reason is None and self._clock() > self._deadline:
            self._reason = "lost"
        return self._reason

    def _renew_loop(self) -> None:
        while not self._done.wait(self.interval):
            with self._turn:
                if self._done.is_set() or self.stop_reason() is not None:
                    return
                self._renew_once()

    def _renew_once(self) -> None:
        failpoint("renewal")
        started = self._clock()
        renewed = self.claims.write(self.claim.renewed(utc_now(), self.lease), self.claim.oid)
        try:
            pushed = self.claims.swap(renewed, self.claim.oid)
        except Unreachable as error:
            # Cut off: keep trying until the deadline; past it the task is lost.
            log.warning("failres: renewing the claim on %s/%s failed: %s", self.claim.slug, self.claim.task, error)
            return
        if pushed.accepted:
            self.claim = renewed
            self._deadline = started + self.lease
            return
        self._reason = self._why_refused()

    def _why_refused(self) -> str:
        try:
            now = self.claims.fetch().get(self.claim.task)
        except Unreachable:
            return "lost"
        return "cancel" if now is not None and now.state == "cancelled" and now.run == self.claim.run else "lost"

    def finish(self, state: str, *, branch: tuple[str, str] | None = None, **fields: str) -> bool:
        """End the hold: the claim becomes `state` (with the task branch (ref, commit) moved in the
        same atomic push). False when the claim was no longer this runner's: nothing moved."""
        self._done.set()
        with self._turn:
            if self.stop_reason() is not None:
                return False
            final = self.claims.write(self.claim.finished_as(state, **fields), self.claim.oid)
            lease = (branch[0], branch[1], self.branch_tip) if branch is not None else None
            try:
                pushed = self.claims.swap(final, self.claim.oid, branch=lease)
            except Unreachable:
                self._reason = "lost"
                return False
            if not pushed.accepted:
                self._reason = self._why_refused()
                log.warning("failres: the remote refused the result of %s/%s: %s", self.claim.slug,
                            self.claim.task, pushed.reason)
                return False
            self.claim = final
            self._finished = True
            return True

    def close(self) -> None:
        self._done.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=self.lease)
