"""The task loop: from a plan task to a commit on its branch, or a quarantine with a reason.

    start (stop-loss first) -> implementer -> scope guard -> gate
        -> red: fixer (bounded) -> scope guard -> gate ...
        -> green: commit on failres/<slug>/<task>
        -> failure: classify -> rung action (probe, constrained retry, fixer) or quarantine

Each step is journaled as it happens, so `status` and `journal` show a run in
flight and a killed run resumes from what the journal says.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path


from failres import gitops
from failres.config import render_command
from failres.decisions import widened_files
from failres.engine import state
from failres.engine.process import run_process
from failres.engine.prompts import JudgeInvocation, PromptInput, render_prompt
from failres.engine.quarantine import Failure, quarantine_task
from failres.engine.runtime import Engine, GateOutcome, TaskOutcome
from failres.engine.resolver import Action, Conditions, QuarantineFacts, next_action, stop_loss_decision
from failres.engine.seats import Dispatch, dispatch_seat, probe_until_healthy, seat_env
from failres.engine.taxonomy import (
    FIXER_SCOPE_VIOLATION,
    GATE_NOT_GREEN_AFTER_FIXER,
    GATE_TIMEOUT,
    REPEATED_FAILURE_STOP,
    WRAPPER_ENGINE_DOWN,
    Observation,
    classify,
)
from failres.errors import UsageError
from failres.journal import event_put, make_event, read_journal
from failres.plan import Plan, Task
from lessons.records import change_of
from lessons.retrieval import task_decisions

EXACT_PATCH_RED = "exact-patch-red"
log = logging.getLogger("failres.loop")


class TaskRun:
    """One run of one task. Holds the little mutable state a run has; writes as it goes."""

    def __init__(self, engine: Engine, plan: Plan, task: Task) -> None:
        self.engine = engine
        self.config = engine.config
        self.plan = plan
        self.task = task
        self.slug = plan.slug
        self.worktree: Path | None = None
        self.int_head = ""
        self.base = ""
        self.allow: tuple[str, ...] = tuple(task.files)
        self.widened: tuple[str, ...] = ()
        self.prior: tuple[str, ...] = ()
        self.conditions = Conditions("", "", "")
        self.constrained_used = 0
        self.last_fail_class: str | None = None
        self.gate_name = task.gate or (self.config.default_gate().name if self.config.default_gate() else "")

    # ── journal ──────────────────────────────────────────────────────────

    def journal(self, event_type: str, **fields: object) -> dict:
        event = make_event(event_type, self.slug, self.task.id, **fields)
        self.engine.store.commit(change_of([event_put(event)]), f"failres: {event_type} {self.slug}/{self.task.id}")
        return event

    def step(self, step: str, seat: str | None = None, attempt: int | None = None) -> None:
        self.engine.progress.step(self.slug, self.task.id, step, seat=seat, attempt=attempt)

    # ── conditions ───────────────────────────────────────────────────────

    def seat_binding(self, seat: str) -> str:
        name = getattr(self.config.seats, seat)
        return name or ""

    def bindings_identity(self) -> dict[str, str]:
        """Which binding (and which command) each seat uses: a change is a new experiment."""
        out = {}
        for seat in ("implementer", "fixer"):
            name = self.seat_binding(seat)
            if name:
                binding = self.config.bindings[name]
                out[seat] = f"{name}:{state.key_of(list(binding.command))}"
        return out

    def prepare(self, events: Sequence[dict]) -> None:
        self.int_head = gitops.head_commit(self.engine.top, self.config.integration.branch)
        decisions = task_decisions(self.engine.store, self.slug, self.task.id)
        self.widened = widened_files(decisions, self.slug, self.task.id)
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

    def run(self, patch: Path | None = None) -> TaskOutcome:
        events = read_journal(self.engine.store, self.slug).for_task(self.task.id)
        current = state.task_state(events)
        if current in ("committed", "landed") and patch is None:
            return TaskOutcome(self.slug, self.task.id, current, skipped=True)
        if patch is None and not self.seat_binding("implementer"):
            msg = "no implementer seat is configured"
            raise UsageError(msg, hint='set [seats] implementer = "<binding>" in .failres.toml')
        if not self.gate_name:
            msg = f"task {self.task.id} has no gate and the configuration defines none"
            raise UsageError(msg, hint="add a [gates.NAME] section to .failres.toml")
        self.prepare(events)
        outcome = self.run_prepared(events, patch)
        if self.engine.on_outcome is not None and not outcome.skipped:
            self.engine.on_outcome(outcome)
        return outcome

    def run_prepared(self, events: Sequence[dict], patch: Path | None) -> TaskOutcome:
        if patch is None:
            stopped = self.check_stop_loss(events)
            if stopped is not None:
                return stopped
        self.record_binding_changes(events)
        self.journal("task-started", intHead=self.int_head, bindings=self.bindings_identity(),
                     scope=list(self.allow), mode="patch" if patch else "agent",
                     definition={"title": self.task.title, "prompt": self.task.prompt,
                                 "files": list(self.task.files), "gate": self.gate_name})
        self.step("worktree")
        self.worktree = gitops.add_task_worktree(self.engine.top, self.engine.worktree_root() / self.slug / self.task.id,
                                                 self.branch, self.int_head)
        self.base = self.int_head
        try:
            if patch is not None:
                return self.run_exact_patch(patch)
            return self.run_agent()
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

    def run_agent(self) -> TaskOutcome:
        failure = self.guarded_dispatch("implementer", "implement", 1)
        if failure is not None:
            return self.quarantine(failure)
        gate = self.run_gate("implement", 1)
        fixer_attempts = 0
        while not gate.passed:
            if gate.timed_out:
                return self.quarantine(Failure(GATE_TIMEOUT, gate.message), rollback=True)
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
                           f"{gate.summary}\n{gate.output[-2000:]}")
                return self.quarantine(Failure(fail_class, message), rollback=True)
            fixer_attempts += 1
            failure = self.guarded_dispatch("fixer", "fix", fixer_attempts, gate_output=gate.output)
            if failure is not None:
                return self.quarantine(failure)
            gate = self.run_gate("fix", fixer_attempts)
        return self.commit_green()

    def run_exact_patch(self, patch: Path) -> TaskOutcome:
        """A human-approved patch, applied exactly: never handed to a fixer.

        The person approved patch A; silently applying a repaired patch B would break
        the promise that what was previewed is what lands.
        """
        self.step("patch")
        baseline = gitops.capture_baseline(self.worktree)
        gitops.apply_patch(self.worktree, patch)
        changes = gitops.changed_paths(self.worktree, baseline)
        from failres.engine.scope import match_scope

        _, rejected = match_scope(changes.paths, self.allow, self.config.scope.protected)
        if rejected:
            self.journal("scope-violation", files=list(rejected), seat="patch")
            return self.quarantine(Failure(FIXER_SCOPE_VIOLATION,
                                           f"the patch changes files outside the task's scope: {', '.join(rejected)}",
                                           rejected=tuple(rejected)), rollback=True)
        gate = self.run_gate("fix", 1)
        if gate.passed:
            return self.commit_green()
        message = f"exact patch {patch.name} left gate {self.gate_name} red: {gate.summary}\n{gate.output[-2000:]}"
        return self.quarantine(Failure(EXACT_PATCH_RED, message), rollback=True)

    def user_class(self, output: str) -> str | None:
        obs = Observation("gate", None, 1, False, False, output)
        found = classify(obs, engine_down_patterns=(), engine_down_exit_codes=(), user_rules=self.engine.user_rules())
        return found.fail_class if found and found.fail_class not in (GATE_NOT_GREEN_AFTER_FIXER,) and any(
            r.cls == found.fail_class for r in self.engine.user_rules()) else None

    # ── seats ────────────────────────────────────────────────────────────

    def values(self, mode: str, attempt: int, prompt_file: Path) -> dict[str, str]:
        return {"worktree": str(self.worktree), "repo": str(self.engine.top), "slug": self.slug,
                "task": self.task.id, "mode": mode, "prompt_file": str(prompt_file), "attempt": str(attempt)}

    def prompt_path(self, mode: str, attempt: int, constrained: bool) -> Path:
        suffix = "-constrained" if constrained else ""
        return self.engine.git_dir / "failres" / "prompts" / self.slug / self.task.id / f"{mode}-{attempt}{suffix}.md"

    def render(self, mode: str, attempt: int, *, gate_output: str = "", rejected: tuple[str, ...] = ()) -> str:
        return render_prompt(build_prompt_input(self, mode, attempt, gate_output=gate_output, rejected=rejected))

    def dispatch(self, seat: str, mode: str, attempt: int, *, gate_output: str, rejected: tuple[str, ...]) -> Dispatch:
        binding = self.seat_binding(seat)
        constrained = bool(rejected)
        prompt_file = self.prompt_path(mode, attempt, constrained)
        prompt = self.render(mode, attempt, gate_output=gate_output, rejected=rejected)
        self.step("seat", seat=seat, attempt=attempt)
        self.journal("seat-dispatched", seat=seat, binding=binding, mode=mode, attempt=attempt, constrained=constrained)
        found = dispatch_seat(config=self.config, seat=seat, binding_name=binding, worktree=self.worktree,
                              prompt=prompt, prompt_file=prompt_file, values=self.values(mode, attempt, prompt_file),
                              allow=self.allow)
        result = found.result
        self.journal("seat-finished", seat=seat, binding=binding, exitCode=result.exit_code,
                     timedOut=result.timed_out, durationMs=int(result.duration * 1000), outputBytes=result.total_bytes)
        return found

    def guarded_dispatch(self, seat: str, mode: str, attempt: int, *, gate_output: str = "") -> Failure | None:
        """Dispatch a seat under the scope guard and the engine-down repair; None means go on to the gate."""
        rejected: tuple[str, ...] = ()
        probed = False
        while True:
            found = self.dispatch(seat, mode, attempt, gate_output=gate_output, rejected=rejected)
            if found.requests:
                # A seat that asks for scope stops the retry ladder at once: a person decides.
                for request in found.requests:
                    self.journal("scope-request", file=request.file, reason=request.reason)
                if found.rejected:
                    self.journal("scope-violation", files=list(found.rejected), seat=seat)
                files = tuple(dict.fromkeys([*found.rejected, *(r.file for r in found.requests)]))
                lines = "; ".join(f"{r.file} — {r.reason}" if r.reason else r.file for r in found.requests)
                failure = Failure(FIXER_SCOPE_VIOLATION, f"{seat} asked for scope: SCOPE-REQUEST: {lines}",
                                  rejected=files, requests=found.requests, restore=found.baseline)
                return failure
            if found.rejected:
                self.journal("scope-violation", files=list(found.rejected), seat=seat)
                if self.constrained_used == 0:
                    # The first violation is undone and gets one constrained re-dispatch.
                    self.constrained_used += 1
                    gitops.restore_baseline(self.worktree, found.baseline)
                    rejected = found.rejected
                    continue
                return Failure(FIXER_SCOPE_VIOLATION,
                               f"{seat} changed files outside the task's scope again: {', '.join(found.rejected)}",
                               rejected=found.rejected, restore=found.baseline)
            if not found.failed:
                return None
            obs = Observation("seat", seat, found.result.exit_code, found.result.timed_out, found.result.not_found,
                              found.result.text)
            verdict = classify(obs, engine_down_patterns=self.config.engine_down.patterns,
                               engine_down_exit_codes=self.config.engine_down.exit_codes,
                               user_rules=self.engine.user_rules())
            fail_class = verdict.fail_class if verdict else "unknown"
            reason = verdict.reason if verdict else "the seat failed"
            message = f"{seat} {reason}\n{found.result.text[-2000:]}"
            if fail_class == WRAPPER_ENGINE_DOWN and not probed:
                probed = True
                if self.probe(seat):
                    gitops.restore_baseline(self.worktree, found.baseline)
                    continue  # healthy again: that dispatch once more
            return Failure(fail_class, message, restore=found.baseline)

    def probe(self, seat: str) -> bool:
        name = self.seat_binding(seat)
        binding = self.config.bindings[name]
        self.step("probe", seat=seat)

        def record(attempt: int, healthy: bool, detail: str) -> None:
            self.journal("repair", kind="wrapper-probe", outcome="healthy" if healthy else "down",
                         binding=name, attempt=attempt, detail=detail)

        env = seat_env(self.values("implement", 1, Path("/dev/null")), binding.env)
        return probe_until_healthy(binding, attempts=self.config.probe.attempts, backoff=self.config.probe.backoff,
                                   cwd=self.worktree, env=env, sleep=self.engine.sleep, record=record)

    # ── gate, commit, quarantine ─────────────────────────────────────────

    def judge(self, mode: str, attempt: int) -> JudgeInvocation | None:
        gate = self.config.gates.get(self.gate_name)
        if gate is None or self.worktree is None:
            return None
        try:
            argv = render_command(gate.command, self.values(mode, attempt, self.prompt_path(mode, attempt, False)))
        except ValueError:
            return None
        cwd = str(self.engine.top if gate.cwd == "repo" else self.worktree)
        return JudgeInvocation(tuple(argv), cwd)

    def run_gate(self, mode: str, attempt: int) -> GateOutcome:
        gate = self.config.gates[self.gate_name]
        judge = self.judge(mode, attempt)
        self.step("gate", attempt=attempt)
        result = run_process(judge.argv, cwd=Path(judge.cwd), env=seat_env(
            self.values(mode, attempt, self.prompt_path(mode, attempt, False)), {}), stdin_data=None,
            timeout=gate.timeout, head_bytes=self.config.output.head_bytes, tail_bytes=self.config.output.tail_bytes)
        passed = result.exit_code == 0 and not result.timed_out
        self.journal("gate-result", gate=self.gate_name, passed=passed, exitCode=result.exit_code,
                     timedOut=result.timed_out, durationMs=int(result.duration * 1000), mode=mode, attempt=attempt)
        return GateOutcome(passed, result.timed_out, result.exit_code, result.text, self.gate_name)

    def commit_green(self) -> TaskOutcome:
        self.step("commit")
        message = f"failres: {self.slug}/{self.task.id} {self.task.title}".rstrip()
        commit = gitops.commit_task(self.worktree, message, f"Failres-Task: {self.slug}/{self.task.id}", base=self.base)
        self.journal("task-committed", commit=commit, intHead=self.int_head)
        self.finish_worktree(keep=False)
        return TaskOutcome(self.slug, self.task.id, "committed", commit=commit)

    def quarantine(self, failure: Failure, *, rollback: bool = False) -> TaskOutcome:
        self.step("quarantine")
        outcome = quarantine_task(self, failure)
        keep = False
        if self.worktree is not None:
            if rollback and self.config.repair.rollback:
                gitops.reset_hard(self.worktree, self.base)
            elif rollback:
                keep = True  # no rollback asked for: leave the failed state for a person to look at
            elif failure.restore is not None:
                gitops.restore_baseline(self.worktree, failure.restore)
        self.finish_worktree(keep=keep)
        if outcome.decision is not None and self.config.seats.resolver:
            self.ask_resolver(outcome.decision)
        return outcome

    def ask_resolver(self, decision_id: str) -> None:
        """Let the resolver seat propose an answer right away; a person can always answer instead.

        Its reply counts only as the exact {"scopeFiles": [...]} shape outside protected
        paths; anything else leaves the decision open. It never costs the run.
        """
        from failres.resolver_seat import propose_answer

        self.step("resolver", seat="resolver")
        try:
            propose_answer(self.engine.top, self.engine.repo, self.config, self.engine.store, decision_id)
        except Exception:
            log.exception("failres: the resolver seat could not propose an answer to %s", decision_id)

    def finish_worktree(self, *, keep: bool) -> None:
        if self.worktree is not None and not keep and not self.config.worktrees.keep:
            gitops.remove_task_worktree(self.engine.top, self.worktree)


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


def run_plan(engine: Engine, plan: Plan, *, task_ids: Sequence[str] = (), patch: Path | None = None
             ) -> list[TaskOutcome]:
    tasks = [plan.task(t) for t in task_ids] if task_ids else list(plan.tasks)
    if patch is not None and len(tasks) != 1:
        msg = "--patch applies to exactly one task"
        raise UsageError(msg, hint="add --task ID")
    return [TaskRun(engine, plan, task).run(patch=patch) for task in tasks]
