"""`sync [REMOTE]`: exchange the store (and snapshot refs) with a git remote.

The typer command; the work and what a person reads of it are in `failres.cli.sync_plain`,
which a plain `sync` line reaches without typer.
"""

from __future__ import annotations

import typer

from failres.cli.app import app
from failres.cli.sync_plain import describe, sync_command
from failres.clidoc.model import HOUSEKEEPING

__all__ = ["describe", "sync"]


@app.command(rich_help_panel=HOUSEKEEPING, epilog="git failres sync origin")
def sync(
    remote: str = typer.Argument(None, help="The remote (default: integration.remote, else the "
                                            "integration branch's upstream, else origin)."),
    json_out: bool = typer.Option(False, "--json", help="Print what happened as JSON."),
) -> None:
    """Exchange the store with a remote; merges never lose a record."""
    sync_command(remote, json_out)
