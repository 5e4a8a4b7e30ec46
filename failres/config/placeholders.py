"""Placeholders in configured command lists: `{worktree}`, `{task}`, ... and `{{`/`}}`.

Commands are argument lists, never shell strings, and a value is placed into one
argument as it is: a slug or a path that contains braces or spaces cannot turn into
another placeholder or another argument.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

PLACEHOLDERS: tuple[str, ...] = (
    "worktree",
    "repo",
    "slug",
    "task",
    "mode",
    "prompt_file",
    "attempt",
    # A fresh directory per dispatch, outside the workspace and kept with that dispatch's
    # logs: where an agent's own state (config dir, session transcript, chat history) goes,
    # so none of it lands in the workspace or in the person's home.
    "dispatch_dir",
)
# Placeholders a seat's command and environment may not use: a seat is not told where
# the person's repository is (gates, which the person wrote, keep `{repo}`).
NOT_FOR_SEATS: tuple[str, ...] = ("repo",)

class _Placeholder(str):
    """A placeholder name, told apart from literal text by its type."""


def _pieces(argument: str) -> Iterator[str]:
    """Split one argument into literal text (str) and placeholder names (_Placeholder).

    ValueError if a brace is unbalanced or a name is not one of PLACEHOLDERS.
    """
    literal: list[str] = []
    position = 0
    while position < len(argument):
        char = argument[position]
        if char == "{" and argument.startswith("{{", position):
            literal.append("{")
            position += 2
        elif char == "}" and argument.startswith("}}", position):
            literal.append("}")
            position += 2
        elif char == "{":
            close = argument.find("}", position)
            if close == -1:
                msg = f"unclosed '{{' in {argument!r}; write '{{{{' for a literal brace"
                raise ValueError(msg)
            name = argument[position + 1 : close]
            if name not in PLACEHOLDERS:
                known = ", ".join("{" + known_name + "}" for known_name in PLACEHOLDERS)
                msg = f"unknown placeholder {{{name}}} in {argument!r}; known: {known}"
                raise ValueError(msg)
            if literal:
                yield "".join(literal)
                literal = []
            yield _Placeholder(name)
            position = close + 1
        elif char == "}":
            msg = f"stray '}}' in {argument!r}; write '}}}}' for a literal brace"
            raise ValueError(msg)
        else:
            literal.append(char)
            position += 1
    if literal:
        yield "".join(literal)


def placeholders_in(argv: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The placeholder names a command uses, in order; ValueError on an unknown or malformed one."""
    return tuple(piece for argument in argv for piece in _pieces(argument) if isinstance(piece, _Placeholder))


def render_value(value: str, values: Mapping[str, str]) -> str:
    """One string (an environment value, say) with its placeholders filled."""
    return render_command([value], values)[0]


def render_command(argv: tuple[str, ...] | list[str], values: Mapping[str, str]) -> list[str]:
    """The command with every placeholder filled from `values`; ValueError names a missing one."""
    rendered = []
    for argument in argv:
        parts = []
        for piece in _pieces(argument):
            if isinstance(piece, _Placeholder):
                if piece not in values:
                    msg = f"no value for placeholder {{{piece}}} in {argument!r}"
                    raise ValueError(msg)
                parts.append(str(values[piece]))
            else:
                parts.append(piece)
        rendered.append("".join(parts))
    return rendered
