"""`git failres land SLUG TASK`: merge a task branch into the integration branch, then stamp.

Always a real merge commit (`--no-ff`): the landing is one commit a person can
find, revert, and read the task's trailer on. Where the merge happens depends on
where the integration branch is:

- checked out in a worktree (the person's own checkout, usually): `git merge`
  runs there, so the files, the index and the person's hooks all see it; a dirty
  checkout, or one in the middle of a merge or rebase, is refused, never touched;
- checked out nowhere: the merge is made in memory and the branch moves by
  compare-and-swap (`git update-ref NEW OLD`), so a concurrent push in between
  fails the landing instead of being overwritten. Conflicts refuse; a person
  resolves them with a plain `git merge`, and the hook or `label` stamps.

A task committed by a runner on another clone (`run --remote`) has its branch on the
remote, not here: the journal (synced) says which commit it is, and `land` fetches
the branch from the remote that has it at that commit before merging.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pygit2

from failres.config.model import Config
from failres.containment import moves
from failres.engine import state
from failres.errors import GitError, UsageError
from failres.gitops.worktrees import list_worktrees
from failres.gitops.git import first_error_line, identity_config, run_git, try_git
from failres.journal import read_journal
from failres.landing.outcome_labels import StampResult, landing_summary, stamp_task
from failres.landing.trailers import TASK_TRAILER_KEY
from lessons.redaction.redact import redact
from lessons.storage.store import Store, store_signature
from lessons.failpoints import failpoint


@dataclass(frozen=True)
class LandResult:
    """Where the task landed, how, and what was stamped."""

    slug: str
    task: str
    branch: str
    merge_commit: str
    int_head: str
    how: str  # "worktree", "in-memory", "already-landed" or "no-change" (the task needed none: nothing merged)
    stamp: StampResult


def task_branch(slug: str, task: str) -> str:
    return f"failres/{slug}/{task}"


def merge_message(slug: str, task: str, title: str) -> str:
    """The landing commit's message; it carries the task trailer like every commit failres makes for a task."""
    subject = f"Merge {task_branch(slug, task)}"
    if title and title != task:
        subject += f": {redact(title)}"  # the commit lands on the person's branch, and travels with it
    return f"{subject}\n\n{TASK_TRAILER_KEY}: {slug}/{task}\n"


def _resolve(repo: pygit2.Repository, ref: str) -> pygit2.Commit | None:
    try:
        return repo.references[ref].peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def land_task(top: Path, repo: pygit2.Repository, config: Config, store: Store, slug: str, task: str) -> LandResult:
    """Merge failres/<slug>/<task> into the integration branch with a merge commit, then stamp the task."""
    from failres.engine.plan import require_id

    for name, value in (("slug", slug), ("task", task)):
        require_id(value, name)
    events = read_journal(store, slug).for_task(task)
    if not events:
        msg = f"no run of {slug}/{task} is recorded"
        raise UsageError(msg, hint="`git failres status` lists the tasks failres knows")
    branch = config.integration.branch
    theirs = _resolve(repo, f"refs/heads/{task_branch(slug, task)}")
    ours = _resolve(repo, f"refs/heads/{branch}")
    if theirs is None and fetch_committed_branch(top, repo, task_branch(slug, task), state.last_commit(events),
                                                 remote_branches=config.remote.branches):
        theirs = _resolve(repo, f"refs/heads/{task_branch(slug, task)}")
    if theirs is None:
        msg = f"branch {task_branch(slug, task)} does not exist"
        raise UsageError(msg, hint=f"run the task first: git failres run PLAN --task {task}")
    if ours is None:
        msg = f"the integration branch {branch} does not exist"
        raise UsageError(msg, hint="set [integration] branch in .failres.toml")
    if theirs.id == ours.id or repo.descendant_of(ours.id, theirs.id):
        landed = state.last_event(events, "landed")
        if landed is not None:
            # Landing twice is not an error: the landing stands, and any stamp it is
            # still missing is written against that same landing.
            commit, head = str(landed.get("commit")), str(landed.get("intHead"))
            stamp = _reported(store, stamp_task(store, slug, task, commit, head))
            return LandResult(slug, task, branch, commit, head, "already-landed", stamp)
        committed = state.last_event(events, "task-committed")
        if committed is not None and committed.get("empty"):
            # The task needed no change: nothing is merged, and the landing is still
            # recorded (its lessons are stamped) so the task reads finished.
            stamp = _reported(store, stamp_task(store, slug, task, str(ours.id), str(ours.id)))
            return LandResult(slug, task, branch, str(ours.id), str(ours.id), "no-change", stamp)
        msg = f"{task_branch(slug, task)} has nothing that {branch} does not have already"
        raise UsageError(msg, hint="if it reached the branch another way, `git failres label` stamps it")
    title = _task_title(events, task)
    message = merge_message(slug, task, title)
    checkout = _checkout_of(top, branch)
    if checkout is not None:
        merge, int_head = _merge_in_worktree(checkout, slug, task, message, f"refs/heads/{branch}")
        how = "worktree"
    else:
        merge = _merge_in_memory(repo, branch, ours, theirs, message, slug, task)
        int_head, how = str(ours.id), "in-memory"
    stamp = _reported(store, stamp_task(store, slug, task, merge, int_head))
    return LandResult(slug, task, branch, merge, int_head, how, stamp)


def fetch_committed_branch(top: Path, repo: pygit2.Repository, branch: str, commit: str | None, *,
                           remote_branches: str = "refs/heads/failres") -> str | None:
    """Bring a task branch committed on another clone here: the first remote whose branch names the
    journal's commit (origin first). The remote's name, or None when none has it. `remote_branches`:
    where runners push task branches (`[remote] branches`); here it is always `refs/heads/<branch>`.

    Only a branch at the journal's commit is taken: the journal says what the task committed, and
    a remote's branch that says otherwise is not that task's work.
    """
    if not commit:
        return None
    names = sorted(repo.remotes.names(), key=lambda name: name != "origin")
    for remote in names:
        tracking = f"refs/remotes/{remote}/failres-view/heads-{branch.replace('/', '-')}"
        done = try_git(top, ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote,
                             f"+{remote_branches}{branch.removeprefix('failres')}:{tracking}"],
                       config=("core.logAllRefUpdates=false",))
        if done.returncode != 0 or _resolve(pygit2.Repository(str(top)), tracking) is None:
            continue
        if str(_resolve(pygit2.Repository(str(top)), tracking).id) != commit:
            continue
        made = try_git(top, ["update-ref", "-m", f"failres: task branch from {remote}", f"refs/heads/{branch}",
                             commit, "0" * 40])
        if made.returncode == 0:
            return remote
    return None


def _reported(store: Store, stamp: StampResult) -> StampResult:
    """What to report of a landing: this stamp, or the journal's record when the merge hook stamped first."""
    if stamp.wrote:
        return stamp
    return landing_summary(store, stamp.slug, stamp.task, stamp.landed_commit) or stamp


def _task_title(events: list[dict], task: str) -> str:
    started = state.last_event(events, "task-started")
    definition = started.get("definition") if started else None
    if isinstance(definition, dict) and isinstance(definition.get("title"), str):
        return definition["title"].splitlines()[0] if definition["title"] else task
    return task


def _checkout_of(top: Path, branch: str) -> Path | None:
    """The worktree that has `branch` checked out, if any."""
    for worktree in list_worktrees(top):
        if worktree.branch == f"refs/heads/{branch}":
            return worktree.path
    return None


def _in_progress(worktree: Path) -> str | None:
    """The operation a person left unfinished in `worktree` (merge, rebase, ...), if any."""
    for marker, what in (("MERGE_HEAD", "a merge"), ("CHERRY_PICK_HEAD", "a cherry-pick"),
                         ("REVERT_HEAD", "a revert"), ("rebase-merge", "a rebase"), ("rebase-apply", "a rebase")):
        path = run_git(worktree, ["rev-parse", "--git-path", marker]).decode().strip()
        if (worktree / path).exists():
            return what
    return None


def _merge_in_worktree(worktree: Path, slug: str, task: str, message: str, ref: str) -> tuple[str, str]:
    busy = _in_progress(worktree)
    if busy is not None:
        msg = f"{worktree} is in the middle of {busy}; landing would mix into it"
        raise GitError(msg, hint="finish or abort it there, then run land again")
    dirty = run_git(worktree, ["status", "--porcelain=v1", "-z", "--untracked-files=no"])
    if dirty.strip(b"\0"):
        msg = f"{worktree} has uncommitted changes; landing would merge into them"
        raise GitError(msg, hint="commit or stash them there, then run land again")
    before = run_git(worktree, ["rev-parse", "HEAD"]).decode().strip()
    common = Path(run_git(worktree, ["rev-parse", "--path-format=absolute", "--git-common-dir"]).decode().strip())
    # Noted as under way before git merges, done after: a run's tamper check meanwhile
    # waits for it and keeps the merge, its files and its reflog (`containment.moves`).
    with moves.moving(common, ref, before) as moved:
        failpoint("land")
        completed = try_git(worktree, ["merge", "--no-ff", "--no-edit", "-m", message, task_branch(slug, task)],
                            config=identity_config(worktree))
        moved.append(run_git(worktree, ["rev-parse", "HEAD"]).decode().strip())
    if completed.returncode != 0:
        reason = _merge_failure(completed.stdout + completed.stderr)
        # Only undo a merge this call started: the checkout was verified idle above.
        if try_git(worktree, ["rev-parse", "-q", "--verify", "MERGE_HEAD"]).returncode == 0:
            try_git(worktree, ["merge", "--abort"])
        msg = f"merging {task_branch(slug, task)} in {worktree} failed: {reason}"
        raise GitError(msg, hint=f"merge it by hand there (git merge {task_branch(slug, task)}); "
                                 "the merge hook or `git failres label` stamps it")
    head = run_git(worktree, ["rev-parse", "HEAD"]).decode().strip()
    if head == before:
        msg = f"git merge in {worktree} made no commit"
        raise GitError(msg)
    return head, before


def _merge_failure(output: bytes) -> str:
    text = output.decode("utf-8", "replace")
    conflicts = [line.split(" in ", 1)[-1].strip() for line in text.splitlines() if line.startswith("CONFLICT")]
    if conflicts:
        return "conflicts in " + ", ".join(conflicts[:5])
    return first_error_line(output)


def _merge_in_memory(repo: pygit2.Repository, branch: str, ours: pygit2.Commit, theirs: pygit2.Commit,
                     message: str, slug: str, task: str) -> str:
    index = repo.merge_commits(ours, theirs)
    if index.conflicts is not None:
        paths = sorted({entry.path for conflict in index.conflicts for entry in conflict if entry is not None})
        msg = f"{task_branch(slug, task)} conflicts with {branch} in {', '.join(paths[:5])}"
        raise GitError(msg, hint=f"check out {branch}, run git merge {task_branch(slug, task)} and resolve; "
                                 "the merge hook or `git failres label` stamps it")
    tree = index.write_tree(repo)
    # The person when git knows them, else failres itself: fresh machines have no identity.
    signature = store_signature(repo)
    merge = repo.create_commit(None, signature, signature, message, tree, [ours.id, theirs.id])
    top = Path(repo.workdir) if repo.workdir else Path(repo.path)
    moves.note(Path(repo.path), f"refs/heads/{branch}", str(ours.id), str(merge))
    moved = try_git(top, ["update-ref", "-m", f"failres: land {slug}/{task}", f"refs/heads/{branch}", str(merge),
                          str(ours.id)])
    if moved.returncode != 0:
        msg = f"{branch} moved while {task_branch(slug, task)} was being landed; nothing was changed"
        raise GitError(msg, hint="run land again")
    return str(merge)
