"""Whether a tool call stays inside the working tree: the paths it names, the
shell commands it runs.

Provenance needs one answer per tool call: did its result come from the
repository, or from beyond it? For file tools that is a path check. For the shell
it is a reading of the command: local when every program it runs is recognised
as working on the tree (file inspection, local git, or one of the repository's
own tools listed in `trusted_commands`) and every path it names lies inside it.
Inside means inside the directory the session started in, resolved from wherever
`cd` took the shell, so moving into a subdirectory keeps the tree the tree.

This reads what a command plainly does; it is not a sandbox. An agent hiding a
fetch inside an awk program is an agent already steered by content it saw, and
that content came in by a road this classification saw first.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Iterable, Sequence

from lessons.frozen import record
from lessons.learning.shell_text import ASSIGNMENT as _ASSIGNMENT
from lessons.learning.trusted_commands import (
    DEFAULT_TRUSTED_COMMANDS,
    LOCAL_GIT,
    LOCAL_GIT_REMOTE,
    LOCAL_PROGRAMS,
    SERVING_WORDS,
    VERSION_FLAGS,
    WINDOWS_LOCAL_PROGRAMS,
)
from lessons.learning.shell_text import OPERATOR_CHARS, shell_items, shell_words, unwrap_shell


def path_is_inside(path: str, cwd: str, root: str | None = None) -> bool:
    """Whether a path names something within the session's tree.

    `root` is the tree (the directory it started in); `cwd` is where a
    relative path is resolved from, which `cd` moves. Without `root`, `cwd` is both.
    """
    root = cwd if root is None else root
    if not path or path.startswith("~"):
        return False
    if not root:
        # Nothing to anchor an absolute path to; a relative one stays inside
        # unless it climbs out.
        relative = posixpath.normpath(path)
        return not posixpath.isabs(path) and relative != ".." and not relative.startswith("../")
    top = posixpath.normpath(root)
    target = posixpath.normpath(posixpath.join(cwd or top, path))
    return target == top or target.startswith(top.rstrip("/") + "/")


# Where third-party content lands on a person's machine, wherever the session started:
# what they downloaded, caches, the trash, mail, browser profiles, temporary files.
_THIRD_PARTY_EVERYWHERE = frozenset((
    "Downloads", ".cache", "Caches", ".Trash", "Trash", "Mail", ".thunderbird", ".mozilla", "google-chrome",
    "chromium", "BraveSoftware",
    "tool-results",  # where a harness spills long output, of whatever command printed it
    "Temp", "INetCache",  # Windows' temporary files and its browser cache (`AppData/Local/Temp`)
))
# Stores of other people's code, third-party outside the tree (a tree's own
# dependencies are part of its working tree).
_DEPENDENCY_STORES = frozenset((
    "node_modules", "site-packages", "dist-packages", ".npm", ".yarn", ".pnpm-store", ".cargo", ".rustup", ".m2",
    ".gradle", ".nuget", ".gem", ".bundle", ".hex", ".mix", ".pub-cache", ".cpan", "go",
))
_TEMPORARY = ("/tmp", "/var/tmp", "/dev/shm", "/private/tmp", "/private/var/folders", "/var/folders", "/proc",
              "/mnt", "/media", "/run/user")


def path_is_first_party(path: str, cwd: str, root: str | None = None) -> bool:
    """Whether a path names the person's own local files: inside the tree, or anywhere on
    their machine except the places third-party content lands (downloads, caches, the
    trash, mail, temporary files, stores of other people's packages). Below the tree,
    only the places of the first kind count: a session started in the home directory
    does not make `~/Downloads` the person's own."""
    root = cwd if root is None else root
    if not path:
        return False
    if path.startswith("~"):
        if len(path) > 1 and path[1] != "/":
            return False  # another user's home
        parts = posixpath.normpath("/" + path[1:]).split("/")
        return not (_THIRD_PARTY_EVERYWHERE | _DEPENDENCY_STORES).intersection(parts)
    if not root and not posixpath.isabs(path):
        return path_is_inside(path, cwd, root)
    target = posixpath.normpath(posixpath.join(cwd or root or "/", path))
    if target.startswith(tuple(t + "/" for t in _TEMPORARY)) or target in _TEMPORARY:
        return False
    top = posixpath.normpath(root) if root else ""
    if top and (target == top or target.startswith(top.rstrip("/") + "/")):
        below = target[len(top):].split("/")
        return not _THIRD_PARTY_EVERYWHERE.intersection(below)
    return not (_THIRD_PARTY_EVERYWHERE | _DEPENDENCY_STORES).intersection(target.split("/"))


@record
class Place:
    """Where a tool call runs: the session's tree and the directories it may be in now.

    `cwds` holds more than one directory when a `cd` may or may not have taken
    effect (`cd sub; ...` after a failed `cd`, a harness that may not keep the
    shell's directory): a path counts as inside only when it is inside from each.
    `readable` are files outside the tree whose content is known to be trusted
    output (a background run of a trusted command, spilled to a file by the harness).
    """

    root: str
    cwds: frozenset[str]
    readable: frozenset[str] = frozenset()

    def inside(self, path: str) -> bool:
        if posixpath.isabs(path) and posixpath.normpath(path) in self.readable:
            return True
        return all(path_is_first_party(path, cwd, self.root) for cwd in self.cwds)

    def resolve(self, path: str) -> frozenset[str]:
        """Where `cd path` may land, from each current directory."""
        return frozenset(posixpath.normpath(posixpath.join(cwd or self.root, path)) for cwd in self.cwds)




@record
class TrustedCommands:
    """The commands whose output counts as the repository's own (see DEFAULT_TRUSTED_COMMANDS)."""

    entries: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, texts: Iterable[str]) -> TrustedCommands:
        """From entries such as "mix test"; ValueError naming one that cannot be read."""
        entries = []
        for text in texts:
            try:
                words = tuple(shlex.split(text))
            except ValueError:
                words = ()
            if not words or any(not w or set(w) & OPERATOR_CHARS or w.startswith("$") for w in words):
                msg = f'"{text}" is not a command (its leading words, e.g. "mix test")'
                raise ValueError(msg)
            entries.append(words)
        return cls(tuple(entries))

    def matches(self, words: Sequence[str]) -> bool:
        return any(tuple(words[: len(entry)]) == entry for entry in self.entries)


# `find` runs other programs through these, unread.
_FIND_RUNNERS = frozenset(("-exec", "-execdir", "-ok", "-okdir"))
_PROGRAMS = LOCAL_PROGRAMS | WINDOWS_LOCAL_PROGRAMS
# Interpreters given a script: the script is what runs, judged as a program of its own.
_INTERPRETERS = frozenset(("python", "python3", "node", "bash", "sh", "zsh", "ruby", "perl", "php"))
# Where the tree keeps other people's programs (its installed dependencies): a program
# there is judged by its name, as if found on PATH, never as the repository's own.
_DEPENDENCY_DIRS = frozenset(("node_modules", ".venv", "venv", "vendor", "site-packages", ".tox"))
_DEVICES = frozenset(("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"))
_MAX_COMMAND_CHARS = 20_000
DEFAULT_TRUSTED = TrustedCommands.of(DEFAULT_TRUSTED_COMMANDS)


@record
class ShellVerdict:
    """What reading a command found: whether it stays local, and where its shell may
    be afterwards (for a harness that keeps one shell across calls)."""

    local: bool
    cwds: frozenset[str]


def shell_command_is_local(command: str, cwd: str, *, root: str | None = None,
                           trusted: TrustedCommands = DEFAULT_TRUSTED,
                           readable: frozenset[str] = frozenset()) -> bool:
    """Whether a shell command only runs recognised local programs on paths inside the tree.

    Fails closed: backquotes, unbalanced quotes, an unknown program, a path
    outside, a command run from a substitution -- each makes it not local.
    """
    place = Place(cwd if root is None else root, frozenset((cwd,)), readable)
    return read_shell_command(command, place, trusted).local


def read_shell_command(command: str, place: Place, trusted: TrustedCommands = DEFAULT_TRUSTED) -> ShellVerdict:
    """Read a command from `place`: is it local, and where may its shell be afterwards.

    `cd` is followed: after `cd sub && ...` relative paths resolve from sub; where a
    `cd` may or may not have taken effect (after `;`, in a pipe) both directories
    are kept, and a subshell's `cd` ends with it.
    """
    closed = ShellVerdict(False, place.cwds)
    if len(command) > _MAX_COMMAND_CHARS:
        return closed
    unwrapped = unwrap_shell(command)
    if unwrapped is None:
        return closed
    after = place.cwds
    for number, text in enumerate(unwrapped):
        words = shell_words(text)
        items = None if words is None else shell_items(words)
        if items is None:
            return closed
        # A substitution runs from wherever the shell was; reading it from where the
        # command started is stricter, as every directory a `cd` may reach lies
        # inside the tree, and a deeper directory only keeps more paths inside.
        cwds = _walk(items, place, trusted)
        if cwds is None:
            return closed
        if number == 0:
            after = cwds
    return ShellVerdict(True, after)


def _walk(items: list[tuple[str, list[str]]], place: Place, trusted: TrustedCommands) -> frozenset[str] | None:
    """Check each simple command from the directories it may run in; the directories at
    the end, or None when something is not local."""
    here = place
    saved: list[Place] = []
    landed: frozenset[str] | None = None  # where the last `cd` goes, until its separator says how sure
    for kind, words in items:
        if kind == "redirect":
            if not all(t.isdigit() or t == "-" or _word_is_local(t, here) for t in words):
                return None
            continue
        if kind == "command":
            if not _simple_command_is_local(words, here, trusted):
                return None
            landed = _cd_target(words, here)
            continue
        operator = words[0]
        if landed is not None:
            # `cd x && next` runs next only in x; any other separator leaves both possible.
            cwds = landed if operator == "&&" else here.cwds | landed
            here = Place(here.root, cwds, here.readable)
            landed = None
        if operator == "(":
            saved.append(here)
        elif operator == ")" and saved:
            here = saved.pop()
    if landed is not None:
        here = Place(here.root, here.cwds | landed, here.readable)
    return here.cwds


def _word_is_local(word: str, place: Place) -> bool:
    candidates = [word]
    if word.startswith("-") and "=" in word:
        candidates.append(word.split("=", 1)[1])
    for candidate in candidates:
        looks_like_path = candidate.startswith(("/", "~")) or ".." in candidate.split("/")
        if looks_like_path and candidate not in _DEVICES and not place.inside(candidate):
            return False
    return True


def _cd_target(words: list[str], place: Place) -> frozenset[str] | None:
    """Where a `cd`/`pushd` command goes (already checked to be inside), or None."""
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words or words[0] not in ("cd", "pushd"):
        return None
    targets = [a for a in words[1:] if not a.startswith("-")]
    return place.resolve(targets[0]) if targets else None


def _simple_command_is_local(words: list[str], place: Place, trusted: TrustedCommands) -> bool:
    while words and _ASSIGNMENT.match(words[0]):
        if not _word_is_local(words[0].split("=", 1)[1], place):
            return False
        words = words[1:]
    if not words:
        return True
    if not all(_word_is_local(w, place) for w in words):
        return False
    program, arguments = words[0], words[1:]
    if program in ("env", "timeout", "time", "nice"):
        # They only run the command after them (`env` alone prints the environment).
        rest = _after_runner(program, arguments)
        return rest is not None and _simple_command_is_local(rest, place, trusted)
    if program in ("cd", "pushd"):
        # Bare `cd` goes home and `cd -` goes back: out of the tree, by no path.
        # A relative target must stay inside too: `cd sub` is, `cd ..` from the top is not.
        targets = [a for a in arguments if not a.startswith("-")]
        return bool(targets) and "-" not in arguments and place.inside(targets[0])
    # PowerShell's names are case-insensitive, and Windows programs may be named with `.exe`.
    windows_name = program.lower().removesuffix(".exe")
    if program in _PROGRAMS or windows_name in WINDOWS_LOCAL_PROGRAMS:
        return not (program == "find" and _FIND_RUNNERS.intersection(arguments))
    if program == "git" or windows_name == "git":
        # `git -c` can name a program for git to run (a pager, a diff driver).
        return "-c" not in arguments and _git_is_local(arguments)
    if len(arguments) == 1 and arguments[0] in VERSION_FLAGS and "/" not in program:
        return True  # `node --version`: what is installed here
    if SERVING_WORDS.intersection(arguments):
        return False  # `make serve`, `bin/rails server`: a server's log is whoever reached it
    if trusted.matches(words):
        return True
    return _runs_own_program(words, place)


def _after_runner(program: str, arguments: list[str]) -> list[str] | None:
    """The command `env`, `timeout`, `time` or `nice` runs ([] for a bare `env`); None when unread."""
    rest = list(arguments)
    if program == "env":
        while rest and (rest[0] == "-i" or _ASSIGNMENT.match(rest[0])):
            rest = rest[1:]
        return None if rest[:1] and rest[0].startswith("-") else rest
    if program == "timeout":
        rest = [w for w in rest if not w.startswith("-")][1:] if rest else []
        return rest or None
    if program == "nice" and rest[:1] == ["-n"]:
        rest = rest[2:]
    return rest or None


def _runs_own_program(words: list[str], place: Place) -> bool:
    """Whether a command runs the repository's own program: an executable named by a path
    inside the tree (`./build.sh`, `target/debug/mycc x.c`), or an interpreter given a script
    inside it (`python scripts/check.py`). A program in the tree's dependency folders is
    someone else's, judged by its name only; code given inline (`python -c`) is no file."""
    program, arguments = words[0], words[1:]
    if program in _INTERPRETERS:
        if not arguments or arguments[0].startswith("-"):
            return False
        candidate = arguments[0]
    elif "/" in program:
        candidate = program
    else:
        return False
    parts = posixpath.normpath(candidate).split("/")
    if posixpath.splitext(parts[-1])[0] in SERVING_WORDS:
        return False  # `node server.js`, `./start.sh`: the repository's server is still a server
    return not _DEPENDENCY_DIRS.intersection(parts) and all(
        path_is_inside(candidate, cwd, place.root) for cwd in place.cwds)


def _git_is_local(arguments: list[str]) -> bool:
    subcommand = _git_subcommand(arguments)
    if subcommand == "remote":
        # `git remote -v` reads the configuration; `git remote show origin` asks origin.
        rest = arguments[arguments.index("remote") + 1:]
        return not rest or rest[0] in LOCAL_GIT_REMOTE and "-f" not in rest or rest[:2] == ["show", "-n"]
    return subcommand in LOCAL_GIT


def _git_subcommand(arguments: list[str]) -> str:
    i = 0
    while i < len(arguments) and arguments[i].startswith("-"):
        i += 2 if arguments[i] == "-C" else 1
    return arguments[i] if i < len(arguments) else ""
