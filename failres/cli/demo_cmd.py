"""`demo`: the whole loop end to end in a throw-away repository, no setup."""

from __future__ import annotations

from pathlib import Path

import typer

from failres.cli.app import app
from failres.clidoc.model import HOUSEKEEPING
from failres.cli.common import console, stdout_is_terminal


@app.command(rich_help_panel=HOUSEKEEPING, epilog="git failres demo --keep /tmp/failres-demo")
def demo(
    keep: Path = typer.Option(None, "--keep", metavar="DIR", help="Make the demo repository in DIR and leave it there."),
) -> None:
    """The whole loop end to end in a throw-away repository: no agent, no network, no setup."""
    from failres.demo import run_demo

    out = console()
    result = run_demo(keep, say=narrator())
    out.print(f"\ndone in {result.seconds:.1f} s")


def narrator():
    """How the demo's lines are shown: its own styling on a terminal, plain words in a pipe.

    The demo writes its story with rich's styling tags and escapes every piece of data it
    reads back from the store, so only its own tags are ever read as styling.
    """
    from rich.console import Console
    from rich.text import Text

    from failres.inert import inert

    styled = Console(highlight=False, soft_wrap=False) if stdout_is_terminal() else None

    def say(line: str) -> None:
        text = Text.from_markup(line)
        if styled is not None:
            text.plain = inert(text.plain, multiline=True)
            styled.print(text)
        else:
            print(inert(text.plain, multiline=True), flush=True)

    return say
