"""Rules counted from failres's own outcomes: what resolved the failures of landed tasks.

Clean by construction: every number here comes from records failres wrote itself
(lessons, their `resolved_by` stamps, the journal and the answered decisions),
never from an agent's text. A harness that only has lessons gets the bare outcome
of each (`outcome_from_lesson`); failres adds what its journal knows (the task's
files and gate, the files a person's answer widened the scope to, the binding
that changed), and the rules say so:

    3 tasks touching `src/calc/*` hit `fixer-scope-violation`; each was resolved by
    widening the scope to `src/calc/util.py`.
    `gate-not-green-after-fixer` on gate `tests` was resolved by changing the fixer
    binding 3 times out of 3.

Counted per task, not per lesson: a task quarantined three times and landed once
was resolved once. A stop-loss stop is not a failure of its own (it refuses to
repeat one) and is never counted. One task is an anecdote: a rule needs the same
resolution in two.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from lessons.rulebook.rules import Rule

COUNTED_BASIS = "outcomes/"
LEGACY_COUNTED_BASIS = "lessons/"  # counted rules of earlier versions, recomputed like these
MIN_TASKS_FOR_A_RULE = 2
STOP_CLASS = "repeated-failure-stop"
# Classes a gate raises: grouped by the gate, where the rest are grouped by where the task works.
GATE_CLASSES = frozenset(("gate-not-green-after-fixer", "gate-timeout", "exact-patch-red"))
_GLOB_CHARS = frozenset("*?[")
_FILES_SHOWN = 3


@dataclass(frozen=True)
class ResolvedOutcome:
    """One resolved lesson and what its task's records say about the resolution."""

    lesson_id: str
    task: str  # slug/task
    fail_class: str
    resolved_by: tuple[str, ...]
    area: str = ""  # where the task works: "src/calc/*"
    gate: str = ""
    widened: tuple[str, ...] = ()  # files a person's answer added to the scope
    bindings: tuple[tuple[str, str], ...] = ()  # (seat, the binding it changed to)


def area_of(files: Sequence[str]) -> str:
    """The directory a task's files share, as a glob: ["src/calc/a.py", "src/calc/*.py"] -> "src/calc/*"."""
    dirs = []
    for path in files:
        parts = [p for p in path.strip("/").split("/") if p]
        fixed = []
        for part in parts[:-1]:
            if _GLOB_CHARS & set(part):
                break
            fixed.append(part)
        dirs.append(fixed)
    if not dirs:
        return ""
    common = dirs[0]
    for other in dirs[1:]:
        shared = 0
        while shared < min(len(common), len(other)) and common[shared] == other[shared]:
            shared += 1
        common = common[:shared]
    return "/".join([*common, "*"])


def outcome_from_lesson(lesson: Mapping[str, object]) -> ResolvedOutcome | None:
    """The bare outcome of a resolved lesson (None when unresolved or a stop-loss stop)."""
    resolved = lesson.get("resolved_by")
    fail_class = str(lesson.get("failClass") or "unknown")
    if not isinstance(resolved, list) or not resolved or fail_class == STOP_CLASS:
        return None
    package = str(lesson.get("package") or "")
    return ResolvedOutcome(
        lesson_id=str(lesson.get("id", "")),
        task=f"{lesson.get('slug', '')}/{lesson.get('task', '')}",
        fail_class=fail_class,
        resolved_by=tuple(str(kind) for kind in resolved),
        area=f"{package}/*" if package else "",
    )


@dataclass(frozen=True)
class _Group:
    fail_class: str
    by: str  # "gate" or "area"
    where: str
    outcomes: tuple[ResolvedOutcome, ...]

    def tasks(self) -> dict[str, list[ResolvedOutcome]]:
        out: dict[str, list[ResolvedOutcome]] = {}
        for outcome in self.outcomes:
            out.setdefault(outcome.task, []).append(outcome)
        return out


def _groups(outcomes: Iterable[ResolvedOutcome]) -> list[_Group]:
    grouped: dict[tuple[str, str, str], list[ResolvedOutcome]] = {}
    for outcome in outcomes:
        if outcome.fail_class == STOP_CLASS:
            continue
        if outcome.fail_class in GATE_CLASSES and outcome.gate:
            key = (outcome.fail_class, "gate", outcome.gate)
        else:
            key = (outcome.fail_class, "area", outcome.area)
        grouped.setdefault(key, []).append(outcome)
    return [_Group(fc, by, where, tuple(sorted(members, key=lambda o: o.lesson_id)))
            for (fc, by, where), members in sorted(grouped.items())]


def _how(kind: str, members: Sequence[ResolvedOutcome]) -> str:
    """How `kind` resolved these tasks, in words, with what the journal adds."""
    if kind == "scope-widened":
        sets = Counter(tuple(sorted(set(o.widened))) for o in members if o.widened)
        if sets:
            files = sets.most_common(1)[0][0]
            shown = ", ".join(f"`{f}`" for f in files[:_FILES_SHOWN])
            more = f" and {len(files) - _FILES_SHOWN} more" if len(files) > _FILES_SHOWN else ""
            return f"widening the scope to {shown}{more}"
        return "widening the scope by a person's decision"
    if kind == "binding-changed":
        seats = Counter(seat for o in members for seat, _ in o.bindings)
        if not seats:
            return "changing a seat's binding"
        seat = sorted(seats.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        targets = {to for o in members for s, to in o.bindings if s == seat}
        to = f" to `{targets.pop()}`" if len(targets) == 1 else ""
        return f"changing the {seat} binding{to}"
    if kind == "decision-answered":
        return "a person's answer to its decision"
    if kind == "integration-head-moved":
        return "running again on a newer integration head"
    return kind


def outcome_rule(group: _Group) -> Rule | None:
    """The rule a group argues for; None when fewer than two tasks share a known resolution."""
    tasks = group.tasks()
    counts: Counter[str] = Counter()
    for members in tasks.values():
        # A changed configuration is the person's to make: no rule for a seat follows from it.
        kinds = {kind for o in members for kind in o.resolved_by if kind not in ("unknown", "configuration-changed")}
        # scope-widened is the more telling form of decision-answered: count the one.
        if "scope-widened" in kinds:
            kinds.discard("decision-answered")
        counts.update(kinds)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if not ranked or ranked[0][1] < MIN_TASKS_FOR_A_RULE:
        return None
    kind, k = ranked[0]
    n = len(tasks)
    resolved = [o for members in tasks.values() if any(kind in o.resolved_by for o in members) for o in members]
    how = _how(kind, resolved)
    if group.by == "gate":
        text = f"`{group.fail_class}` on gate `{group.where}` was resolved by {how} {k} times out of {n}."
    else:
        where = f"touching `{group.where}`" if group.where else "in this repository"
        share = "each was" if k == n else f"{k} were"
        text = f"{n} tasks {where} hit `{group.fail_class}`; {share} resolved by {how}."
    return Rule(text=text, based_on_count=k, sources=tuple(o.lesson_id for o in group.outcomes),
                basis=f"{COUNTED_BASIS}{group.fail_class}/{group.by}/{group.where}")


def outcome_rules(outcomes: Iterable[ResolvedOutcome]) -> tuple[Rule, ...]:
    """Every rule the outcomes argue for, strongest first (more tasks, then by basis)."""
    rules = [r for r in (outcome_rule(g) for g in _groups(outcomes)) if r is not None]
    return tuple(sorted(rules, key=lambda r: (-(r.based_on_count or 0), r.basis or "")))


def is_counted(rule: Rule) -> bool:
    """Computed by code from outcomes (recomputed every pass), not argued from words."""
    return bool(rule.basis and rule.basis.startswith((COUNTED_BASIS, LEGACY_COUNTED_BASIS)))
