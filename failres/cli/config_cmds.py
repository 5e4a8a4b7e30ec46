"""`config show`: the configuration in force, and where each value came from."""

from __future__ import annotations

import json
import os

import typer

from failres.cli.app import app
from failres.cli.common import console, emit_json, open_context
from failres.clidoc.model import HOUSEKEEPING

config_app = typer.Typer(help="The configuration in force. Alone, it is config show.", no_args_is_help=True,
                         epilog="git failres config show")
app.add_typer(config_app, name="config", rich_help_panel=HOUSEKEEPING)


def _shown(value: object) -> str:
    # TOML's spelling, so a value can be copied into .failres.toml as it is.
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


@config_app.command("show", epilog="git failres config show --json")
def show(json_out: bool = typer.Option(False, "--json", help="Print every setting as JSON.")) -> None:
    """Every setting in force (defaults included) and where it came from: default, file or environment."""
    from failres.config.view import config_in_force

    ctx = open_context()
    shown = config_in_force(ctx.top, ctx.config, os.environ)
    if json_out:
        emit_json(shown.document())
        return
    from failres.cli.tables import Column, print_table

    out = console()
    if shown.exists:
        out.print(f"configuration: {shown.path}", markup=False)
    else:
        out.print(f"no {shown.path}: every value is the default (git failres init writes one)", markup=False)
    rows = [(s.key, _shown(s.value), f"env ({s.origin})" if s.source == "env" else s.source) for s in shown.settings]
    print_table((Column("key"), Column("source"), Column("value", wraps=True)),
                [(key, source, value) for key, value, source in rows])
