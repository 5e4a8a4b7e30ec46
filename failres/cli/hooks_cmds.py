"""`hooks install|uninstall|run`: the merge hooks that stamp a task when a person merges it."""

from __future__ import annotations

import typer

from failres.cli.app import app
from failres.clidoc.model import HOUSEKEEPING
from failres.cli.common import console, emit_json, open_context

hooks_app = typer.Typer(help="Manage the git hooks that stamp landed tasks.", no_args_is_help=True,
                        epilog="git failres hooks install")
app.add_typer(hooks_app, name="hooks", rich_help_panel=HOUSEKEEPING)


def _render(report, json_out: bool) -> None:
    if json_out:
        emit_json({"hooksDir": str(report.place.path), "coreHooksPath": report.place.configured,
                   "portable": report.portable, "notes": list(report.notes),
                   "hooks": [{"hook": a.hook, "action": a.action, "path": str(a.path)} for a in report.actions]})
        return
    out = console()
    for action in report.actions:
        out.print(f"{action.hook}: {action.action} ({action.path})", markup=False)
    for note in report.notes:
        out.print(f"note: {note}", markup=False)


@hooks_app.command(epilog="git failres hooks install --shared")
def install(
    shared: bool = typer.Option(False, "--shared", help="Install even where core.hooksPath leaves the repository."),
    json_out: bool = typer.Option(False, "--json", help="Print what was done as JSON."),
) -> None:
    """Install pre-merge-commit and post-merge, chaining to hooks already there."""
    from failres.hooks.install import install_hooks

    _render(install_hooks(open_context().top, shared=shared), json_out)


@hooks_app.command(epilog="git failres hooks uninstall")
def uninstall(json_out: bool = typer.Option(False, "--json", help="Print what was done as JSON.")) -> None:
    """Remove failres's hooks and put back the ones they had moved aside."""
    from failres.hooks.install import uninstall_hooks

    _render(uninstall_hooks(open_context().top), json_out)


# Hidden: the installed hook scripts call it; a person never needs to.
@hooks_app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True}, hidden=True)
def run(ctx: typer.Context, hook: str = typer.Argument(..., help="pre-merge-commit or post-merge.")) -> None:
    """Run failres's part of a hook (what the installed scripts call). Always exits 0."""
    from failres.hooks.run import run_hook

    raise typer.Exit(run_hook(hook, list(ctx.args)))
