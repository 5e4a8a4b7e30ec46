"""`git failres sync`: many machines, one store, joined by git itself.

Each machine keeps its own store ref; a remote (any git remote, usually a bare
repository every runner can push to) is where they meet. One sync is:

1. fetch the store ref into `refs/remotes/<remote>/failres/store` (and, where
   `[sync] snapshots = true`, every snapshot ref beside it), with the git
   program, so every transport, credential helper and URL rewrite the person
   configured works;
2. check what came: a remote tip that is no commit, or whose tree is not a
   store's (a `journal` that is a file would read, in a union, as every journal
   record deleted), is refused by name; the tracking refs are put back as they
   were, and nothing is merged or pushed;
3. join the remote store into the local one: taken as is when there is no local
   store, fast-forwarded when the local one has nothing new, else one merge
   commit (`Store.merge`): a union of files, since records are add-only;
4. push the local store with a lease on the remote tip it just merged, plus (with
   snapshots on) every snapshot ref the remote lacks;
5. when someone pushed in between (the lease fails and the remote tip has moved),
   go back to 1 after a short random pause, a bounded number of times.

Before any of it, the local store must be sound: a local ref that names no
commit, or one that is gone while its reflog or index shows it existed, is
refused (syncing would push or adopt over it).

Snapshots stay home unless asked: a snapshot is the failing worktree as a seat
left it, and what a seat wrote is not always fit to leave the machine.

Where the two sides wrote facts about the same record, a fixed rule decides, the
same in either merge order, and both facts stay in history (each side's commit
is a parent of the merge):

- two `resolved_by` stamps of one lesson: both files are kept; the first stamp
  (by its timestamp, then id) is what the lesson reads as (a "first" fold);
- the same path written with different bytes: the one that parses, then the blob
  with the smaller id (a damaged remote never replaces a record that reads);
- a record archived on one side, amended on the other: the amendment follows its
  record into the archive (and back out, for a restore), see `lessons.storage.settle`.

Syncs of one repository take turns (a lock in the git dir): two `git fetch`es
updating the same remote-tracking refs at once would fail on git's ref locks.
Writers of the store do not wait for a sync: a merge that loses the race to a
local write is rebuilt on the new tip.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from typing import TYPE_CHECKING

from failres.errors import Busy, GitError
from failres.gitops.git import first_error_line, try_git
from failres.gitops.location import locate_repo
from failres.remote.snapshot_refs import (SNAPSHOT_PREFIX, adopt_snapshots, clashing_snapshots, missing_snapshots,
                                          refs_under)
from failres.remote.wire import NARROW, check_remote, push_statuses, tip_in_ls_remote, tracking_ref
from lessons.errors import StoreDamaged
from lessons.failpoints import failpoint
from lessons.storage.plain_repo import PlainRepository
from lessons.storage.store_view import StoreView

if TYPE_CHECKING:  # imported where a sync joins or writes: one that finds the remote at its own tip loads none
    import pygit2

    from lessons.storage.store import Store

SHARED_PREFIX = "refs/failres/"
MAX_PUSH_ATTEMPTS = 8
BACKOFF_START = 0.05  # seconds; doubled after every lost push, capped below
BACKOFF_CAP = 2.0
LOCK_WAIT = 300.0  # seconds a sync waits for another sync of the same repository


class StoreRefused(GitError):
    """The remote refused the store push for itself (a hook, a permission): asking again gets the same."""


@dataclass(frozen=True)
class SyncResult:
    """What one sync did."""

    remote: str
    ref: str
    fetched: str | None  # the remote store tip the last attempt joined, None when the remote had none
    join: str  # "none", "adopted", "up-to-date", "fast-forward" or "merged"
    merged: str | None  # the merge commit (or the tip taken over), when the join wrote one
    tip: str | None  # the local store tip after the sync
    pushed: bool  # whether the remote store ref was moved
    retries: int  # pushes lost to someone who pushed in between
    snapshots_fetched: int = 0
    snapshots_pushed: int = 0
    snapshots_rejected: tuple[str, ...] = field(default_factory=tuple)

    def document(self) -> dict:
        return {
            "remote": self.remote,
            "ref": self.ref,
            "fetched": self.fetched,
            "join": self.join,
            "merged": self.merged,
            "tip": self.tip,
            "pushed": self.pushed,
            "retries": self.retries,
            "snapshots": {"fetched": self.snapshots_fetched, "pushed": self.snapshots_pushed,
                          "rejected": list(self.snapshots_rejected)},
        }


# ---- pure decisions ----

def default_remote(configured: str, upstream: str | None) -> str:
    """`integration.remote`, else the integration branch's upstream remote, else "origin"."""
    if configured:
        return configured
    if upstream and upstream != ".":  # "." is the local repository itself, not a remote
        return upstream
    return "origin"


def _note_fetch(git_dir: Path, remote: str) -> None:
    """A run's tamper check must not take the tracking refs this sync moves for a seat's."""
    from failres.containment import moves

    moves.note_prefix(git_dir, f"refs/remotes/{remote}/")


def fetch_refspecs(remote: str) -> list[str]:
    """The plain-git refspec that brings every shared ref (store and snapshots) home."""
    return [f"+{SHARED_PREFIX}*:{tracking_ref(remote, SHARED_PREFIX)}*"]


def backoff_seconds(attempt: int, draw: float) -> float:
    """A pause before push attempt `attempt` + 1: exponential, capped, fully jittered.

    The jitter spreads out a crowd of runners that all lost to the same push, so
    they do not collide again on the next round.
    """
    return min(BACKOFF_CAP, BACKOFF_START * (2 ** attempt)) * draw


# ---- git at the edges ----

def _git(top: Path, *args: str, config: tuple[str, ...] = ()):
    return try_git(top, list(args), config=config)


def _remote_store_tip(top: Path, remote: str, ref: str) -> str | None:
    """The remote's store tip right now (one round trip, nothing fetched)."""
    done = _git(top, "ls-remote", remote, ref)
    if done.returncode != 0:
        msg = f"git ls-remote {remote} failed: {first_error_line(done.stderr)}"
        raise GitError(msg, hint="check the remote with `git remote -v`")
    return tip_in_ls_remote(done.stdout, ref)


def _fetch(top: Path, git_dir: Path, remote: str, ref: str, snapshots: bool) -> None:
    """One `git fetch` (one connection to the remote) of the store ref, and the snapshots if asked.

    An explicit refspec for a ref the remote lacks fails the whole fetch; only then is the remote
    asked (`ls-remote`) whether its store is gone, so the common case costs one connection, not two.
    """
    specs = fetch_refspecs(remote) if snapshots else []
    store_spec = None
    if not snapshots or not ref.startswith(SHARED_PREFIX):
        store_spec = f"+{ref}:{tracking_ref(remote, ref)}"
    _note_fetch(git_dir, remote)
    done = _fetch_specs(top, remote, [*specs, store_spec] if store_spec else specs)
    if done.returncode != 0 and store_spec is not None:
        if _remote_store_tip(top, remote, ref) is None:
            # No store there: a tracking ref whose remote ref is gone would be a lease that never holds.
            try_git(top, ["update-ref", "-d", tracking_ref(remote, ref)])
            done = _fetch_specs(top, remote, specs) if specs else None
        else:  # another machine pushed the first store between the fetch and the question
            done = _fetch_specs(top, remote, [*specs, store_spec])
    if done is not None and done.returncode != 0:
        msg = f"git fetch {remote} failed: {first_error_line(done.stderr)}"
        raise GitError(msg, hint="check the remote with `git remote -v`; nothing was changed locally")


def _fetch_specs(top: Path, remote: str, specs: list[str]) -> subprocess.CompletedProcess[bytes]:
    # --prune: a tracking ref whose remote ref is gone would be a lease that can never hold.
    return _git(top, "fetch", "--quiet", "--prune", "--no-tags", "--no-write-fetch-head", remote, *specs, config=NARROW)


def _tips(git_dir: Path, *patterns: str) -> dict[str, str]:
    """name -> commit of the refs matching `patterns` (for-each-ref's: a full name, or a prefix up to a slash)."""
    with PlainRepository(git_dir, patterns) as plain:
        return {name: str(ref.target) for name, ref in plain.list_refs().items() if not isinstance(ref.target, str)}


def _put_back(repo: pygit2.Repository, prefix: str, before: dict[str, str]) -> None:
    """Return the refs under `prefix` to what they were (a refused fetch leaves no trace)."""
    import pygit2

    for name in refs_under(repo, prefix):
        if prefix + name not in before:
            repo.references.delete(prefix + name)
    for name, oid in before.items():
        repo.references.create(name, pygit2.Oid(hex=oid), force=True)


@dataclass(frozen=True)
class _Push:
    store_ok: bool
    store_reason: str
    snapshots_pushed: int
    snapshots_rejected: tuple[str, ...]


def _push(top: Path, remote: str, ref: str, tip: str | None, expected: str | None,
          snapshots: list[str]) -> _Push:
    specs: list[str] = []
    lease: list[str] = []
    if tip is not None and tip != expected:
        # The lease: move the remote store only if it is still where we fetched it
        # ("" = must not exist yet). Our tip descends from it, so this is a fast-forward.
        lease = [f"--force-with-lease={ref}:{expected or ''}"]
        specs.append(f"{tip}:{ref}")
    specs += [f"{SNAPSHOT_PREFIX}{name}:{SNAPSHOT_PREFIX}{name}" for name in snapshots]
    # A snapshot ref is only ever created there: the lease says "must not exist yet", so
    # one another machine pushed meanwhile is never moved, not even by a fast-forward.
    lease += [f"--force-with-lease={SNAPSHOT_PREFIX}{name}:" for name in snapshots]
    if not specs:
        return _Push(True, "", 0, ())
    # No --quiet: with it, git leaves accepted refs out of the porcelain report.
    # --no-thin: a thin pack may delta against objects the remote has, which means walking
    # the remote store's whole tree for bases; a store's records are new files, not new
    # versions of the remote's, so that walk (a fifth of a large push's time) finds nothing to save.
    done = _git(top, "push", "--porcelain", "--no-thin", *lease, remote, *specs)
    statuses = push_statuses(done.stdout.decode("utf-8", "replace"))
    if not statuses and done.returncode != 0:
        msg = f"git push {remote} failed: {first_error_line(done.stderr)}"
        raise GitError(msg, hint="check the remote with `git remote -v`; the local store is intact")
    store_ok, reason = True, ""
    if tip is not None and tip != expected:
        store_ok, reason = statuses.get(ref, (False, first_error_line(done.stderr)))
    pushed = [name for name in snapshots if statuses.get(SNAPSHOT_PREFIX + name, (False, ""))[0]]
    rejected = tuple(name for name in snapshots if not statuses.get(SNAPSHOT_PREFIX + name, (False, ""))[0])
    return _Push(store_ok, reason, len(pushed), rejected)


@contextmanager
def _sync_lock(common_dir: Path, wait: float = LOCK_WAIT) -> Iterator[None]:
    directory = common_dir / "failres"
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / "sync.flock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    msg = f"another sync of this repository has been running for over {wait:.0f}s"
                    raise Busy(msg, hint="wait for it to finish, then run git failres sync again") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing releases the lock; so does a killed process


# ---- the join ----

def join_remote(store: Store, theirs: str | None, remote: str) -> tuple[str, str | None]:
    """Bring the fetched remote tip into the local store: (how, commit written or taken)."""
    local = store.tip()
    if theirs is None or (local is not None and str(local) == theirs):
        # The remote holds this very tip (most syncs): nothing of theirs to check or join.
        return ("none" if theirs is None else "up-to-date"), None
    # Imported here: a look at the remote (`status`, `cancel --remote`) and an unchanged store never join.
    import pygit2

    from lessons.storage.settle import join

    kind, landed = join(store, pygit2.Oid(hex=theirs), f"failres: sync {remote}: merge store {theirs[:12]}",
                        name=f"{remote}'s store {store.ref}")
    return kind, str(landed) if landed is not None else None


def _verify(top: Path, git_dir: Path, ref: str, remote: str) -> None:
    """`Store.verify` before a sync, read through git where the store is there and sound (most
    syncs); anything else (no store, a damaged one) is told by the pygit2 store's own words."""
    with PlainRepository(git_dir, [ref]) as plain:
        if ref in plain.references:
            try:
                StoreView(plain, ref).verify(ignore_remote=remote)
                return
            except (StoreDamaged, OSError):
                pass
    from lessons.storage.store import Store

    Store(top, ref).verify(ignore_remote=remote)


def sync_store(top: Path, ref: str, remote: str, *, snapshots: bool = False, attempts: int = MAX_PUSH_ATTEMPTS,
               pause: Callable[[float], None] = time.sleep,
               draw: Callable[[], float] | None = None) -> SyncResult:
    """Fetch, join and push until the remote holds everything this store holds.

    `snapshots`: also exchange snapshot refs (`[sync] snapshots`); off, they stay home.
    """
    git_dir = locate_repo(top).common_dir
    check_remote(top, remote)
    # A sync with this remote is itself the way back for a store lost here, so only
    # other signs that the local store existed (its reflog, its index) stop it.
    _verify(top, git_dir, ref, remote)
    tracking = tracking_ref(remote, SHARED_PREFIX)
    remote_ref = tracking_ref(remote, ref)
    with _sync_lock(git_dir):
        retries = 0
        fetched_snapshots = pushed_snapshots = 0
        for attempt in range(attempts):
            seen_before = _tips(git_dir, tracking.rstrip("/"))
            _fetch(top, git_dir, remote, ref, snapshots)
            now = _tips(git_dir, ref, remote_ref)
            theirs = now.get(remote_ref)
            if not snapshots and theirs is not None and now.get(ref) == theirs:
                # The remote holds this very tip (most syncs): nothing to join, check or push,
                # and so nothing that needs libgit2.
                failpoint("sync")
                return SyncResult(remote, ref, theirs, "up-to-date", None, theirs, pushed=False, retries=retries)
            import pygit2

            from lessons.storage.store import Store

            # A fresh handle: the fetch wrote refs and packs behind this process's back.
            repo = pygit2.Repository(str(top))
            store = Store(repo, ref)
            try:
                how, merged = join_remote(store, theirs, remote)
            except StoreDamaged as refused:
                _put_back(repo, tracking, seen_before)
                hint = "nothing was merged or pushed; the remote's store needs repairing there first"
                raise StoreDamaged(str(refused), hint=refused.hint or hint) from None
            if snapshots:
                fetched_snapshots += adopt_snapshots(repo, remote)
            tip = store.tip()
            local_tip = str(tip) if tip is not None else None
            ours_snap = refs_under(repo, SNAPSHOT_PREFIX) if snapshots else {}
            theirs_snap = refs_under(repo, tracking_ref(remote, SNAPSHOT_PREFIX)) if snapshots else {}
            missing = missing_snapshots(ours_snap, theirs_snap)
            clashes = tuple(clashing_snapshots(ours_snap, theirs_snap))
            failpoint("sync")
            outcome = _push(top, remote, ref, local_tip, theirs, missing)
            pushed_snapshots += outcome.snapshots_pushed
            if outcome.store_ok:
                pushed = local_tip is not None and local_tip != theirs
                if pushed:
                    # As git does after a push: the tracking ref now says what the remote holds.
                    repo.references.create(remote_ref, pygit2.Oid(hex=local_tip), force=True)
                return SyncResult(remote, ref, theirs, how, merged, local_tip,
                                  pushed=pushed, retries=retries,
                                  snapshots_fetched=fetched_snapshots, snapshots_pushed=pushed_snapshots,
                                  snapshots_rejected=tuple(sorted(clashes + outcome.snapshots_rejected)))
            if _remote_store_tip(top, remote, ref) == theirs:
                # The remote is where we leased it and still said no: a hook or a
                # permission, not a race. Retrying would only ask again.
                msg = f"{remote} refused the store push: {outcome.store_reason}"
                raise StoreRefused(msg, hint="the local store is intact; check the remote's hooks and permissions")
            retries += 1
            if attempt + 1 < attempts:
                from random import random  # only a sync that lost a race draws its pause
                pause(backoff_seconds(attempt, (draw or random)()))
    msg = f"the store push to {remote} lost to other pushes {retries} times in a row"
    hint = "nothing was lost: every record is in the local store; run git failres sync again"
    raise Busy(msg, hint=hint)
