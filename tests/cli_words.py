"""Command lines as the docs write them, parsed by the real command tree without running."""

from __future__ import annotations

import shlex

from failres.cli import app
from failres.clidoc.model import PROGRAM

SHELL_OPERATORS = (">", ">>", "|", "&&", ";", "2>&1")


def _left_over(ctx) -> list[str]:
    protected = getattr(ctx, "protected_args", None)
    if protected is None:
        protected = getattr(ctx, "_protected_args", [])
    return [*protected, *ctx.args]


def parse_command_line(words: list[str]) -> None:
    """Parse `words` (after `git failres`) exactly as a run would, without running anything;
    raises the parser's error for an unknown command or option or a missing argument."""
    import typer.main

    from failres.cli.help_cmds import default_command
    from failres.cli.pager import split_pager_flags

    words, _ = split_pager_flags(words)  # before the command, as `git failres --no-pager journal` writes it
    words = default_command(words)  # a group name alone stands for its listing
    command = typer.main.get_command(app)
    ctx = command.make_context(PROGRAM, list(words))
    while getattr(command, "commands", None) and _left_over(ctx):
        rest = _left_over(ctx)
        if rest[0] not in command.commands:
            msg = f"no command {rest[0]!r} in {ctx.command_path}"
            raise AssertionError(msg)
        command = command.commands[rest[0]]
        ctx = command.make_context(rest[0], rest[1:], parent=ctx)


def commands_in(line: str) -> list[list[str]]:
    """The failres invocations in a shell line (`git failres ...`, `git-failres ...`), each as
    the words after the program; a variable may be set first (`FAILRES_POLICY_X=1 git failres`)."""
    words = shlex.split(line, comments=True)
    found: list[list[str]] = []
    current: list[str] | None = None
    redirect = False
    for number, word in enumerate(words):
        if redirect:  # the file a ">" writes to, not a command
            redirect = False
        elif word in SHELL_OPERATORS:
            current = None
            redirect = word in (">", ">>")
        elif current is not None:
            current.append(word)
        elif (word == "failres" and number and words[number - 1] == "git") or word.endswith("git-failres"):
            current = []
            found.append(current)
    return found


def example_words(example: str) -> list[str]:
    [words] = commands_in(example)
    return words
