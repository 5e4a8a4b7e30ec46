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
- fish: one conf.d file adds rules for all three (`git failres` through rules for `git`,
  since fish 3.6's own completion of third-party git commands looks them up by the wrong name).

The scripts themselves are in `failres.clidoc.shell_scripts`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
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
    if not node.path:  # what goes before the command: `git failres --no-pager journal ...`
        names += [flag for flag in ROOT_FLAGS if flag not in used]
    return Completion(tuple(sorted(n for n in names if n.startswith(current))))


# The program's own options, read before the command (failres.cli: --version, the pager's).
ROOT_FLAGS: tuple[str, ...] = ("--version", "--no-pager", "--paginate")


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


def script_for(shell: str) -> str:
    """The completion script for `shell` (one of `SHELLS`)."""
    from failres.clidoc.shell_scripts import SCRIPTS

    return SCRIPTS[shell]


def bash_script() -> str:
    return script_for("bash")


def zsh_script() -> str:
    return script_for("zsh")


def fish_script() -> str:
    return script_for("fish")


SHELLS: tuple[str, ...] = ("bash", "zsh", "fish")


def _data_home(env: Mapping[str, str]) -> Path:
    return Path(env.get("XDG_DATA_HOME") or Path(env.get("HOME", "~")).expanduser() / ".local" / "share")


def install_path(shell: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where a person's own completion files go, so that nothing of git's is replaced.

    bash-completion loads `completions/git-failres` from the user's directory when
    `git failres` (or `git-failres`) is completed; zsh reads `_git-failres` from a
    directory on $fpath, which `site-functions` under the user's data directory is
    once the person's .zshrc adds it; fish reads every file of `conf.d` under its
    config directory when it starts.
    """
    env = os.environ if environ is None else environ
    data = _data_home(env)
    if shell == "bash":
        base = Path(env["BASH_COMPLETION_USER_DIR"]) if env.get("BASH_COMPLETION_USER_DIR") else data / "bash-completion"
        return base / "completions" / "git-failres"
    if shell == "fish":
        config = Path(env.get("XDG_CONFIG_HOME") or Path(env.get("HOME", "~")).expanduser() / ".config")
        return config / "fish" / "conf.d" / "git-failres.fish"
    return data / "zsh" / "site-functions" / "_git-failres"


def found_where(shell: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """The completion file `shell` already loads for git-failres, or None.

    bash-completion 2.11 (Debian 12, Ubuntu 24.04) looks in the person's own directory and
    under each of $XDG_DATA_DIRS (default /usr/local/share:/usr/share), and nowhere near
    PATH: the copy a venv or pipx install puts in its own `share/bash-completion` is found
    only by bash-completion 2.12 and later. fish reads conf.d in its config directory,
    vendor_conf.d in its data directory and under $XDG_DATA_DIRS, and /etc/fish/conf.d.
    zsh finds what $fpath names, which only the person's .zshrc knows: None.
    """
    env = os.environ if environ is None else environ
    shared = [Path(d) for d in (env.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share").split(":") if d]
    if shell == "bash":
        dirs = [install_path("bash", env).parent, *(d / "bash-completion" / "completions" for d in shared)]
        names = ("git-failres", "git-failres.bash", "_git-failres")
    elif shell == "fish":
        dirs = [install_path("fish", env).parent, _data_home(env) / "fish" / "vendor_conf.d",
                *(d / "fish" / "vendor_conf.d" for d in shared), Path("/etc/fish/conf.d")]
        names = ("git-failres.fish",)
    else:
        return None
    return next((d / name for d in dirs for name in names if (d / name).is_file()), None)


@dataclass(frozen=True)
class Installed:
    shell: str
    path: Path
    wrote: bool
    next_steps: tuple[str, ...]


def shell_of(environ: Mapping[str, str]) -> str:
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


def install_completion(shell: str | None, environ: Mapping[str, str] | None = None) -> Installed:
    """Write the script for `shell` into the person's own completion directory (never git's)."""
    from failres.errors import UsageError

    env = dict(os.environ if environ is None else environ)
    chosen = shell or shell_of(env)
    if chosen not in SHELLS:
        msg = f"no completion for shell {chosen!r}" if chosen else "cannot tell which shell to install for"
        raise UsageError(msg, hint="pass --shell bash, --shell zsh or --shell fish")
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
    elif chosen == "fish":
        steps = ("fish reads it in new shells, for `git failres`, `git-failres` and `failres` alike",)
    else:
        steps = ("add to ~/.zshrc, before compinit:",
                 f"  fpath=({path.parent} $fpath)")
    return Installed(chosen, path, wrote, steps)


def complete_for_newcomer(environ: Mapping[str, str] | None = None) -> Installed | None:
    """Make <TAB> work in the person's shell when it would not yet (what `init` does on a
    terminal): bash and fish, whose own directories are read without any setup, when no
    copy they read is there already. None when nothing was written."""
    env = os.environ if environ is None else environ
    shell = shell_of(env)
    if shell not in ("bash", "fish") or found_where(shell, env) is not None:
        return None
    return install_completion(shell, env)
