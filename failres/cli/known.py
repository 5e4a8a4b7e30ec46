"""Slugs and tasks a command names must be ones the journal knows.

An unknown slug or task is a typo far more often than a question, so it is bad
input (exit 2, one line, the known names as a hint) rather than an empty answer
with exit 0 that a script would take for "nothing happened".
"""

from __future__ import annotations

from collections.abc import Sequence

from failres.errors import UsageError
from failres.journal import Journal, list_slugs, read_journal
from lessons.storage.store import Store


def _hint(name: str, known: Sequence[str], noun: str, listing: str) -> str:
    import difflib  # only for a name that was misspelt

    close = difflib.get_close_matches(name, list(known), n=1)
    if close:
        return f'did you mean "{close[0]}"?'
    if known:
        shown = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
        return f"{noun}s: {shown}"
    return listing


def journal_of(store: Store, slug: str) -> Journal:
    """The journal of `slug`; UsageError naming the known slugs when no task of it ever ran."""
    journal = read_journal(store, slug)
    if journal.events or journal.problems:
        return journal
    msg = f'no task of plan "{slug}" has run here'
    raise UsageError(msg, hint=_hint(slug, list_slugs(store), "slug", "no plan has run yet: git failres run PLAN"))


def require_task(journal: Journal, task: str) -> list[dict]:
    """The events of `task` in `journal`; UsageError naming the plan's known tasks otherwise."""
    events = journal.for_task(task)
    if events:
        return events
    known = sorted({str(e.get("task")) for e in journal.events if e.get("task")})
    msg = f'plan "{journal.slug}" has no task "{task}" that ran'
    raise UsageError(msg, hint=_hint(task, known, "task", f"git failres status {journal.slug}"))
