"""`doctor [--json]`: what this machine gives failres (the seat world, git, Python, the agents, the gates).

Exit 0 when everything configured can be used here, 1 when a needed line says "no"
(`sandbox.doctor`), 2 for a configuration that does not load.
"""

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
    """Say what this machine gives failres: the seat world, git, Python, each configured agent and gate.

    Exits 1 when something configured cannot be used here (an agent or a gate's program
    missing, a health command failing, the seat world required and not there)."""
    from failres.errors import EXIT_NOT_GREEN
    from failres.sandbox.doctor import doctor_report

    top, config = _config_here()
    report = doctor_report(config, os.environ, top)
    if json_out:
        emit_json(report.document())
    else:
        out = console()
        for check in report.lines():
            mark = "ok " if check.ok else "no "
            out.print(f"{mark} {check.name:<18} {check.detail}", markup=False)
            if check.fix:
                out.print(f"    {'':<18} fix: {check.fix}", markup=False)
    if not report.usable:
        raise typer.Exit(EXIT_NOT_GREEN)


def _config_here():
    """This repository's top and configuration, or (None, None) outside one (doctor works anywhere).

    A configuration that does not load is still an error: doctor names it like every
    other command, with the key and the file.
    """
    from failres.cli.common import open_context
    from failres.errors import NotARepository

    try:
        ctx = open_context()
    except NotARepository:
        return None, None
    if not (ctx.top / ".failres.toml").exists():
        return ctx.top, None
    return ctx.top, ctx.config
