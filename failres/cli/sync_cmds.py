"""`sync [REMOTE]`: exchange the store (and snapshot refs) with a git remote."""

from __future__ import annotations

import typer

from failres.cli.app import app
from failres.clidoc.model import HOUSEKEEPING
from failres.cli.common import console, emit_json, open_context
from failres.remote.sync import SyncResult, default_remote, sync_store, upstream_remote


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


@app.command(rich_help_panel=HOUSEKEEPING, epilog="git failres sync origin")
def sync(
    remote: str = typer.Argument(None, help="The remote (default: integration.remote, else the "
                                            "integration branch's upstream, else origin)."),
    json_out: bool = typer.Option(False, "--json", help="Print what happened as JSON."),
) -> None:
    """Exchange the store with a remote; merges never lose a record."""
    from failres.cli.policy_cmds import current_policy
    from lessons.bounds.capacity import reclaim_full_stores

    ctx = open_context()
    config = ctx.config
    policy = current_policy(ctx)  # a bad policy is refused before anything is fetched or written
    if remote is None:
        remote = default_remote(config.integration.remote, upstream_remote(ctx.repo, config.integration.branch))
    result = sync_store(ctx.top, config.store.ref, remote, snapshots=config.sync.snapshots)
    # A merge joins two stores' records: settle what it filled (the next sync carries the moves).
    reclaim_full_stores(ctx.store, policy)
    if json_out:
        emit_json(result.document())
        return
    out = console()
    for line in describe(result):
        out.print(line, markup=False)
