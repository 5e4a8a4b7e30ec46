"""`consolidate` and `restore`: bounded stores, lossless eviction, and the way back."""

from __future__ import annotations

import typer

from failres.cli.app import app
from failres.clidoc.model import HOUSEKEEPING
from failres.cli.common import console, emit_json, open_context
from failres.cli.policy_cmds import current_policy
from lessons.bounds.capacity import STORES, consolidate, restore_store


@app.command("consolidate", rich_help_panel=HOUSEKEEPING, epilog="git failres consolidate --dry-run")
def consolidate_command(
    all_stores: bool = typer.Option(False, "--all", help="Report every store, not only those at capacity."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print exactly what would move; write nothing."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Move the lowest-ranked records of every full store to the archive (restorable)."""
    ctx = open_context()
    result = consolidate(ctx.store, current_policy(ctx), dry_run=dry_run)
    document = result.document(include_all=all_stores)
    if json_out:
        emit_json(document)
        return
    out = console()
    shown = document["stores"]
    if not shown:
        out.print("no store has reached its maximum; nothing to move")
        return
    verb = "would archive" if dry_run else "archived"
    for plan in shown:  # type: ignore[union-attr]
        label = f"{plan['store']}/{plan['scope']}" if plan["scope"] else str(plan["store"])
        if plan["keep"] is None:
            out.print(f"{label}: {plan['count']} of {plan['max']}", markup=False)
            continue
        out.print(f"{label}: {plan['count']} of {plan['max']}, keeps {plan['keep']}, "
                  f"{verb} {len(plan['archived'])}", markup=False)
        if dry_run:
            for move in plan["moves"]:
                out.print(f"  {move['from']} -> {move['to']}", markup=False)


@app.command("restore", rich_help_panel=HOUSEKEEPING, epilog="git failres restore --store lessons --query parser")
def restore_command(
    store: str = typer.Option(..., "--store", help="The store: " + ", ".join(STORES) + "."),
    query: str = typer.Option("", "--query", help="Only records whose JSON contains this (any case)."),
    limit: int = typer.Option(None, "--limit", min=1, help="At most this many records (default: policy list_limit)."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Move archived records back into the live store, newest first."""
    ctx = open_context()
    policy = current_policy(ctx)
    result = restore_store(ctx.store, store, query=query, limit=limit or policy.list_limit)
    if json_out:
        emit_json(result.document())
        return
    out = console()
    if not result.restored:
        out.print(f"nothing in the {store} archive matches" if query else f"the {store} archive is empty",
                  markup=False)
        return
    from failres.cli.tables import bounded_list

    out.print(f"restored {len(result.restored)} {store} record(s) in {str(result.commit)[:12]}: "
              + bounded_list(result.restored), markup=False)
    cap = limit or policy.list_limit
    if len(result.restored) >= cap:
        import sys

        sys.stderr.write(f"at most {cap} records come back at once; the archive may hold more: run it again, "
                         "or --limit N\n")
    for path in result.kept_in_archive:
        out.print(f"  kept in the archive (a different file lives at its path): {path}", markup=False)
