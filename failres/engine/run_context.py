"""What one run of one task knows, and the small things every step of it does.

The run's conditions (the integration head, the scope with what decisions widened,
the bindings), its workspace and tree, writing to the journal, telling the progress
display, noticing a stop (a signal, a cancel), and the exact prompt a seat gets.
The loop's flow (`loop`) and its larger steps (`run_steps`) build on it; the
dispatch step (`dispatching`) receives it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from failres import gitops
from failres.decisions.records import widened_files
from failres.engine import state
from failres.containment.interrupts import Interrupted
from failres.containment.left import leave_for_person
from failres.containment.locks import TaskLock
from failres.engine.prompts import PromptInput, render_prompt
from failres.engine.quarantine import Failure
from failres.engine.ladder import Conditions
from failres.engine.runtime import Engine
from failres.engine.taxonomy import (
    FIXER_SCOPE_VIOLATION,
    GATE_NOT_GREEN_AFTER_FIXER,
    INCLUDE_REFUSED,
    WORKSPACE_UNRESTORABLE,
)
from failres.errors import GitError
from failres.gitops.workspace import Workspace
from failres.journal import event_put, make_event
from failres.engine.plan import Plan, Task
from failres.engine.dispatch_logs import RunLogs
from lessons.storage.records import change_of
from lessons.failpoints import failpoint

EXACT_PATCH_RED = "exact-patch-red"
log = logging.getLogger("failres.loop")




class RunContext:
    """One run of one task. Holds the little mutable state a run has; writes as it goes."""

    def __init__(self, engine: Engine, plan: Plan, task: Task, lock: TaskLock | None = None) -> None:
        self.engine = engine
        self.config = engine.config
        self.plan = plan
        self.task = task
        self.slug = plan.slug
        self.lock = lock
        self.workspace: Workspace | None = None
        self.workspace_path: Path | None = None
        self.tree = ""  # the task's tree so far: what the gate judges and what is committed
        self.int_head = ""
        self.base = ""
        self.allow: tuple[str, ...] = tuple(task.files)
        self.widened: tuple[str, ...] = ()
        self.prior: tuple[str, ...] = ()
        self.conditions = Conditions("", "", "")
        self.constrained_used = 0
        self.gate_runs = 0
        self.last_fail_class: str | None = None
        self.logs: RunLogs | None = None
        self.dispatch_root: Path | None = None
        self.included: tuple[str, ...] = ()  # `[workspace] include` files this workspace carries
        self.include_refused: tuple[str, ...] = ()  # included files that could not be put in the new workspace
        self.port = None  # the run's FAILRES_PORT lease (ports.PortLease)
        self.past_events: Sequence[dict] = ()  # the task's journal before this run
        self.head_said = ""  # what the gate said at the integration head (preflight), for the fixer
        self.head_green = False
        self.world = None  # the task's seat world (`sandbox.world.SeatWorld`), None where none runs
        self.redirect = None  # without a world, how the gate is led to the workspace (`sandbox.redirect.Redirect`)
        self.gate_name = task.gate or (self.config.default_gate().name if self.config.default_gate() else "")

    def journal(self, event_type: str, **fields: object) -> dict:
        event = make_event(event_type, self.slug, self.task.id, **fields)
        failpoint("journal-write")
        self.engine.store.commit(change_of([event_put(event)]), f"failres: {event_type} {self.slug}/{self.task.id}")
        return event

    def step(self, step: str, seat: str | None = None, attempt: int | None = None) -> None:
        self.engine.progress.step(self.slug, self.task.id, step, seat=seat, attempt=attempt)

    def stop_reason(self) -> str | None:
        if self.engine.stop.is_set():
            return "signal"
        if self.lock is not None:
            # Polled while seats and gates run: the moment to notice a lock file swapped under us.
            self.lock.keep_held()
            if self.lock.cancel_requested():
                return "cancel"
        if self.engine.claims is not None:
            return self.engine.claims.stop_reason(self.slug, self.task.id)
        return None

    def cancelled(self) -> bool:
        return self.stop_reason() is not None

    def check_stop(self) -> None:
        reason = self.stop_reason()
        if reason is not None:
            raise Interrupted(reason, self.engine.stop.signum)

    def seat_binding(self, seat: str) -> str:
        return getattr(self.config.seats, seat) or ""

    def bindings_identity(self) -> dict[str, str]:
        """Which binding (and which command) each seat uses: a change is a new experiment."""
        out = {}
        for seat in ("implementer", "fixer"):
            name = self.seat_binding(seat)
            if name:
                out[seat] = f"{name}:{state.key_of(list(self.config.bindings[name].command))}"
        return out

    def prepare(self, events: Sequence[dict]) -> None:
        from failres.decisions.records import task_decisions_from_store

        start = self.engine.claims.start_point(self.slug, self.task.id) if self.engine.claims is not None else None
        self.int_head = start or gitops.head_commit(self.engine.top, self.config.integration.branch)
        self.past_events = tuple(events)
        self.widened = widened_files(task_decisions_from_store(self.engine.store, self.slug, self.task.id),
                                     self.slug, self.task.id)
        self.allow = tuple(dict.fromkeys([*self.task.files, *self.widened]))
        self.prior = state.prior_failure_reasons(events)
        past = state.task_quarantines(events)  # what the advisory block is about: the task's own failures
        self.last_fail_class = past[-1].fail_class if past else None
        self.conditions = Conditions(
            int_head=self.int_head,
            scope_key=state.key_of(sorted(self.allow)),
            bindings_key=state.key_of(self.bindings_identity()),
            config_key=state.configuration_key(self.gate_name, self.config.gates.get(self.gate_name),
                                               self.config.workspace),
        )

    @property
    def branch(self) -> str:
        return f"failres/{self.slug}/{self.task.id}"

    def values(self, mode: str, attempt: int, prompt_file: Path | None = None,
               dispatch_dir: Path | None = None) -> dict[str, str]:
        return {"worktree": str(self.workspace_path or ""), "repo": str(self.engine.top),
                "slug": self.slug, "task": self.task.id, "mode": mode,
                "prompt_file": str(prompt_file or ""), "attempt": str(attempt),
                "dispatch_dir": str(dispatch_dir or ""), "port": str(self.port.port) if self.port else ""}

    def render(self, mode: str, attempt: int, *, gate_output: str = "", rejected: tuple[str, ...] = ()) -> str:
        return render_prompt(build_prompt_input(self, mode, attempt, gate_output=gate_output, rejected=rejected))

    def put_back(self, keep: Sequence[str]) -> Failure | None:
        """Put the workspace back to the task's tree; a Failure when a seat made that impossible.

        The included files stay through the clean-up and are copied afresh after it.
        """
        from failres.gitops.workspace_include import copy_included

        try:
            failpoint("put-back")
            self.workspace.purify(self.tree, (*keep, *self.included_patterns()))
        except GitError as error:
            return Failure(WORKSPACE_UNRESTORABLE, str(error))
        if self.included and not self.workspace.pristine_includes:
            refused = copy_included(self.engine.top, self.workspace.path, self.included)
            if refused:
                return Failure(INCLUDE_REFUSED, include_refusal(refused))
            self.workspace.pristine_includes = True
        return None

    def check_includes(self) -> Failure | None:
        """Before anything runs: every included file is in the new workspace, or the task is refused."""
        return Failure(INCLUDE_REFUSED, include_refusal(self.include_refused)) if self.include_refused else None

    def included_patterns(self) -> tuple[str, ...]:
        """The included files as `.gitignore` patterns anchored at the top."""
        return tuple("/" + path for path in self.included)

    def not_the_seats(self) -> tuple[str, ...]:
        """Patterns of what is never a seat's change: the gate's `keep` paths (what setup made) and
        the included files, whatever `.gitignore` says of them."""
        gate = self.config.gates.get(self.gate_name)
        return (*(gate.keep if gate else ()), *self.included_patterns())

    def carry_environment(self) -> None:
        """Give the new workspace the included files and the run a port of its own."""
        from failres.engine.ports import lease_port
        from failres.gitops.workspace_include import copy_included, included_paths, secret_values
        from lessons.redaction.known_secrets import remember_secret_values

        patterns = self.config.workspace.include
        if patterns:
            tracked = self.engine.repo.index  # the person's index: what git tracks there
            tree = self.engine.repo[self.workspace.base_tree]
            self.included = included_paths(self.engine.top, patterns,
                                           lambda path: path in tracked or _in_tree(tree, path))
            remember_secret_values(secret_values(self.engine.top, self.included))
            self.include_refused = tuple(copy_included(self.engine.top, self.workspace.path, self.included))
            self.workspace.pristine_includes = not self.include_refused
        self.port = lease_port()

    def release_environment(self) -> None:
        if self.port is not None:
            self.port.release()
            self.port = None

    def finish_workspace(self, *, keep: bool) -> None:
        if self.workspace is None:
            return
        if keep or self.config.worktrees.keep:
            try:
                leave_for_person(self.workspace)
            except (OSError, GitError) as error:  # the task's outcome stands; the workspace is only a view
                log.warning("the workspace %s left for you could not be made inert: %s", self.workspace.path, error)
            return
        self.workspace.remove()
        if self.dispatch_root is not None:
            from failres.gitops.workspace import remove_tree

            remove_tree(self.dispatch_root)


def _in_tree(tree, path: str) -> bool:
    try:
        tree[path]
    except KeyError:
        return False
    return True


def advisory_class(run: RunContext, mode: str, rejected: tuple[str, ...]) -> str | None:
    """Which failure class the advisory lessons block is about for this dispatch."""
    if rejected:
        return FIXER_SCOPE_VIOLATION
    if mode == "fix":
        return GATE_NOT_GREEN_AFTER_FIXER
    return run.last_fail_class


def build_prompt_input(run: RunContext, mode: str, attempt: int, *, gate_output: str = "",
                       rejected: tuple[str, ...] = ()) -> PromptInput:
    fail_class = advisory_class(run, mode, rejected)
    outcomes: Sequence = ()
    if run.engine.advisory is not None and fail_class:
        outcomes = run.engine.advisory(fail_class)
    return PromptInput(
        slug=run.slug, task=run.task.id, title=run.task.title, prompt=run.task.prompt, files=tuple(run.task.files),
        protected=tuple(run.config.scope.protected), mode=mode, attempt=attempt, gate_output=gate_output,
        judge=run.judge(mode, attempt) if mode == "fix" else None, rejected_files=rejected,
        prior_failures=run.prior, past_outcomes=tuple(outcomes),
        rules_block=run.engine.rules_block() if run.engine.rules_block else "", widened_files=run.widened,
        facts_block=run.engine.facts_block() if run.engine.facts_block else "",
        head_said=run.head_said, head_green=run.head_green,
    )


def include_refusal(paths) -> str:
    """Why the gate is not run: an included file could not be put in the workspace."""
    shown = ", ".join(paths[:3]) + (f" (and {len(paths) - 3} more)" if len(paths) > 3 else "")
    return (f"[workspace] include: {shown} could not be put in the workspace (a directory or a link stands where "
            "it goes, or it could not be read): the gate would run without your file, so nothing is judged")
