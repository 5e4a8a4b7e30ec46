"""`sync [REMOTE]` as a plain function: what the typer command and a start without typer both call.

A person runs `git failres sync` many times a day, and a runner after every task; most
of what such a process paid was importing the command line itself (typer and every
command group), not the sync. `failres.cli.read_cmds.read_fast` parses a plain
`sync [REMOTE] [--json]` line and calls `sync_command` directly; anything else goes
through typer, whose answer (help, a usage error) stays the one a person sees.
"""

from __future__ import annotations

import os

from failres.cli.common import emit_json, open_context
from failres.remote.sync import SyncResult, default_remote, sync_store
from failres.remote.wire import upstream_remote

# The joins after which the local store holds records it did not hold before the sync.
_GREW = frozenset({"adopted", "fast-forward", "merged"})


def describe(result: SyncResult) -> list[str]:
    """What a person reads after a sync: one line per step that did something."""
    short = (lambda oid: oid[:12] if oid else "-")
    lines = []
    if result.fetched is None:
        lines.append(f"{result.remote} has no store yet")
    else:
        lines.append(f"fetched {result.ref} from {result.remote} at {short(result.fetched)}")
    joins = {
        "none": None,
        "adopted": f"took the remote store as the local one ({short(result.merged)})",
        "up-to-date": "the local store already held everything the remote had",
        "fast-forward": f"fast-forwarded the local store to {short(result.merged)}",
        "merged": f"merged both stores in {short(result.merged)}",
    }
    if joins.get(result.join):
        lines.append(joins[result.join])
    if result.pushed:
        after = f" after {result.retries} lost race{'s' if result.retries != 1 else ''}" if result.retries else ""
        lines.append(f"pushed {short(result.tip)} to {result.remote}{after}")
    elif result.tip is None:
        lines.append("no store here or there: nothing to exchange")
    else:
        lines.append(f"{result.remote} already had {short(result.tip)}")
    if result.snapshots_fetched or result.snapshots_pushed:
        lines.append(f"snapshots: {result.snapshots_fetched} fetched, {result.snapshots_pushed} pushed")
    for name in result.snapshots_rejected:
        lines.append(f"warning: {result.remote} refused snapshot {name}")
    return lines


def sync_command(remote: str | None, json_out: bool) -> None:
    """Exchange the store with a remote; merges never lose a record."""
    from failres.config.loading import effective_policy_of

    ctx = open_context()
    config = ctx.config
    # A bad policy is refused before anything is fetched or written.
    policy = effective_policy_of(config, os.environ).policy
    if remote is None:
        remote = default_remote(config.integration.remote, upstream_remote(ctx.top, config.integration.branch))
    result = sync_store(ctx.top, config.store.ref, remote, snapshots=config.sync.snapshots)
    if result.join in _GREW:
        # A join filled the local store with the remote's records: settle what it filled (the
        # next sync carries the moves). A sync that brought nothing leaves the store as the
        # last write (which settled it) left it, so reading the ranked store again would find
        # nothing to do.
        from lessons.bounds.capacity import reclaim_full_stores

        reclaim_full_stores(ctx.store, policy)
    if json_out:
        emit_json(result.document())
        return
    from failres.cli.tables import print_lines

    print_lines(describe(result))
