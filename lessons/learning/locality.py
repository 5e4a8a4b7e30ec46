"""Whether a tool call stays inside the working tree: the paths it names, the
shell commands it runs.

Provenance needs one answer per tool call: did its result come from the
repository, or from beyond it? For file tools that is a path check. For the shell
it is a reading of the command: local when every program it runs is recognised
as working on the tree and every path it names lies inside it. This reads what a
command plainly does; it is not a sandbox. An agent hiding a fetch inside an awk
program is an agent already steered by content it saw, and that content came in
by a road this classification saw first.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field


def path_is_inside(path: str, cwd: str) -> bool:
    """Whether a path names something within the session's directory."""
    if not path or path.startswith("~"):
        return False
    if not cwd:
        # Nothing to anchor an absolute path to; a relative one stays inside
        # unless it climbs out.
        relative = posixpath.normpath(path)
        return not posixpath.isabs(path) and relative != ".." and not relative.startswith("../")
    root = posixpath.normpath(cwd)
    target = posixpath.normpath(posixpath.join(root, path))
    return target == root or target.startswith(root.rstrip("/") + "/")


# Programs that read, search, compare or rearrange files and print what they found.
_LOCAL_PROGRAMS = frozenset(
    (
        "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "tree",
        "file", "stat", "du", "diff", "cmp", "sort", "uniq", "cut", "tr", "sed", "awk", "jq",
        "column", "nl", "basename", "dirname", "realpath", "readlink", "pwd", "echo", "printf",
        "true", "false", "test", "[", "date", "sleep", "mkdir", "touch", "cp", "mv", "rm",
        "rmdir", "chmod", "ln", "tee", "cd", "pushd", "popd", "export", "unset", "which",
    )
)  # fmt: skip
# `find` runs other programs through these, unread.
_FIND_RUNNERS = frozenset(("-exec", "-execdir", "-ok", "-okdir"))
# git subcommands that never talk to another repository (fetch, pull, push,
# clone, ls-remote, remote and submodule all can).
_LOCAL_GIT = frozenset(
    (
        "status", "diff", "log", "show", "branch", "rev-parse", "ls-files", "ls-tree", "add",
        "commit", "checkout", "switch", "restore", "reset", "stash", "merge", "rebase", "tag",
        "blame", "grep", "worktree", "mv", "rm", "cherry-pick", "revert", "describe",
        "shortlog", "reflog", "cat-file", "rev-list", "merge-base", "symbolic-ref",
        "for-each-ref", "init", "config", "apply", "format-patch", "am", "clean", "notes",
        "check-ignore", "version",
    )
)  # fmt: skip
# Runners of the repository's own tests, builds and linters, with the
# subcommands that stay local (None: any). Their output is the repository's code
# speaking; dependency installs (`mix deps.get`, `npm install`) are not listed.
_REPOSITORY_RUNNERS: Mapping[str, frozenset[str] | None] = {
    "make": None,
    "pytest": None,
    "ruff": None,
    "mypy": None,
    "black": None,
    "tsc": None,
    "eslint": None,
    "prettier": None,
    "mix": frozenset(("test", "compile", "format", "credo", "dialyzer")),
    "cargo": frozenset(("test", "build", "check", "clippy", "fmt")),
    "go": frozenset(("test", "build", "vet", "fmt")),
    "npm": frozenset(("test", "run")),
    "yarn": frozenset(("test", "run", "lint")),
    "pnpm": frozenset(("test", "run", "lint")),
}
# An interpreter runs whatever it is handed (`python -c "urlopen(...)"`), so
# only named local tool modules are recognised.
_PYTHONS = frozenset(("python", "python3"))
_PYTHON_MODULES = frozenset(
    ("pytest", "unittest", "mypy", "ruff", "black", "compileall", "py_compile")
)
_DEVICES = frozenset(("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"))
_OPERATOR_CHARS = frozenset(";&|()<>")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_MAX_COMMAND_CHARS = 20_000
# What may follow `$` in a parameter expansion (`$(` is a substitution, read apart).
_EXPANSION_STARTS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_{@*#?$!-"
)


def shell_command_is_local(command: str, cwd: str) -> bool:
    """Whether a shell command only runs recognised local programs on paths inside `cwd`.

    Fails closed: backquotes, unbalanced quotes, an unknown program, a path
    outside, a command run from a substitution -- each makes it not local.
    """
    if len(command) > _MAX_COMMAND_CHARS:
        return False
    unwrapped = _unwrap_shell(command)
    if unwrapped is None:
        return False
    for text in unwrapped:
        try:
            lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            lexer.commenters = ""
            words = list(lexer)
        except ValueError:
            return False
        split = _split_simple_commands(words)
        if split is None:
            return False
        commands, redirect_targets = split
        if not all(t.isdigit() or t == "-" or _word_is_local(t, cwd) for t in redirect_targets):
            return False
        if not all(_simple_command_is_local(c, cwd) for c in commands):
            return False
    return True


@dataclass
class _Level:
    """Scanner state for the command, or for one `$(...)` open inside it."""

    chars: list[str] = field(default_factory=list)
    quote: str = ""
    parens: int = 0


def _unwrap_shell(command: str) -> list[str] | None:
    """The command and each `$(...)` inside it as separate texts, with heredoc
    bodies and comments dropped and unquoted newlines made separators; None when
    the command cannot be read with confidence.

    A substitution is replaced by the word `_` where it stood, so a command run
    from one (`$(cmd) args`) names no recognised program.
    """
    levels = [_Level()]
    finished: list[str] = []
    heredocs: list[str] = []
    i, n = 0, len(command)
    while i < n:
        level = levels[-1]
        ch = command[i]
        step = 1
        if level.quote == "'":
            level.chars.append(ch)
            level.quote = "" if ch == "'" else "'"
        elif ch == "\\":
            level.chars.append(command[i : i + 2])
            step = 2
        elif ch == "`":
            return None
        elif ch == "$" and command[i + 1 : i + 2] in _EXPANSION_STARTS:
            return None  # `$HOME/.netrc`: a path no reading of the text can place
        elif command.startswith("$(", i) or (
            not level.quote and command[i : i + 2] in ("<(", ">(")
        ):
            levels.append(_Level())
            step = 2
        elif ch == '"' or (ch == "'" and not level.quote):
            level.quote = "" if level.quote == ch else ch
            level.chars.append(ch)
        elif level.quote:
            level.chars.append(ch)
        elif ch == "#" and (i == 0 or command[i - 1] in " \t\n;&|()"):
            end = command.find("\n", i)
            step = (n if end == -1 else end) - i
        elif ch == ")" and level.parens == 0 and len(levels) > 1:
            finished.append("".join(level.chars))
            levels.pop()
            levels[-1].chars.append(" _ ")
        elif ch in "()":
            level.parens = max(level.parens + (1 if ch == "(" else -1), 0)
            level.chars.append(ch)
        elif command.startswith("<<", i) and not command.startswith("<<<", i):
            match = _HEREDOC.match(command, i)
            if match is None:
                return None
            heredocs.append(match.group(2))
            level.chars.append(f"<< {match.group(2)}")
            step = match.end() - i
        elif ch == "\n":
            level.chars.append("\n;")
            step = _skip_heredoc_bodies(command, i + 1, heredocs) - i
            heredocs = []
        else:
            level.chars.append(ch)
        i += step
    if len(levels) != 1 or levels[0].quote:
        return None
    return ["".join(levels[0].chars), *finished]


def _skip_heredoc_bodies(command: str, start: int, delimiters: list[str]) -> int:
    """Where the command goes on after the bodies of the heredocs just opened."""
    position = start
    for delimiter in delimiters:
        while position < len(command):
            end = command.find("\n", position)
            end = len(command) if end == -1 else end
            line = command[position:end]
            position = end + 1
            if line.strip() == delimiter:
                break
    return min(position, len(command))


def _split_simple_commands(words: list[str]) -> tuple[list[list[str]], list[str]] | None:
    commands: list[list[str]] = []
    targets: list[str] = []
    current: list[str] = []
    expect_target = False
    for word in words:
        if expect_target:
            targets.append(word)
            expect_target = False
        elif word and set(word) <= _OPERATOR_CHARS:
            if "<" in word or ">" in word:
                expect_target = True
            elif current:
                commands.append(current)
                current = []
        else:
            current.append(word)
    if expect_target:
        return None
    if current:
        commands.append(current)
    return commands, targets


def _word_is_local(word: str, cwd: str) -> bool:
    candidates = [word]
    if word.startswith("-") and "=" in word:
        candidates.append(word.split("=", 1)[1])
    for candidate in candidates:
        looks_like_path = candidate.startswith(("/", "~")) or ".." in candidate.split("/")
        if looks_like_path and candidate not in _DEVICES and not path_is_inside(candidate, cwd):
            return False
    return True


def _simple_command_is_local(words: list[str], cwd: str) -> bool:
    while words and _ASSIGNMENT.match(words[0]):
        if not _word_is_local(words[0].split("=", 1)[1], cwd):
            return False
        words = words[1:]
    if not words:
        return True
    if not all(_word_is_local(w, cwd) for w in words):
        return False
    program, arguments = words[0], words[1:]
    if program in ("cd", "pushd"):
        # Bare `cd` goes home and `cd -` goes back: out of the tree, by no path.
        targets = [a for a in arguments if not a.startswith("-")]
        return bool(targets) and "-" not in arguments
    if program in _LOCAL_PROGRAMS:
        return not (program == "find" and _FIND_RUNNERS.intersection(arguments))
    if program == "git":
        # `git -c` can name a program for git to run (a pager, a diff driver).
        return "-c" not in arguments and _git_subcommand(arguments) in _LOCAL_GIT
    if program in _PYTHONS:
        return arguments[:1] == ["-m"] and arguments[1:2] != [] and arguments[1] in _PYTHON_MODULES
    if program in _REPOSITORY_RUNNERS:
        allowed = _REPOSITORY_RUNNERS[program]
        subcommand = next((a for a in arguments if not a.startswith("-")), "")
        return allowed is None or subcommand in allowed
    return False


def _git_subcommand(arguments: list[str]) -> str:
    i = 0
    while i < len(arguments) and arguments[i].startswith("-"):
        i += 2 if arguments[i] == "-C" else 1
    return arguments[i] if i < len(arguments) else ""
