"""The command tree as plain data: commands, their arguments and options, groups, examples.

`describe` is the only function here that touches typer/click objects, and it reads
only attributes both typer's own click and click itself have (names, flags, help,
metavar, required, multiple); everything else works on the frozen `CommandDoc`.

Where a command is declared, two typer settings carry what help needs beyond the
docstring: `rich_help_panel` names its group (one of `SECTIONS`) and `epilog` holds
its example, one `git failres ...` line (a `#` comment may follow it).
"""

from __future__ import annotations

import enum
import pathlib
import typing
from collections.abc import Iterable
from dataclasses import field

from lessons.frozen import record

PROGRAM = "git failres"

# The groups the overview lists commands under, in this order.
LOOP = "The loop"
LESSONS = "The lessons"
KNOWLEDGE = "Learning and knowledge"
HOUSEKEEPING = "Housekeeping"
SECTIONS: tuple[str, ...] = (LOOP, LESSONS, KNOWLEDGE, HOUSEKEEPING)

HELP_FLAGS: tuple[str, ...] = ("-h", "--help")


@record
class ParamDoc:
    """One argument or option as a person writes it."""

    name: str  # the Python name; stable across renames of the flag
    flags: tuple[str, ...]  # ("--task",), ("-q", "--quiet"); () for a positional argument
    negations: tuple[str, ...]  # ("--no-edits",) for an on/off flag
    metavar: str  # "ID", "FILE", "implement|fix"; "" for a flag
    help: str
    required: bool
    repeatable: bool
    kind: str  # "flag", "path", "dir", "choice", "number", "text", "command"
    choices: tuple[str, ...] = ()
    default: str = ""  # shown as "(default: ...)"; "" when there is nothing worth showing

    @property
    def is_option(self) -> bool:
        return bool(self.flags)

    @property
    def takes_value(self) -> bool:
        return self.kind != "flag"

    def spelled(self) -> str:
        """The option as the options list shows it: `-q, --quiet`, `--task TASK`, `--[no-]edits`."""
        if not self.is_option:
            return self.metavar + ("..." if self.repeatable else "")
        flags = list(self.flags)
        if self.negations:
            flags = [f"--[no-]{flag[2:]}" if flag.startswith("--") else flag for flag in flags]
        shown = ", ".join(sorted(flags, key=lambda f: (f.startswith("--"), f)))
        return f"{shown} {self.metavar}" if self.takes_value else shown

    def usage(self) -> str:
        """The parameter in a usage line: `[--task TASK]...`, `SLUG`, `[PATH...]`."""
        if self.is_option:
            flag = self.longest_flag()
            if self.negations:
                flag = f"--[no-]{flag[2:]}"
            text = f"{flag} {self.metavar}" if self.takes_value else flag
            text = text if self.required else f"[{text}]"
            return text + ("..." if self.repeatable else "")
        text = self.metavar + ("..." if self.repeatable else "")
        return text if self.required else f"[{text}]"

    def longest_flag(self) -> str:
        return max(self.flags, key=len)


@record
class CommandDoc:
    """One command or command group, with everything its help and manual page say."""

    path: tuple[str, ...]  # () for the program itself, ("lessons", "list") for a subcommand
    summary: str
    description: str
    arguments: tuple[ParamDoc, ...] = ()
    options: tuple[ParamDoc, ...] = ()
    subcommands: tuple[CommandDoc, ...] = ()
    section: str = ""
    examples: tuple[str, ...] = ()
    runs_alone: bool = False  # a group that does something itself when no subcommand follows
    hidden: bool = False
    accepts_extra: bool = field(default=False, compare=False)

    @property
    def name(self) -> str:
        return self.path[-1] if self.path else PROGRAM

    @property
    def full_name(self) -> str:
        return " ".join((PROGRAM, *self.path))

    @property
    def is_group(self) -> bool:
        return bool(self.subcommands)

    def visible_subcommands(self) -> tuple[CommandDoc, ...]:
        return tuple(sorted((c for c in self.subcommands if not c.hidden), key=lambda c: c.name))

    def subcommand(self, name: str) -> CommandDoc | None:
        return next((c for c in self.subcommands if c.name == name), None)

    def option(self, flag: str) -> ParamDoc | None:
        return next((p for p in self.options if flag in p.flags or flag in p.negations), None)

    def usage_lines(self) -> tuple[str, ...]:
        """Each way to call the command: one line, or two for a group that also runs alone."""
        own = " ".join(p.usage() for p in (*self.arguments, *self.options))
        if not self.is_group:
            return (f"{self.full_name} {own}".rstrip(),)
        lines = [f"{self.full_name} {own}".rstrip()] if self.runs_alone else []
        lines.append(f"{self.full_name} COMMAND [ARGS]")
        return tuple(lines)

    def walk(self) -> Iterable[CommandDoc]:
        """This command and every command below it, depth first, subcommands sorted."""
        yield self
        for sub in sorted(self.subcommands, key=lambda c: c.name):
            yield from sub.walk()


def find_command(root: CommandDoc, words: Iterable[str]) -> tuple[CommandDoc, list[str]]:
    """The deepest command the leading `words` name, and the words that were not command names."""
    node = root
    rest = list(words)
    while rest and node.subcommand(rest[0]) is not None:
        node = node.subcommand(rest.pop(0))  # type: ignore[assignment]
    return node, rest


# ---- reading the typer/click tree ----

def describe(command: object, path: tuple[str, ...] = ()) -> CommandDoc:
    """The `CommandDoc` of a click command (typer's `get_command(app)`) and all below it."""
    help_text = _clean(getattr(command, "help", None) or "")
    params = [p for p in getattr(command, "params", ()) if not getattr(p, "hidden", False)]
    params = [p for p in params if not set(getattr(p, "opts", ())) & set(HELP_FLAGS)]
    docs = [_param_doc(p) for p in params]
    subcommands = tuple(describe(sub, (*path, name)) for name, sub in getattr(command, "commands", {}).items())
    context = getattr(command, "context_settings", None) or {}
    return CommandDoc(
        path=path,
        summary=_summary(help_text),
        description=help_text,
        arguments=tuple(d for d in docs if not d.is_option),
        options=tuple(d for d in docs if d.is_option),
        subcommands=subcommands,
        section=getattr(command, "rich_help_panel", None) or "",
        examples=tuple(line.strip() for line in _clean(getattr(command, "epilog", None) or "").splitlines()
                       if line.strip()),
        runs_alone=bool(getattr(command, "invoke_without_command", False)),
        hidden=bool(getattr(command, "hidden", False)),
        accepts_extra=bool(context.get("allow_extra_args")),
    )


def _clean(text: str) -> str:
    """A docstring without its indentation; paragraphs kept, lines within one joined."""
    import inspect

    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def _summary(help_text: str) -> str:
    first = help_text.split("\n\n")[0]
    return first.rstrip(".") if first.count(". ") == 0 else first.split(". ")[0]


def _annotation(param: object) -> object:
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        return descriptor.annotation
    return getattr(param, "type", None)  # click's ParamType, for typer built on click itself


def _element_type(annotation: object) -> object:
    """`list[Path]` -> `Path`; `Optional[int]` -> `int`; anything else as it is."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return args[0] if args and typing.get_origin(annotation) is not None else annotation


def _choices(element: object, param: object) -> tuple[str, ...]:
    if isinstance(element, type) and issubclass(element, enum.Enum):
        return tuple(str(member.value) for member in element)
    if typing.get_origin(element) is typing.Literal:
        return tuple(str(v) for v in typing.get_args(element))
    return tuple(str(c) for c in getattr(getattr(param, "type", None), "choices", None) or ())


def _kind(param: object, element: object, choices: tuple[str, ...], metavar: str) -> str:
    if getattr(param, "is_flag", False) or element is bool:
        return "flag"
    if metavar == "COMMAND":
        return "command"
    if choices:
        return "choice"
    type_name = getattr(element, "name", "") if not isinstance(element, type) else ""
    if element is pathlib.Path or type_name in ("path", "file", "filename"):
        return "dir" if metavar == "DIR" else "path"
    if element in (int, float) or type_name in ("integer", "float"):
        return "number"
    return "text"


def _metavar(param: object, flags: tuple[str, ...], element: object, choices: tuple[str, ...]) -> str:
    declared = getattr(param, "metavar", None)
    if declared:
        if "|" in declared:
            return declared
        return declared.strip("[]").replace("...", "").upper()
    if choices:
        return "|".join(choices)
    if not flags:  # a positional argument is named by what it is: PLAN, SLUG, TASK
        return str(getattr(param, "name", "value")).upper()
    if element is pathlib.Path:
        return "FILE"
    if element is int:
        return "N"
    return max(flags, key=len).lstrip("-").split("-")[-1].upper()


def _default(param: object, kind: str) -> str:
    value = getattr(param, "default", None)
    if kind == "flag" or value in (None, "", (), []) or not getattr(param, "show_default", True):
        return ""
    if callable(value):
        return ""
    return str(value.value if isinstance(value, enum.Enum) else value)


def _param_doc(param: object) -> ParamDoc:
    opts = tuple(getattr(param, "opts", ()))
    is_option = getattr(param, "param_type_name", "") == "option" or any(o.startswith("-") for o in opts)
    flags = opts if is_option else ()
    element = _element_type(_annotation(param))
    choices = _choices(element, param)
    metavar = _metavar(param, flags, element, choices)
    if not choices and "|" in metavar:  # a text option documented as "implement|fix"
        choices = tuple(metavar.split("|"))
    kind = _kind(param, element, choices, metavar)
    if kind == "flag":
        metavar = ""
    nargs = getattr(param, "nargs", 1)
    return ParamDoc(
        name=str(getattr(param, "name", "")),
        flags=flags,
        negations=tuple(getattr(param, "secondary_opts", ()) or ()),
        metavar=metavar,
        help=_clean(getattr(param, "help", None) or ""),
        required=bool(getattr(param, "required", False)),
        repeatable=bool(getattr(param, "multiple", False)) or nargs == -1,
        kind=kind,
        choices=choices,
        default=_default(param, kind),
    )


def cli_description(app: object) -> CommandDoc:
    """The description of a typer app (the edge: builds its click command once)."""
    import typer.main

    return describe(typer.main.get_command(app))
