"""The `edit` trigger: what a person changed in a task's files between the agent's
commit and the landing.

An agent's work is committed on `failres/<slug>/<task>` (journal: `task-committed`)
and later lands (journal: `landed`, whose `commit` is the merge). If a person
touched the task's files in between, the difference is a correction as plain as
a typed one. It comes from git, not from a transcript, and it is the person's own
edit: its origin is `clean`.

Which tree stands for "what landed" depends on how it landed:

- a merge: the merged parent that contains the agent's commit (the task branch as
  the person left it), so changes that reached the integration branch from other
  work are not taken for the person's;
- a fast-forward: the landed commit itself;
- a squash or a rebase (no ancestry): the landed tree, limited to the task's files.

Every diff is limited to the task's scope (the globs it ran with).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pygit2

from failres.gitops.scope import matches_any
from failres.journal import list_slugs, read_journal
from lessons.learning.interventions import MinedIntervention, edit_intervention
from lessons.learning.provenance import Origin
from lessons.learning.reflector import SourceToMine
from lessons.storage.store import Store

DIFF_LIMIT = 20_000  # the intervention clips its context further; this bounds the work


@dataclass(frozen=True)
class LandedTask:
    slug: str
    task: str
    task_commit: str
    landed_commit: str
    files: tuple[str, ...]

    @property
    def key(self) -> str:
        """The mined-ledger key: one landing of one task."""
        return f"edit:{self.slug}/{self.task}@{self.landed_commit}"


def landed_tasks(store: Store) -> Iterator[LandedTask]:
    """Every landing the journal records after an agent's commit, oldest slug first."""
    for slug in list_slugs(store):
        journal = read_journal(store, slug)
        for task in sorted({str(e.get("task")) for e in journal.events if e.get("task")}):
            committed: str | None = None
            files: tuple[str, ...] = ()
            for event in journal.for_task(task):
                kind = event.get("type")
                if kind == "task-started":
                    files = _scope_of(event)
                elif kind == "task-committed" and isinstance(event.get("commit"), str):
                    committed = str(event["commit"])
                elif kind == "landed" and committed and isinstance(event.get("commit"), str):
                    yield LandedTask(slug, task, committed, str(event["commit"]), files)


def _scope_of(started: dict) -> tuple[str, ...]:
    scope = started.get("scope")
    if not isinstance(scope, list):
        definition = started.get("definition")
        scope = definition.get("files") if isinstance(definition, dict) else None
    return tuple(str(s) for s in scope) if isinstance(scope, list) else ()


def landed_side(repo: pygit2.Repository, task_commit: pygit2.Commit, landed: pygit2.Commit) -> pygit2.Commit:
    """The commit whose tree is "what landed" for this task (see the module docstring)."""
    if landed.id == task_commit.id:
        return landed
    for parent in landed.parents[1:]:
        if parent.id == task_commit.id or repo.descendant_of(parent.id, task_commit.id):
            return parent
    return landed


def person_edit(repo: pygit2.Repository, landed: LandedTask) -> tuple[str, list[str]] | None:
    """(diff text, changed paths) of the person's edit within the task's files;
    None when either commit is not in this repository."""
    try:
        task_commit = repo.revparse_single(landed.task_commit).peel(pygit2.Commit)
        landed_commit = repo.revparse_single(landed.landed_commit).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    after = landed_side(repo, task_commit, landed_commit)
    diff = repo.diff(task_commit.tree, after.tree, context_lines=3)
    texts: list[str] = []
    paths: list[str] = []
    size = 0
    for patch in diff:
        path = patch.delta.new_file.path or patch.delta.old_file.path
        if not landed.files or not matches_any(path, landed.files):
            continue
        paths.append(path)
        if size < DIFF_LIMIT:
            text = patch.text or ""
            texts.append(text)
            size += len(text)
    return "".join(texts)[:DIFF_LIMIT], paths


def edit_sources(repo: pygit2.Repository, store: Store) -> tuple[list[SourceToMine], list[str]]:
    """One source per landing (an intervention when the person changed something),
    and notes for landings whose commits are missing here."""
    sources: list[SourceToMine] = []
    notes: list[str] = []
    for landed in landed_tasks(store):
        found = person_edit(repo, landed)
        where = f"git:{landed.task_commit[:12]}..{landed.landed_commit[:12]}"
        if found is None:
            notes.append(f"{landed.slug}/{landed.task}: the commits of its landing are not in this repository")
            continue
        diff_text, paths = found
        interventions: Sequence[MinedIntervention] = ()
        if paths:
            edit = edit_intervention(f"{landed.slug}/{landed.task}", diff_text, paths)
            interventions = (MinedIntervention(edit, Origin.CLEAN),)
        sources.append(SourceToMine(landed.key, where, 1, tuple(interventions)))
    return sources, notes
