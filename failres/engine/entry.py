"""The engine's entry points for the CLI: build an Engine, run a plan, read task states."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from typing import TYPE_CHECKING

from failres.engine import state
from failres.containment.locks import live_holder, lost_holder, stop_lost_seat
from failres.engine.progress import LineProgress, NullProgress, Progress
from failres.errors import UsageError
from failres.journal import list_slugs, read_journal

if TYPE_CHECKING:
    from failres.engine.runtime import Engine, TaskOutcome
    from lessons.storage.store import Store

# The loop and what it stands on are imported where a run needs them: `status` reads the
# journal only, and starts without them.


def progress_for(*, quiet: bool) -> Progress:
    if quiet:
        return NullProgress()
    if sys.stderr.isatty():
        try:
            from failres.engine.live import LiveProgress
        except ImportError:  # the live display is an extra; plain lines always work
            return LineProgress()
        return LiveProgress()
    return LineProgress()


def engine_for(ctx, progress: Progress | None = None, *, attach: Callable[[Engine], None] | None = None) -> Engine:
    """An engine for the repository of `ctx`; `attach` gives it its knowledge (lessons, rules,
    facts in prompts, the ledger), and is what its --jobs threads' engines get too."""
    from failres.engine.runtime import Engine

    engine = Engine(top=ctx.top, repo=ctx.repo, config=ctx.config, store=ctx.store,
                    progress=progress or NullProgress(), attach=attach)
    if attach is not None:
        attach(engine)
    return engine


def run_plan_file(engine: Engine, plan_path: Path, *, task_ids=(), patch: Path | None = None,
                  force: bool = False, jobs: int = 1) -> list[TaskOutcome]:
    from failres.config.loading import effective_policy_of
    from failres.engine.schedule import run_plan
    from failres.engine.plan import load_plan
    from failres.sandbox.before_run import announce_before_run
    from lessons.bounds.capacity import reclaim_full_stores

    plan = load_plan(plan_path, engine.config)
    if patch is not None and not patch.is_file():
        msg = f"patch file not found: {patch}"
        raise UsageError(msg)
    require_store(engine.store)
    announce_before_run(engine.config, engine.top)  # refuses mode "required" without a world
    outcomes = run_plan(engine, plan, task_ids=task_ids, patch=patch.resolve() if patch else None, force=force,
                        jobs=jobs)
    # Bound the stores the run grew: once per run, not once per event; never fails the run.
    reclaim_full_stores(engine.store, lambda: effective_policy_of(engine.config, os.environ).policy)
    return outcomes


def require_store(store: Store) -> None:
    store.require()  # only `git failres init` creates a store; a missing one says how to restore it


def outcome_document(outcome: TaskOutcome) -> dict:
    doc = asdict(outcome)
    return {"slug": doc["slug"], "task": doc["task"], "state": doc["state"], "failClass": doc["fail_class"],
            "message": doc["message"], "commit": doc["commit"], "skipped": doc["skipped"],
            "advice": list(outcome.advice), "decision": outcome.decision, "seat": outcome.seat}


# A first line longer than this is a wall, not a sentence; its whole text stays in the journal.
_LINE_MAX = 400


def outcome_lines(outcome: TaskOutcome) -> list[str]:
    """How one task's outcome reads for a person: its state, why, and what to do about it (pure)."""
    head = f"{outcome.slug}/{outcome.task}: {outcome.state}"
    if outcome.fail_class:
        lines = [line.strip() for line in outcome.message.splitlines() if line.strip()]
        first = lines[0] if lines else ""
        if len(first) > _LINE_MAX:
            first = first[:_LINE_MAX].rsplit(" ", 1)[0] + " … (git failres journal " + outcome.slug + ")"
        by = f", by the {outcome.seat}" if outcome.seat and outcome.seat not in outcome.fail_class else ""
        out = [f"{head} ({outcome.fail_class}{by}): {first}"]
        if outcome.advice:
            out.append("  what would change the outcome:")
            out += [f"    - {advice}" for advice in outcome.advice]
        if outcome.decision:
            out.append(f"  decision {outcome.decision[:8]} waits for a person: git failres decisions --open")
        return out
    if outcome.skipped:
        return [f"{head} ({outcome.message or 'already ' + outcome.state})"]
    if outcome.state == "committed" and outcome.message:
        return [f"{head} ({outcome.message})"]  # no change was needed
    return [head]


def prompt_now(engine: Engine, slug: str, task_id: str, mode: str, plan_path: Path | None) -> str:
    from failres.engine.loop import TaskRun
    from failres.engine.plan import Plan, load_plan, require_id

    if mode not in ("implement", "fix"):
        msg = f"--mode must be implement or fix, not {mode!r}"
        raise UsageError(msg)
    require_id(slug, "slug")
    require_id(task_id, "task")
    if plan_path is not None:
        plan = load_plan(plan_path, engine.config)
        if plan.slug != slug:
            msg = f"the plan {plan_path} is plan {plan.slug!r}, not {slug!r}"
            raise UsageError(msg)
        task = plan.task(task_id)
    else:
        task = state.recorded_task(read_journal(engine.store, slug).for_task(task_id), task_id)
        if task is None:
            msg = f"no run of {slug}/{task_id} is recorded"
            raise UsageError(msg, hint="pass --plan PLAN to render a task that has not run yet")
        plan = Plan(slug=slug, tasks=(task,), path=None)
    run = TaskRun(engine, plan, task)
    run.prepare(read_journal(engine.store, slug).for_task(task_id))
    run.workspace_path = engine.worktree_root() / slug / task_id
    gate_output = last_gate_output(engine.git_dir, slug, task_id) if mode == "fix" else ""
    return run.render(mode, 1, gate_output=gate_output)


def last_gate_output(git_dir: Path, slug: str, task_id: str) -> str:
    """What the last gate of the task's latest run printed, as the fixer would get it."""
    from failres.engine.dispatch_logs import dispatches, task_runs

    for run in reversed(task_runs(git_dir, slug, task_id)):
        for record in reversed(dispatches(run)):
            text = record.read("gate.log")
            if text is not None:
                return text
    return ""
