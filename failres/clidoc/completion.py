"""Shell completion: what may come next on a command line, and the scripts that ask.

The scripts hold no knowledge of the commands: on <TAB> they run
`git-failres __complete WORD...` (the words after the program name, the last one
being the word under the cursor) and offer what it prints, one candidate a line.
A first line `:files` or `:dirs` asks the shell to complete paths itself.

Three names are served by one script:

- `git failres <TAB>`: git's own bash completion calls `_git_failres` (and, through
  bash-completion, loads the file `git-failres` to find it); zsh's `_git` calls
  `_git-failres`. Neither replaces git's completion of anything else.
- `git-failres <TAB>` and `failres <TAB>`: registered directly.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from failres.clidoc.model import HELP_FLAGS, CommandDoc, ParamDoc, find_command
from failres.clidoc.names import Words

FILES = ":files"
DIRS = ":dirs"


@dataclass(frozen=True)
class Completion:
    """Candidates for the word under the cursor, or a request that the shell complete paths."""

    candidates: tuple[str, ...] = ()
    paths: str = ""  # "", FILES or DIRS

    def lines(self) -> list[str]:
        return [self.paths, *self.candidates] if self.paths else list(self.candidates)


# What the repository has for a value failres cannot know from its own commands
# (a slug, a task, a record id): `names.offered`, or nothing in tests of the grammar alone.
Offer = Callable[[Words], Sequence[str]]


def _values(param: ParamDoc, root: CommandDoc, current: str, asked: Words | None = None,
            offer: Offer | None = None) -> Completion:
    if param.kind == "path":
        return Completion(paths=FILES)
    if param.kind == "dir":
        return Completion(paths=DIRS)
    if param.kind == "choice":
        return Completion(tuple(c for c in param.choices if c.startswith(current)))
    if param.kind == "command":
        return Completion(tuple(c.name for c in root.visible_subcommands() if c.name.startswith(current)))
    if offer is not None and asked is not None:
        return Completion(tuple(v for v in offer(asked) if v.startswith(current)))
    return Completion()


def _options(node: CommandDoc, used: set[str], current: str) -> Completion:
    names: list[str] = []
    for option in node.options:
        if not option.repeatable and (set(option.flags) | set(option.negations)) & used:
            continue
        names += [flag for flag in (*option.flags, *option.negations) if flag.startswith("--")]
    names.append("--help")
    return Completion(tuple(sorted(n for n in names if n.startswith(current))))


def complete(root: CommandDoc, words: Sequence[str], offer: Offer | None = None) -> Completion:
    """What may replace the last of `words` (the words after the program name); `offer`
    answers for values only the repository knows."""
    if not words:
        words = [""]
    *done, current = words
    if done and done[0] == "help":
        # `git failres help lessons <TAB>` completes command names, level by level.
        node, rest = find_command(root, done[1:])
        if rest:
            return Completion()
        return Completion(tuple(c.name for c in node.visible_subcommands() if c.name.startswith(current)))
    node = root
    positionals: list[str] = []
    used: set[str] = set()
    values: dict[str, str] = {}
    waiting: ParamDoc | None = None
    waiting_flag = ""
    only_positionals = False
    for word in done:
        if waiting is not None:
            values[waiting_flag] = word
            waiting = None
            continue
        if word == "--" and not only_positionals:
            only_positionals = True
        elif word.startswith("-") and not only_positionals:
            flag, has_value, _ = word.partition("=")
            if flag in HELP_FLAGS:
                return Completion()
            option = node.option(flag)
            used.add(flag)
            if option is not None and option.takes_value:
                if has_value:
                    values[flag] = word.partition("=")[2]
                else:
                    waiting, waiting_flag = option, flag
        elif not positionals and node.subcommand(word) is not None and not only_positionals:
            node = node.subcommand(word)  # type: ignore[assignment]
            used, values = set(), {}
        else:
            positionals.append(word)
    command = " ".join(node.path)

    def asked(param: ParamDoc) -> Words:
        return Words(command, param.name, tuple(positionals), values)

    if waiting is not None:
        return _values(waiting, root, current, asked(waiting), offer)
    if current.startswith("-") and not only_positionals:
        return _options(node, used, current)
    if node.is_group and not positionals:
        return Completion(tuple(c.name for c in node.visible_subcommands() if c.name.startswith(current)))
    argument = _argument_at(node, len(positionals))
    return _values(argument, root, current, asked(argument), offer) if argument is not None else Completion()


def _argument_at(node: CommandDoc, index: int) -> ParamDoc | None:
    for number, argument in enumerate(node.arguments):
        if number == index or (argument.repeatable and number <= index):
            return argument
    return None


# ---- the scripts ----

_BASH = r"""# bash completion for `git failres`, `git-failres` and `failres`.
# Generated by `git failres completion bash`; it asks the installed program, so it
# never goes out of date. It defines `_git_failres`, which git's own completion calls
# for `git failres <TAB>`, and registers itself for `git-failres` and `failres`;
# git's completion of everything else is left as it is.

__failres_reply() {
    # $1: the word under the cursor; the rest: the words before it, after the program name.
    local cur="$1" line kind=""
    shift
    local -a found=()
    while IFS= read -r line; do
        case "$line" in
            :files|:dirs) kind="$line" ;;
            *) found+=("$line") ;;
        esac
    done < <(git-failres __complete "$@" "$cur" 2>/dev/null)
    COMPREPLY=()
    if [ "$kind" = ":dirs" ]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
    elif [ "$kind" = ":files" ]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    else
        COMPREPLY=("${found[@]}")
    fi
}

# Called by git's completion (git-completion.bash) for `git failres ...`, with its
# `words`, `cword` and `__git_cmd_idx` (where `failres` is among the words) in scope.
_git_failres() {
    local first=$(( ${__git_cmd_idx:-1} + 1 ))
    __failres_reply "${words[cword]}" "${words[@]:first:cword-first}"
}

# `git-failres ...` and `failres ...` typed directly.
__failres_direct() {
    __failres_reply "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[@]:1:COMP_CWORD-1}"
}

complete -o bashdefault -o default -F __failres_direct git-failres failres
"""

_ZSH = r"""#compdef git-failres failres
#description failure resolution and learning for automated code changes
# zsh completion for `git failres`, `git-failres` and `failres`, as the file
# `_git-failres` on $fpath (zsh's `_git` lists such files as third-party git
# commands and calls `_git-failres` for `git failres <TAB>`; nothing else of git's
# completion changes). Generated by `git failres completion zsh`; it asks the
# installed program, so it never goes out of date.

__failres_zsh_reply() {
    # The words after the program name up to the cursor; the last is being completed.
    local -a found
    local kind="" line
    for line in "${(@f)$(git-failres __complete "$@" 2>/dev/null)}"; do
        case "$line" in
            :files|:dirs) kind="$line" ;;
            "") ;;
            *) found+=("$line") ;;
        esac
    done
    if [[ "$kind" == ":dirs" ]]; then
        _path_files -/
    elif [[ "$kind" == ":files" ]]; then
        _files
    elif (( ${#found} )); then
        compadd -Q -- "${found[@]}"
    else
        return 1
    fi
}

# `words[1]` is `failres` under `git`, else the program's own name: either way the
# words to ask about start at `words[2]`.
_git-failres() {
    __failres_zsh_reply "${(@)words[2,CURRENT]}"
}

if [[ "${zsh_eval_context[-1]}" == loadautofunc ]]; then
    # Autoloaded from $fpath: this file's body is the first call, so answer it.
    _git-failres "$@"
else
    # Sourced (eval "$(git failres completion zsh)"): register for the direct names.
    compdef _git-failres git-failres failres
fi
"""


def bash_script() -> str:
    return _BASH


def zsh_script() -> str:
    return _ZSH


def script_for(shell: str) -> str:
    return {"bash": _BASH, "zsh": _ZSH}[shell]


SHELLS: tuple[str, ...] = ("bash", "zsh")


def install_path(shell: str, environ: dict[str, str] | None = None) -> Path:
    """Where a person's own completion files go, so that nothing of git's is replaced.

    bash-completion loads `completions/git-failres` from the user's directory when
    `git failres` (or `git-failres`) is completed; zsh reads `_git-failres` from a
    directory on $fpath, which `site-functions` under the user's data directory is
    once the person's .zshrc adds it.
    """

    env = os.environ if environ is None else environ
    data = Path(env.get("XDG_DATA_HOME") or Path(env.get("HOME", "~")).expanduser() / ".local" / "share")
    if shell == "bash":
        base = Path(env["BASH_COMPLETION_USER_DIR"]) if env.get("BASH_COMPLETION_USER_DIR") else data / "bash-completion"
        return base / "completions" / "git-failres"
    return data / "zsh" / "site-functions" / "_git-failres"


@dataclass(frozen=True)
class Installed:
    shell: str
    path: Path
    wrote: bool
    next_steps: tuple[str, ...]


def shell_of(environ: dict[str, str]) -> str:
    """The name of the person's shell: the one $SHELL names or, where $SHELL is unset (cron,
    containers, `env -i`), their login shell from the password database ("" when neither says)."""
    named = environ.get("SHELL", "")
    if not named:
        import pwd

        try:
            named = pwd.getpwuid(os.getuid()).pw_shell
        except KeyError:  # a uid with no entry, as in some containers
            named = ""
    return Path(named).name


def install_completion(shell: str | None, environ: dict[str, str] | None = None) -> Installed:
    """Write the script for `shell` into the person's own completion directory (never git's)."""
    from failres.errors import UsageError

    env = dict(os.environ if environ is None else environ)
    chosen = shell or shell_of(env)
    if chosen not in SHELLS:
        msg = f"no completion for shell {chosen!r}" if chosen else "cannot tell which shell to install for"
        raise UsageError(msg, hint="pass --shell bash or --shell zsh")
    path = install_path(chosen, env)
    script = script_for(chosen)
    wrote = not (path.is_file() and path.read_text(encoding="utf-8") == script)
    if wrote:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(script, encoding="utf-8")
        tmp.replace(path)
    if chosen == "bash":
        steps = ("bash-completion loads it in new shells, for `git failres` and `git-failres` alike;",
                 f"without bash-completion, add to ~/.bashrc: source {path}")
    else:
        steps = ("add to ~/.zshrc, before compinit:",
                 f"  fpath=({path.parent} $fpath)")
    return Installed(chosen, path, wrote, steps)
