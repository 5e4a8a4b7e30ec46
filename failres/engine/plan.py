"""Plans: a TOML file naming a slug and the tasks to run, each with its scope and gate.

A slug and a task id become the branch `failres/<slug>/<task>`, so both are held to
a spelling git accepts in a branch name before anything touches the repository.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from lessons.frozen import record
from failres.config.model import Config, branch_name_problem
from failres.config.kinds import Text, TextList
from failres.config.schema import (
    Invalid,
    SectionList,
    config_error,
    parse_toml,
    read_table,
    read_text_file,
    setting,
)
from failres.errors import UsageError

_ID_PATTERN = r"[a-z0-9][a-z0-9._-]*"


@dataclass(frozen=True)
class Task:
    """One unit of work: what to ask, which files it may touch, which gate judges it."""

    id: str
    title: str
    prompt: str
    files: tuple[str, ...]
    gate: str | None  # None only when the configuration defines no gate at all
    # Tasks of the same plan that must have landed before this one starts: it starts from
    # the integration head that holds their work.
    after: tuple[str, ...] = ()


@record
class Plan:
    """A named list of tasks, read from `path`."""

    slug: str
    tasks: tuple[Task, ...]
    path: Path

    def task(self, task_id: str) -> Task:
        """The task called `task_id`; UsageError listing the known ids otherwise."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        known = [task.id for task in self.tasks]
        close = _close_matches(task_id, known, n=1)
        hint = f'did you mean "{close[0]}"?' if close else "tasks in this plan: " + ", ".join(known)
        msg = f'{self.path}: plan "{self.slug}" has no task "{task_id}"'
        raise UsageError(msg, hint=hint)


_MAX_ID = 100  # a slug and a task id make file names (locks, logs) and a branch name


_ID_RULE = 'lowercase a-z, 0-9, ".", "_" and "-", starting with a letter or digit'


def id_problem(value: str) -> str | None:
    """What is wrong with a slug or task id, said so a person can fix it, or None (pure).

    The id names a branch and files on every file system, where `Fix1` and `fix1` may be
    one name: so ids are lowercase, and the message says so rather than only that it failed.
    """
    if not value:
        return f"it is empty; use {_ID_RULE}"
    if re.fullmatch(_ID_PATTERN, value) is None:
        capitals = sorted({c for c in value if c.isupper()})
        if capitals and re.fullmatch(_ID_PATTERN, value.lower()):
            return (f"capital letters are not allowed ({', '.join(capitals)}); use {_ID_RULE}, "
                    f'e.g. "{value.lower()}"')
        if not re.fullmatch(r"[a-z0-9]", value[0]):
            return f'it starts with "{value[0]}"; use {_ID_RULE}'
        bad = sorted({c for c in value if not re.fullmatch(r"[a-z0-9._-]", c)})
        return f"{', '.join(repr(c) for c in bad)} {'is' if len(bad) == 1 else 'are'} not allowed; use {_ID_RULE}"
    return _branch_part_problem(value)


def require_id(value: str, name: str) -> None:
    """UsageError unless `value` is a valid slug or task id (`name` says which)."""
    problem = id_problem(value)
    if problem:
        msg = f"{value!r} is not a valid {name}: {problem}"
        raise UsageError(msg)


def _branch_part_problem(part: str) -> str | None:
    # Checked inside whole branch names, in the middle (the slug) and at the end (the
    # task id), since some of git's rules only apply at the end of a name.
    if len(part) > _MAX_ID:
        return f"longer than {_MAX_ID} characters"
    if branch_name_problem(f"failres/{part}/x") or branch_name_problem(f"failres/x/{part}"):
        return f'"{part}" cannot be part of a branch name (no "..", no ending in "." or ".lock")'
    return None


def _scope_path_problem(path: str) -> str | None:
    # A scope entry that leaves the repository would let a seat write anywhere.
    parts = PurePosixPath(path).parts
    if path.startswith("/") or ".." in parts:
        return f'"{path}" must be a path or glob inside the repository, relative to its top'
    return None


_ID = Text(check=lambda value: f'"{value}" is not a valid id: {id_problem(value)}' if id_problem(value) else None)


@dataclass(frozen=True)
class _TaskEntry:
    """A `[[tasks]]` table as written; `Task` is what it becomes once defaults are resolved."""

    id: str = setting(kind=_ID)
    prompt: str = setting(kind=Text(non_empty=True))
    files: tuple[str, ...] = setting(kind=TextList(min_items=1, check=_scope_path_problem))
    title: str = setting("", kind=Text())
    gate: str = setting("", kind=Text(non_empty=True))
    after: tuple[str, ...] = setting((), kind=TextList())


@record
class _PlanFile:
    """A plan file as written."""

    slug: str = setting(kind=_ID)
    tasks: tuple[_TaskEntry, ...] = setting(kind=SectionList(_TaskEntry, min_items=1))


def _resolved_tasks(entries: tuple[_TaskEntry, ...], config: Config) -> tuple[Task, ...]:
    """Tasks with titles and gates filled in; Invalid on a repeated id or an undefined gate."""
    default_gate = config.default_gate()
    first_index: dict[str, int] = {}
    tasks = []
    for index, entry in enumerate(entries):
        if entry.id in first_index:
            problem = f'"{entry.id}" is already the id of tasks[{first_index[entry.id]}]'
            raise Invalid(("tasks", index, "id"), problem, hint="give every task its own id")
        first_index[entry.id] = index
        if entry.gate and entry.gate not in config.gates:
            known = list(config.gates)
            close = _close_matches(entry.gate, known, n=1)
            hint = (f'did you mean "{close[0]}"?' if close
                    else f"gates defined in {config.source}: " + (", ".join(known) or "none"))
            problem = f'gate "{entry.gate}" is not defined in {config.source}'
            raise Invalid(("tasks", index, "gate"), problem, hint=hint)
        gate = entry.gate or (default_gate.name if default_gate is not None else None)
        tasks.append(Task(id=entry.id, title=entry.title or entry.id, prompt=entry.prompt,
                          files=entry.files, gate=gate, after=tuple(dict.fromkeys(entry.after))))
    _check_order(tasks)
    return tuple(tasks)


def _check_order(tasks: list[Task]) -> None:
    """Every `after` names another task of the plan, and no task waits on itself through others."""
    index = {task.id: i for i, task in enumerate(tasks)}
    for i, task in enumerate(tasks):
        for other in task.after:
            if other == task.id:
                raise Invalid(("tasks", i, "after"), f'task "{task.id}" cannot wait for itself')
            if other not in index:
                close = _close_matches(other, list(index), n=1)
                hint = f'did you mean "{close[0]}"?' if close else "tasks in this plan: " + ", ".join(index)
                raise Invalid(("tasks", i, "after"), f'no task "{other}" in this plan', hint=hint)
    cycle = waiting_cycle({task.id: task.after for task in tasks})
    if cycle:
        first = index[cycle[0]]
        raise Invalid(("tasks", first, "after"), "tasks wait for each other in a circle: " + " -> ".join(cycle),
                      hint="one of them must not wait for the next")


def waiting_cycle(after: dict[str, tuple[str, ...]]) -> list[str]:
    """A circle of tasks waiting for each other (the first task repeated at its end), or [] (pure)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(task: str) -> list[str]:
        state[task] = 1
        path.append(task)
        for other in after.get(task, ()):
            if state.get(other) == 1:
                return [*path[path.index(other):], other]
            if other not in state:
                found = visit(other)
                if found:
                    return found
        path.pop()
        state[task] = 2
        return []

    for task in after:
        if task not in state:
            found = visit(task)
            if found:
                return found
    return []


def parse_plan(text: str, path: Path, config: Config) -> Plan:
    """The plan in `text` (read from `path`); ConfigError naming the file and key on any problem."""
    source = str(path)
    raw = parse_toml(text, source)
    try:
        written = read_table(_PlanFile, raw, ())
        tasks = _resolved_tasks(written.tasks, config)
    except Invalid as invalid:
        raise config_error(source, invalid) from None
    return Plan(slug=written.slug, tasks=tasks, path=path)


def load_plan(path: Path, config: Config) -> Plan:
    """The plan in the file at `path`, checked against `config` (its gates)."""
    if not path.is_file():
        msg = f"{path}: no such plan file"
        raise UsageError(msg, hint="pass the path of a plan TOML file")
    return parse_plan(read_text_file(path, str(path)), path, config)


def _close_matches(word: str, known: list[str], n: int) -> list[str]:
    # difflib is imported for a mistyped name only: every run parses a plan, few mistype one.
    import difflib

    return difflib.get_close_matches(word, known, n=n)
