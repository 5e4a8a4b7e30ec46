"""Which of a plan's tasks run, in what order, how many at once, each under its lock.

- Every selected task's lock is taken first: when another live process runs one of
  them, nothing is dispatched and nothing is written (`already running, pid N`).
- A task whose `after` tasks have not all landed does not start; it is reported as
  waiting, with the reason. (A task committed in this very run has not landed: landing
  is a person's merge, after which the next run starts the waiting task from the
  integration head that holds its dependencies' work.)
- With `jobs` > 1, independent tasks run at once, each in a thread of its own with its
  own repository handle and store (pygit2 objects are not shared between threads); a
  signal stops all of them, each through the loop's own interrupt path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import pygit2

from failres.engine import state
from failres.processes import reaper
from failres.containment.interrupts import Interrupted
from failres.containment.left import leave_lost_workspace
from failres.containment.locks import TaskLock, locked_tasks, lost_holder, stop_lost_seat
from failres.engine.loop import TaskRun
from failres.engine.runtime import Engine, TaskOutcome
from failres.errors import UsageError
from failres.journal import Journal, read_journal
from failres.engine.plan import Plan, Task
from lessons.storage.store import Store


def run_plan(engine: Engine, plan: Plan, *, task_ids: Sequence[str] = (), patch: Path | None = None,
             force: bool = False, jobs: int = 1) -> list[TaskOutcome]:
    """Run the plan's tasks (all, or `task_ids`), `jobs` at a time; outcomes in plan order."""
    tasks = [plan.task(t) for t in task_ids] if task_ids else list(plan.tasks)
    if patch is not None and len(tasks) != 1:
        msg = "--patch applies to exactly one task"
        raise UsageError(msg, hint="add --task ID")
    if jobs < 1:
        msg = f"--jobs must be at least 1, not {jobs}"
        raise UsageError(msg)
    reaper.become_subreaper()
    locks = take_locks(engine.git_dir, plan.slug, [t.id for t in tasks])
    try:
        for task, (_, left) in zip(tasks, locks, strict=True):
            if left is not None:
                stop_lost_seat(left)  # a run that died left its seat: stop it before anything else
                leave_lost_workspace(engine.git_dir, plan.slug, task.id)  # then its `.git`, inert
        # Only a task with a lock file can have a dead run: the lock directory is listed once,
        # not probed twice for each task of the plan (25 ms of cpu a task in a plan of 400).
        present = set(locked_tasks(engine.git_dir, plan.slug))
        for other in plan.tasks:
            # A dead run of a task this run does not select left its workspace all the same.
            may_be_lost = other not in tasks and other.id in present
            gone = lost_holder(engine.git_dir, plan.slug, other.id) if may_be_lost else None
            if gone is not None:
                stop_lost_seat(gone)
                leave_lost_workspace(engine.git_dir, plan.slug, other.id)
        # Read once, after the locks: no other run can write these tasks' events now, and
        # `record_planned` writes only the events of tasks that do not run.
        journal = read_journal(engine.store, plan.slug)
        waiting = waiting_reasons(journal, tasks)
        record_planned(engine.store, plan, [t for t in plan.tasks if t not in tasks or t.id in waiting], journal)
        runs = [(task, lock) for task, (lock, _) in zip(tasks, locks, strict=True)]
        if jobs == 1 or len(runs) == 1:
            # Only the first task may start from that read: a later one follows writes of this run's own.
            return [_outcome(engine, plan, task, lock, patch, force, waiting, journal if n == 0 else None)
                    for n, (task, lock) in enumerate(runs)]
        return _concurrently(engine, plan, runs, patch, force, waiting, jobs)
    finally:
        for lock, _ in locks:
            lock.release()
        reaper.sweep_leftovers()


def _outcome(engine: Engine, plan: Plan, task: Task, lock: TaskLock, patch: Path | None, force: bool,
             waiting: dict[str, str], journal: Journal | None = None) -> TaskOutcome:
    if task.id in waiting:
        return TaskOutcome(plan.slug, task.id, "pending", message=waiting[task.id], skipped=True)
    if engine.stop.is_set():
        return TaskOutcome(plan.slug, task.id, "pending", message="not started: the run was stopped", skipped=True)
    return TaskRun(engine, plan, task, lock=lock).run(patch=patch, force=force, journal=journal)


def _concurrently(engine: Engine, plan: Plan, runs: list[tuple[Task, TaskLock]], patch: Path | None, force: bool,
                  waiting: dict[str, str], jobs: int) -> list[TaskOutcome]:
    from concurrent.futures import ThreadPoolExecutor  # for --jobs only

    def one(task: Task, lock: TaskLock) -> TaskOutcome:
        return _outcome(fork_engine(engine), plan, task, lock, patch, force, waiting)

    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="failres-task") as pool:
        futures = [pool.submit(one, task, lock) for task, lock in runs]
        outcomes, stopped = [], None
        for future in futures:
            try:
                outcomes.append(future.result())
            except Interrupted as interrupted:
                stopped = stopped or interrupted
    if stopped is not None:
        raise stopped
    return outcomes


def fork_engine(engine: Engine) -> Engine:
    """The same engine for another thread: its own repository handle, store and knowledge hooks.

    The stop flag, the record of failres's own ref moves and the progress display are
    shared: they are what the threads must agree on.
    """
    repo = pygit2.Repository(str(engine.top))
    clone = dataclasses.replace(engine, repo=repo, store=Store(repo, engine.store.ref), advisory=None,
                                rules_block=None, facts_block=None, on_outcome=None)
    if engine.attach is not None:
        engine.attach(clone)
    return clone


def waiting_reasons(journal: Journal, tasks: Sequence[Task]) -> dict[str, str]:
    """task id -> why it cannot start yet, for each task whose `after` tasks have not all landed (pure)."""
    if not any(task.after for task in tasks):
        return {}
    reasons = {}
    for task in tasks:
        pending = [other for other in task.after if state.task_state(journal.for_task(other)) != "landed"]
        if pending:
            reasons[task.id] = (f"waits for {', '.join(pending)} to land; run the plan again once "
                                f"{'it has' if len(pending) == 1 else 'they have'}")
    return reasons


def record_planned(store: Store, plan: Plan, tasks: Sequence[Task], journal: Journal | None = None) -> None:
    """A `task-planned` event for each of `tasks` the journal (`journal`, or as read now) has never
    seen: the plan's tasks this run leaves pending (waiting on `after`, or not selected) are on `status` too."""
    from failres.journal import event_put, make_event
    from lessons.storage.records import change_of

    journal = read_journal(store, plan.slug) if journal is None else journal
    known = {str(e.get("task")) for e in journal.events}
    fresh = [make_event("task-planned", plan.slug, task.id, title=task.title, after=list(task.after),
                        plan=str(plan.path) if plan.path else None)
             for task in tasks if task.id not in known]
    if fresh:
        store.commit(change_of([event_put(e) for e in fresh]),
                     f"failres: task-planned {plan.slug} ({', '.join(e['task'] for e in fresh)})")


def take_locks(git_dir: Path, slug: str, task_ids: Sequence[str]) -> list[tuple[TaskLock, object]]:
    taken: list[tuple[TaskLock, object]] = []
    try:
        for task_id in task_ids:
            lock = TaskLock(git_dir, slug, task_id)
            left = lock.acquire()
            taken.append((lock, left))
    except BaseException:
        for lock, _ in taken:
            lock.release()
        raise
    return taken
