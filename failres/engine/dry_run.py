"""`git failres run PLAN --dry-run`: what a run would do, checked without doing any of it.

A plan that fails ten minutes in, because a binding's program is not installed or a
scope entry names a protected path, costs a run; the same mistakes are visible before
anything starts. `check_plan` is a pure function of the plan, the configuration and a
few facts read from the repository (`RepoFacts`): nothing is dispatched, no
worktree made, no record, branch, index or file written.

Problems are `error` (the run would fail or cannot do what the plan asks: exit 2) or
`warning` (it would run, perhaps not as intended: exit 0).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from failres.config.model import Config
from failres.engine.ladder import Conditions, QuarantineFacts, stop_loss_decision
from failres.engine.state import STOP_CLASS, configuration_key, key_of, quarantines, task_state
from failres.engine.plan import Plan, Task


@dataclass(frozen=True)
class Problem:
    level: str  # "error" or "warning"
    subject: str  # what it is about: "binding claude", "task t1", "seats.implementer"
    message: str

    def document(self) -> dict[str, str]:
        return {"level": self.level, "subject": self.subject, "message": self.message}


@dataclass(frozen=True)
class TaskPlan:
    task: str
    action: str  # "run", "skip" (already committed or landed), "stop" (the stop-loss would refuse)
    reason: str
    gate: str | None
    files: tuple[str, ...]
    matched: int  # files of the integration head the scope matches

    def document(self) -> dict[str, object]:
        return {"task": self.task, "action": self.action, "reason": self.reason, "gate": self.gate,
                "files": list(self.files), "matchedFiles": self.matched}


@dataclass(frozen=True)
class RepoFacts:
    """What the check reads from the repository and the store (the caller reads them)."""

    integration_head: str | None  # None: the integration branch does not exist
    tracked_files: tuple[str, ...]  # at the integration head
    events: Mapping[str, Sequence[Mapping[str, object]]]  # task id -> its journal events, oldest first
    widened: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # task id -> paths decisions allow
    program_found: Callable[[str], bool] = lambda program: True


@dataclass(frozen=True)
class PlanCheck:
    slug: str
    plan: str
    tasks: tuple[TaskPlan, ...]
    problems: tuple[Problem, ...]
    preflight: tuple = ()  # `preflight_check.TaskPreflight`s, with --preflight

    @property
    def ok(self) -> bool:
        return not any(p.level == "error" for p in self.problems)

    def document(self) -> dict[str, object]:
        doc = {"slug": self.slug, "plan": self.plan, "ok": self.ok, "tasks": [t.document() for t in self.tasks],
               "problems": [p.document() for p in self.problems]}
        if self.preflight:
            doc["preflight"] = [p.document() for p in self.preflight]
        return doc


def with_preflight(checked: PlanCheck, found: Sequence) -> PlanCheck:
    """The check with what each gate said at the integration head: one that cannot run is an error."""
    problems = list(checked.problems)
    for item in found:
        if item.verdict == "unavailable":
            problems.append(Problem("error", f"task {item.task}", item.message))
        elif item.verdict == "green":
            problems.append(Problem("warning", f"task {item.task}", item.message))
    return PlanCheck(checked.slug, checked.plan, checked.tasks, tuple(problems), tuple(found))


def scope_matches(pattern: str, path: str) -> bool:
    """Whether a scope entry (a path, a directory ending in "/", or a glob) covers `path`."""
    if pattern.endswith("/"):
        return path.startswith(pattern)
    if any(char in pattern for char in "*?["):
        return fnmatch.fnmatchcase(path, pattern) or PurePosixPath(path).match(pattern)
    return path == pattern or path.startswith(pattern.rstrip("/") + "/")


def _bindings_identity(config: Config) -> dict[str, str]:
    # The same identity the loop records on task-started: a changed command is a new experiment.
    out = {}
    for seat in ("implementer", "fixer"):
        name = getattr(config.seats, seat)
        if name and name in config.bindings:
            out[seat] = f"{name}:{key_of(list(config.bindings[name].command))}"
    return out


def _program_problems(config: Config, gates: set[str], found: Callable[[str], bool], patch: bool) -> list[Problem]:
    from failres.agents.program_path import missing_program

    problems = []
    seats = ("fixer",) if patch else ("implementer", "fixer")
    for seat in seats:
        name = getattr(config.seats, seat)
        if not name:
            continue
        program = config.bindings[name].command[0]
        if not found(program):
            from failres.agents.availability import install_hint

            install = install_hint(program)
            problems.append(Problem("error", f"binding {name}",
                                    f"the {seat} seat's program {missing_program(program, install)}"))
    for gate in sorted(gates):
        program = config.gates[gate].command[0]
        if not found(program):
            problems.append(Problem("error", f"gate {gate}", f"its program {missing_program(program)}"))
    return problems


def _seat_problems(config: Config, patch: bool, tasks: Sequence[Task]) -> list[Problem]:
    problems = []
    if not patch and not config.seats.implementer:
        problems.append(Problem("error", "seats.implementer", "no implementer seat is configured: nothing would "
                                                              "make the change"))
    if not config.seats.fixer and config.repair.max_attempts > 0:
        problems.append(Problem("warning", "seats.fixer", "no fixer seat: a red gate quarantines at once"))
    if any(task.gate is None for task in tasks):
        problems.append(Problem("error", "gates", "no gate is configured: nothing would judge the tasks"))
    return problems


def _task_plan(task: Task, config: Config, facts: RepoFacts, bindings_key: str) -> tuple[TaskPlan, list[Problem]]:
    problems = []
    subject = f"task {task.id}"
    protected = [entry for entry in task.files
                 if any(scope_matches(guard, entry) or fnmatch.fnmatchcase(entry, guard) for guard in
                        config.scope.protected)]
    for entry in protected:
        problems.append(Problem("error", subject, f'its scope entry "{entry}" is protected (scope.protected): no '
                                                  "seat may touch it"))
    for entry in task.files:
        if not any(scope_matches(entry, path) for path in facts.tracked_files):
            problems.append(Problem("warning", subject, f'"{entry}" matches no file at {config.integration.branch} '
                                                        "(fine if the task creates it)"))
    matched = sum(1 for path in facts.tracked_files if any(scope_matches(e, path) for e in task.files))
    events = facts.events.get(task.id, ())
    state = task_state(events)
    ran = any(e.get("type") == "task-started" for e in events)  # a task-planned one only waited
    action, reason = "run", "never ran" if not ran else f"{state}: runs again from the integration head"
    if state in ("committed", "landed"):
        action, reason = "skip", f"already {state}"
    elif facts.integration_head is not None and events:
        allow = tuple(dict.fromkeys([*task.files, *facts.widened.get(task.id, ())]))
        gate = task.gate or (config.default_gate().name if config.default_gate() else "")
        conditions = Conditions(facts.integration_head, key_of(sorted(allow)), bindings_key,
                                configuration_key(gate, config.gates.get(gate), config.workspace))
        past = [QuarantineFacts(q.signature, q.int_head, q.scope_key, q.bindings_key, q.config_key)
                for q in quarantines(events) if q.fail_class != STOP_CLASS]
        verdict = stop_loss_decision(past, conditions, threshold=config.stop_loss.threshold,
                                     mode=config.stop_loss.mode)
        if verdict is not None:
            action = "stop"
            reason = (f"the stop-loss would refuse: the last {verdict.count} runs failed the same way under the same "
                      f"conditions; {'; '.join(verdict.advice)}")
    return TaskPlan(task.id, action, reason, task.gate, task.files, matched), problems


def check_plan(plan: Plan, config: Config, facts: RepoFacts, *, task_ids: Sequence[str] = (),
               patch: bool = False) -> PlanCheck:
    """What `run` would do with `plan`, and every problem it would meet, without running."""
    tasks = [plan.task(t) for t in task_ids] if task_ids else list(plan.tasks)
    problems: list[Problem] = []
    if facts.integration_head is None:
        problems.append(Problem("error", "integration.branch",
                                f'the integration branch "{config.integration.branch}" does not exist'))
    if patch and len(tasks) != 1:
        problems.append(Problem("error", "--patch", "an approved patch applies to exactly one task (add --task ID)"))
    problems += _seat_problems(config, patch, tasks)
    gates = {task.gate for task in tasks if task.gate}
    problems += _program_problems(config, gates, facts.program_found, patch)
    bindings_key = key_of(_bindings_identity(config))
    planned = []
    for task in tasks:
        task_plan, found = _task_plan(task, config, facts, bindings_key)
        planned.append(task_plan)
        problems += found
    return PlanCheck(plan.slug, str(plan.path), tuple(planned), tuple(problems))


# ---- the edge: reading the facts ----

def program_finder(top) -> Callable[[str], bool]:
    """Whether a command's program can be started: on PATH, or a path from the repository top
    (seats and worktree gates run in a checkout of the same tree)."""
    from pathlib import Path

    from failres.agents.program_path import find_program

    return lambda program: find_program(program, Path(top)) is not None


def read_repo_facts(top, repo, store, config: Config, plan: Plan) -> RepoFacts:
    from failres.decisions.records import read_decisions, widened_files
    from failres.journal import read_journal

    ref = repo.references.get(f"refs/heads/{config.integration.branch}")
    head, files = None, ()
    if ref is not None:
        commit = ref.peel()
        head = str(commit.id)
        listed = []
        stack = [("", commit.tree)]
        while stack:
            prefix, tree = stack.pop()
            for entry in tree:
                path = f"{prefix}{entry.name}"
                if entry.type_str == "tree":
                    stack.append((path + "/", repo[entry.id]))
                else:
                    listed.append(path)
        files = tuple(sorted(listed))
    journal = read_journal(store, plan.slug)
    decisions, _ = read_decisions(store)
    return RepoFacts(
        integration_head=head,
        tracked_files=files,
        events={task.id: journal.for_task(task.id) for task in plan.tasks},
        widened={task.id: widened_files(decisions, plan.slug, task.id) for task in plan.tasks},
        program_found=program_finder(top),
    )
