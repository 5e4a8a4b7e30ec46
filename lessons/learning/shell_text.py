"""Reading a shell command's text into words, before anything is judged.

What `locality` needs from a command line is its simple commands, the operators
between them and the targets of its redirections, with every `$(...)` pulled out to
be read on its own. Anything this cannot read with confidence (a backquote, an
unbalanced quote, a parameter expansion that could name any path) is None, and the
caller fails closed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

OPERATOR_CHARS = frozenset(";&|()<>")
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
# What may follow `$` in a parameter expansion (`$(` is a substitution, read apart).
_EXPANSION_STARTS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_{@*#?$!-"
)


@dataclass
class _Level:
    """Scanner state for the command, or for one `$(...)` open inside it."""

    chars: list[str] = field(default_factory=list)
    quote: str = ""
    parens: int = 0


def unwrap_shell(command: str) -> list[str] | None:
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


def shell_items(words: list[str]) -> list[tuple[str, list[str]]] | None:
    """Words as a sequence of ("command", words), ("operator", [op]) and
    ("redirect", [target]); None when a redirection has no target."""
    items: list[tuple[str, list[str]]] = []
    current: list[str] = []
    expect_target = False
    for word in words:
        if expect_target:
            items.append(("redirect", [word]))
            expect_target = False
        elif word and set(word) <= OPERATOR_CHARS:
            if "<" in word or ">" in word:
                expect_target = True
                continue
            if current:
                items.append(("command", current))
                current = []
            for operator in _operators(word):
                items.append(("operator", [operator]))
        else:
            current.append(word)
    if expect_target:
        return None
    if current:
        items.append(("command", current))
    return items


def _operators(word: str) -> list[str]:
    """`)&&` -> [")", "&&"]: shlex joins neighbouring punctuation into one token."""
    out: list[str] = []
    i = 0
    while i < len(word):
        pair = word[i : i + 2]
        if pair in ("&&", "||", ";;"):
            out.append(pair)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def shell_words(text: str) -> list[str] | None:
    """The words and operators of one unwrapped text, as a POSIX shell splits them."""
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = ""
        return list(lexer)
    except ValueError:
        return None


# Programs whose first argument names what they do (`git push`, `mix phx.server`):
# the family of a command run through them is both words.
_SUBCOMMAND_PROGRAMS = frozenset(
    (
        "git", "mix", "npm", "npx", "pnpm", "yarn", "bun", "deno", "cargo", "go", "docker", "kubectl",
        "helm", "terraform", "gh", "bd", "pip", "pip3", "uv", "poetry", "bundle", "rails", "rake", "make",
        "dotnet", "gradle", "mvn", "brew", "apt", "apt-get", "systemctl", "composer", "nix",
    )
)  # fmt: skip
# Words that run the command after them, and builtins that only set the stage.
_PREFIXES = frozenset(("sudo", "env", "time", "nohup", "exec", "command", "nice"))
_STAGE = frozenset(("cd", "pushd", "popd", "export", "unset", "set", "source", ".", "true"))


def _doing_commands(command: str, strip: re.Pattern | None = None):
    """Each simple command of `command` that does something, its words less the prefixes
    that only run it (`sudo`, `env`, `X=1`): `cd`, `export` and the like only set the stage.
    `strip` is removed from the text before it is split (redirections, for a refusal)."""
    texts = unwrap_shell(command)
    text = (strip.sub("", texts[0]) if strip is not None else texts[0]) if texts else None
    words = shell_words(text) if text is not None else None
    for kind, simple in shell_items(words) if words is not None else []:
        if kind != "command":
            continue
        while simple and (simple[0] in _PREFIXES or ASSIGNMENT.match(simple[0])):
            simple = simple[1:]
        if simple and simple[0] not in _STAGE:
            yield simple


def command_family(command: str) -> str:
    """What a command line does, in a word or two: `mix phx.server 2>&1 | head -80` is
    `mix phx.server`, `cd web && npm install x` is `npm install`, `rm -rf dist` is `rm`.
    "" when it cannot be read. Two refusals of one family are the same thing refused."""
    for simple in _doing_commands(command):
        program = simple[0].rsplit("/", 1)[-1]
        rest = simple[1:]
        if program in ("python", "python3") and rest[:1] == ["-m"] and len(rest) > 1:
            return f"{program} -m {rest[1]}"
        if program in _SUBCOMMAND_PROGRAMS:
            sub = next((w for w in rest if not w.startswith("-")), "")
            return f"{program} {sub}".strip()
        return program
    return ""


_REDIRECTION = re.compile(r"^\d*(?:[<>]|&>)")
_REDIRECTIONS = re.compile(r"\s+\d*(?:>>|>&|&>|>|<)\s*[^\s|;&]+")
REFUSED_COMMAND_LIMIT = 160


def refused_command(command: str) -> str:
    """The command a person refused, as they were shown it, less what only plumbs its
    output: `rm -rf build/` stays `rm -rf build/`, `mix phx.server 2>&1 | head -80` is
    `mix phx.server`, `cd web && npm install x` is `npm install x`. A rule drawn from a
    refusal names exactly this, never only its program. "" when it cannot be read."""
    for simple in _doing_commands(command, strip=_REDIRECTIONS):
        kept = [w for w in simple if not _REDIRECTION.match(w) and w not in ("/dev/null",)]
        text = " ".join(kept)
        return text if len(text) <= REFUSED_COMMAND_LIMIT else text[: REFUSED_COMMAND_LIMIT - 1] + "…"
    return ""
