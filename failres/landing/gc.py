"""`git failres gc`: remove what landed tasks no longer need, and nothing else.

Three kinds of leftovers, each only for a task whose journal says it landed:

- its branch `failres/<slug>/<task>`, when the integration branch contains its tip
  (a task landed by a squash or on a forge is not merged here: its branch is kept,
  and the summary says how to drop it by hand);
- its workspace, when one is still there (`worktrees.keep`, or a run that left it) and
  holds nothing its commit does not;
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
    clean: bool  # nothing in it that its task's commit does not hold
    state_dir: Path | None = None  # failres's own record of it; None for a linked worktree


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
            how = f"rm -rf {space.path}" if space.state_dir is not None else f"git worktree remove --force {space.path}"
            keep.append(Item("workspace", str(space.path),
                             f"{space.slug}/{space.task} has landed, but its workspace has changes; {how}"))
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
    from lessons.bounds.policy import parse_ts

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


def _failres_workspaces(git_dir: Path) -> list[Workspace]:
    """The workspaces failres made (a directory outside the repository, recorded under
    `<git dir>/failres/workspaces/<slug>/<task>/`), checked through failres's private index."""
    from failres.gitops.git import try_git

    found = []
    registry = git_dir / "failres" / "workspaces"
    for record in sorted(registry.glob("*/*/path")):
        state_dir = record.parent
        path = Path(record.read_text(encoding="utf-8").strip())
        if not path.is_dir():
            continue
        # Against the index failres keeps for it (never the seat's own `.git`): a tracked
        # file changed since failres last put the files back is something a person may
        # want. Untracked files are what gates and tools leave (caches, builds); failres
        # removes those before every seat and gate anyway.
        env = {"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(path), "GIT_INDEX_FILE": str(state_dir / "index")}
        changed = try_git(path, ["diff-files", "--quiet"], env=env)
        clean = (state_dir / "index").is_file() and changed.returncode == 0
        found.append(Workspace(path, state_dir.parent.name, state_dir.name, clean, state_dir))
    return found


def _linked_worktrees(top: Path) -> list[Workspace]:
    """Task worktrees registered with `git worktree` (where older versions put workspaces)."""
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


def task_workspaces(top: Path, git_dir: Path) -> list[Workspace]:
    """Every task workspace there is, of either kind."""
    return [*_failres_workspaces(git_dir), *_linked_worktrees(top)]


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
    return GcFacts(integration, _landed_tasks(store), branches, task_workspaces(top, Path(repo.path)), snapshots,
                   _prunable(top))


def remove_stale_workspaces(top: Path, workspaces: Sequence[Workspace]) -> list[Item]:
    """Remove task workspaces, and git's records of linked worktrees that are gone.

    The one place that knows how a task's workspace is removed: failres's own through
    `gitops.workspace` (its files and failres's state for it), a linked worktree through
    `git worktree remove`, which refuses to lose changes (then it is reported, not forced).
    """
    from failres.gitops.git import try_git
    from failres.gitops.workspace import Workspace as TaskWorkspace

    failed = []
    for space in workspaces:
        if space.state_dir is not None:
            TaskWorkspace(space.path, Path(), space.state_dir, "", "").remove()
            continue
        done = try_git(top, ["worktree", "remove", str(space.path)])
        if done.returncode != 0:
            reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
            failed.append(Item("workspace", str(space.path),
                               f"git worktree remove refused: {reason[-1] if reason else ''}"))
    try_git(top, ["worktree", "prune"])
    return failed


def apply_gc(top: Path, repo, plan: GcPlan, workspaces: Sequence[Workspace]) -> tuple[Item, ...]:
    """Remove what `plan` says, workspaces first (a branch checked out in one cannot go);
    returns what could not be removed after all."""
    chosen = {i.name for i in plan.remove if i.kind == "workspace"}
    failed = remove_stale_workspaces(top, [w for w in workspaces if str(w.path) in chosen])
    refused = {item.name for item in failed}
    for item in plan.remove:
        if item.kind in ("branch", "snapshot") and item.name not in refused:
            try:
                from failres.containment import moves

                moves.note(Path(repo.path), item.name, str(repo.references[item.name].target), None)
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

    facts = collect(top, repo, store, integration)
    plan = plan_gc(facts, now or datetime.now(UTC), retention_days)
    if dry_run:
        return GcResult(True, plan.remove, plan.keep, retention_days)
    from failres.containment.left import leave_lost_workspaces

    leave_lost_workspaces(Path(repo.path))  # what a killed run left and gc keeps is made inert first
    failed = apply_gc(top, repo, plan, facts.workspaces)
    gone = {(i.kind, i.name) for i in failed}
    removed = tuple(i for i in plan.remove if (i.kind, i.name) not in gone)
    return GcResult(False, removed, (*plan.keep, *failed), retention_days)

