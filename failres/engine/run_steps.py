"""The larger steps of a run: the gate and its setup, the engine-down probe, the commit, the quarantine.

Each is one step with its side effects (a process, a store write, the task branch);
what the step means is decided by the pure functions in `taxonomy`, `ladder` and
`quarantine`.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from failres.containment.tamper import Guard
from failres.engine.dispatching import Dispatched
from failres.engine.prompts import JudgeInvocation
from failres.engine.quarantine import Failure, QuarantineInput, quarantine_task
from failres.engine.runtime import GateOutcome, TaskOutcome
from failres.engine.gates import GateRun, gate_env, run_gate_process, run_setup
from failres.engine.seats import probe_until_healthy, seat_env, seat_values
from failres.engine.taxonomy import (
    GATE_NOT_GREEN_AFTER_FIXER,
    GATE_UNAVAILABLE,
    Observation,
    classify,
)
from failres.gitops.branches import commit_tree, move_branch
from failres.config.placeholders import render_command
from lessons.redact import redact

EXACT_PATCH_RED = "exact-patch-red"
log = logging.getLogger("failres.loop")


from failres.engine.run_context import RunContext


class RunSteps(RunContext):
    """A run's steps after (or beside) its dispatches."""

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

    def user_class(self, output: str) -> str | None:
        obs = Observation("gate", None, 1, False, False, output)
        found = classify(obs, engine_down_patterns=(), engine_down_exit_codes=(), user_rules=self.engine.user_rules())
        return found.fail_class if found and found.fail_class not in (GATE_NOT_GREEN_AFTER_FIXER,) and any(
            r.cls == found.fail_class for r in self.engine.user_rules()) else None

    def classify_seat_failure(self, found: Dispatched, seat: str) -> Failure:
        result = found.run.result
        obs = Observation("seat", seat, result.exit_code, result.timed_out, result.not_found, result.text)
        verdict = classify(obs, engine_down_patterns=self.config.engine_down.patterns,
                           engine_down_exit_codes=self.config.engine_down.exit_codes,
                           user_rules=self.engine.user_rules())
        fail_class = verdict.fail_class if verdict else "unknown"
        reason = verdict.reason if verdict else "failed"
        # The built-in reasons name the seat already ("fixer exited with code 1"); a rule's may not.
        said = reason if reason.split(" ", 1)[0] == seat else f"{seat}: {reason}"
        return Failure(fail_class, f"{said}\n{result.text}", snapshot=found.snapshot(), seat=seat)

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
        # The display counts the gate's own runs (1 after the implementer, 2 after the first
        # fixer ...): "gate attempt 1" after a fixer read as if the first gate never ran.
        self.gate_runs += 1
        self.step("gate", seat="", attempt=self.gate_runs)
        self.workspace.handed_over()
        # The gate runs the code the seat wrote: what that code does to the person's
        # repository is checked and undone as a seat's would be. A gate configured to
        # run in the person's checkout (`cwd = "repo"`) works there by design.
        guard = None if gate.cwd == "repo" else Guard(self.engine.top, self.engine.git_dir,
                                                      store_ref=self.engine.store.ref, own=self.engine.own_moves)
        before = guard.capture() if guard is not None else None
        found: GateRun = run_gate_process(gate, judge, env=gate_env(self.values(mode, attempt)),
                                          cancelled=self.cancelled, output=self.config.output)
        tamper = guard.undo(before, slug=self.slug, task=self.task.id) if guard is not None and before else None
        if tamper:
            what = [f"while gate {self.gate_name} ran: {line}" for line in tamper.what]
            self.journal("seat-tamper", what=what)
            return GateOutcome(False, False, found.result.exit_code, found.result.text, self.gate_name,
                               tampered="; ".join(what))
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
        from failres.engine.resolver_seat import propose_answer

        self.step("resolver", seat="resolver")
        try:
            propose_answer(self.engine.top, self.engine.repo, self.config, self.engine.store, decision_id)
        except Exception:
            log.exception("failres: the resolver seat could not propose an answer to %s", decision_id)
