"""`completion bash|zsh|fish|install`: <TAB> for `git failres`, `git-failres` and `failres`.

The scripts ask the program itself (`git-failres __complete WORDS`, answered in
`failres.cli._complete` from the command tree kept for this source), so they never fall
behind the commands.
"""

from __future__ import annotations

import sys

import typer

from failres.cli.app import app
from failres.cli.common import emit_json
from failres.clidoc.model import HOUSEKEEPING

completion_app = typer.Typer(
    help="Shell completion for git failres, git-failres and failres (bash, zsh, fish).",
    no_args_is_help=True,
    epilog="git failres completion install",
)
app.add_typer(completion_app, name="completion", rich_help_panel=HOUSEKEEPING)


@completion_app.command("bash", epilog="git failres completion bash > ~/.local/share/bash-completion/completions/git-failres")
def completion_bash() -> None:
    """Print the bash completion script (it also completes `git failres` through git's own)."""
    from failres.clidoc.completion import bash_script

    sys.stdout.write(bash_script())


@completion_app.command("zsh", epilog="git failres completion zsh > ~/.zfunc/_git-failres")
def completion_zsh() -> None:
    """Print the zsh completion script, to be saved as `_git-failres` on $fpath."""
    from failres.clidoc.completion import zsh_script

    sys.stdout.write(zsh_script())


@completion_app.command("fish", epilog="git failres completion fish > ~/.config/fish/conf.d/git-failres.fish")
def completion_fish() -> None:
    """Print the fish completion script, a conf.d file (it also completes `git failres` through git's own)."""
    from failres.clidoc.completion import fish_script

    sys.stdout.write(fish_script())


@completion_app.command("install", epilog="git failres completion install --shell zsh")
def completion_install(
    shell: str = typer.Option(None, "--shell", metavar="bash|zsh|fish",
                              help="The shell (default: $SHELL, else the login shell)."),
    json_out: bool = typer.Option(False, "--json", help="Print where the script went as JSON."),
) -> None:
    """Write the completion script where your shell looks for your own completions."""
    from failres.clidoc.completion import install_completion

    result = install_completion(shell)
    if json_out:
        emit_json({"shell": result.shell, "path": str(result.path), "wrote": result.wrote})
        return
    verb = "wrote" if result.wrote else "already up to date:"
    sys.stdout.write(f"{verb} {result.path}\n")
    for line in result.next_steps:
        sys.stdout.write(f"{line}\n")
