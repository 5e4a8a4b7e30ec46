"""`init` in a clone of a team's repository takes the team's store instead of starting an empty one.

git does not fetch `refs/failres/`, so a fresh clone has no store while its
remote holds every lesson, decision and journal of the team. An empty store
made there would be unrelated to it: the first sync would merge two histories
that share nothing, and until then every prompt would go without the team's
lessons. So `init` looks for a remote that holds the store (`lessons.storage.remote_copies`:
an already-fetched copy, or a repository on this machine; never the network)
and takes it:

- a remote whose repository is on this machine: a plain `git failres sync` with
  it (a local fetch, then the store is adopted as it is; nothing is pushed);
- a remote only the network could reach, whose store was fetched earlier: that
  copy is adopted as it is, offline; `git failres sync REMOTE` later brings it
  up to date.

A local store that existed and is gone (its reflog, the last tip failres wrote,
its index) is still the person's to restore: taking a remote's in its place is
refused exactly as a sync would refuse it. `init --new-store` starts an empty
store whatever a remote holds.
"""

from __future__ import annotations

from pathlib import Path

from lessons.storage.guard import existence_traces, missing_store_error
from lessons.storage.remote_copies import RemoteCopy, remote_copies
from lessons.storage.settle import join
from lessons.storage.store import Store


def store_to_take(store: Store, prefer: str | None) -> RemoteCopy | None:
    """The remote copy `init` takes instead of creating a store; None to create one as usual.

    Raises StoreMissing when a store existed here and is gone (it is not covered over).
    """
    if store.tip() is not None:
        return None
    held = [copy for copy in remote_copies(store.repo, store.ref, prefer=prefer) if copy.seen != "unchecked"]
    if not held:
        return None
    copy = held[0]
    traces = existence_traces(store, ignore_remote=copy.remote)
    if traces:
        raise missing_store_error(store, traces, creating=True)
    return copy


def take_store(top: Path, store: Store, copy: RemoteCopy) -> str:
    """Make `copy` the local store; returns the local store tip."""
    if copy.seen == "local":
        from failres.remote.sync import sync_store

        result = sync_store(top, store.ref, copy.remote)
        if result.tip is not None:
            return result.tip
    elif copy.commit is not None:
        join(store, _oid(copy.commit), f"failres: init: take the store of {copy.remote} ({copy.commit[:12]})",
             name=f"{copy.remote}'s store {store.ref}")
    return str(Store(store.repo, store.ref).create())  # the taken tip (a remote emptied meanwhile: a new one)


def _oid(hex_id: str):
    import pygit2

    return pygit2.Oid(hex=hex_id)
