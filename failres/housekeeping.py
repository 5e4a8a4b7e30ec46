"""`git failres gc`: remove what landed tasks no longer need, and nothing else.

Three kinds of leftovers, each only for a task whose journal says it landed:

- its branch `failres/<slug>/<task>`, when the integration branch contains its tip
  (a task landed by a squash or on a forge is not merged here: its branch is kept,
  and the summary says how to drop it by hand);
- its workspace, when one is still registered (`worktrees.keep`, or a run that left it);
- its failure snapshots `refs/failres/snapshots/<slug>/<task>/...`, once the landing
  is older than the policy's `snapshot_retention_days`.

Nothing else is touched: not a task still pending, quarantined or committed, not the
store, not the person's branches. What to remove is decided by `plan_gc`, a pure
function of plain facts; `collect` gathers the facts and `apply_gc` removes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from failres.errors import UsageError

TASK_BRANCHES = "refs/heads/failres/"
SNAPSHOTS = "refs/failres/snapshots/"


@dataclass(frozen=True)
class TaskBranch:
    slug: str
    task: str
    ref: str  # refs/heads/failres/<slug>/<task>
    merged: bool  # the integration branch contains its tip


@dataclass(frozen=True)
class Workspace:
    path: Path
    slug: str
    task: str
    clean: bool  # no change git would lose; `git worktree remove` refuses otherwise


@dataclass(frozen=True)
class Snapshot:
    slug: str
    task: str
    ref: str


@dataclass(frozen=True)
class Item:
    """One thing gc removes (or would, or keeps), with why."""

    kind: str  # "branch", "workspace", "snapshot", "stale-record"
    name: str  # a ref name or a path
    reason: str

    def document(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name, "reason": self.reason}


@dataclass(frozen=True)
class GcPlan:
    remove: tuple[Item, ...] = ()
    keep: tuple[Item, ...] = ()


@dataclass(frozen=True)
class GcFacts:
    """Everything `plan_gc` decides from, read from the repository and the journal."""

    integration: str
    landed_at: Mapping[tuple[str, str], datetime]  # tasks whose journal says landed, and when
    branches: Sequence[TaskBranch] = ()
    workspaces: Sequence[Workspace] = ()
    snapshots: Sequence[Snapshot] = ()
    prunable: Sequence[str] = field(default=())  # git's records of worktrees whose directory is gone


def plan_gc(facts: GcFacts, now: datetime, retention_days: int) -> GcPlan:
    """What to remove and what to keep (with reasons), for landed tasks only."""
    remove: list[Item] = []
    keep: list[Item] = []
    for space in facts.workspaces:
        if (space.slug, space.task) not in facts.landed_at:
            continue
        if space.clean:
            remove.append(Item("workspace", str(space.path), f"{space.slug}/{space.task} has landed"))
        else:
            keep.append(Item("workspace", str(space.path),
                             f"{space.slug}/{space.task} has landed, but its workspace has changes; "
                             f"git worktree remove --force {space.path}"))
    kept_spaces = {(s.slug, s.task) for s in facts.workspaces if not s.clean}
    for branch in facts.branches:
        key = (branch.slug, branch.task)
        if key not in facts.landed_at:
            continue
        if not branch.merged:
            keep.append(Item("branch", branch.ref, f"landed but not merged into {facts.integration} (a squash or a "
                                                   f"forge merge); git branch -D {branch.ref.removeprefix('refs/heads/')}"))
        elif key in kept_spaces:
            keep.append(Item("branch", branch.ref, "its workspace is kept"))
        else:
            remove.append(Item("branch", branch.ref, f"landed and merged into {facts.integration}"))
    horizon = now - timedelta(days=retention_days)
    for snapshot in facts.snapshots:
        landed = facts.landed_at.get((snapshot.slug, snapshot.task))
        if landed is None:
            continue
        if landed <= horizon:
            remove.append(Item("snapshot", snapshot.ref,
                               f"landed {landed:%Y-%m-%d}, more than {retention_days} day(s) ago"))
        else:
            keep.append(Item("snapshot", snapshot.ref,
                             f"landed {landed:%Y-%m-%d}; kept {retention_days} day(s) after the landing"))
    for record in facts.prunable:
        remove.append(Item("stale-record", record, "its workspace directory is gone (git worktree prune)"))
    return GcPlan(tuple(remove), tuple(keep))


# ---- the edges: reading the facts, removing ----

def _landed_tasks(store) -> dict[tuple[str, str], datetime]:
    from failres.engine.state import last_event, task_state
    from failres.journal import list_slugs, read_journal
    from lessons.policy import parse_ts

    landed: dict[tuple[str, str], datetime] = {}
    for slug in list_slugs(store):
        journal = read_journal(store, slug)
        for task in sorted({str(e.get("task")) for e in journal.events if e.get("task")}):
            events = journal.for_task(task)
            if task_state(events) != "landed":
                continue
            moment = parse_ts((last_event(events, "landed") or {}).get("ts"))
            if moment is not None:
                landed[(slug, task)] = moment
    return landed


def _split_task(name: str, prefix: str) -> tuple[str, str] | None:
    parts = name.removeprefix(prefix).split("/")
    return (parts[0], parts[1]) if len(parts) >= 2 else None


def task_workspaces(top: Path) -> list[Workspace]:
    """Registered worktrees on a task branch. (Where workspaces live may change; what marks
    one as a task's is its branch.)"""
    from failres.gitops.git import try_git
    from failres.gitops.worktrees import list_worktrees

    found = []
    for worktree in list_worktrees(top):
        if worktree.main or not (worktree.branch or "").startswith(TASK_BRANCHES) or not worktree.path.is_dir():
            continue
        names = _split_task(worktree.branch or "", TASK_BRANCHES)
        if names is None:
            continue
        status = try_git(worktree.path, ["status", "--porcelain", "--untracked-files=normal"])
        clean = status.returncode == 0 and not status.stdout.strip()
        found.append(Workspace(worktree.path, names[0], names[1], clean))
    return found


def _prunable(top: Path) -> list[str]:
    from failres.gitops.git import try_git

    listing = try_git(top, ["worktree", "prune", "--dry-run", "--verbose"])
    text = (listing.stdout + listing.stderr).decode("utf-8", "replace")
    return [line.removeprefix("Removing ").split(":")[0] for line in text.splitlines() if line.startswith("Removing ")]


def collect(top: Path, repo, store, integration: str) -> GcFacts:
    head = repo.references.get(f"refs/heads/{integration}")
    if head is None:
        msg = f'the integration branch "{integration}" does not exist'
        raise UsageError(msg, hint="set [integration] branch in .failres.toml")
    tip = head.peel().id
    branches, snapshots = [], []
    for name in sorted(repo.references):
        if name.startswith(TASK_BRANCHES) and (names := _split_task(name, TASK_BRANCHES)):
            target = repo.references[name].peel().id
            merged = target == tip or repo.descendant_of(tip, target)
            branches.append(TaskBranch(names[0], names[1], name, merged))
        elif name.startswith(SNAPSHOTS) and (names := _split_task(name, SNAPSHOTS)):
            snapshots.append(Snapshot(names[0], names[1], name))
    return GcFacts(integration, _landed_tasks(store), branches, task_workspaces(top), snapshots, _prunable(top))


def remove_stale_workspaces(top: Path, paths: Sequence[str]) -> list[Item]:
    """Remove the task workspaces at `paths`, and git's records of vanished ones.

    The one place that knows how a task's workspace is removed: today a linked worktree
    (`git worktree remove`, which refuses to lose changes); a worktree git can no longer
    remove is reported rather than deleted by hand.
    """
    from failres.gitops.git import try_git

    failed = []
    for path in paths:
        done = try_git(top, ["worktree", "remove", path])
        if done.returncode != 0:
            reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
            failed.append(Item("workspace", path, f"git worktree remove refused: {reason[-1] if reason else ''}"))
    try_git(top, ["worktree", "prune"])
    return failed


def apply_gc(top: Path, repo, plan: GcPlan) -> tuple[Item, ...]:
    """Remove what `plan` says, workspaces first (a branch checked out in one cannot go);
    returns what could not be removed after all."""
    failed = remove_stale_workspaces(top, [i.name for i in plan.remove if i.kind == "workspace"])
    refused = {item.name for item in failed}
    for item in plan.remove:
        if item.kind in ("branch", "snapshot") and item.name not in refused:
            try:
                repo.references.delete(item.name)
            except (KeyError, ValueError) as error:
                failed.append(Item(item.kind, item.name, f"could not delete: {error}"))
    return tuple(failed)


@dataclass(frozen=True)
class GcResult:
    dry_run: bool
    removed: tuple[Item, ...]
    kept: tuple[Item, ...]
    retention_days: int

    def counts(self) -> dict[str, int]:
        kinds = ("branch", "workspace", "snapshot", "stale-record")
        return {kind: sum(1 for i in self.removed if i.kind == kind) for kind in kinds}

    def document(self) -> dict[str, object]:
        counts = self.counts()
        removed = {"branches": counts["branch"], "workspaces": counts["workspace"], "snapshots": counts["snapshot"],
                   "staleRecords": counts["stale-record"]}
        return {"dryRun": self.dry_run, "retentionDays": self.retention_days, "removed": removed,
                "items": [i.document() for i in self.removed], "kept": [i.document() for i in self.kept]}


def collect_garbage(top: Path, repo, store, integration: str, retention_days: int, *, dry_run: bool,
                    now: datetime | None = None) -> GcResult:
    from datetime import UTC

    plan = plan_gc(collect(top, repo, store, integration), now or datetime.now(UTC), retention_days)
    if dry_run:
        return GcResult(True, plan.remove, plan.keep, retention_days)
    failed = apply_gc(top, repo, plan)
    gone = {(i.kind, i.name) for i in failed}
    removed = tuple(i for i in plan.remove if (i.kind, i.name) not in gone)
    return GcResult(False, removed, (*plan.keep, *failed), retention_days)

