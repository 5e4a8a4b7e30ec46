"""Long output through the person's pager, chosen and started the way git does it.

A journal, a task's logs or a listing of lessons runs to hundreds of lines; git's own
long commands (`log`, `diff`, `show`) hand those to a pager, and people expect `git
failres` to follow the same settings. The choice is git's (pager.c): on a terminal only,
`GIT_PAGER`, else `core.pager`, else `PAGER`, else `less`; an empty one or `cat` means
none. `git --no-pager failres ...` arrives here as GIT_PAGER=cat (git sets it for
external commands), `git failres --no-pager ...` is read by `split_pager_flags`, and a
pager git already started (`git -p failres`, `pager.failres`) is seen by
GIT_PAGER_IN_USE and not started twice. The pager gets LESS=FRX and LV=-c unless they
are set, as git gives them: a short answer prints and returns without a key press.

Standard library only, imported when a paged command starts: the CLI's start-up time
is not paid for a pager that most runs (pipes, scripts, seats) never start.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

# Commands whose output is long enough to page; a person's listing or record, not a
# command whose output is a live view or one line.
PAGED = frozenset({
    "config show", "decisions", "facts list", "facts timeline", "journal", "lessons list", "lessons relevant",
    "lessons show", "logs", "policy show", "prompt", "proposals list", "proposals show", "report", "rules",
})

NO_PAGER_FLAGS = ("--no-pager", "-P")
PAGINATE_FLAGS = ("--paginate", "-p")

_pager: subprocess.Popen | None = None


def split_pager_flags(args: Sequence[str]) -> tuple[list[str], bool | None]:
    """The arguments without the leading pager flags, and the choice they made:
    False (`--no-pager`), True (`--paginate`), None (neither). As with git, the flags
    go before the command: after it, a word is the command's own."""
    words = list(args)
    choice: bool | None = None
    while words and words[0] in (*NO_PAGER_FLAGS, *PAGINATE_FLAGS):
        choice = words.pop(0) in PAGINATE_FLAGS
    return words, choice


def _core_pager() -> str | None:
    """`core.pager` as git reads it here (the repository's config, then the person's)."""
    import subprocess  # here and where the pager starts: output to a pipe starts no process

    try:
        proc = subprocess.run(["git", "config", "--get", "core.pager"], capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.rstrip("\n") if proc.returncode == 0 else None


def pager_program(environ: Mapping[str, str], stdout_is_tty: bool, core_pager=_core_pager) -> str | None:
    """The pager command git would run here, or None for none (git's `git_pager`)."""
    if not stdout_is_tty:
        return None
    pager = environ.get("GIT_PAGER")
    if pager is None:
        pager = core_pager()
    if pager is None:
        pager = environ.get("PAGER")
    if pager is None:
        pager = "less"
    return None if pager in ("", "cat") else pager


def _terminal_columns() -> int | None:
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(1).columns or None
    except OSError:
        return None


def start_pager(command: str, choice: bool | None) -> None:
    """Send the rest of this process's output through the pager, when `command` pages
    (or `--paginate` asked) and git's rules give one."""
    global _pager
    if choice is False or (choice is None and command not in PAGED) or os.environ.get("GIT_PAGER_IN_USE"):
        return
    try:
        stdout_is_tty = os.isatty(1)
    except OSError:
        return
    program = pager_program(os.environ, stdout_is_tty)
    if program is None:
        return
    columns = _terminal_columns()
    if columns:
        # After stdout becomes the pipe, no ioctl can ask the terminal: the width travels in
        # COLUMNS (tables are fitted to it), as git leaves it for the commands it pages.
        os.environ.setdefault("COLUMNS", str(columns))
    os.environ["GIT_PAGER_IN_USE"] = "true"
    env = {**os.environ, "LESS": os.environ.get("LESS", "FRX"), "LV": os.environ.get("LV", "-c")}
    env.pop("GIT_PAGER_IN_USE", None)  # the pager itself is not paged output
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        import subprocess

        _pager = subprocess.Popen(program, shell=True, stdin=subprocess.PIPE, env=env)  # noqa: S602 - git runs it so
    except OSError:
        del os.environ["GIT_PAGER_IN_USE"]
        return
    assert _pager.stdin is not None
    os.dup2(_pager.stdin.fileno(), 1)
    if os.isatty(2):
        os.dup2(_pager.stdin.fileno(), 2)  # a warning belongs beside the lines it is about
    _pager.stdin.close()


def finish_pager() -> None:
    """Close the pipe and wait for the person to quit the pager (git's `wait_for_pager`)."""
    global _pager
    if _pager is None:
        return
    import signal

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the person quit the pager before the end
            pass
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C belongs to the pager now
    try:
        _pager.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
        _pager = None
