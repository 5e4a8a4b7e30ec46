"""`gc [--dry-run]`: remove what landed tasks no longer need."""

from __future__ import annotations

import typer

from failres.cli.app import app
from failres.cli.common import console, emit_json, open_context
from failres.clidoc.model import HOUSEKEEPING

_NOUNS = {"branch": ("merged task branch", "merged task branches"), "workspace": ("workspace", "workspaces"),
          "snapshot": ("snapshot ref", "snapshot refs"), "stale-record": ("stale workspace record",
                                                                         "stale workspace records"),
          "claim": ("claim ref", "claim refs"), "entry": ("finished-task entry", "finished-task entries")}


def summary(counts: dict[str, int], dry_run: bool) -> str:
    parts = [f"{n} {_NOUNS[kind][n != 1]}" for kind, n in counts.items() if n]
    verb = "would remove" if dry_run else "removed"
    return f"{verb} {', '.join(parts)}" if parts else "nothing to remove"


@app.command(rich_help_panel=HOUSEKEEPING, epilog="git failres gc --dry-run")
def gc(
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be removed; remove nothing."),
    json_out: bool = typer.Option(False, "--json", help="Print what was (or would be) removed as JSON."),
    remote: str = typer.Option("", "--remote", metavar="REMOTE",
                               help="Remove landed tasks' branches and claims from REMOTE instead (refs only)."),
    entries: bool = typer.Option(False, "--entries",
                                 help="With --remote: also drop landed tasks from each plan's record of finished "
                                      "tasks."),
) -> None:
    """Remove what landed tasks no longer need: merged task branches, their workspaces, old snapshot refs."""
    from failres.cli.policy_cmds import current_policy
    from failres.landing.gc import collect_garbage

    ctx = open_context()
    if remote:
        from failres.remote.remote_gc import collect_remote_garbage

        result = collect_remote_garbage(ctx.top, ctx.config.store.ref, remote,
                                        integration=ctx.config.integration.branch,
                                        branches=ctx.config.remote.branches, dry_run=dry_run, entries=entries)
    else:
        policy = current_policy(ctx)
        result = collect_garbage(ctx.top, ctx.repo, ctx.store, ctx.config.integration.branch,
                                 policy.snapshot_retention_days, dry_run=dry_run)
    if json_out:
        emit_json(result.document())
        return
    out = console()
    verb = "would remove" if dry_run else "removed"
    for item in result.removed:
        out.print(f"{verb} {item.kind} {item.name}  ({item.reason})", markup=False)
    for item in result.kept:
        out.print(f"kept {item.kind} {item.name}  ({item.reason})", markup=False)
    out.print(summary(result.counts(), dry_run), markup=False)
