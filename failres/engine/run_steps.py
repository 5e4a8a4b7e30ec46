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

from failres.containment import kept
from failres.containment.interrupts import Interrupted
from failres.containment.tamper import Guard
from failres.engine.dispatching import Dispatched
from failres.engine.prompts import JudgeInvocation
from failres.engine.ladder import is_configuration_failure
from failres.engine.quarantine import Failure, QuarantineInput, quarantine_task
from failres.engine.runtime import GateOutcome, TaskOutcome
from failres.engine.gates import GateRun, gate_env, run_gate_process, run_setup
from failres.engine.seats import probe_until_healthy, seat_env, seat_values
from failres.engine import state
from failres.engine.preflight import GREEN, RED, UNAVAILABLE, HeadRun, HeadVerdict, judge_at_head, setup_failed_verdict
from failres.engine.taxonomy import (
    GATE_NOT_GREEN_AFTER_FIXER,
    GATE_UNAVAILABLE,
    SEAT_TAMPER,
    Observation,
    classify,
)
from failres.gitops.branches import commit_tree, move_branch
from failres.config.placeholders import render_command
from lessons.redaction.redact import redact

EXACT_PATCH_RED = "exact-patch-red"
NO_CHANGE = "no change was needed: the gate is green at the start"
log = logging.getLogger("failres.loop")


from failres.engine.run_context import RunContext


class RunSteps(RunContext):
    """A run's steps after (or beside) its dispatches."""

    def run_setup(self) -> Failure | None:
        gate = self.config.gates[self.gate_name]
        if not gate.setup:
            return None
        self.step("setup")
        self.workspace.handed_over()  # what setup made outside `keep`, or changed, is undone before the first seat
        found = run_setup(gate, values=self.values("implement", 1), cwd=self.workspace.path,
                          cancelled=self.cancelled, output=self.config.output, world=self.world)
        self.check_stop()
        if found is None:
            self._kept = kept.fingerprint(self.workspace.path, gate.keep)
            return None
        return Failure(GATE_UNAVAILABLE, setup_failed_verdict(self.gate_name, found).message)

    def rebuild_kept(self, gate) -> Failure | None:
        """The gate's `keep` paths as the setup (or the last gate) left them, else removed and set up again."""
        before = getattr(self, "_kept", None)
        if not gate.keep or before is None:
            return None
        differ = kept.changed(before, kept.fingerprint(self.workspace.path, gate.keep))
        if not differ:
            return None
        log.warning("failres: %s changed since the gate last ran (%s); set up again before judging",
                    ", ".join(gate.keep), ", ".join(differ[:5]))
        from failres.gitops.workspace import remove_tree

        for root in kept.kept_roots(self.workspace.path, gate.keep):
            remove_tree(root)
        self._kept = None
        return self.run_setup()

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

    def probe(self, seat: str) -> bool | Failure:
        """Probe the seat's binding as the seat would run: its environment, its agent home.

        The health command runs in the workspace, so only once it is put back to the
        task's tree (never on the files the failed seat left), and under the tamper
        check like a seat: what it changes in the person's repository is undone and
        quarantines the task.
        """
        from failres import beneath
        from failres.agents.homes import carry_back_logins, prepare_agent_homes
        from failres.gitops.workspace_files import fresh_dir_beside

        name = self.seat_binding(seat)
        binding = self.config.bindings[name]
        self.step("probe", seat=seat)

        def record(attempt: int, healthy: bool, detail: str) -> None:
            self.journal("repair", kind="wrapper-probe", outcome="healthy" if healthy else "down",
                         binding=name, attempt=attempt, detail=detail)

        def sleep(seconds: float) -> None:
            self.engine.stop.wait(seconds) if self.engine.sleep is time.sleep else self.engine.sleep(seconds)
            self.check_stop()

        root = self.dispatch_root
        try:
            probe_dir = fresh_dir_beside(root.parent, f"{root.name}/probe")
        except beneath.Planted as error:
            what = f"failres's dispatch directory beside the workspace was replaced: {error}: not followed"
            self.journal("seat-tamper", what=[what])
            return Failure(SEAT_TAMPER, what)
        env = seat_env(seat_values(self.values("implement", 1, dispatch_dir=probe_dir)), binding.env)
        gate = self.config.gates.get(self.gate_name)
        problem = self.put_back(gate.keep if gate else ())
        if problem is not None:
            return problem
        self.workspace.handed_over()
        guard = Guard(self.engine.top, self.engine.git_dir, store_ref=self.engine.store.ref, own=self.engine.own_moves)
        before = guard.capture()
        links = prepare_agent_homes(env, os.environ, Path.home())
        try:
            healthy = probe_until_healthy(binding, attempts=self.config.probe.attempts,
                                          backoff=self.config.probe.backoff, cwd=self.workspace.path, env=env,
                                          sleep=sleep, record=record)
        finally:
            carry_back_logins(links)
            tamper = guard.undo(before, slug=self.slug, task=self.task.id)
        if tamper:
            what = [f"while {name}'s health command ran: {line}" for line in tamper.what]
            self.journal("seat-tamper", what=what)
            return Failure(SEAT_TAMPER, "; ".join(what))
        return healthy

    def judge(self, mode: str, attempt: int) -> JudgeInvocation | None:
        gate = self.config.gates.get(self.gate_name)
        if gate is None or self.workspace_path is None:
            return None
        values = self.values(mode, attempt)
        if self.world is not None:
            # Inside the world the workspace stands at the repository top: {repo},
            # {worktree} and either cwd are all that one place.
            values = self.world.inside_values(values)
        try:
            argv = render_command(gate.command, values)
        except ValueError:
            return None
        cwd = str(self.engine.top if gate.cwd == "repo" or self.world is not None else self.workspace_path)
        return JudgeInvocation(tuple(argv), cwd)

    def run_gate(self, mode: str, attempt: int, *, preflight: bool = False) -> GateOutcome:
        gate = self.config.gates[self.gate_name]
        problem = self.put_back(gate.keep) or self.rebuild_kept(gate)
        if problem is not None:
            return GateOutcome(False, False, None, problem.message, self.gate_name, unavailable=problem.message)
        judge = self.judge(mode, attempt)
        if not preflight:
            # The display counts the gate's own runs (1 after the implementer, 2 after the
            # first fixer ...): "gate attempt 1" after a fixer read as if the first gate never ran.
            self.gate_runs += 1
            self.step("gate", seat="", attempt=self.gate_runs)
        self.workspace.handed_over()
        # The gate runs the code the seat wrote: what that code does to the person's
        # repository is checked and undone as a seat's would be. A gate configured to
        # run in the person's checkout (`cwd = "repo"`) works there by design.
        guard = None if gate.cwd == "repo" else Guard(self.engine.top, self.engine.git_dir,
                                                      store_ref=self.engine.store.ref, own=self.engine.own_moves)
        before = guard.capture() if guard is not None else None
        values = self.values(mode, attempt)
        found: GateRun = run_gate_process(gate, judge, env=gate_env(values if self.world is None
                                                                      else self.world.inside_values(values), gate.env),
                                          cancelled=self.cancelled, output=self.config.output, world=self.world,
                                          workspace=self.workspace.path)
        tamper = guard.undo(before, slug=self.slug, task=self.task.id) if guard is not None and before else None
        if gate.keep:
            self._kept = kept.fingerprint(self.workspace.path, gate.keep)  # what this gate's own run left there
        if tamper:
            what = [f"while gate {self.gate_name} ran: {line}" for line in tamper.what]
            self.journal("seat-tamper", what=what)
            return GateOutcome(False, False, found.result.exit_code, found.result.text, self.gate_name,
                               tampered="; ".join(what))
        self.check_stop()
        result = found.result
        if self.logs is not None and self.logs.count:
            self.logs.current().gate(result.text, found.meta, raw=result.raw_text)
        passed = result.exit_code == 0 and not result.timed_out
        extra: dict[str, object] = {}
        unavailable = found.unavailable_message
        if preflight:
            verdict = self.head_verdict(judge, result)
            unavailable = verdict.message if verdict.kind == UNAVAILABLE else None
            outcome = GateOutcome(passed, result.timed_out, result.exit_code, result.text, self.gate_name)
            extra = {"preflight": True, "verdict": verdict.kind, "intHead": self.int_head,
                     "gateKey": state.key_of(list(gate.command)), "summary": outcome.summary,
                     **({"cause": verdict.message} if unavailable else {})}
        self.journal("gate-result", gate=self.gate_name, passed=passed, exitCode=result.exit_code,
                     timedOut=result.timed_out, durationMs=int(result.duration * 1000), mode=mode, attempt=attempt,
                     unavailable=result.not_found or bool(preflight and unavailable), **extra)
        return GateOutcome(passed, result.timed_out, result.exit_code, result.text, self.gate_name,
                           unavailable=unavailable)

    def head_verdict(self, judge: JudgeInvocation, result) -> HeadVerdict:
        from failres.gitops.scope import match_scope

        def in_scope(path: str) -> bool:
            return bool(match_scope([path], self.allow, self.config.scope.protected)[0])

        src = self.workspace.path / "src"
        packages = tuple(sorted(p.name.removesuffix(".py") for p in src.iterdir())) if src.is_dir() else ()
        return judge_at_head(HeadRun(self.gate_name, tuple(judge.argv), result.exit_code, result.not_found,
                                     result.timed_out, result.text, str(self.workspace.path), packages),
                             self.allow, in_scope=in_scope)

    def run_preflight(self) -> Failure | None:
        """The gate once at the integration head, before the first dispatch (see `preflight`).

        A run at the same head with the same gate command that already said green or red
        is not repeated: its summary is what the fixer's prompt quotes.
        """
        gate = self.config.gates[self.gate_name]
        if not gate.preflight:
            return None
        key = state.key_of(list(gate.command))
        for event in reversed(self.past_events):
            if (event.get("type") == "gate-result" and event.get("preflight") and event.get("intHead") == self.int_head
                    and event.get("gateKey") == key and event.get("verdict") in (GREEN, RED)):
                self.head_said = str(event.get("summary") or "")
                self.head_green = event.get("verdict") == GREEN
                return None
        self.step("preflight")
        outcome = self.run_gate("implement", 0, preflight=True)
        if outcome.tampered:
            return Failure(SEAT_TAMPER, outcome.tampered)
        if outcome.unavailable:
            return Failure(GATE_UNAVAILABLE, outcome.unavailable)
        self.head_said = outcome.summary
        self.head_green = outcome.passed
        return None

    def commit_green(self) -> TaskOutcome:
        self.step("commit")
        if self.workspace is not None and self.tree == self.workspace.base_tree:
            # Green with nothing changed: the task needed no change. An empty commit would
            # land a merge that changes nothing and read as work done; the branch stays at
            # the start and `land` says there is nothing to merge.
            self.journal("task-committed", commit=self.base, intHead=self.int_head, empty=True)
            self.finish_workspace(keep=False)
            return TaskOutcome(self.slug, self.task.id, "committed", commit=self.base, message=NO_CHANGE)
        message = redact(f"failres: {self.slug}/{self.task.id} {self.task.title}".rstrip())
        commit = commit_tree(self.engine.git_dir, self.tree, self.base, message,
                             f"Failres-Task: {self.slug}/{self.task.id}")
        if self.engine.claims is not None and not self.engine.claims.publish(self.slug, self.task.id, self.branch,
                                                                             commit):
            # Another runner holds the task now: this result is refused, here as on the remote.
            raise Interrupted("lost")
        move_branch(self.engine.top, self.engine.git_dir, self.branch, commit, expected=self.base,
                    own=self.engine.own_moves)
        self.journal("task-committed", commit=commit, intHead=self.int_head)
        self.drop_unnamed([self.tree])
        self.finish_workspace(keep=False)
        return TaskOutcome(self.slug, self.task.id, "committed", commit=commit)

    def quarantine(self, failure: Failure, *, rollback: bool = False) -> TaskOutcome:
        self.step("quarantine")
        outcome = quarantine_task(QuarantineInput(
            engine=self.engine, slug=self.slug, task=self.task.id, files=tuple(self.task.files),
            int_head=self.int_head, base=self.base or self.int_head, conditions=self.conditions,
            base_tree=self.workspace.base_tree if self.workspace else None,
            configuration=is_configuration_failure(failure.fail_class, self.logs.count if self.logs else 0)),
            failure)
        self.drop_unnamed(self.snapshot_trees())
        # Without rollback the failed workspace stays for a person to look at.
        keep = rollback and not self.config.repair.rollback
        self.finish_workspace(keep=keep)
        if outcome.decision is not None and self.config.seats.resolver:
            self.ask_resolver(outcome.decision)
        return outcome

    def drop_unnamed(self, trees: list[str]) -> None:
        """The seat's accepted files that no commit or snapshot names leave the person's object database."""
        from failres.gitops.snapshot_objects import drop_unnamed

        if self.workspace is not None and self.workspace.fresh:
            drop_unnamed(self.engine.git_dir, self.workspace.fresh, trees)
            self.workspace.fresh.clear()

    def snapshot_trees(self) -> list[str]:
        import pygit2

        from failres.engine.quarantine import SNAPSHOT_REFS

        repo = pygit2.Repository(str(self.engine.git_dir))
        prefix = f"{SNAPSHOT_REFS}/{self.slug}/{self.task.id}/"
        return [str(repo.references[name].peel(pygit2.Commit).tree_id) for name in repo.references
                if name.startswith(prefix)]

    def ask_resolver(self, decision_id: str) -> None:
        """Let the resolver seat propose an answer right away; a person decides (unless configured otherwise)."""
        from failres.engine.resolver_seat import propose_answer

        self.step("resolver", seat="resolver")
        try:
            propose_answer(self.engine.top, self.engine.repo, self.config, self.engine.store, decision_id)
        except Exception:
            log.exception("failres: the resolver seat could not propose an answer to %s", decision_id)
