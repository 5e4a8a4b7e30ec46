"""The task loop: from a plan task to a commit on its branch, or a quarantine with a reason.

    start (stop-loss first) -> implementer -> tamper check -> scope guard -> gate
        -> red: fixer (bounded) -> tamper check -> scope guard -> gate ...
        -> green: commit of exactly the judged tree on failres/<slug>/<task>
        -> failure: classify -> rung action (probe, constrained retry, fixer) or quarantine

The seat works in a workspace outside the person's repository with a git dir of its
own (`gitops.workspace`). After each dispatch — every process of the seat gone — the
tamper check compares the person's repository with what it was, then the scope guard
reads the workspace's files. The task's *tree* grows only by the paths the guard
accepted; before every seat and every gate the workspace is put back to exactly that
tree, so the gate judges it and nothing else, and the commit is made from it.

Each step is journaled as it happens, so `status` and `journal` show a run in
flight and a killed run resumes from what the journal says.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

from failres import gitops
from failres.decisions.records import widened_files
from failres.engine import state
from failres.engine.dispatching import Dispatched, dispatch_seat, scope_failure
from failres.containment.interrupts import Interrupted
from failres.containment.locks import TaskLock
from failres.engine.prompts import JudgeInvocation, PromptInput, render_prompt
from failres.engine.quarantine import Failure, QuarantineInput, quarantine_task
from failres.engine.ladder import Action, Conditions, QuarantineFacts, next_action, stop_loss_decision
from failres.engine.runtime import Engine, GateOutcome, TaskOutcome
from failres.engine.gates import GateRun, gate_env, run_gate_process, run_setup
from failres.engine.seats import probe_until_healthy, seat_env, seat_values
from failres.engine.taxonomy import (
    FIXER_SCOPE_VIOLATION,
    GATE_NOT_GREEN_AFTER_FIXER,
    GATE_TIMEOUT,
    GATE_UNAVAILABLE,
    REPEATED_FAILURE_STOP,
    WORKSPACE_UNRESTORABLE,
    WRAPPER_ENGINE_DOWN,
    Observation,
    classify,
)
from failres.errors import GitError, UsageError
from failres.gitops.branches import commit_tree, ensure_task_branch, move_branch, patch_tree
from failres.gitops.workspace import Workspace
from failres.journal import event_put, make_event, read_journal
from failres.config.placeholders import render_command
from failres.plans.plan_file import Plan, Task
from failres.engine.dispatch_logs import RunLogs, run_id
from lessons.records import change_of
from lessons.redact import redact

EXACT_PATCH_RED = "exact-patch-red"
log = logging.getLogger("failres.loop")


class TaskRun:
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
        self.last_fail_class: str | None = None
        self.logs: RunLogs | None = None
        self.dispatch_root: Path | None = None
        self.gate_name = task.gate or (self.config.default_gate().name if self.config.default_gate() else "")

    # ── journal, progress, stopping ──────────────────────────────────────

    def journal(self, event_type: str, **fields: object) -> dict:
        event = make_event(event_type, self.slug, self.task.id, **fields)
        self.engine.store.commit(change_of([event_put(event)]), f"failres: {event_type} {self.slug}/{self.task.id}")
        return event

    def step(self, step: str, seat: str | None = None, attempt: int | None = None) -> None:
        self.engine.progress.step(self.slug, self.task.id, step, seat=seat, attempt=attempt)

    def stop_reason(self) -> str | None:
        if self.engine.stop.is_set():
            return "signal"
        if self.lock is not None and self.lock.cancel_requested():
            return "cancel"
        return None

    def cancelled(self) -> bool:
        return self.stop_reason() is not None

    def check_stop(self) -> None:
        reason = self.stop_reason()
        if reason is not None:
            raise Interrupted(reason, self.engine.stop.signum)

    # ── conditions ───────────────────────────────────────────────────────

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

        self.int_head = gitops.head_commit(self.engine.top, self.config.integration.branch)
        self.widened = widened_files(task_decisions_from_store(self.engine.store, self.slug, self.task.id),
                                     self.slug, self.task.id)
        self.allow = tuple(dict.fromkeys([*self.task.files, *self.widened]))
        self.prior = state.prior_failure_reasons(events)
        past = [q for q in state.quarantines(events) if q.fail_class != REPEATED_FAILURE_STOP]
        self.last_fail_class = past[-1].fail_class if past else None
        self.conditions = Conditions(
            int_head=self.int_head,
            scope_key=state.key_of(sorted(self.allow)),
            bindings_key=state.key_of(self.bindings_identity()),
        )

    # ── the run ──────────────────────────────────────────────────────────

    def run(self, patch: Path | None = None, *, force: bool = False) -> TaskOutcome:
        events = read_journal(self.engine.store, self.slug).for_task(self.task.id)
        current = state.task_state(events)
        if current in ("committed", "landed") and patch is None:
            return TaskOutcome(self.slug, self.task.id, current, skipped=True)
        if current in ("committed", "landed") and not force:
            msg = f"{self.slug}/{self.task.id} is {current}; --patch would replace its commit"
            raise UsageError(msg, hint="add --force to replace it (the old commit stays reachable)")
        if patch is None and not self.seat_binding("implementer"):
            msg = "no implementer seat is configured"
            raise UsageError(msg, hint='set [seats] implementer = "<binding>" in .failres.toml')
        if not self.gate_name:
            msg = f"task {self.task.id} has no gate and the configuration defines none"
            raise UsageError(msg, hint="add a [gates.NAME] section to .failres.toml")
        self.prepare(events)
        patched = patch_tree(self.engine.top, self.int_head, patch) if patch is not None else None
        if current == "running":
            # The journal says running but nobody holds the lock: that run died.
            self.journal("interrupted", reason="lost")
        outcome = self.run_prepared(events, patched, replaces=(state.last_commit(events) if patch else None))
        if self.engine.on_outcome is not None and not outcome.skipped:
            self.engine.on_outcome(outcome)
        return outcome

    def run_prepared(self, events: Sequence[dict], patched: str | None, replaces: str | None = None) -> TaskOutcome:
        if patched is None:
            stopped = self.check_stop_loss(events)
            if stopped is not None:
                return stopped
        self.record_binding_changes(events)
        self.step("worktree")
        # Branch and workspace before the journal: if either is refused, nothing is recorded.
        ensure_task_branch(self.engine.top, self.engine.git_dir, self.branch, self.int_head,
                           known=state.task_commits(events), own=self.engine.own_moves)
        self.base = self.int_head
        self.workspace = self.engine.make_workspace(self.slug, self.task.id, self.branch, self.int_head)
        self.workspace_path = self.workspace.path
        self.tree = self.workspace.tree
        try:
            started = self.journal(
                "task-started", intHead=self.int_head, bindings=self.bindings_identity(), scope=list(self.allow),
                mode="patch" if patched else "agent", replaces=replaces,
                definition={"title": self.task.title, "prompt": self.task.prompt, "files": list(self.task.files),
                            "gate": self.gate_name})
        except BaseException:
            self.finish_workspace(keep=False)
            raise
        run = run_id(str(started["ts"]), str(started["id"]))
        self.logs = RunLogs(self.engine.git_dir, self.slug, self.task.id, run)
        self.dispatch_root = self.workspace.path.parent / f"{self.task.id}.dispatch"
        try:
            setup = self.run_setup()
            if setup is not None:
                return self.quarantine(setup)
            if patched is not None:
                return self.run_exact_patch(patched)
            return self.run_agent()
        except Interrupted as stop:
            self.journal("interrupted", reason=stop.reason)
            self.finish_workspace(keep=False)
            if stop.reason == "cancel":
                return TaskOutcome(self.slug, self.task.id, "interrupted", message="cancelled")
            raise
        except BaseException as error:
            # Whatever went wrong, the task must not read `running` for ever: it is
            # interrupted (the next run resumes it) and the error goes on to the boundary.
            try:
                self.journal("interrupted", reason="error", error=redact(f"{type(error).__name__}: {error}")[:500])
            except Exception:  # noqa: BLE001 - the original error is the one to report
                log.exception("failres: recording the interruption of %s/%s failed", self.slug, self.task.id)
            raise
        finally:
            self.step("done")

    @property
    def branch(self) -> str:
        return f"failres/{self.slug}/{self.task.id}"

    def check_stop_loss(self, events: Sequence[dict]) -> TaskOutcome | None:
        facts = [QuarantineFacts(q.signature, q.int_head, q.scope_key, q.bindings_key)
                 for q in state.quarantines(events) if q.fail_class != REPEATED_FAILURE_STOP]
        verdict = stop_loss_decision(facts, self.conditions, threshold=self.config.stop_loss.threshold,
                                     mode=self.config.stop_loss.mode)
        if verdict is None:
            return None
        self.journal("stop-loss", signature=verdict.signature, count=verdict.count, advice=list(verdict.advice))
        message = (f"stopped before dispatch: the last {verdict.count} runs failed the same way under the same "
                   f"conditions ({verdict.signature})\nwhat would change the outcome: " + "; ".join(verdict.advice))
        return self.quarantine(Failure(REPEATED_FAILURE_STOP, message))

    def record_binding_changes(self, events: Sequence[dict]) -> None:
        last = state.last_event(events, "task-started")
        if last is None or not isinstance(last.get("bindings"), dict):
            return
        before, now = last["bindings"], self.bindings_identity()
        for seat in sorted(set(before) | set(now)):
            if before.get(seat) != now.get(seat):
                self.journal("binding-changed", seat=seat, **{"from": before.get(seat), "to": now.get(seat)})

    def run_setup(self) -> Failure | None:
        gate = self.config.gates[self.gate_name]
        if not gate.setup:
            return None
        self.step("setup")
        found = run_setup(gate, values=self.values("implement", 1), cwd=self.workspace.path,
                          cancelled=self.cancelled, output=self.config.output)
        self.check_stop()
        if found is None:
            return None
        return Failure(GATE_UNAVAILABLE, f"gate {self.gate_name}'s setup {found}")

    def run_agent(self) -> TaskOutcome:
        failure = self.guarded_dispatch("implementer", "implement", 1)
        if failure is not None:
            return self.quarantine(failure)
        gate = self.run_gate("implement", 1)
        fixer_attempts = 0
        while not gate.passed:
            if gate.unavailable:
                return self.quarantine(Failure(GATE_UNAVAILABLE, gate.unavailable_message))
            if gate.timed_out:
                return self.quarantine(Failure(GATE_TIMEOUT, gate.message, snapshot=self.tree), rollback=True)
            action = next_action(
                GATE_NOT_GREEN_AFTER_FIXER,
                constrained_retries_used=self.constrained_used,
                fixer_attempts_used=fixer_attempts,
                fixer_budget=self.config.repair.max_attempts,
                has_fixer=bool(self.seat_binding("fixer")),
                repair_enabled=self.config.repair.enabled,
                probe_done=False,
                scope_requested=False,
                user_rules=self.engine.user_rules(),
            )
            if action != Action.RETRY_FIXER:
                fail_class = self.user_class(gate.output) or GATE_NOT_GREEN_AFTER_FIXER
                message = (f"gate {self.gate_name} still red after {fixer_attempts} fixer attempt(s): "
                           f"{gate.summary}\n{gate.output}")
                return self.quarantine(Failure(fail_class, message, snapshot=self.tree), rollback=True)
            fixer_attempts += 1
            failure = self.guarded_dispatch("fixer", "fix", fixer_attempts, gate_output=gate.output)
            if failure is not None:
                return self.quarantine(failure)
            gate = self.run_gate("fix", fixer_attempts)
        return self.commit_green()

    def run_exact_patch(self, patched: str) -> TaskOutcome:
        """A human-approved patch, applied exactly: never handed to a fixer.

        The person approved patch A; silently applying a repaired patch B would break
        the promise that what was previewed is what lands. The task's tree is the
        patch applied to the start commit, computed without the workspace at all.
        """
        from failres.scope import match_scope

        self.step("patch")
        changed = gitops.changed_between(self.engine.top, self.tree, patched)
        _, rejected = match_scope(changed, self.allow, self.config.scope.protected)
        if rejected:
            self.journal("scope-violation", files=list(rejected), seat="patch")
            return self.quarantine(Failure(FIXER_SCOPE_VIOLATION,
                                           f"the patch changes files outside the task's scope: {', '.join(rejected)}",
                                           rejected=tuple(rejected), snapshot=patched), rollback=True)
        self.tree = patched
        gate = self.run_gate("fix", 1)
        if gate.passed:
            return self.commit_green()
        if gate.unavailable:
            return self.quarantine(Failure(GATE_UNAVAILABLE, gate.unavailable_message))
        message = f"exact patch left gate {self.gate_name} red: {gate.summary}\n{gate.output}"
        return self.quarantine(Failure(EXACT_PATCH_RED, message, snapshot=self.tree), rollback=True)

    def user_class(self, output: str) -> str | None:
        obs = Observation("gate", None, 1, False, False, output)
        found = classify(obs, engine_down_patterns=(), engine_down_exit_codes=(), user_rules=self.engine.user_rules())
        return found.fail_class if found and found.fail_class not in (GATE_NOT_GREEN_AFTER_FIXER,) and any(
            r.cls == found.fail_class for r in self.engine.user_rules()) else None

    # ── seats ────────────────────────────────────────────────────────────

    def values(self, mode: str, attempt: int, prompt_file: Path | None = None,
               dispatch_dir: Path | None = None) -> dict[str, str]:
        return {"worktree": str(self.workspace_path or ""), "repo": str(self.engine.top),
                "slug": self.slug, "task": self.task.id, "mode": mode,
                "prompt_file": str(prompt_file or ""), "attempt": str(attempt),
                "dispatch_dir": str(dispatch_dir or "")}

    def render(self, mode: str, attempt: int, *, gate_output: str = "", rejected: tuple[str, ...] = ()) -> str:
        return render_prompt(build_prompt_input(self, mode, attempt, gate_output=gate_output, rejected=rejected))

    def put_back(self, keep: Sequence[str]) -> Failure | None:
        """Put the workspace back to the task's tree; a Failure when a seat made that impossible."""
        try:
            self.workspace.purify(self.tree, keep)
        except GitError as error:
            return Failure(WORKSPACE_UNRESTORABLE, str(error))
        return None

    def guarded_dispatch(self, seat: str, mode: str, attempt: int, *, gate_output: str = "") -> Failure | None:
        """Dispatch a seat under the tamper check, the scope guard and the engine-down repair.

        None means the seat's accepted changes are in the task's tree: go on to the gate.
        """
        rejected: tuple[str, ...] = ()
        probed = False
        while True:
            self.check_stop()
            found = dispatch_seat(self, seat, mode, attempt, gate_output=gate_output, rejected=rejected)
            if isinstance(found, Failure):
                return found
            self.check_stop()
            if found.tamper is not None:
                return found.tamper
            if found.requests or found.rejected:
                failure = scope_failure(self, found, seat, first=self.constrained_used == 0)
                if failure is not None:
                    return failure
                # The first violation is undone (the next dispatch starts from the task's
                # tree) and gets one constrained re-dispatch.
                self.constrained_used += 1
                rejected = found.rejected
                continue
            if found.denied is not None:
                return found.denied
            if not found.run.failed:
                self.tree = self.workspace.accept(found.changed)
                return None
            failure = self.classify_seat_failure(found, seat)
            if failure.fail_class == WRAPPER_ENGINE_DOWN and not probed:
                probed = True
                if self.probe(seat):
                    continue  # healthy again: that dispatch once more
            return failure

    def classify_seat_failure(self, found: Dispatched, seat: str) -> Failure:
        result = found.run.result
        obs = Observation("seat", seat, result.exit_code, result.timed_out, result.not_found, result.text)
        verdict = classify(obs, engine_down_patterns=self.config.engine_down.patterns,
                           engine_down_exit_codes=self.config.engine_down.exit_codes,
                           user_rules=self.engine.user_rules())
        fail_class = verdict.fail_class if verdict else "unknown"
        reason = verdict.reason if verdict else "the seat failed"
        return Failure(fail_class, f"{seat} {reason}\n{result.text}", snapshot=found.snapshot())

    def probe(self, seat: str) -> bool:
        """Probe the seat's binding as the seat would run: its environment, its agent home."""
        from failres.agents.homes import carry_back_logins, prepare_agent_homes
        from failres.gitops.workspace import remove_tree

        name = self.seat_binding(seat)
        binding = self.config.bindings[name]
        self.step("probe", seat=seat)

        def record(attempt: int, healthy: bool, detail: str) -> None:
            self.journal("repair", kind="wrapper-probe", outcome="healthy" if healthy else "down",
                         binding=name, attempt=attempt, detail=detail)

        def sleep(seconds: float) -> None:
            self.engine.stop.wait(seconds) if self.engine.sleep is time.sleep else self.engine.sleep(seconds)
            self.check_stop()

        probe_dir = self.dispatch_root / "probe"
        remove_tree(probe_dir)
        probe_dir.mkdir(parents=True)
        env = seat_env(seat_values(self.values("implement", 1, dispatch_dir=probe_dir)), binding.env)
        links = prepare_agent_homes(env, os.environ, Path.home())
        try:
            return probe_until_healthy(binding, attempts=self.config.probe.attempts,
                                       backoff=self.config.probe.backoff, cwd=self.workspace.path, env=env,
                                       sleep=sleep, record=record)
        finally:
            carry_back_logins(links)

    # ── gate, commit, quarantine ─────────────────────────────────────────

    def judge(self, mode: str, attempt: int) -> JudgeInvocation | None:
        gate = self.config.gates.get(self.gate_name)
        if gate is None or self.workspace_path is None:
            return None
        try:
            argv = render_command(gate.command, self.values(mode, attempt))
        except ValueError:
            return None
        cwd = str(self.engine.top if gate.cwd == "repo" else self.workspace_path)
        return JudgeInvocation(tuple(argv), cwd)

    def run_gate(self, mode: str, attempt: int) -> GateOutcome:
        gate = self.config.gates[self.gate_name]
        problem = self.put_back(gate.keep)
        if problem is not None:
            return GateOutcome(False, False, None, problem.message, self.gate_name, unavailable=problem.message)
        judge = self.judge(mode, attempt)
        self.step("gate", attempt=attempt)
        self.workspace.handed_over()
        found: GateRun = run_gate_process(gate, judge, env=gate_env(self.values(mode, attempt)),
                                          cancelled=self.cancelled, output=self.config.output)
        self.check_stop()
        result = found.result
        if self.logs is not None and self.logs.count:
            self.logs.current().gate(result.text, found.meta)
        passed = result.exit_code == 0 and not result.timed_out
        self.journal("gate-result", gate=self.gate_name, passed=passed, exitCode=result.exit_code,
                     timedOut=result.timed_out, durationMs=int(result.duration * 1000), mode=mode, attempt=attempt,
                     unavailable=result.not_found)
        return GateOutcome(passed, result.timed_out, result.exit_code, result.text, self.gate_name,
                           unavailable=found.unavailable_message)

    def commit_green(self) -> TaskOutcome:
        self.step("commit")
        message = redact(f"failres: {self.slug}/{self.task.id} {self.task.title}".rstrip())
        commit = commit_tree(self.engine.git_dir, self.tree, self.base, message,
                             f"Failres-Task: {self.slug}/{self.task.id}")
        move_branch(self.engine.top, self.engine.git_dir, self.branch, commit, expected=self.base,
                    own=self.engine.own_moves)
        self.journal("task-committed", commit=commit, intHead=self.int_head)
        self.finish_workspace(keep=False)
        return TaskOutcome(self.slug, self.task.id, "committed", commit=commit)

    def quarantine(self, failure: Failure, *, rollback: bool = False) -> TaskOutcome:
        self.step("quarantine")
        outcome = quarantine_task(QuarantineInput(
            engine=self.engine, slug=self.slug, task=self.task.id, files=tuple(self.task.files),
            int_head=self.int_head, base=self.base or self.int_head, conditions=self.conditions,
            base_tree=self.workspace.base_tree if self.workspace else None), failure)
        # Without rollback the failed workspace stays for a person to look at.
        keep = rollback and not self.config.repair.rollback
        self.finish_workspace(keep=keep)
        if outcome.decision is not None and self.config.seats.resolver:
            self.ask_resolver(outcome.decision)
        return outcome

    def ask_resolver(self, decision_id: str) -> None:
        """Let the resolver seat propose an answer right away; a person decides (unless configured otherwise)."""
        from failres.decisions.resolver_seat import propose_answer

        self.step("resolver", seat="resolver")
        try:
            propose_answer(self.engine.top, self.engine.repo, self.config, self.engine.store, decision_id)
        except Exception:
            log.exception("failres: the resolver seat could not propose an answer to %s", decision_id)

    def finish_workspace(self, *, keep: bool) -> None:
        if self.workspace is not None and not keep and not self.config.worktrees.keep:
            self.workspace.remove()
            if self.dispatch_root is not None:
                from failres.gitops.workspace import remove_tree

                remove_tree(self.dispatch_root)


def advisory_class(run: TaskRun, mode: str, rejected: tuple[str, ...]) -> str | None:
    """Which failure class the advisory lessons block is about for this dispatch."""
    if rejected:
        return FIXER_SCOPE_VIOLATION
    if mode == "fix":
        return GATE_NOT_GREEN_AFTER_FIXER
    return run.last_fail_class


def build_prompt_input(run: TaskRun, mode: str, attempt: int, *, gate_output: str = "",
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
    )


