"""The one typer app every command module adds its commands to.

Apart from the package's `__init__`, so a command module can import it without the
package importing that module back.
"""

from __future__ import annotations

import typer

from failres.clidoc.model import PROGRAM

app = typer.Typer(
    name=PROGRAM,
    help="Failure resolution and learning for automated code changes, kept in git.",
    no_args_is_help=False,
    add_completion=False,  # `git failres completion` writes scripts that work under git too
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
