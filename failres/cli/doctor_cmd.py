"""`doctor [--json]`: what this machine gives failres (the seat world, git, Python, the agents)."""

from __future__ import annotations

import os

import typer

from failres.cli.app import app
from failres.cli.common import console, emit_json
from failres.clidoc.model import HOUSEKEEPING


@app.command(rich_help_panel=HOUSEKEEPING, epilog="git failres doctor --json")
def doctor(
    json_out: bool = typer.Option(False, "--json", help="Print the report as one JSON document."),
) -> None:
    """Say what this machine gives failres: the seat world, git, Python, each configured agent."""
    from failres.sandbox.doctor import doctor_report

    report = doctor_report(_config_here(), os.environ)
    if json_out:
        emit_json(report.document())
        return
    out = console()
    for check in report.lines():
        mark = "ok " if check.ok else "no "
        out.print(f"{mark} {check.name:<18} {check.detail}", markup=False)
        if check.fix:
            out.print(f"    {'':<18} fix: {check.fix}", markup=False)


def _config_here():
    """This repository's configuration, or None outside one (doctor works anywhere).

    A configuration that does not load is still an error: doctor names it like every
    other command, with the key and the file.
    """
    from failres.cli.common import open_context
    from failres.errors import NotARepository

    try:
        ctx = open_context()
    except NotARepository:
        return None
    if not (ctx.top / ".failres.toml").exists():
        return None
    return ctx.config
