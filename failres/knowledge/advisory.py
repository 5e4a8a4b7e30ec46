"""Past outcomes into prompts: resolved lessons of the failure class at hand.

The engine calls `advisory_for(engine)` once and then the returned function for
each prompt it renders. The block it feeds ("Past outcomes on similar failures —
advisory, not instructions") appears only when there is at least one resolved
lesson of that class. It shows distinct outcomes, newest first: lessons with the
same signature resolved the same way are one line with a count (one hopeless task
stopped seven times was once seven identical lines), and a configuration failure (the
gate could not run before any seat did) is never one of them, at most the policy's
`lessons_per_prompt` of them. Retrieval is advisory in every sense: if reading the
store fails, the prompt goes out without the block and the failure is logged; a
task never fails because its hints could not be read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from failres.engine.prompts import PastOutcome
from lessons.recall.retrieval import relevant_lessons
from lessons.recall.signature import current_form

if TYPE_CHECKING:
    from failres.engine.runtime import Engine

ADVISORY_LIMIT = 3
# How many resolved lessons are read to find that many distinct outcomes: a bound on
# the work, not on the answer's quality (the newest lessons are read first).
LESSONS_READ_PER_OUTCOME = 20
log = logging.getLogger("failres.knowledge.advisory")


def past_outcome_of(lesson: Mapping[str, object]) -> PastOutcome:
    """A resolved lesson as the advisory block shows it: task, signature, what resolved it, when."""
    resolved_by = lesson.get("resolved_by")
    return PastOutcome(
        task=f"{lesson.get('slug', '')}/{lesson.get('task', '')}",
        signature=current_form(str(lesson.get("signature", ""))),  # lessons of older versions group with newer
        resolved_by=tuple(str(x) for x in resolved_by) if isinstance(resolved_by, list) else (),
        resolved_at=str(lesson.get("resolved_at") or ""),
    )


def distinct_outcomes(lessons: Iterable[Mapping[str, object]], limit: int) -> list[PastOutcome]:
    """Lessons (newest first) as distinct outcomes, newest first, at most `limit` (pure).

    Two lessons are one outcome when their signature and their resolution agree; the
    line names the newest of them and counts them all.
    """
    found: dict[tuple[str, tuple[str, ...]], PastOutcome] = {}
    for lesson in lessons:
        if lesson.get("configuration") is True:
            continue  # the configuration's failure (no seat ran): nothing a seat did or can do
        outcome = past_outcome_of(lesson)
        key = (outcome.signature, outcome.resolved_by)
        first = found.get(key)
        found[key] = outcome if first is None else PastOutcome(
            first.task, first.signature, first.resolved_by, first.resolved_at, first.count + 1)
    return list(found.values())[: max(limit, 0)]


def advisory_for(engine: Engine, limit: int = ADVISORY_LIMIT, *, include_archived: bool = False
                 ) -> Callable[[str], list[PastOutcome]]:
    """fail class -> the past outcomes a prompt about that class may show."""
    store = engine.store

    def past_outcomes(fail_class: str) -> list[PastOutcome]:
        if limit <= 0:
            return []
        try:
            lessons = relevant_lessons(store, fail_class, limit * LESSONS_READ_PER_OUTCOME,
                                       include_archived=include_archived)
        except Exception:  # advisory context must never cost the task its run
            log.exception("failres: reading past outcomes for %s failed", fail_class)
            return []
        return distinct_outcomes(lessons, limit)

    return past_outcomes
