"""`status --remote` and `cancel --remote`: a distributed run seen and stopped from anywhere.

Both read the remote, never this clone's guesses: the claims as they are there now
(one fetch), and for `status` the remote's store, fetched into its tracking ref and
read in place (nothing is merged into the local store: status writes no record). Every
task a runner has seen is in that store's journal, pending ones too (each runner
journals the plan's tasks as planned). A `committed` claim counts only when the task
branch it names is on the remote (one `ls-remote`): one without it says nothing of the
task, and its row says the claim is not trusted.
A cancel is a claim commit of state `cancelled` pushed by compare-and-swap over the
holder's claim: the holder's next renewal is refused, it reads why, stops its seat
and journals `interrupted` (reason `cancel`), and no other runner takes the task.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

import pygit2

from failres.engine import state
from failres.errors import GitError, UsageError
from failres.gitops.git import first_error_line, try_git
from failres.journal import list_slugs, read_journal
from failres.remote.claims import Claim
from failres.remote.holder import utc_now
from failres.remote.transport import DEFAULT_BRANCHES, RemoteClaims, fetch_claims
from failres.remote.sync import check_remote
from lessons.storage.store import Store

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


def _untrusted(top: Path, remote: str, claims: dict[tuple[str, str], Claim],
               branches: str = DEFAULT_BRANCHES) -> set[tuple[str, str]]:
    """The (slug, task) whose committed claim names a commit the remote's task branch
    (`<branches>/<slug>/<task>`) does not."""
    committed = {key: claim for key, claim in claims.items() if claim.state == "committed"}
    if not committed:
        return set()
    prefix = f"{branches.rstrip('/')}/"
    tips = RemoteClaims(top, remote, "").remote_tips(prefix)  # Unreachable is a GitError
    return {(slug, task) for (slug, task), claim in committed.items()
            if not claim.commit or tips.get(f"{prefix}{slug}/{task}") != claim.commit}


def _remote_store(top: Path, remote: str, ref: str) -> Store | None:
    # Not the tracking ref `sync` keeps: that one says this clone's store existed, which a look does not.
    tracking = f"refs/remotes/{remote}/failres-view/{ref.removeprefix('refs/').replace('/', '-')}"
    listed = try_git(top, ["ls-remote", remote, ref])
    if listed.returncode != 0:
        msg = f"git ls-remote {remote} failed: {first_error_line(listed.stderr)}"
        raise GitError(msg, hint="check the remote with `git remote -v`")
    if not listed.stdout.strip():
        return None
    done = try_git(top, ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, f"+{ref}:{tracking}"],
                   config=("core.logAllRefUpdates=false",))
    if done.returncode != 0:
        msg = f"git fetch {remote} failed: {first_error_line(done.stderr)}"
        raise GitError(msg, hint="check the remote with `git remote -v`")
    return Store(pygit2.Repository(str(top)), tracking)


def remote_statuses(top: Path, store_ref: str, remote: str, slug: str | None = None, *,
                    branches: str = DEFAULT_BRANCHES) -> list[dict]:
    """One row per task the remote knows (its journal or its claims), sorted by slug then task;
    `branches`: where the runners push task branches (`[remote] branches`)."""
    check_remote(pygit2.Repository(str(top)), remote)
    claims = fetch_claims(top, remote, slug or "")
    store = _remote_store(top, remote, store_ref)
    untrusted = _untrusted(top, remote, claims, branches)
    slugs = {slug} if slug else set(list_slugs(store) if store is not None else []) | {s for s, _ in claims}
    now = utc_now()
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
            found = state.quarantines(events)
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
                "quarantines": len(found), "lastFailClass": found[-1].fail_class if found else None,
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
    check_remote(pygit2.Repository(str(top)), remote)
    claims = RemoteClaims(top, remote, slug)
    current = claims.fetch()
    targets = [task] if task else sorted(t for t, c in current.items() if c.state == "held")
    held = [t for t in targets if t in current and current[t].state == "held"]
    if not held:
        what = f"{slug}/{task} is not running on {remote}" if task else f"no task of {slug} is running on {remote}"
        raise UsageError(what, hint=f"`git failres status {slug} --remote {remote}` shows who holds what")
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
