"""`demo`: the whole loop end to end in a throw-away repository, no setup."""

from __future__ import annotations

from pathlib import Path

import typer

from failres.cli.app import app
from failres.clidoc.model import HOUSEKEEPING
from failres.cli.common import console


@app.command(rich_help_panel=HOUSEKEEPING, epilog="git failres demo --keep /tmp/failres-demo")
def demo(
    keep: Path = typer.Option(None, "--keep", metavar="DIR", help="Make the demo repository in DIR and leave it there."),
) -> None:
    """The whole loop end to end in a throw-away repository: no agent, no network, no setup."""
    from failres.demo import run_demo

    out = console()
    result = run_demo(keep, say=out.print)
    out.print(f"\ndone in {result.seconds:.1f} s")
