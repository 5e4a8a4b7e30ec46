"""The `git-failres(1)` manual page, rendered from the command tree.

`git failres --help` is `git help failres` to git, which opens this page with
man(1); the build writes it to `share/man/man1/git-failres.1` (see setup.py),
where man finds it next to the `bin` directory of a venv or a pipx install.

Pure: the version and date are passed in, so a build with SOURCE_DATE_EPOCH set
produces the same bytes every time.
"""

from __future__ import annotations

from failres.clidoc.contract import TOPICS, Topic
from failres.clidoc.model import PROGRAM, CommandDoc, ParamDoc
from failres.clidoc.text import sections_of

DESCRIPTION = (
    "failres wraps automated code changes (AI coding agents, codemods, bots) in a failure-resolution and "
    "learning loop. Each task of a plan runs in a workspace of its own, on the branch failres/SLUG/TASK "
    "started from the integration branch. A gate (the judge command) decides whether it is green; on red, a "
    "fixer seat gets a bounded number of repair attempts; a scope guard keeps every seat inside the task's "
    "files. Failures are classified, repaired where a deterministic repair exists, or quarantined, and each "
    "quarantine becomes a lesson. When the task lands, its lessons are stamped with what resolved them, and "
    "resolved lessons come back, as advice, in later prompts.",
    "Every record lives in commits on refs/failres/store: git log is the audit trail, git diff the review "
    "and git revert the undo. Your branches, index and working tree are never touched by a store write.",
    "Every read command takes --json and then prints exactly one JSON document on stdout, whose shape is "
    "documented, with its schemaVersion, in the project's docs/json.md. Output for people is never wrapped "
    "when it goes to a pipe or a file: one record a line.",
)

EXIT_STATUS = (
    ("0", "Done."),
    ("1", "The work ran and a task did not go green (quarantined, stopped, or pending: waiting on after), or a "
          "sync kept losing the race."),
    ("2", "Bad input or configuration: one error: line, a hint: where one helps, nothing written."),
    ("3", "An unexpected internal error; the message names the log, .git/failres/log/failres.log."),
    ("128+N", "run was stopped by signal N (130 for Ctrl-C); its tasks are interrupted and it printed the "
              "command that resumes them."),
    ("141", "The reader of the output went away (git failres journal SLUG | head -1); nothing is printed."),
)

FILES = (
    (".failres.toml", "The configuration, at the top of the main worktree. git failres config show prints "
                      "every key in force and where it came from."),
    ("refs/failres/store", "The store: one commit per write, one readable JSON file per record."),
    ("refs/failres/snapshots/SLUG/TASK/LESSON", "The failing state of a quarantined task, kept for its lesson."),
    ("refs/heads/failres/SLUG/TASK", "A task's branch; its commit carries the trailer Failres-Task: SLUG/TASK."),
    ("~/.cache/failres/workspaces/REPOSITORY-HASH/SLUG/TASK",
     "A task's workspace ($XDG_CACHE_HOME instead of ~/.cache when it is set; [worktrees] dir moves them): "
     "outside your checkout and your git directory, with a git directory of its own. git failres gc removes "
     "the ones landed tasks no longer need."),
    ("$GIT_DIR/failres/logs/SLUG/TASK/RUN/N/", "What dispatch N of a run was told and said, and what the gate "
                                               "said after it (git failres logs)."),
    ("$GIT_DIR/failres/log/failres.log, hooks.log", "Unexpected errors with their tracebacks, and what the "
                                                    "merge hooks did."),
    ("$GIT_DIR/failres/", "Also: the workspaces' own records, locks of live runs, and the disposable SQLite "
                          "index of the store (a cache: deleting it loses nothing)."),
)

ENVIRONMENT = (
    ("FAILRES_POLICY_KEY", "Overrides the knowledge policy's KEY (e.g. FAILRES_POLICY_MAX_LESSONS=100); "
                           "git failres policy show says which values came from where."),
    ("FAILRES_SLUG, FAILRES_TASK, FAILRES_MODE, FAILRES_ATTEMPT, FAILRES_WORKTREE, FAILRES_PROMPT_FILE, "
     "FAILRES_DISPATCH_DIR",
     "Set for every seat process (see SEATS); none of them names your repository."),
    ("GIT_PAGER, PAGER, GIT_PAGER_IN_USE", "The pager, chosen as git chooses it (see PAGER); a pager git "
                                           "started already is not started twice."),
    ("COLUMNS", "The width tables are fitted to when the terminal cannot be asked (behind a pager)."),
    ("FAILRES_BWRAP", "The bubblewrap program the seat world uses (default: bwrap on PATH); git failres doctor "
                      "says whether this machine gives a world."),
)


def escape(text: str) -> str:
    """Text safe in a roff line: backslashes escaped, no line read as a request."""
    text = text.replace("\\", "\\e")
    # Characters beyond ASCII (an em dash in a SCOPE-REQUEST example) as groff's own escapes:
    # groff reads its input as Latin-1 unless a preprocessor says otherwise.
    text = "".join(char if ord(char) < 128 else f"\\[u{ord(char):04X}]" for char in text)
    return "\n".join("\\&" + line if line.startswith((".", "'")) else line for line in text.split("\n"))


def code(text: str) -> str:
    """Text meant to be typed: hyphens are minus signs, so a copied option still works."""
    return escape(text).replace("-", "\\-")


def bold(text: str) -> str:
    return f"\\fB{code(text)}\\fR"


def italic(text: str) -> str:
    return f"\\fI{code(text)}\\fR"


def _param_synopsis(param: ParamDoc) -> str:
    if param.is_option:
        flag = param.longest_flag()
        shown = bold(f"--[no-]{flag[2:]}" if param.negations else flag)
        if param.takes_value:
            shown += " " + italic(param.metavar)
        text = shown if param.required else f"[{shown}]"
    else:
        inner = italic(param.metavar) + ("..." if param.repeatable else "")
        text = inner if param.required else f"[{inner}]"
    return text + ("..." if param.is_option and param.repeatable else "")


def synopsis(command: CommandDoc, *, alone: bool = True) -> str:
    parts = [bold(command.full_name)]
    if alone:
        parts += [_param_synopsis(p) for p in (*command.arguments, *command.options)]
    else:
        parts.append(f"{italic('COMMAND')} [{italic('ARGS')}]")
    return " ".join(parts)


def _param_item(param: ParamDoc) -> list[str]:
    if param.is_option:
        flags = [f"--[no-]{f[2:]}" if param.negations and f.startswith("--") else f for f in param.flags]
        head = ", ".join(bold(f) for f in sorted(flags, key=lambda f: (f.startswith("--"), f)))
        if param.takes_value:
            head += " " + italic(param.metavar)
    else:
        head = italic(param.metavar) + ("..." if param.repeatable else "")
    body = param.help + (f" (default: {param.default})" if param.default else "")
    return [".TP", head, escape(body)]


def _command_entry(command: CommandDoc) -> list[str]:
    lines = [".PP", synopsis(command) if (not command.is_group or command.runs_alone) else synopsis(command, alone=False)]
    lines.append(".RS 4")
    for number, paragraph in enumerate(command.description.split("\n\n")):
        if number:
            lines.append(".PP")
        lines.append(escape(paragraph))
    for param in (*command.arguments, *command.options):
        lines += _param_item(param)
    if command.examples:
        lines += [".PP", "Example:" if len(command.examples) == 1 else "Examples:", ".PP", ".RS 4", ".nf"]
        lines += [code(example) for example in command.examples]
        lines += [".fi", ".RE"]
    lines.append(".RE")
    return lines


def _entries(command: CommandDoc) -> list[str]:
    """A command's entry, then its subcommands', depth first and sorted."""
    lines = _command_entry(command)
    for sub in command.visible_subcommands():
        lines += _entries(sub)
    return lines


def _section(title: str) -> str:
    return f'.SH "{title}"'


def _pairs(rows: tuple[tuple[str, str], ...], *, bold_term: bool = True) -> list[str]:
    lines = []
    for term, text in rows:
        lines += [".TP", bold(term) if bold_term else escape(term), escape(text)]
    return lines


def _topic(topic: Topic) -> list[str]:
    """A section of prose, an example typed as is, and terms (the seat's variables)."""
    lines = [_section(topic.title)]
    for number, paragraph in enumerate(topic.paragraphs):
        if number:
            lines.append(".PP")
        lines.append(escape(paragraph))
    if topic.example:
        lines += [".PP", ".RS 4", ".nf", *(code(line) for line in topic.example.splitlines()), ".fi", ".RE"]
    if topic.terms:
        lines += _pairs(topic.terms)
    return lines


def render_manpage(root: CommandDoc, *, version: str, date: str) -> str:
    """The whole `git-failres(1)` page as roff source."""
    lines = [
        f'.\\" Generated from the command line of failres {escape(version)}; edit the commands, not this file.',
        f'.TH "GIT\\-FAILRES" "1" "{escape(date)}" "failres {escape(version)}" "failres Manual"',
        ".nh",
        ".ad l",
        _section("NAME"),
        "git-failres \\- " + escape(root.description.split("\n\n")[0].rstrip(".")[:1].lower()
                                    + root.description.split("\n\n")[0].rstrip(".")[1:]),
        _section("SYNOPSIS"),
        ".nf",
        f"{bold(PROGRAM)} [{bold('--version')}] [{bold('-h')} | {bold('--help')}] "
        f"[{bold('-P')} | {bold('--no-pager')} | {bold('-p')} | {bold('--paginate')}] {italic('COMMAND')} "
        f"[{italic('ARGS')}]",
        f"{bold(PROGRAM + ' help')} [{italic('COMMAND')}]",
        ".fi",
        _section("DESCRIPTION"),
    ]
    for number, paragraph in enumerate(DESCRIPTION):
        if number:
            lines.append(".PP")
        lines.append(escape(paragraph))
    lines += [
        ".PP",
        escape("Help for one command: git failres help COMMAND, or git failres COMMAND -h."),
        _section("COMMANDS"),
    ]
    for title, commands in sections_of(root):
        lines.append(f'.SS "{escape(title)}"')
        for command in commands:
            lines += _entries(command)
    for topic in TOPICS:
        lines += _topic(topic)
    lines += [_section("EXIT STATUS"), *_pairs(EXIT_STATUS)]
    lines += [_section("FILES"), *_pairs(FILES)]
    lines += [_section("ENVIRONMENT"), *_pairs(ENVIRONMENT)]
    pages = ", ".join(f"{page_name(command)}(1)" for _, commands in sections_of(root) for command in commands)
    lines += [_section("SEE ALSO"), escape(f"{pages}; git(1), git-worktree(1), git-merge(1), githooks(5)")]
    return "\n".join(lines) + "\n"


def page_name(command: CommandDoc) -> str:
    """The manual page of one command: `git-failres-run`, `git-failres-lessons` (as git-lfs names its own)."""
    return "-".join(("git-failres", *command.path))


def render_command_page(command: CommandDoc, *, version: str, date: str) -> str:
    """The page of one command (a group with its commands): `man git-failres-lessons`, the
    same entries as the whole page's, alone. (`git help failres-lessons` would look for a
    program git-failres-lessons on PATH first, so `man` is the way in.)"""
    name = page_name(command)
    title = code(name.upper())
    lines = [
        f'.\\" Generated from the command line of failres {escape(version)}; edit the commands, not this file.',
        f'.TH "{title}" "1" "{escape(date)}" "failres {escape(version)}" "failres Manual"',
        ".nh",
        ".ad l",
        _section("NAME"),
        f"{code(name)} \\- {escape(command.summary[:1].lower() + command.summary[1:])}",
        _section("SYNOPSIS"),
        ".nf",
        *(synopsis(c) if (not c.is_group or c.runs_alone) else synopsis(c, alone=False) for c in command.walk()
          if not c.hidden),
        ".fi",
        _section("DESCRIPTION"),
        *_entries(command),
        _section("EXIT STATUS"), *_pairs(EXIT_STATUS),
        _section("SEE ALSO"), escape("git-failres(1), which also describes plans, seats, files and the environment"),
    ]
    return "\n".join(lines) + "\n"
