"""`run --dry-run --preflight`: each task's gate at the integration head, before paying for a run.

The same steps a run takes before its first dispatch — a workspace of the head with the
included files and a port, the gate's setup, the gate — in a workspace of its own
(`<task>.preflight`, so a live run of the task is not disturbed), with nothing written
to the store, no task branch made, and the workspace removed afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

from failres.engine.loop import TaskRun
from failres.engine.preflight import GREEN, RED, UNAVAILABLE
from failres.engine.runtime import Engine
from failres.journal import make_event, read_journal
from failres.engine.plan import Plan


@dataclass(frozen=True)
class TaskPreflight:
    task: str
    gate: str
    verdict: str  # GREEN, RED, UNAVAILABLE, or "skipped" (preflight = false, or no gate)
    message: str

    def document(self) -> dict[str, str]:
        return {"task": self.task, "gate": self.gate, "verdict": self.verdict, "message": self.message}


class _UnrecordedRun(TaskRun):
    """A task run whose journal is a list in memory: a dry run writes nothing to the store."""

    def journal(self, event_type: str, **fields: object) -> dict:
        event = make_event(event_type, self.slug, self.task.id, **fields)
        self.recorded.append(event)
        return event


def preflight_tasks(engine: Engine, plan: Plan, task_ids) -> list[TaskPreflight]:
    from failres.gitops.workspace import Workspace, remove_tree
    from failres.sandbox.world import SeatWorld

    found = []
    for task in [plan.task(t) for t in task_ids] if task_ids else plan.tasks:
        run = _UnrecordedRun(engine, plan, task)
        run.recorded = []
        gate = engine.config.gates.get(run.gate_name)
        if gate is None or not gate.preflight:
            found.append(TaskPreflight(task.id, run.gate_name, "skipped", "no preflight for this gate"))
            continue
        run.prepare(read_journal(engine.store, plan.slug).for_task(task.id))
        run.past_events = ()  # always run it: the point is to see what the gate says now
        run.reuse_head_verdicts = False
        name = f"{task.id}.preflight"
        run.workspace = Workspace.create(path=engine.worktree_root() / plan.slug / name, git_dir=engine.git_dir,
                                         state_dir=engine.git_dir / "failres" / "workspaces" / plan.slug / name,
                                         branch=run.branch, base=run.int_head)
        run.workspace_path = run.workspace.path
        run.tree = run.workspace.tree
        run.dispatch_root = run.workspace.path.parent / f"{name}.dispatch"
        try:
            run.carry_environment()
            # The world and environment the real run judges in, so both say the same (a dry run
            # that judged the person's checkout called a green head red).
            run.world = SeatWorld.for_task(engine.config, top=engine.top, workspace=run.workspace.path,
                                           git_dir=run.workspace.git_dir, workspaces_root=engine.worktree_root(),
                                           dispatch_root=run.dispatch_root)
            run.plan_redirect()
            failure = run.check_includes() or run.run_setup() or run.check_redirect() or run.run_preflight()
        finally:
            run.release_environment()
            run.workspace.remove()
            remove_tree(run.dispatch_root)
        if failure is not None:
            found.append(TaskPreflight(task.id, run.gate_name, UNAVAILABLE, failure.message))
        elif run.head_green:
            found.append(TaskPreflight(task.id, run.gate_name, GREEN,
                                       f"already green at the integration head ({run.head_said}): the task may be "
                                       "done already"))
        else:
            found.append(TaskPreflight(task.id, run.gate_name, RED, f"red at the integration head: {run.head_said}"))
    return found
