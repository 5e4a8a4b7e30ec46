"""Help as text, the way git's own commands print it: usage, what it does, options, an example.

Pure functions of a `CommandDoc` and a width. `width=None` means no wrapping at all
(help piped into a file or `grep` keeps one line per option); a width wraps prose at
word boundaries only, so no flag, path or identifier is ever split.
"""

from __future__ import annotations

import textwrap

from failres.clidoc.model import HELP_FLAGS, PROGRAM, SECTIONS, CommandDoc

INDENT = "   "
_HELP_OPTION = "-h, --help"


def _wrap(text: str, width: int | None, indent: str = "", hanging: str | None = None) -> list[str]:
    later = indent if hanging is None else hanging
    if width is None:
        return [indent + text]
    return textwrap.wrap(text, width=max(width, 40), initial_indent=indent, subsequent_indent=later,
                         break_long_words=False, break_on_hyphens=False) or [indent]


def _usage(doc: CommandDoc, width: int | None) -> list[str]:
    lines = []
    for number, line in enumerate(doc.usage_lines()):
        label = "usage: " if number == 0 else "   or: "
        head = doc.full_name
        rest = line[len(head):].strip()
        lines += _wrap(f"{head} {rest}".rstrip(), width, label, " " * (len(label) + len(head) + 1))
    return lines


def _rows(rows: list[tuple[str, str]], width: int | None, column: int | None = None) -> list[str]:
    """Two columns: the left one padded to the widest entry (at most 28), the right wrapped."""
    if not rows:
        return []
    column = column or min(max(len(left) for left, _ in rows), 28)
    out = []
    for left, right in rows:
        if len(left) > column:
            out.append(INDENT + left)
            out += _wrap(right, width, INDENT + " " * (column + 2))
            continue
        prefix = INDENT + left.ljust(column) + "  "
        out += _wrap(right, width, prefix, " " * len(prefix)) if right else [prefix.rstrip()]
    return out


def _param_help(param) -> str:
    text = param.help
    if param.default:
        text = f"{text} (default: {param.default})".strip()
    return text


def render_help(doc: CommandDoc, width: int | None = None) -> str:
    """A command's (or command group's) help: usage, description, arguments, options, example."""
    if not doc.path:
        return render_overview(doc, width)
    lines = _usage(doc, width)
    lines.append("")
    for paragraph in doc.description.split("\n\n"):
        lines += _wrap(paragraph, width)
        lines.append("")
    arguments = [(p.spelled(), _param_help(p)) for p in doc.arguments if p.help]
    if arguments:
        lines.append("arguments:")
        lines += _rows(arguments, width)
        lines.append("")
    options = [(p.spelled(), _param_help(p)) for p in doc.options]
    lines.append("options:")
    lines += _rows([*options, (_HELP_OPTION, "Show this help.")], width)
    lines.append("")
    if doc.is_group:
        lines.append("commands:")
        lines += _rows([(c.name, c.summary) for c in doc.visible_subcommands()], width)
        lines.append("")
    if doc.examples:
        lines.append("example:" if len(doc.examples) == 1 else "examples:")
        lines += [INDENT + example for example in doc.examples]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def sections_of(root: CommandDoc) -> list[tuple[str, list[CommandDoc]]]:
    """The overview's groups in `SECTIONS` order, commands sorted; unplaced ones under "Other"."""
    grouped: dict[str, list[CommandDoc]] = {}
    for command in root.visible_subcommands():
        section = command.section if command.section in SECTIONS else "Other"
        grouped.setdefault(section, []).append(command)
    order = [*SECTIONS, "Other"]
    return [(name, grouped[name]) for name in order if name in grouped]


def render_overview(root: CommandDoc, width: int | None = None) -> str:
    """`git failres --help`: what the tool is, and every command under its group."""
    lines = [f"usage: {PROGRAM} [--version] [{' | '.join(HELP_FLAGS)}] [--no-pager | --paginate] COMMAND [ARGS]", ""]
    lines += _wrap(root.description.split("\n\n")[0], width)
    lines.append("")
    sections = sections_of(root)
    column = max(len(c.name) for _, commands in sections for c in commands)
    for section, commands in sections:
        lines.append(section)
        lines += _rows([(c.name, c.summary) for c in commands], width, column)
        lines.append("")
    lines += _wrap(f"'{PROGRAM} help COMMAND' shows a command's options and an example; "
                   "'man git-failres' is the manual. Long output (journal, logs, listings) goes through "
                   "git's pager on a terminal: --no-pager (or -P), before the command, turns it off.", width)
    return "\n".join(lines) + "\n"
