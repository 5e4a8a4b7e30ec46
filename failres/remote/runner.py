"""`run PLAN --remote REMOTE`: this process works the plan together with every other runner of it.

The loop, until nothing is left for this runner:

1. read every claim of the plan on the remote, its record of finished tasks and the tips
   of its task branches (one narrow fetch, see `transport`): a committed claim without its
   branch is not trusted; the claims this runner finished are folded into the record (see
   `folded`), with any a lease old that another runner left;
2. for each task in this runner's own order (see `pick`: runners that start together do
   not all push a claim of the same first task): done when its claim is finished (committed,
   quarantined, cancelled) or this runner finished it; waiting while another runner
   holds it (it may be taken over once that runner's lease runs out) or while a
   task it comes `after` has not finished; never startable when such a task
   finished without landing (landing is a person's merge; `after` keeps its meaning);
3. claim what may be claimed, up to `--jobs` at once, each by a compare-and-swap
   push of its claim ref, and run it through the ordinary task loop in a thread of
   its own; the loop asks the `Hold` whether the task is still this runner's and
   publishes the commit through it (see `holder`); a task that comes `after` another
   starts from the remote's integration head, fetched, since the task it waits for was
   landed there, maybe by another clone, and this clone's own branch may not have it;
4. sync the store when a task has ended and the last sync was an interval ago (see
   `store_flush`: one push per runner per interval, whatever the number of tasks), so
   every runner's journal and lessons meet on the remote; wait for a task to end or for
   the next poll (longer and jittered while there is nothing to claim), and go back to 1.
   A task the store says landed is done whatever the remote holds of it: `gc --remote`
   removes a landed task's claim and branch.
   The run's last sync is tried until it lands.

Every task of the plan is journaled as planned before the first sync, so `status
--remote` lists the tasks no runner has started yet. The runner ends when every task
of its selection is finished or can never start;
a task held by another runner keeps it waiting, so a task whose runner died is
taken over rather than left behind.
"""

from __future__ import annotations

import logging
import os
import random
import secrets
import socket
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from failres.containment.interrupts import Interrupted
from failres.containment.left import leave_lost_workspace
from failres.containment.locks import AlreadyRunning, TaskLock, stop_lost_seat
from failres.engine import state
from failres.engine.loop import TaskRun
from failres.engine.runtime import Engine, TaskOutcome
from failres.engine.runtime import PublishRefused
from failres.engine.schedule import fork_engine, record_planned
from failres.errors import FailresError, UsageError
from failres.journal import read_journal
from failres.engine.plan import Plan, Task
from failres.processes import reaper
from failres.remote.claims import FINISHED, Claim, claim_verdict, new_claim
from failres.remote.holder import Hold, utc_now
from failres.remote.pick import idle_seconds, poll_seconds, runner_order
from failres.remote.store_flush import StorePusher
from failres.remote.transport import PlanLook, RemoteClaims, Unreachable
from failres.remote.sync import sync_store
from lessons.failpoints import failpoint

log = logging.getLogger("failres.remote")
FOLD_BATCH = 200  # claims folded by one push: its command line stays short
FOLD_AT = 8  # this runner's finished claims folded together


def outcome_of_claim(claim: Claim) -> TaskOutcome:
    state_of = {"committed": "committed", "quarantined": "quarantined", "cancelled": "interrupted"}[claim.state]
    where = f"{claim.state} by {claim.host} pid {claim.pid}"
    return TaskOutcome(claim.slug, claim.task, state_of, message=where, commit=claim.commit or None, skipped=True)


class RemoteRun:
    """One runner of a plan on a remote: its identity, its holds, and the seam the task loop calls."""

    def __init__(self, engine: Engine, plan: Plan, remote: str, *, jobs: int, task_ids: Sequence[str] = ()) -> None:
        self.engine = engine
        self.plan = plan
        self.remote = remote
        self.jobs = jobs
        self.explicit = set(task_ids)
        self.selected = [plan.task(t) for t in task_ids] if task_ids else list(plan.tasks)
        self.lease = engine.config.remote.lease
        self.branches = engine.config.remote.branches
        self.claims = RemoteClaims(engine.top, remote, plan.slug, branches=self.branches)
        self.store = StorePusher(engine.top, engine.store.ref, remote, interval=store_interval(self.lease),
                                 snapshots=engine.config.sync.snapshots)
        self.run_id = secrets.token_hex(8)
        self.host = socket.gethostname() or "localhost"
        self.pid = os.getpid()
        self.holds: dict[str, Hold] = {}
        self.seen: dict[str, tuple[str, float]] = {}  # task -> (claim commit, since when this runner sees it)
        self.behind: dict[str, bool] = {}  # committed claim commit -> whether the remote has its branch at its commit
        self.tips: dict[str, str] = {}  # task -> its branch on the remote at the last look
        self.idle_polls = 0  # looks in a row that found nothing to claim
        self.standing = False  # whether the last look saw finished claims not folded yet

    # ---- the seam the task loop calls (engine.claims) ----

    def stop_reason(self, slug: str, task: str) -> str | None:
        hold = self.holds.get(task)
        return hold.stop_reason() if hold is not None else None

    def publish(self, slug: str, task: str, branch: str, commit: str) -> bool:
        hold = self.holds.get(task)
        if hold is None:
            return False
        failpoint("publish")
        if hold.finish("committed", branch=(self.claims.branch_ref(task), commit), commit=commit):
            return True
        if hold.refused is not None:
            raise PublishRefused(hold.refused.describe())
        return False

    def start_point(self, slug: str, task: str) -> str | None:
        if not self.plan.task(task).after:
            return None
        branch = f"refs/heads/{self.engine.config.integration.branch}"
        try:
            return self.claims.fetch_tip(branch) or None
        except Unreachable as error:
            log.warning("failres: %s/%s starts from this clone's %s: fetching the remote's failed: %s",
                        slug, task, branch, error)
            return None

    # ---- the schedule ----

    def run(self) -> list[TaskOutcome]:
        if self.jobs < 1:
            msg = f"--jobs must be at least 1, not {self.jobs}"
            raise UsageError(msg)
        reaper.become_subreaper()
        self.engine.claims = self
        record_planned(self.engine.store, self.plan, self.plan.tasks)
        self.store.records_waiting()
        self.store.push_if_due()
        outcomes: dict[str, TaskOutcome] = {}
        running: dict[str, Future] = {}
        stopped: Interrupted | None = None
        try:
            with ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="failres-task") as pool:
                while True:
                    stopped = self._collect(running, outcomes) or stopped
                    if self.engine.stop.is_set() or stopped is not None:
                        break
                    # A runner with every job busy has nothing to claim: it looks again when one ends,
                    # not every poll (fifty busy runners polling every 3 s were 17 fetches a second).
                    waiting = self._schedule(pool, running, outcomes) if len(running) < self.jobs else True
                    self.store.push_if_due()
                    if not running and not waiting:
                        break
                    if running:
                        wait(list(running.values()), timeout=poll_seconds(self.lease), return_when=FIRST_COMPLETED)
                    elif self.engine.stop.wait(idle_seconds(self.idle_polls, self.lease, random.random())):
                        break
                for future in list(running.values()):
                    future.exception()  # the pool is shutting down: each stops through its own path
                stopped = self._collect(running, outcomes) or stopped
            if stopped is None and not self.engine.stop.is_set():
                self._fold_left()
        finally:
            for hold in list(self.holds.values()):
                hold.close()
            reaper.sweep_leftovers()
            self.store.flush(self.engine.stop)
            traffic = self.claims.traffic
            log.info("failres: %s on %s: %d claim pushes (%d refused), %d fetches, %d store syncs",
                     self.plan.slug, self.remote, traffic.pushes, traffic.rejected, traffic.fetches,
                     self.store.syncs)
        if stopped is not None:
            raise stopped
        if self.engine.stop.is_set():
            raise Interrupted("signal", self.engine.stop.signum)
        return [outcomes.get(t.id) or TaskOutcome(self.plan.slug, t.id, "pending", skipped=True,
                                                  message="not started: the run was stopped")
                for t in self.selected]

    def _collect(self, running: dict[str, Future], outcomes: dict[str, TaskOutcome]) -> Interrupted | None:
        stopped = None
        for task_id, future in list(running.items()):
            if not future.done():
                continue
            del running[task_id]
            try:
                outcome = future.result()
            except Interrupted as interrupted:
                stopped = stopped or interrupted
                continue
            if outcome is not None:
                outcomes[task_id] = outcome
            # None: the claim was lost; the next look at the claims says who has the task now.
        return stopped

    def _schedule(self, pool: ThreadPoolExecutor, running: dict[str, Future],
                  outcomes: dict[str, TaskOutcome]) -> bool:
        """Claim and start what may start; True while something this runner waits for is unfinished."""
        try:
            look = self.claims.look()
        except Unreachable as error:
            log.warning("failres: %s", error)
            return True  # cut off: try again at the next poll, as the holds do
        now = time.monotonic()
        for task_id, claim in look.claims.items():
            if self.seen.get(task_id, ("", 0.0))[0] != claim.oid:
                self.seen[task_id] = (claim.oid, now)
        self._check_branches(look)
        claims = self._fold(look, now)
        journal = read_journal(self.engine.store, self.plan.slug)
        waiting = False
        started = len(running)
        by_id = {task.id: task for task in self.selected}
        for task in (by_id[t] for t in runner_order(self.run_id, by_id)):
            if task.id in outcomes or task.id in running:
                continue
            claim = claims.get(task.id)
            gone = claim is None or (claim.state == "committed" and not self.behind.get(claim.oid, True))
            if gone and state.task_state(journal.for_task(task.id)) == "landed":
                # Landed (the store says so), and `gc --remote` may have removed its claim and its
                # branch since: without this, a task with no claim would be claimed and run again.
                outcomes[task.id] = TaskOutcome(self.plan.slug, task.id, "landed", skipped=True, message="landed")
                continue
            seen_since = self.seen.get(task.id, ("", now))[1]
            behind = claim is None or self.behind.get(claim.oid, True)
            verdict = claim_verdict(claim, unchanged_for=now - seen_since, lease=self.lease, run=self.run_id,
                                    explicit=task.id in self.explicit, branch_behind=behind)
            if not verdict.may_claim:
                if claim is not None and claim.state in FINISHED and behind and not (
                        claim.state != "committed" and task.id in self.explicit):
                    outcomes[task.id] = outcome_of_claim(claim)
                else:
                    waiting = True
                continue
            blocked = self._after(task, claims, outcomes, journal)
            if blocked is True:
                waiting = True
                continue
            if blocked:
                outcomes[task.id] = TaskOutcome(self.plan.slug, task.id, "pending", message=blocked, skipped=True)
                continue
            if len(running) >= self.jobs:
                waiting = True
                continue
            hold = self._claim(task, claim)
            if hold is None:
                waiting = True  # another runner's push came first: look again
                continue
            self.holds[task.id] = hold
            running[task.id] = pool.submit(self._run_task, task, hold)
        self.idle_polls = 0 if len(running) > started else self.idle_polls + 1
        return waiting

    def _check_branches(self, look: PlanLook) -> None:
        """Whether each committed claim not checked yet has its task branch on the remote, at its commit."""
        self.tips = look.tips
        unchecked = {c.oid: c for c in look.claims.values() if c.state == "committed" and c.oid not in self.behind}
        for oid, claim in unchecked.items():
            tip = look.tips.get(claim.task, "")
            self.behind[oid] = bool(claim.commit) and tip == claim.commit
            if not self.behind[oid]:
                log.warning("failres: %s/%s: the claim says committed by %s pid %s, but the remote's task branch "
                            "does not name its commit %s; not trusted: the task is taken as unclaimed once the "
                            "claim has stood unchanged for a lease", self.plan.slug, claim.task, claim.host,
                            claim.pid, claim.commit[:12] or "(none)")

    def _fold(self, look: PlanLook, now: float, *, ending: bool = False) -> dict[str, Claim]:
        """Fold finished claims into the plan's record (see `folded`); the claims as they stand after.

        This runner folds the claims it finished, FOLD_AT together (one push for several tasks,
        and fewer runners' folds racing for the one record) or once one has stood half a lease;
        one another runner left finished for a lease (it died before folding, or was of the code
        before folding) is folded by whichever runner sees it; `ending`: every one, now. A
        committed claim is folded only while its task branch names its commit.
        """
        finished = [c for _, c in sorted(look.claims.items()) if not c.folded and (
            c.state == "quarantined" or (c.state == "committed" and self.behind.get(c.oid, False)))]
        self.standing = bool(finished)

        def stood(claim: Claim) -> float:
            return now - self.seen.get(claim.task, ("", now))[1]

        own = [c for c in finished if c.run == self.run_id]
        aged = [c for c in finished if c.run != self.run_id and (ending or stood(c) >= self.lease)]
        due = ending or aged or len(own) >= FOLD_AT or any(stood(c) >= self.lease / 2 for c in own)
        batch = (own + aged)[:FOLD_BATCH]
        if not due or not batch:
            return look.claims
        try:
            record = self.claims.fold(look.record, batch)
        except Unreachable as error:
            log.warning("failres: folding finished claims of %s: %s", self.plan.slug, error)
            return look.claims
        if record is None:
            return look.claims  # another runner folded or moved one of them first: the next look says
        return {**look.claims, **{c.task: record.entries[c.task] for c in batch}}

    def _fold_left(self) -> None:
        """At the end of a run, fold every finished claim still standing, however recent: this runner's
        last ones, and one left by a runner that died, or by the code before folding, which would
        otherwise wait for a runner that runs a lease longer."""
        if not self.standing:
            return
        try:
            look = self.claims.look()
        except Unreachable as error:
            log.warning("failres: %s", error)
            return
        self._check_branches(look)
        self._fold(look, time.monotonic(), ending=True)

    def _after(self, task: Task, claims: dict[str, Claim], outcomes: dict[str, TaskOutcome], journal) -> bool | str:
        """False: may start; True: wait (a task it comes after is unfinished); a reason: it never can in this run."""
        unlanded, unfinished = [], False
        for other in task.after:
            if state.task_state(journal.for_task(other)) == "landed":
                continue
            unlanded.append(other)
            claim = claims.get(other)
            finished_here = other in outcomes
            held = claim is not None and claim.state == "held"
            if not finished_here and (held or any(t.id == other for t in self.selected)) and not (
                    claim is not None and claim.state in FINISHED):
                unfinished = True
        if not unlanded:
            return False
        if unfinished:
            return True
        return (f"waits for {', '.join(unlanded)} to land; run the plan again once "
                f"{'it has' if len(unlanded) == 1 else 'they have'}")

    def _claim(self, task: Task, current: Claim | None) -> Hold | None:
        # The branch as the look that judged this claim saw it: the publish push is leased on it,
        # so a branch someone moved since is never pushed over.
        branch_tip = self.tips.get(task.id, "")
        try:
            started = time.monotonic()
            failpoint("claim")
            claim = self.claims.write(new_claim(self.plan.slug, task.id, host=self.host, pid=self.pid,
                                                run=self.run_id, now=utc_now(), lease=self.lease),
                                      current.last_commit if current else "")
            pushed = self.claims.swap(claim, current.expected if current else "")
        except Unreachable as error:
            log.warning("failres: %s", error)
            return None
        if not pushed.accepted:
            return None
        return Hold(self.claims, claim, self.lease, pushed_at=started, branch_tip=branch_tip).start()

    def _run_task(self, task: Task, hold: Hold) -> TaskOutcome | None:
        engine = fork_engine(self.engine)
        lock = TaskLock(engine.git_dir, self.plan.slug, task.id)
        try:
            left = lock.acquire()
        except AlreadyRunning as busy:
            hold.finish("released")
            return TaskOutcome(self.plan.slug, task.id, "pending", message=str(busy), skipped=True)
        try:
            if left is not None:
                stop_lost_seat(left)
                leave_lost_workspace(engine.git_dir, self.plan.slug, task.id)
            try:
                outcome = TaskRun(engine, self.plan, task, lock=lock).run()
            except Interrupted as stop:
                if stop.reason != "lost":
                    hold.finish("released")
                    raise
                log.warning("failres: %s/%s is no longer this runner's (lost its claim); nothing was published",
                            self.plan.slug, task.id)
                return None
            except BaseException:
                hold.finish("released")
                raise
            self._finish(hold, outcome)
            return outcome
        finally:
            lock.release()
            hold.close()
            self.store.records_waiting()

    def _finish(self, hold: Hold, outcome: TaskOutcome) -> None:
        if outcome.state == "committed" and outcome.skipped and outcome.commit:
            # Committed by an earlier run on this clone: its branch goes to the remote now.
            hold.finish("committed", branch=(self.claims.branch_ref(outcome.task), outcome.commit),
                        commit=outcome.commit)
        elif outcome.state == "landed":
            # Landed on this clone earlier: its task commit goes to the remote as the branch, so
            # the committed claim has the branch that makes it trusted.
            commit = state.last_commit(read_journal(self.engine.store, self.plan.slug).for_task(outcome.task)) or ""
            hold.finish("committed", branch=(self.claims.branch_ref(outcome.task), commit)
                        if commit else None, commit=commit)
        elif outcome.state in ("quarantined", "stopped"):
            hold.finish("quarantined")
        elif outcome.state == "interrupted":
            pass  # cancelled: the claim says so, and stays so
        elif outcome.state != "committed":
            hold.finish("released")


def store_interval(lease: float) -> float:
    """How often a runner pushes the store while it runs: a few times a lease, never more than every 2 s."""
    return max(2.0, min(lease / 4, 30.0))


def run_plan_remote(engine: Engine, plan_path, remote: str, *, task_ids: Sequence[str] = (),
                    jobs: int = 1) -> list[TaskOutcome]:
    """What `run PLAN --remote REMOTE` calls: the plan checked, the remote checked, then the runner."""
    from failres.engine.entry import require_store
    from failres.engine.plan import load_plan
    from failres.sandbox.before_run import announce_before_run
    from failres.remote.wire import check_remote

    plan = load_plan(plan_path, engine.config)
    check_remote(engine.top, remote)
    announce_before_run(engine.config, engine.top)  # refuses mode "required" without a world
    # A fresh clone (a CI job) has no store of its own yet: the remote's is the one to work on.
    sync_store(engine.top, engine.store.ref, remote, snapshots=engine.config.sync.snapshots)
    require_store(engine.store)
    return RemoteRun(engine, plan, remote, jobs=jobs, task_ids=task_ids).run()
