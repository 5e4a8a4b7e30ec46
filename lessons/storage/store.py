"""Records as files in commits on one private ref.

The store is a chain of commits on `refs/failres/store` (by default) whose trees hold
one small file per record. Nothing here touches a branch, the index or a working
tree: trees are built in memory from the previous tip and only the touched
directories are rewritten, so an append costs the same whatever the store's size.

Concurrency and crashes:

- Objects are written first (through a temp file and a rename), then the ref moves by
  compare-and-swap against the tip the commit was built on; a loser rebuilds and retries.
- A process killed at any instant leaves the ref at the old or the new commit, and at
  worst unreachable objects or a stale `.lock` beside the ref: writers `flock` first,
  so a `.lock` older than `STALE_REF_LOCK_SECONDS` found then is a dead writer's, removed.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import pygit2

from lessons.storage.bulk import commit_batch  # big batches: one pack through git fast-import
from lessons.errors import NotFound, StoreBusy
from lessons.storage.store_view import DEFAULT_REF, MOVE_OBSERVERS, StoreView
from lessons.storage.trees import Change, apply_change
from lessons.failpoints import failpoint

__all__ = ["DEFAULT_REF", "Change", "Store", "StoreView", "entry_id", "store_signature"]

STORE_NAME = "failres"
STORE_EMAIL = "failres@localhost"
STALE_REF_LOCK_SECONDS = 2.0
MAX_CAS_ATTEMPTS = 200



def store_signature(repo: pygit2.Repository) -> pygit2.Signature:
    """Who a store commit is by: the person when git knows them, else failres itself.

    Fresh machines have no git identity; a store write must still work there, so
    the fallback is failres's own name rather than an error.
    """
    name = os.environ.get("GIT_COMMITTER_NAME") or os.environ.get("GIT_AUTHOR_NAME")
    email = os.environ.get("GIT_COMMITTER_EMAIL") or os.environ.get("GIT_AUTHOR_EMAIL")
    if name and email:
        return pygit2.Signature(name, email)
    try:
        return repo.default_signature
    except (KeyError, pygit2.GitError):
        return pygit2.Signature(STORE_NAME, STORE_EMAIL)



class Store(StoreView):
    """One store ref in one repository, read and written.

    Not thread-safe (a pygit2 Repository must not be shared between threads);
    any number of processes may use the same store at once.
    """

    unreadable = (pygit2.GitError,)

    def __init__(
        self,
        repo: pygit2.Repository | str | os.PathLike[str],
        ref: str = DEFAULT_REF,
        *,
        signature: pygit2.Signature | None = None,
    ) -> None:
        super().__init__(repo if isinstance(repo, pygit2.Repository) else pygit2.Repository(str(repo)), ref)
        self._signature = signature

    # ── reading (the rest is StoreView's) ────────────────────────────────

    def commit_at(self, rev: str | pygit2.Oid | None = None) -> pygit2.Commit | None:
        if rev is None:
            return super().commit_at()
        try:
            obj = self.repo.revparse_single(str(rev))
            return obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError) as exc:
            msg = f"no store commit {rev}"
            raise NotFound(msg) from exc

    # ── writing ──────────────────────────────────────────────────────────

    def signature(self) -> pygit2.Signature:
        sig = self._signature or store_signature(self.repo)
        return pygit2.Signature(sig.name, sig.email)  # stamped now, not when cached

    def create(self, *, replacing_lost: bool = False) -> pygit2.Oid:
        """Create the store (an empty root commit); its tip when it exists already.

        The only way a store comes to be: a write never creates one, so a deleted
        store ref can never be silently replaced by an empty store. Creating is
        refused too when something shows a store existed here (see `lessons.storage.guard`),
        unless `replacing_lost` says the person means to start over.
        """
        tip = self.tip()
        if tip is not None:
            self._ensure_reflog()
            return tip
        self.check_creatable(replacing_lost=replacing_lost)
        empty = self.repo.TreeBuilder().write()
        sig = self.signature()
        oid = self.repo.create_commit(None, sig, sig, "failres: create store\n", empty, [])
        self._ensure_reflog()
        if not self._compare_and_swap(None, oid, "failres: create store"):
            pass  # another process created it first; theirs is as good as ours
        return self.require()

    def check_creatable(self, *, replacing_lost: bool = False) -> None:
        """Raise what `create` would refuse with (a damaged ref, a store that existed), writing nothing."""
        if self.tip() is not None or replacing_lost:
            return
        from lessons.storage.guard import existence_traces, missing_store_error

        traces = existence_traces(self)
        if traces:
            raise missing_store_error(self, traces, creating=True)

    def require(self) -> pygit2.Oid:
        """The tip of a store that exists; StoreMissing (saying why, and what to do) otherwise."""
        tip = self.tip()
        if tip is None:
            from lessons.storage.guard import existence_traces, missing_store_error

            raise missing_store_error(self, existence_traces(self))
        self._ensure_reflog()
        return tip

    def _ensure_reflog(self) -> None:
        # git and libgit2 only keep a reflog for refs outside refs/heads when the
        # log file already exists; an empty one opts the store into an audit reflog.
        log = self.common_dir / "logs" / self.ref
        if not log.exists():
            log.parent.mkdir(parents=True, exist_ok=True)
            log.touch()

    def commit(
        self,
        change: Change | Callable[[pygit2.Commit | None], Change],
        message: str,
        *,
        max_attempts: int = MAX_CAS_ATTEMPTS,
    ) -> pygit2.Oid | None:
        """Write one commit applying `change` on the current tip; return its id.

        `change` may be a function of the tip it will be applied to: it is called
        again after a lost race, so a writer that must look before it writes
        (idempotent stamps, reclaim) decides on the tip it really lands on.
        Returns None when the change turned out empty (nothing to write).
        Never creates the store: a missing one raises StoreMissing.
        """
        self.require()
        for attempt in range(max_attempts):
            parent = self.commit_at()
            if parent is None:
                self.require()  # deleted while we were writing: refuse, never start afresh
            planned = change(parent) if callable(change) else change
            if planned.is_empty():
                return None
            tree = self.apply(parent.tree if parent else None, planned)
            if parent is not None and tree == parent.tree.id:
                return None
            sig = self.signature()
            body = _audit_body(planned)
            oid = self.repo.create_commit(None, sig, sig, message.rstrip("\n") + "\n" + body, tree, [parent.id])
            failpoint("store-write")
            if self._compare_and_swap(parent.id, oid, message.splitlines()[0]):
                return oid
            # Lost the race: back off a little (with jitter so a crowd spreads out), rebuild on the new tip.
            import random  # imported here: only a lost race needs it, and a read of the store never races
            time.sleep(min(0.05, 0.001 * (attempt + 1)) * random.random())
        msg = f"the store ref {self.ref} kept moving; gave up after {max_attempts} attempts"
        raise StoreBusy(msg, hint="nothing was written; run the command again")

    def commit_batches(
        self, changes: Iterable[Change], message: str, *, batch_size: int = 5000
    ) -> list[pygit2.Oid]:
        """Bulk writes: fold many small changes into commits of up to `batch_size` files."""
        written: list[pygit2.Oid] = []
        puts: dict[str, bytes] = {}
        deletes: set[str] = set()

        def flush() -> None:
            if puts or deletes:
                batch = Change(dict(puts), frozenset(deletes))
                oid = commit_batch(self, batch, f"{message} (batch {len(written) + 1})", _audit_body(batch))
                if oid is not None:
                    written.append(oid)
                puts.clear()
                deletes.clear()

        for change in changes:
            puts.update(change.puts)
            deletes.update(change.deletes)
            if len(puts) + len(deletes) >= batch_size:
                flush()
        flush()
        return written

    def apply(self, base: pygit2.Tree | None, change: Change) -> pygit2.Oid:
        """The id of `base` with `change` applied, writing only touched trees."""
        return apply_change(self.repo, base, change)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold back every failres writer of this ref (they wait, then rebuild on what they find)."""
        with self._ref_lock():
            self._remove_stale_ref_lock()
            yield

    def compare_and_swap(self, expected: pygit2.Oid | None, new: pygit2.Oid, reason: str) -> bool:
        """Move the ref from `expected` to `new`; False when it had moved meanwhile."""
        return self._compare_and_swap(expected, new, reason)

    @contextmanager
    def _ref_lock(self) -> Iterator[None]:
        lock_dir = self.common_dir / "failres"
        lock_dir.mkdir(exist_ok=True)
        lock_path = lock_dir / ("ref-" + self.ref.replace("/", "-") + ".flock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock, and so does a killed process

    def _remove_stale_ref_lock(self) -> None:
        """Clear a `<ref>.lock` left by a killed writer (called while holding the flock).

        Every failres writer holds the flock while it moves the ref, so a lock file
        seen now was left by a dead failres process or belongs to a plain git command
        moving the ref this very moment; the latter finishes within milliseconds, so a
        lock that outlives `STALE_REF_LOCK_SECONDS` is stale.
        """
        stale = self.common_dir / (self.ref + ".lock")
        deadline = time.monotonic() + STALE_REF_LOCK_SECONDS
        while True:
            try:
                age = time.time() - stale.stat().st_mtime
            except FileNotFoundError:
                return
            if age > STALE_REF_LOCK_SECONDS or time.monotonic() > deadline:
                stale.unlink(missing_ok=True)
                return
            time.sleep(0.02)

    def _compare_and_swap(self, expected: pygit2.Oid | None, new: pygit2.Oid, reason: str) -> bool:
        with self._ref_lock():
            self._remove_stale_ref_lock()
            try:
                ref = self.repo.references[self.ref]
            except KeyError:
                ref = None
            current = ref.target if ref is not None else None
            if current != expected:
                return False
            [observer(self.common_dir, self.ref, expected, new) for observer in MOVE_OBSERVERS]
            try:
                if ref is None:
                    self.repo.create_reference(self.ref, new, force=False, message=reason)
                else:
                    ref.set_target(new, reason)  # libgit2 re-checks the old value
            except (pygit2.GitError, ValueError, pygit2.AlreadyExistsError):
                return False
            self._note_tip(new)
            return True

    def _note_tip(self, tip: pygit2.Oid) -> None:
        """Remember the tip outside the ref (held under the ref lock; see `lessons.storage.guard.note_tip`)."""
        from lessons.storage.guard import note_tip

        note_tip(self.common_dir, self.ref, tip)

    # ── history operations ───────────────────────────────────────────────

    def diff_changes(self, old: pygit2.Tree | None, new: pygit2.Tree | None
                     ) -> Iterator[tuple[str, pygit2.Oid | None, pygit2.Oid | None]]:
        """(path, old blob, new blob) for every file that differs, at a cost that follows the change."""
        from lessons.storage.treediff import tree_changes

        yield from tree_changes(self.repo, old, new)

    def reachable(self, oid: pygit2.Oid) -> bool:
        """Whether `oid` is the tip or one of its ancestors."""
        tip = self.tip()
        if tip is None:
            return False
        return tip == oid or self.repo.descendant_of(tip, oid)


def entry_id(tree: pygit2.Tree, path: str) -> pygit2.Oid | None:
    try:
        return tree[path].id
    except KeyError:
        return None


def _audit_body(change: Change, limit: int = 50) -> str:
    """The commit body: every path written or removed, so `git log` names the records."""
    lines = [f"+ {p}" for p in sorted(change.puts)] + [f"- {p}" for p in sorted(change.deletes - set(change.puts))]
    if len(lines) > limit:
        lines = lines[:limit] + [f"... and {len(lines) - limit} more"]
    return "\n" + "\n".join(lines) + "\n" if lines else ""
