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

import pygit2

from failres.errors import Busy, GitError, UsageError
from failres.gitops.git import first_error_line, try_git
from failres.remote.wire import NARROW, refuse_unknown_remote
from lessons.errors import StoreDamaged
from lessons.storage.store import Store
from lessons.failpoints import failpoint

SHARED_PREFIX = "refs/failres/"
SNAPSHOT_PREFIX = "refs/failres/snapshots/"
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


def tracking_ref(remote: str, ref: str) -> str:
    """Where a remote's `refs/X` is kept locally: `refs/remotes/<remote>/X`."""
    return f"refs/remotes/{remote}/{ref.removeprefix('refs/')}"


def _note_fetch(top: Path, remote: str) -> None:
    """A run's tamper check must not take the tracking refs this sync moves for a seat's."""
    from failres.containment import moves

    moves.note_prefix(Path(pygit2.Repository(str(top)).path), f"refs/remotes/{remote}/")


def _note_move(git_dir: Path, ref: str, old: str | None, new: str | None) -> None:
    from failres.containment import moves

    moves.note(git_dir, ref, old, new)


def fetch_refspecs(remote: str) -> list[str]:
    """The plain-git refspec that brings every shared ref (store and snapshots) home."""
    return [f"+{SHARED_PREFIX}*:{tracking_ref(remote, SHARED_PREFIX)}*"]


def backoff_seconds(attempt: int, draw: float) -> float:
    """A pause before push attempt `attempt` + 1: exponential, capped, fully jittered.

    The jitter spreads out a crowd of runners that all lost to the same push, so
    they do not collide again on the next round.
    """
    return min(BACKOFF_CAP, BACKOFF_START * (2 ** attempt)) * draw


def missing_snapshots(local: dict[str, pygit2.Oid], remote: dict[str, pygit2.Oid]) -> list[str]:
    """Local snapshot refs (by name under refs/failres/snapshots/) the remote does not have at all."""
    return sorted(name for name in local if name not in remote)


def clashing_snapshots(local: dict[str, pygit2.Oid], remote: dict[str, pygit2.Oid]) -> list[str]:
    """Snapshot names both sides hold with different commits: each side keeps its own.

    A snapshot is one failing state, named by its lesson; moving the name (even a
    fast-forward) would take another machine's snapshot away from its lesson.
    """
    return sorted(name for name, oid in local.items() if name in remote and remote[name] != oid)


# ---- git at the edges ----

def upstream_remote(repo: pygit2.Repository, branch: str) -> str | None:
    """The remote `branch` pulls from (`branch.<name>.remote`), if it has one."""
    key = f"branch.{branch}.remote"
    return repo.config[key] if key in repo.config else None


def _git(top: Path, *args: str, config: tuple[str, ...] = ()):
    return try_git(top, list(args), config=config)


def check_remote(repo: pygit2.Repository, remote: str) -> None:
    """UsageError unless `remote` names one of the repository's remotes."""
    refuse_unknown_remote(remote, repo.remotes.names())


def _remote_store_tip(top: Path, remote: str, ref: str) -> str | None:
    """The remote's store tip right now (one round trip, nothing fetched)."""
    done = _git(top, "ls-remote", remote, ref)
    if done.returncode != 0:
        msg = f"git ls-remote {remote} failed: {first_error_line(done.stderr)}"
        raise GitError(msg, hint="check the remote with `git remote -v`")
    return tip_in_ls_remote(done.stdout, ref)


def tip_in_ls_remote(listing: bytes, ref: str) -> str | None:
    """The object `ref` names in the output of `git ls-remote`, or None when it is not there."""
    for line in listing.decode("utf-8", "replace").splitlines():
        oid, _, name = line.partition("\t")
        if name.strip() == ref:
            return oid.strip()
    return None


def _fetch(top: Path, remote: str, ref: str, snapshots: bool) -> None:
    """One `git fetch` (one connection to the remote) of the store ref, and the snapshots if asked.

    An explicit refspec for a ref the remote lacks fails the whole fetch; only then is the remote
    asked (`ls-remote`) whether its store is gone, so the common case costs one connection, not two.
    """
    specs = fetch_refspecs(remote) if snapshots else []
    store_spec = None
    if not snapshots or not ref.startswith(SHARED_PREFIX):
        store_spec = f"+{ref}:{tracking_ref(remote, ref)}"
    _note_fetch(top, remote)
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


def _refs_under(repo: pygit2.Repository, prefix: str) -> dict[str, pygit2.Oid]:
    out: dict[str, pygit2.Oid] = {}
    for name in repo.references:
        if name.startswith(prefix):
            out[name[len(prefix):]] = repo.references[name].target
    return out


def _put_back(repo: pygit2.Repository, prefix: str, before: dict[str, pygit2.Oid]) -> None:
    """Return the refs under `prefix` to what they were (a refused fetch leaves no trace)."""
    for name, oid in _refs_under(repo, prefix).items():
        if name not in before:
            repo.references.delete(prefix + name)
    for name, oid in before.items():
        repo.references.create(prefix + name, oid, force=True)


def _adopt_snapshots(repo: pygit2.Repository, remote: str) -> int:
    """Create local snapshot refs for the remote's that are missing here (names never clash).

    Only refs that name a commit: anything else under the remote's snapshots is not one.
    """
    adopted = 0
    local = _refs_under(repo, SNAPSHOT_PREFIX)
    for name, oid in _refs_under(repo, tracking_ref(remote, SNAPSHOT_PREFIX)).items():
        if name in local or not isinstance(repo.get(oid), pygit2.Commit):
            continue
        try:
            _note_move(Path(repo.path), SNAPSHOT_PREFIX + name, None, str(oid))
            repo.create_reference(SNAPSHOT_PREFIX + name, oid, force=False,
                                  message=f"failres: sync snapshot from {remote}")
            adopted += 1
        except (pygit2.AlreadyExistsError, ValueError, pygit2.GitError):
            pass  # written meanwhile by this machine: ours stays
    return adopted


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


def push_statuses(porcelain: str) -> dict[str, tuple[bool, str]]:
    """remote ref -> (accepted, git's summary) from `git push --porcelain` output."""
    out: dict[str, tuple[bool, str]] = {}
    for line in porcelain.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or len(parts[0]) != 1:
            continue
        flag, refs, summary = parts[0], parts[1], parts[2]
        out[refs.rsplit(":", 1)[-1]] = (flag != "!", summary.strip())
    return out


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
    from lessons.storage.settle import join

    kind, landed = join(store, pygit2.Oid(hex=theirs), f"failres: sync {remote}: merge store {theirs[:12]}",
                        name=f"{remote}'s store {store.ref}")
    return kind, str(landed) if landed is not None else None


def sync_store(top: Path, ref: str, remote: str, *, snapshots: bool = False, attempts: int = MAX_PUSH_ATTEMPTS,
               pause: Callable[[float], None] = time.sleep,
               draw: Callable[[], float] | None = None) -> SyncResult:
    """Fetch, join and push until the remote holds everything this store holds.

    `snapshots`: also exchange snapshot refs (`[sync] snapshots`); off, they stay home.
    """
    repo = pygit2.Repository(str(top))
    check_remote(repo, remote)
    # A sync with this remote is itself the way back for a store lost here, so only
    # other signs that the local store existed (its reflog, its index) stop it.
    Store(repo, ref).verify(ignore_remote=remote)
    common_dir = Path(repo.path)
    tracking = tracking_ref(remote, SHARED_PREFIX)
    with _sync_lock(common_dir):
        retries = 0
        fetched_snapshots = pushed_snapshots = 0
        for attempt in range(attempts):
            seen_before = _refs_under(repo, tracking)
            _fetch(top, remote, ref, snapshots)
            # A fresh handle: the fetch wrote refs and packs behind this process's back.
            repo = pygit2.Repository(str(top))
            remote_ref = tracking_ref(remote, ref)
            theirs = str(repo.references[remote_ref].target) if remote_ref in repo.references else None
            store = Store(repo, ref)
            try:
                how, merged = join_remote(store, theirs, remote)
            except StoreDamaged as refused:
                _put_back(repo, tracking, seen_before)
                hint = "nothing was merged or pushed; the remote's store needs repairing there first"
                raise StoreDamaged(str(refused), hint=refused.hint or hint) from None
            if snapshots:
                fetched_snapshots += _adopt_snapshots(repo, remote)
            tip = store.tip()
            local_tip = str(tip) if tip is not None else None
            ours_snap = _refs_under(repo, SNAPSHOT_PREFIX) if snapshots else {}
            theirs_snap = _refs_under(repo, tracking_ref(remote, SNAPSHOT_PREFIX)) if snapshots else {}
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
