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
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from failres import gitops
from failres.engine import state
from failres.engine.dispatching import dispatch_seat, scope_failure
from failres.engine.run_steps import RunSteps
from failres.containment.interrupts import Interrupted
from failres.engine.quarantine import Failure
from failres.engine.ladder import Action, QuarantineFacts, next_action, stop_loss_decision
from failres.engine.runtime import TaskOutcome
from failres.engine.taxonomy import (
    FIXER_SCOPE_VIOLATION,
    GATE_NOT_GREEN_AFTER_FIXER,
    GATE_TIMEOUT,
    SEAT_TAMPER,
    GATE_UNAVAILABLE,
    REPEATED_FAILURE_STOP,
    WRAPPER_ENGINE_DOWN,
)
from failres.errors import GitError, UsageError
from failres.gitops.branches import checked_patch_tree, ensure_task_branch, patch_tree, read_patch
from failres.gitops.verify import ObjectsPoisoned
from failres.journal import Journal, read_journal
from failres.sandbox.world import SeatWorld
from failres.engine.dispatch_logs import RunLogs, run_id
from lessons.redaction.redact import redact

EXACT_PATCH_RED = "exact-patch-red"
log = logging.getLogger("failres.loop")


def red_after(fixer_attempts: int, why_none: str) -> str:
    """How a red gate came to be final, in words that count (pure)."""
    if fixer_attempts == 0:
        return f"red after the implementer ({why_none})"
    return f"still red after {fixer_attempts} fixer attempt{'' if fixer_attempts == 1 else 's'}"


class TaskRun(RunSteps):
    """One run of one task, from its start to a commit or a quarantine."""

    def run(self, patch: Path | None = None, *, force: bool = False, journal: Journal | None = None) -> TaskOutcome:
        """`journal`: the plan's journal as read after this task's lock was taken, given only to the
        first task of a run: nothing written since touches its events or the plan's preflight verdicts."""
        self.carried_journal = journal
        events = (read_journal(self.engine.store, self.slug) if journal is None else journal).for_task(self.task.id)
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
        # Checked now, before anything is written; the tree is made again in the task's own
        # object directory once its workspace exists (`run_exact_patch`).
        patched = None
        if patch is not None:
            self.patch_name, self.patch_bytes = patch, read_patch(patch)
            patched = checked_patch_tree(self.engine.top, self.engine.git_dir, self.int_head, self.patch_bytes,
                                         name=patch)
        if current == "running":
            # The journal says running but nobody holds the lock: that run died.
            self.journal("interrupted", reason="lost")
            from failres.engine.live_log import clean_live_logs

            clean_live_logs(self.engine.git_dir, self.slug, self.task.id)
        outcome = self.run_prepared(events, patched, replaces=(state.last_commit(events) if patch else None))
        if self.engine.on_outcome is not None and not outcome.skipped:
            self.engine.on_outcome(outcome)
        return outcome

    def run_prepared(self, events: Sequence[dict], patched: str | None, replaces: str | None = None) -> TaskOutcome:
        if patched is None:
            stopped = self.check_stop_loss(events)
            if stopped is not None:
                self.step(stopped.state)
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
        self.carry_environment()
        try:
            started = self.journal(
                "task-started", intHead=self.int_head, bindings=self.bindings_identity(), scope=list(self.allow),
                configKey=self.conditions.config_key,
                mode="patch" if patched else "agent", replaces=replaces,
                definition={"title": self.task.title, "prompt": self.task.prompt, "files": list(self.task.files),
                            "gate": self.gate_name})
        except BaseException:
            self.finish_workspace(keep=False)
            self.release_environment()
            raise
        run = run_id(str(started["ts"]), str(started["id"]))
        self.logs = RunLogs(self.engine.git_dir, self.slug, self.task.id, run)
        self.dispatch_root = self.workspace.path.parent / f"{self.task.id}.dispatch"
        final = "interrupted"  # what the display shows last, unless an outcome says otherwise
        try:
            self.world = SeatWorld.for_task(self.config, top=self.engine.top, workspace=self.workspace.path,
                                            git_dir=self.workspace.git_dir,
                                            workspaces_root=self.engine.worktree_root(),
                                            dispatch_root=self.dispatch_root)
            self.plan_redirect()
            setup = self.check_includes() or self.run_setup() or self.check_redirect()
            if setup is not None:
                outcome = self.quarantine(setup)
            elif patched is not None:
                outcome = self.run_exact_patch(patched)
            else:
                unrunnable = self.run_preflight()
                outcome = self.quarantine(unrunnable) if unrunnable is not None else self.run_agent()
            final = outcome.state
            return outcome
        except BaseException as error:
            stop = as_stop(error, self.engine.stop)
            if stop is None:
                # Whatever went wrong, the task must not read `running` for ever: it is
                # interrupted (the next run resumes it) and the error goes on to the boundary.
                try:
                    self.journal("interrupted", reason="error",
                                 error=redact(f"{type(error).__name__}: {error}")[:500])
                except Exception:  # noqa: BLE001 - the original error is the one to report
                    log.exception("failres: recording the interruption of %s/%s failed", self.slug, self.task.id)
                # Left where it is for a look (the next run replaces it), and inert like every
                # workspace failres leaves: the seat's `.git` must not run for the person.
                self.finish_workspace(keep=True)
                raise
            self.journal("interrupted", reason=stop.reason)
            self.finish_workspace(keep=False)
            if stop.reason == "cancel":
                return TaskOutcome(self.slug, self.task.id, "interrupted", message="cancelled")
            if stop is error:
                raise
            raise stop from error
        finally:
            if self.world is not None:
                self.world.close()
            self.release_environment()
            self.step(final)

    def check_stop_loss(self, events: Sequence[dict]) -> TaskOutcome | None:
        facts = [QuarantineFacts(q.signature, q.int_head, q.scope_key, q.bindings_key, q.config_key)
                 for q in state.quarantines(events) if q.fail_class != REPEATED_FAILURE_STOP]
        if not facts:
            return None  # nothing failed yet, so nothing can be rerun the same way: the decisions go unread
        verdict = stop_loss_decision(facts, self.conditions, threshold=self.config.stop_loss.threshold,
                                     mode=self.config.stop_loss.mode, open_decisions=self.open_decisions())
        if verdict is None:
            return None
        self.journal("stop-loss", signature=verdict.signature, count=verdict.count, advice=list(verdict.advice))
        message = (f"stopped before dispatch: the last {verdict.count} runs failed the same way under the same "
                   f"conditions ({verdict.signature})\nwhat would change the outcome: " + "; ".join(verdict.advice))
        return replace(self.quarantine(Failure(REPEATED_FAILURE_STOP, message)), advice=verdict.advice)

    def open_decisions(self) -> tuple[str, ...]:
        """The task's decisions still waiting for a person (answering one widens the scope)."""
        from failres.decisions.records import task_decisions_from_store

        return tuple(str(d.get("id")) for d in task_decisions_from_store(self.engine.store, self.slug, self.task.id)
                     if d.get("status") in ("open", "proposed"))

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
            if gate.tampered:
                return self.quarantine(Failure(SEAT_TAMPER, gate.tampered))
            if gate.refused is not None:
                return self.quarantine(gate.refused)
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
                said = red_after(fixer_attempts, self.why_no_fixer())
                message = f"gate {self.gate_name} {said}: {gate.summary}\n{gate.output}"
                return self.quarantine(Failure(fail_class, message, snapshot=self.tree), rollback=True)
            fixer_attempts += 1
            failure = self.guarded_dispatch("fixer", "fix", fixer_attempts, gate_output=gate.output)
            if failure is not None:
                return self.quarantine(failure)
            gate = self.run_gate("fix", fixer_attempts)
        return self.commit_green()

    def why_no_fixer(self) -> str:
        """Why a red gate was not handed to a fixer (before any fixer attempt)."""
        if not self.seat_binding("fixer"):
            return "no fixer seat is configured"
        if not self.config.repair.enabled:
            return "repair is off"
        return "repair.max_attempts is 0"

    def run_exact_patch(self, patched: str) -> TaskOutcome:
        """A human-approved patch, applied exactly: never handed to a fixer.

        The person approved patch A; silently applying a repaired patch B would break
        the promise that what was previewed is what lands. The task's tree is the
        patch applied to the start commit, computed without the workspace's files, into the
        task's own object directory: only a green patch's objects enter the person's database.
        """
        from failres.gitops.scope import match_scope

        self.step("patch")
        # The same patch on the same start makes the same tree, now in the task's object directory.
        made = patch_tree(self.engine.top, self.int_head, self.patch_bytes, self.workspace.objects,
                          name=self.patch_name)
        if made != patched:
            msg = f"the approved patch made tree {made[:12]} where its check made {patched[:12]}"
            raise GitError(msg, hint="run the task again")
        changed = gitops.changed_between(self.engine.top, self.tree, patched, self.workspace.objects)
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
        if gate.tampered:
            return self.quarantine(Failure(SEAT_TAMPER, gate.tampered))
        if gate.refused is not None:
            return self.quarantine(gate.refused)
        if gate.unavailable:
            return self.quarantine(Failure(GATE_UNAVAILABLE, gate.unavailable_message))
        message = f"exact patch left gate {self.gate_name} red: {gate.summary}\n{gate.output}"
        return self.quarantine(Failure(EXACT_PATCH_RED, message, snapshot=self.tree), rollback=True)

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
                try:
                    self.tree = self.workspace.accept(found.changed)
                except ObjectsPoisoned as poisoned:
                    self.journal("seat-tamper", what=[str(poisoned)])
                    return Failure(SEAT_TAMPER, str(poisoned))
                return None
            failure = self.classify_seat_failure(found, seat)
            if failure.fail_class == WRAPPER_ENGINE_DOWN and not probed:
                probed = True
                healthy = self.probe(seat)
                if isinstance(healthy, Failure):
                    return healthy
                if healthy:
                    continue  # healthy again: that dispatch once more
            return failure


def as_stop(error: BaseException, flag) -> Interrupted | None:
    """The stop an error stands for: the error itself when it is one; the signal's when a
    signal had arrived as it came, since Ctrl-C reaches the whole process group and a git
    child of failres's killed by it fails ("git status failed ... no message"); else None."""
    if isinstance(error, Interrupted):
        return error
    if isinstance(error, Exception) and flag.is_set():
        return Interrupted("signal", flag.signum)
    return None
