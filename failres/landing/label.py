"""`git failres label` and the merge hook: find task commits that reached the integration branch.

A task reaches the integration branch by `git failres land`, by a person's
`git merge` (the post-merge hook sees it at once), or by roads no local hook
sees: a merge on a forge, a squash, a rebase, a cherry-pick. `label` covers all
of them after the fact by reading trailers on the integration branch.

The walk follows the branch's first parents, newest first. A commit on that
line that names a task lands it there (a squash, a rebase, a fast-forward, or
failres's own merge commit); a merge on that line also lands every task named
by the commits it brought in. The landing's integration head is the first
parent: the branch as it was just before.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pygit2

from failres.engine import state
from failres.journal import list_slugs, read_journal
from failres.landing.outcome_labels import StampResult, lesson_ids_of, stamp_task
from failres.landing.trailers import tasks_in_message
from lessons.storage.store import Store

# Commit times come from many clocks (laptops, CI runners, a forge); a landing is
# never looked for much before the task started, but a day of skew is tolerated.
CLOCK_SKEW_SECONDS = 24 * 3600
MAX_COMMITS_WALKED = 200_000


@dataclass(frozen=True)
class Landing:
    """Where a task reached the integration branch: the landing commit and the head before it."""

    slug: str
    task: str
    commit: str
    int_head: str


@dataclass(frozen=True)
class LabelResult:
    """What `label` found and wrote."""

    branch: str
    walked: int
    landings: tuple[Landing, ...]
    stamps: tuple[StampResult, ...]


def _epoch(ts: str) -> int | None:
    try:
        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


def find_landings(repo: pygit2.Repository, tip: pygit2.Oid, wanted: set[tuple[str, str]], *,
                  since: int | None, max_commits: int = MAX_COMMITS_WALKED) -> tuple[list[Landing], int]:
    """The first landing of each wanted task on the first-parent line from `tip`; and how many commits were read."""
    found: dict[tuple[str, str], Landing] = {}
    walked = 0
    commit: pygit2.Commit | None = repo[tip]
    while commit is not None and walked < max_commits and wanted:
        if since is not None and commit.commit_time < since:
            break
        walked += 1
        parents = commit.parent_ids
        int_head = str(parents[0]) if parents else ""
        keys = list(tasks_in_message(commit.message))
        if len(parents) > 1:
            keys += _tasks_brought_in(repo, parents)
        for key in keys:
            if key in wanted:
                # Walking newest first, a later assignment is an older landing: the first
                # time the task reached the branch is the landing that counts.
                found[key] = Landing(key[0], key[1], str(commit.id), int_head)
        commit = repo[parents[0]] if parents else None
    return list(found.values()), walked


def _tasks_brought_in(repo: pygit2.Repository, parents: list[pygit2.Oid]) -> list[tuple[str, str]]:
    """Tasks named by the commits a merge added: reachable from its other parents, not from the first."""
    walker = repo.walk(parents[1], pygit2.GIT_SORT_TOPOLOGICAL)
    for extra in parents[2:]:
        walker.push(extra)
    walker.hide(parents[0])
    keys: list[tuple[str, str]] = []
    for commit in walker:
        for key in tasks_in_message(commit.message):
            if key not in keys:
                keys.append(key)
    return keys


def _unlanded_tasks(store: Store) -> tuple[dict[tuple[str, str], int | None], list[tuple[str, str, Mapping]]]:
    """Tasks with no landing yet (and when each first started), and landed tasks to re-check for stamps."""
    unlanded: dict[tuple[str, str], int | None] = {}
    landed: list[tuple[str, str, Mapping]] = []
    for slug in list_slugs(store):
        journal = read_journal(store, slug)
        for task in sorted({str(e.get("task")) for e in journal.events if e.get("task")}):
            events = journal.for_task(task)
            last_landing = state.last_event(events, "landed")
            if last_landing is not None:
                if lesson_ids_of(events):
                    landed.append((slug, task, last_landing))
                continue
            started = [e for e in events if e.get("type") == "task-started"]
            unlanded[(slug, task)] = _epoch(str(started[0].get("ts", ""))) if started else None
    return unlanded, landed


def label_repository(repo: pygit2.Repository, store: Store, branch: str) -> LabelResult:
    """Stamp every task whose commits reached `branch` with no landing journaled; idempotent."""
    stamps: list[StampResult] = []
    unlanded, landed = _unlanded_tasks(store)
    for slug, task, event in landed:
        # A landing journaled earlier whose stamps are missing (a crash between the merge
        # and the stamp, a lesson synced in later): stamp against that same landing.
        result = stamp_task(store, slug, task, str(event.get("commit", "")), str(event.get("intHead", "")))
        if result.wrote:
            stamps.append(result)
    ref = branch if branch.startswith("refs/") else f"refs/heads/{branch}"
    try:
        tip = repo.references[ref].target
    except KeyError:
        return LabelResult(branch, 0, (), tuple(stamps))
    starts = [t for t in unlanded.values() if t is not None]
    # A task whose start time is unknown could have landed any time: walk without a floor.
    since = None if not starts or len(starts) < len(unlanded) else min(starts) - CLOCK_SKEW_SECONDS
    landings, walked = find_landings(repo, tip, set(unlanded), since=since)
    for landing in sorted(landings, key=lambda x: (x.slug, x.task)):
        stamps.append(stamp_task(store, landing.slug, landing.task, landing.commit, landing.int_head))
    return LabelResult(branch, walked, tuple(sorted(landings, key=lambda x: (x.slug, x.task))), tuple(stamps))


def stamp_after_merge(start: Path, keys: Iterable[tuple[str, str]]) -> list[StampResult]:
    """The post-merge hook's stamping: HEAD is the landing, ORIG_HEAD the integration head before it.

    Only a merge into the integration branch lands anything; a task branch merged
    into some other branch is not a landing. Tasks the journal does not know are
    skipped: there is nothing of theirs to stamp.
    """
    from failres.config.loading import load_config
    from failres.gitops.location import locate_repo

    paths = locate_repo(start)
    config = load_config(paths.top)
    # HEAD and ORIG_HEAD belong to the worktree the merge ran in (perhaps a linked one);
    # the store belongs to the repository.
    here = pygit2.Repository(os.fspath(start))
    if here.head_is_detached or here.head.name != f"refs/heads/{config.integration.branch}":
        return []
    head = str(here.head.target)
    orig = here.revparse_single("ORIG_HEAD").peel(pygit2.Commit)
    store = Store(pygit2.Repository(os.fspath(paths.top)), config.store.ref)
    store.verify()  # a store that is gone or damaged is said, not skipped in silence
    if not store.exists():
        return []
    results = []
    for slug, task in keys:
        if not read_journal(store, slug).for_task(task):
            continue
        results.append(stamp_task(store, slug, task, head, str(orig.id)))
    return results
