"""`status --remote` and `cancel --remote`: a distributed run seen and stopped from anywhere.

Both read the remote, never this clone's guesses. `status` asks it once: one `git fetch`
brings the plan's claims, the remote's store and the tips of the task branches into
tracking refs of failres's own (`refs/remotes/<remote>/failres-view/`), and everything
is read in place from there (nothing is merged into the local store: status writes no
record). A person runs it many times over, so it costs one connection, as a `git fetch`
does: a look before the fetch (`ls-remote`) or after it was a second and a third. Every
task a runner has seen is in that store's journal, pending ones too (each runner
journals the plan's tasks as planned). A `committed` claim counts only when the task
branch it names is on the remote: one without it says nothing of the task, and its row
says the claim is not trusted.
A cancel is a claim commit of state `cancelled` pushed by compare-and-swap over the
holder's claim: the holder's next renewal is refused, it reads why, stops its seat
and journals `interrupted` (reason `cancel`), and no other runner takes the task.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from failres.engine import state
from failres.errors import GitError, UsageError
from failres.gitops.git import first_error_line, try_git
from failres.gitops.location import locate_repo
from failres.journal import list_slugs, read_journal
from failres.remote.claims import CLAIMS_PREFIX, Claim
from failres.remote.claims_seen import read_claims
from failres.remote.wire import DEFAULT_BRANCHES, FETCH_CONFIG, check_remote, repo_turn
from lessons.storage.plain_repo import PlainRepository
from lessons.storage.store_view import StoreView

CANCEL_ATTEMPTS = 8


def claim_state(journal_state: str, claim: Claim | None, lease_left: float | None) -> str:
    """A task's state for everyone: what the remote's journal says, then what its claim says now."""
    if claim is None or journal_state == "landed":
        return journal_state
    if claim.state == "held":
        return "running" if lease_left is not None and lease_left > 0 else "interrupted"
    if claim.state == "committed":
        return "committed"
    if claim.state == "cancelled":
        return "interrupted"
    if claim.state == "quarantined" and journal_state not in ("quarantined", "stopped"):
        return "quarantined"
    return journal_state


UNTRUSTED = "a committed claim without its task branch on the remote: not trusted"


@dataclass(frozen=True)
class _Seen:
    """What one fetch brought of a remote: its claims, its store (None: it has none), its task branch tips."""

    claims: dict[tuple[str, str], Claim]
    store: StoreView | None
    branches: dict[str, str]  # "slug/task" -> commit


def _view_ref(remote: str, kind: str) -> str:
    return f"refs/remotes/{remote}/failres-view/{kind}/"


@contextmanager
def fetched_view(top: Path, remote: str, store_ref: str, slug: str | None, task_branches: str) -> Iterator[_Seen]:
    """The claims of `slug` (or of every plan), the store and the task branches (under
    `task_branches`, `[remote] branches`), in one `git fetch`, read in place while the block runs.

    Each refspec is a pattern, so a ref the remote lacks (no store yet, no claim, no
    branch) is no error, and `--prune` drops the copy of one that is gone there. The
    store's pattern is its name and a `*`, which matches the name itself; anything else
    it matches is read past. What was fetched is read through git (`PlainRepository`):
    nothing here writes, so nothing needs libgit2.
    """
    plan = f"{slug}/" if slug else ""
    claims_at, branches_at = _view_ref(remote, "claims"), _view_ref(remote, "branches")
    # Not the tracking ref `sync` keeps, nor one named like it (`<remote>/failres/store`): that
    # one says this clone's store existed (`lessons.storage.guard`), which a look does not.
    tracking = f"refs/remotes/{remote}/failres-view/{store_ref.removeprefix('refs/').replace('/', '-')}"
    specs = [f"+{CLAIMS_PREFIX}{plan}*:{claims_at}{plan}*", f"+{store_ref}*:{tracking}*",
             f"+{task_branches.rstrip('/')}/{plan}*:{branches_at}{plan}*"]
    git_dir = locate_repo(top).common_dir
    with repo_turn(git_dir, "view.flock"):
        done = try_git(top, ["fetch", "--quiet", "--prune", "--no-tags", "--no-write-fetch-head", remote, *specs],
                       config=FETCH_CONFIG)  # protocol v2: only the three prefixes are listed
        if done.returncode != 0:
            msg = f"git fetch {remote} failed: {first_error_line(done.stderr)}"
            raise GitError(msg, hint="check the remote with `git remote -v`")
        with PlainRepository(git_dir, [(claims_at + plan).rstrip("/"), (branches_at + plan).rstrip("/"),
                                       tracking]) as repo:
            claims, _ = read_claims(repo, claims_at, claims_at + plan)  # finished tasks' record read in
            branches = {name[len(branches_at):]: str(repo.references[name].target) for name in repo.references
                        if name.startswith(branches_at + plan)}
            store = StoreView(repo, tracking) if tracking in repo.references else None
            yield _Seen(claims, store, branches)


def untrusted_claims(claims: dict[tuple[str, str], Claim], branches: dict[str, str]) -> set[tuple[str, str]]:
    """The (slug, task) whose committed claim names a commit the remote's task branch does not."""
    return {(slug, task) for (slug, task), claim in claims.items()
            if claim.state == "committed" and (not claim.commit or branches.get(f"{slug}/{task}") != claim.commit)}


def _fail_classes(events: list[dict]) -> list[str]:
    # Only the classes: the quarantines' signatures (`state.quarantines`) bring redaction's
    # patterns, whose compiling a look at the remote would pay on every start.
    return [str(e.get("failClass", "")) for e in events if e.get("type") == "quarantined"]


def remote_statuses(top: Path, store_ref: str, remote: str, slug: str | None = None, *,
                    branches: str = DEFAULT_BRANCHES) -> list[dict]:
    """One row per task the remote knows (its journal or its claims), sorted by slug then task;
    `branches`: where the runners push task branches (`[remote] branches`)."""
    check_remote(top, remote)
    with fetched_view(top, remote, store_ref, slug, branches) as seen:
        return _rows(seen, slug)


def _rows(seen: _Seen, slug: str | None) -> list[dict]:
    claims, store = seen.claims, seen.store
    untrusted = untrusted_claims(claims, seen.branches)
    slugs = {slug} if slug else set(list_slugs(store) if store is not None else []) | {s for s, _ in claims}
    now = datetime.now(UTC)
    rows = []
    for name in sorted(slugs):
        journal = read_journal(store, name) if store is not None else None
        events_of = journal.for_task if journal is not None else (lambda task: [])
        tasks = {str(e.get("task")) for e in (journal.events if journal else ()) if e.get("task")}
        tasks |= {t for s, t in claims if s == name}
        for task in sorted(tasks):
            events = events_of(task)
            claim = claims.get((name, task))
            trusted = claim is None or (name, task) not in untrusted
            judged = claim if trusted else None
            left = claim.lease_left(now) if claim is not None else None
            found = _fail_classes(events)
            committed = state.last_event(events, "task-committed")
            holder = None
            if claim is not None:
                holder = {"host": claim.host, "pid": claim.pid, "run": claim.run, "since": claim.since,
                          "until": claim.until}
            rows.append({
                "slug": name, "task": task, "state": claim_state(state.task_state(events), judged, left),
                "claim": claim.state if claim is not None else None, "holder": holder,
                "leaseLeft": round(left, 1) if left is not None else None,
                "pid": claim.pid if claim is not None and claim.state == "held" else None,
                "quarantines": len(found), "lastFailClass": found[-1] if found else None,
                "commit": (judged.commit if judged is not None and judged.commit else None)
                or (committed or {}).get("commit"),
                "claimProblem": None if trusted else UNTRUSTED,
                "updated": events[-1].get("ts") if events else (claim.since if claim is not None else None),
                "events": len(events),
            })
    return rows


@dataclass(frozen=True)
class RemoteCancel:
    slug: str
    task: str
    host: str
    pid: int
    requested: bool  # the cancel marker is on the remote (false: the task finished or moved meanwhile)


def cancel_remote(top: Path, remote: str, slug: str, task: str | None) -> list[RemoteCancel]:
    """Mark the claims of `slug/task` (or every held claim of `slug`) cancelled on the remote."""
    from failres.remote.transport import RemoteClaims

    check_remote(top, remote)
    claims = RemoteClaims(top, remote, slug)
    current = claims.fetch()
    targets = [task] if task else sorted(t for t, c in current.items() if c.state == "held")
    held = [t for t in targets if t in current and current[t].state == "held"]
    if not held:
        what = f"{slug}/{task} is not running on {remote}" if task else f"no task of {slug} is running on {remote}"
        raise UsageError(what, hint=f"`git failres status {slug} --remote {remote}` shows who holds what")
    import socket

    by = f"{socket.gethostname() or 'localhost'} pid {os.getpid()}"
    done = []
    for name in held:
        claim, requested = current[name], False
        for _ in range(CANCEL_ATTEMPTS):
            marker = claims.write(claim.finished_as("cancelled", cancelled_by=by), claim.oid)
            if claims.swap(marker, claim.oid).accepted:
                requested = True
                break
            claim = claims.fetch().get(name)  # renewed meanwhile: mark the renewal
            if claim is None or claim.state != "held":
                break
        done.append(RemoteCancel(slug, name, current[name].host, current[name].pid, requested))
    return done
