"""One runner's hold on one task: renewed while the task runs, given up the moment it is lost.

The holder renews its claim every third of the lease by a compare-and-swap push from
the claim commit it last wrote. It knows, without trusting any other machine's clock,
when it may have lost the task: once a whole lease has passed on its own monotonic
clock since the start of its last renewal that landed, another runner may have taken
it, so from then on it is lost. Until then an unreachable remote is only a wait: a
failed renewal is tried again at once, then with backoff, and so is the final push,
so a remote gone for twenty seconds inside a two-minute lease costs no finished work
(it cost all six tasks in flight when one failed push meant `lost`).

A push the remote refuses is read on the remote: a claim someone moved means a
person's cancel (the task stops as `cancel`) or a runner that took it over (`lost`),
and the loop, reading `stop_reason` while its seat and gate run, stops them; the
task's result is never published, because `finish` pushes the task branch and the
finished claim in one atomic push leased on the claim this holder holds. A claim
still this holder's means the remote refused the push for itself (a pre-receive
hook, a protected branch): that is tried again, and the same refusal twice is final
(`refused` holds the remote's words), since a refusal read as `lost` made the task
run again at once, twenty-nine seat runs in a minute.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from failres.remote.claims import Claim
from failres.remote.transport import PushResult, RemoteClaims, Unreachable
from lessons.failpoints import failpoint

log = logging.getLogger("failres.remote")

PUBLISH_PUSHES = 3  # the same refusal twice is final; a changing one gets one push more
FIRST_BACKOFF = 0.25
OURS, UNKNOWN = "ours", "unknown"  # what a refused push's claim reads as on the remote, besides cancel and lost


def utc_now() -> datetime:
    return datetime.now(UTC)


def backoff(failures: int, cap: float) -> float:
    """Seconds to wait after `failures` failed pushes in a row: at once after the first, then doubling."""
    return 0.0 if failures <= 1 else min(cap, FIRST_BACKOFF * 2 ** (failures - 2))


@dataclass(frozen=True)
class Refusal:
    """What the remote said when it refused a push of a claim that is still this holder's."""

    ref: str
    reason: str
    words: str  # the remote's own lines (a hook's message), for the person

    @classmethod
    def of(cls, pushed: PushResult) -> Refusal:
        return cls(pushed.ref, pushed.reason, pushed.words)

    def same_as(self, other: Refusal | None) -> bool:
        return other is not None and (self.ref, self.reason, self.words) == (other.ref, other.reason, other.words)

    def describe(self) -> str:
        said = f": {self.words}" if self.words and self.words != self.reason else ""
        return f"the remote refused {self.ref} ({self.reason}){said}"


def refused_for_good(refusals: list[Refusal]) -> bool:
    """Whether to stop pushing a result: the same refusal twice in a row, or PUBLISH_PUSHES refusals."""
    return len(refusals) >= PUBLISH_PUSHES or (len(refusals) >= 2 and refusals[-1].same_as(refusals[-2]))


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
        self._failures = 0  # renewals failed in a row
        self.refused: Refusal | None = None  # set when the remote refused the result for good
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
        while not self._done.wait(self.interval if not self._failures else backoff(self._failures, self.interval)):
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
            # Cut off: try again at once, then with backoff, until the deadline; past it the task is lost.
            self._failures += 1
            log.warning("failres: renewing the claim on %s/%s failed: %s", self.claim.slug, self.claim.task, error)
            return
        if pushed.accepted:
            self.claim = renewed
            self._deadline = started + self.lease
            self._failures = 0
            return
        moved = self._moved_to()
        if moved in (OURS, UNKNOWN):
            self._failures += 1  # the remote refused for itself (or cannot say now): try again
            log.warning("failres: the remote refused renewing %s/%s: %s", self.claim.slug, self.claim.task,
                        pushed.words or pushed.reason)
            return
        self._reason = moved

    def _moved_to(self) -> str:
        """After a refused push: `cancel` or `lost` when the claim is no longer this holder's, OURS while
        the remote still has it as this holder's, UNKNOWN when the remote cannot be read now."""
        try:
            now = self.claims.fetch().get(self.claim.task)
        except Unreachable:
            return UNKNOWN  # cannot tell yet: the deadline decides
        if now is not None and now.oid == self.claim.oid:
            return OURS
        return "cancel" if now is not None and now.state == "cancelled" and now.run == self.claim.run else "lost"

    def finish(self, state: str, *, branch: tuple[str, str] | None = None, **fields: str) -> bool:
        """End the hold: the claim becomes `state` (with the task branch (ref, commit) moved in the
        same atomic push). False when nothing moved: the claim was no longer this runner's
        (`stop_reason` says why), or the remote refused the push for good (`refused`)."""
        self._done.set()
        with self._turn:
            if self.stop_reason() is not None:
                return False
            final = self.claims.write(self.claim.finished_as(state, **fields), self.claim.oid)
            if not self._push_final(final, (branch[0], branch[1], self.branch_tip) if branch is not None else None):
                return False
            self.claim = final
            self._finished = True
            return True

    def _push_final(self, final: Claim, branch: tuple[str, str, str] | None) -> bool:
        """Push the finished claim until it lands, the claim is lost, or the remote refuses it for good."""
        refusals: list[Refusal] = []
        failures = 0
        while self.stop_reason() is None:
            if failures:
                self._clock_wait(backoff(failures, self.interval))
            failures += 1
            try:
                pushed = self.claims.swap(final, self.claim.oid, branch=branch)
            except Unreachable as error:
                log.warning("failres: publishing %s/%s failed, trying again: %s", self.claim.slug,
                            self.claim.task, error)
                continue
            if pushed.accepted:
                return True
            moved = self._moved_to()
            if moved == UNKNOWN:
                continue
            if moved != OURS:
                self._reason = moved
                log.warning("failres: the remote refused the result of %s/%s: %s", self.claim.slug,
                            self.claim.task, pushed.reason)
                return False
            refusals.append(Refusal.of(pushed))
            if refused_for_good(refusals):
                self.refused = refusals[-1]
                return False
        return False

    def _clock_wait(self, seconds: float) -> None:
        """Sleep, but never past the deadline: there `stop_reason` turns `lost` and the push stops."""
        time.sleep(max(0.0, min(seconds, self._deadline - self._clock() + 0.01)))

    def close(self) -> None:
        self._done.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=self.lease)
