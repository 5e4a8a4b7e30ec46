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
from failres.engine.runtime import GateOutcome, PublishRefused, TaskOutcome
from failres.engine.gates import GateRun, gate_env, run_gate_process, run_setup
from failres.engine.seats import seat_env, seat_values
from failres.hostside.probe import probe_until_healthy
from failres.engine.preflight import UNAVAILABLE, setup_failed_verdict
from failres.engine.taxonomy import (
    GATE_NOT_GREEN_AFTER_FIXER,
    GATE_UNAVAILABLE,
    INCLUDE_REFUSED,
    PUBLISH_REFUSED,
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


from failres.engine.preflight_steps import PreflightSteps
from lessons.failpoints import failpoint


class RunSteps(PreflightSteps):
    """A run's steps after (or beside) its dispatches."""

    def run_setup(self) -> Failure | None:
        """The gate's setup, the one command that may write the kept paths; fingerprinted after it alone.

        It runs the workspace's code (an install runs the seat's `setup.py`), so it runs
        under the tamper check like a seat, world or not: with `[sandbox] mode = "off"`
        a re-run setup once moved the person's `main`, unseen.
        """
        gate = self.config.gates[self.gate_name]
        if not gate.setup:
            return None
        self.step("setup")
        self.workspace.handed_over()  # what setup made outside `keep`, or changed, is undone before the first seat
        guard = Guard(self.engine.top, self.engine.git_dir, store_ref=self.engine.store.ref, own=self.engine.own_moves)
        before = guard.capture()
        try:
            found = run_setup(gate, values=self.values("implement", 1), cwd=self.workspace.path,
                              cancelled=self.cancelled, output=self.config.output, world=self.world,
                              redirect=self.redirect)
        finally:
            tamper = guard.undo(before, slug=self.slug, task=self.task.id)
        if tamper:
            what = [f"while gate {self.gate_name}'s setup ran: {line}" for line in tamper.what]
            self.journal("seat-tamper", what=what)
            return Failure(SEAT_TAMPER, "; ".join(what))
        self.check_stop()
        if found is None:
            self._kept = kept.fingerprint(self.workspace.path, gate.keep)
            return None
        return Failure(GATE_UNAVAILABLE, setup_failed_verdict(self.gate_name, found).message)

    def rebuild_kept(self, gate) -> Failure | None:
        """The gate's `keep` paths as the setup left them; else removed, set up again, and `seat-tamper`.

        Only the setup writes them: seats, gates and probes see them read-only in the
        world, and without one this check catches what they changed. The fingerprint is
        never taken again after a gate: gate-run code once planted a `.pth` in a kept
        `.venv`, the fingerprint after that gate made it the baseline, and the next gate
        went green on a tree that fails on a clean clone.
        """
        before = getattr(self, "_kept", None)
        if not gate.keep or before is None:
            return None
        from failres.gitops.workspace import remove_tree

        for cache in kept.caches(self.workspace.path, gate.keep):
            remove_tree(cache)
        differ = kept.changed(before, kept.fingerprint(self.workspace.path, gate.keep))
        if not differ:
            return None
        log.warning("failres: %s changed since the setup made it (%s); set up again before anything runs there",
                    ", ".join(gate.keep), ", ".join(differ[:5]))
        for root in kept.kept_roots(self.workspace.path, gate.keep):
            remove_tree(root)
        self._kept = None
        rebuilt = self.run_setup()
        if rebuilt is not None:
            return rebuilt
        shown = ", ".join(differ[:5]) + (f" and {len(differ) - 5} more" if len(differ) > 5 else "")
        what = [f"the kept paths of gate {self.gate_name} were changed after its setup ({shown}): "
                "removed and set up again"]
        self.journal("seat-tamper", what=what)
        return Failure(SEAT_TAMPER, "; ".join(what))

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
        task's tree and its kept paths are as the setup made them (never on the files the
        failed seat left), in the task's world where there is one, and under the tamper
        check like a seat: what it changes in the person's repository is undone and
        quarantines the task.
        """
        from failres import beneath
        from failres.engine.seats import dispatches_root
        from failres.gitops.workspace_files import fresh_dir_beside
        from failres.hostside.logins import carry_back_logins, prepare_agent_homes

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
        values = self.values("implement", 1, dispatch_dir=probe_dir)
        env = seat_env(seat_values(values if self.world is None else self.world.inside_values(values)), binding.env)
        gate = self.config.gates.get(self.gate_name)
        keep = gate.keep if gate else ()
        problem = self.put_back(keep) or (self.rebuild_kept(gate) if gate else None)
        if problem is not None:
            return problem
        self.workspace.handed_over()
        guard = Guard(self.engine.top, self.engine.git_dir, store_ref=self.engine.store.ref, own=self.engine.own_moves)
        before = guard.capture()
        root = dispatches_root(values)
        links = prepare_agent_homes(env, os.environ, Path.home(), root=root)
        try:
            healthy = probe_until_healthy(binding, attempts=self.config.probe.attempts,
                                          backoff=self.config.probe.backoff, cwd=self.workspace.path, env=env,
                                          sleep=sleep, record=record, world=self.world, kept=keep)
        finally:
            carry_back_logins(links, root=root)
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
        if self.world is None and argv and cwd != str(self.engine.top):
            argv[0] = self.environment_program(argv[0])
        return JudgeInvocation(tuple(argv), cwd)

    def environment_program(self, program: str) -> str:
        """Without a world, a gate program named from the repository top inside an environment dir
        (`.venv/bin/python`, which `init` writes) is the person's, as the world shows it at the top:
        the workspace has no `.venv/` of its own, and the redirect leads its imports to the workspace."""
        from failres.sandbox.environment import environment_dirs

        if "/" not in program or os.path.isabs(program) or (self.workspace_path / program).exists():
            return program
        first = Path(program).parts[0]
        if first in environment_dirs(self.config, self.engine.top) and (self.engine.top / program).is_file():
            return str(self.engine.top / program)
        return program

    def run_gate(self, mode: str, attempt: int, *, preflight: bool = False) -> GateOutcome:
        gate = self.config.gates[self.gate_name]
        problem = self.put_back(gate.keep) or self.rebuild_kept(gate)
        if problem is not None and problem.fail_class == SEAT_TAMPER:
            return GateOutcome(False, False, None, problem.message, self.gate_name, tampered=problem.message)
        if problem is not None:
            return GateOutcome(False, False, None, problem.message, self.gate_name, unavailable=problem.message,
                               refused=problem if problem.fail_class == INCLUDE_REFUSED else None)
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
        failpoint("gate")
        found: GateRun = run_gate_process(gate, judge, env=self.gate_environment(values, gate),
                                          cancelled=self.cancelled, output=self.config.output, world=self.world,
                                          workspace=self.workspace.path)
        tamper = guard.undo(before, slug=self.slug, task=self.task.id) if guard is not None and before else None
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
            extra = {**self.preflight_fields(verdict), "summary": outcome.summary}
        self.journal("gate-result", gate=self.gate_name, passed=passed, exitCode=result.exit_code,
                     timedOut=result.timed_out, durationMs=int(result.duration * 1000), mode=mode, attempt=attempt,
                     unavailable=result.not_found or bool(preflight and unavailable), **extra)
        return GateOutcome(passed, result.timed_out, result.exit_code, result.text, self.gate_name,
                           unavailable=unavailable)

    def gate_environment(self, values, gate) -> dict[str, str]:
        """The gate's environment: as the world sees it, or, without one, led to the workspace's files."""
        if self.world is not None:
            return gate_env(self.world.inside_values(values), gate.env)
        env = gate_env(values, gate.env)
        if self.redirect is not None:
            from failres.sandbox.redirect import redirected_env

            env = redirected_env(self.redirect, env)
        return env

    def plan_redirect(self) -> None:
        """Without a world: how the gate is led to the workspace's files (`sandbox.redirect`)."""
        gate = self.config.gates.get(self.gate_name)
        self.redirect = None
        if self.world is not None or gate is None or gate.cwd == "repo" or self.workspace_path is None:
            return  # in the world the workspace stands at the checkout's path; a repo gate works there by design
        from failres.sandbox.environment import environment_dirs, outside_environments
        from failres.sandbox.redirect import plan_redirect

        names = (*environment_dirs(self.config, self.engine.top),
                 *outside_environments(self.config, self.engine.top, (self.gate_name,)))
        found = plan_redirect(self.engine.top, self.workspace_path, names)
        self.redirect = found if found.needed else None

    def check_redirect(self) -> Failure | None:
        """Before anything is judged without a world: the canary, or gate-unavailable with the fix."""
        if self.redirect is None:
            return None
        from failres.sandbox.before_run import world_fix
        from failres.sandbox.environment import node_install
        from failres.sandbox.redirect import canary, code_path_line, refusal_message

        world = world_fix(self.config)
        if self.redirect.refused:
            first = self.redirect.refused[0]
            # The workspace holds what the tree does: a lockfile there is one a setup can install from.
            return Failure(GATE_UNAVAILABLE, refusal_message(self.gate_name, f"{first.where} {first.what}",
                                                             node_install(self.workspace_path), world))
        gate = self.config.gates[self.gate_name]
        why = canary(self.redirect, env=self.gate_environment(self.values("implement", 1), gate),
                     workspace=self.workspace_path)
        if why is None:
            return None
        culprit = code_path_line(self.engine.top, self.redirect.names)
        return Failure(GATE_UNAVAILABLE, refusal_message(self.gate_name, why, world=world, code_line=culprit))

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
        if self.workspace is not None:
            forged = self.bring_in(self.tree)
            if forged is not None:
                return self.quarantine(forged)
        commit = commit_tree(self.engine.git_dir, self.tree, self.base, message,
                             f"Failres-Task: {self.slug}/{self.task.id}")
        if self.engine.claims is not None:
            try:
                published = self.engine.claims.publish(self.slug, self.task.id, self.branch, commit)
            except PublishRefused as refused:
                # Pushing the same refused branch again would be refused again: the work
                # stays in the quarantine's snapshot and the plan goes on without it.
                return self.quarantine(Failure(PUBLISH_REFUSED, str(refused), snapshot=self.tree))
            if not published:
                # Another runner holds the task now: this result is refused, here as on the remote.
                raise Interrupted("lost")
        failpoint("commit")
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
            base_tree=self.workspace.base_tree if self.workspace else None,
            objects=self.workspace.objects if self.workspace else None,
            configuration=is_configuration_failure(failure.fail_class, self.logs.count if self.logs else 0)),
            failure)
        # Without rollback the failed workspace stays for a person to look at.
        keep = rollback and not self.config.repair.rollback
        self.finish_workspace(keep=keep)
        if outcome.decision is not None and self.config.seats.resolver:
            self.ask_resolver(outcome.decision)
        return outcome

    def bring_in(self, tree: str) -> Failure | None:
        """The committed tree's objects, and only those, enter the person's database from the task's.

        Each is read hash-checked on the way: a seat that reached the task's object
        directory and rewrote an object failres hashed for an earlier dispatch gets
        nothing into the person's database, and the task is quarantined.
        """
        import pygit2

        try:
            self.workspace.objects.bring_in(tree)
        except (pygit2.GitError, KeyError, ValueError) as error:
            what = f"an object of the task's tree did not hold what its name says: {error}"
            self.journal("seat-tamper", what=[what])
            return Failure(SEAT_TAMPER, what)
        return None

    def ask_resolver(self, decision_id: str) -> None:
        """Let the resolver seat propose an answer right away; a person decides (unless configured otherwise)."""
        from failres.engine.resolver_seat import propose_answer

        self.step("resolver", seat="resolver")
        try:
            propose_answer(self.engine.top, self.engine.repo, self.config, self.engine.store, decision_id)
        except Exception:
            log.exception("failres: the resolver seat could not propose an answer to %s", decision_id)
