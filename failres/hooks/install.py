"""`git failres hooks install|uninstall`: the merge hooks, installed without destroying anything.

- They go where git really looks: `git rev-parse --git-path hooks`, which
  honours `core.hooksPath`. When that points outside the repository (a directory
  shared by every repository of the machine, say) install refuses unless asked
  with `shared=True`: a hook written there would run in repositories that never
  asked for failres.
- A hook already there that is not ours is moved to `<hook>.legacy` (a rename:
  bytes, mode and symlinks kept) and our script runs it first, with the same
  arguments and input; its exit status stays the hook's. `uninstall` moves it
  back. Our own scripts are recognised by a marker line, so installing twice
  updates in place and never chains failres to itself.
- The scripts are a few lines of sh that hand over to the Python that installed
  them (`<python> -m failres.hooks.run`), which imports only what a non-task merge
  needs. Whatever failres does, the script's status is the legacy hook's (0
  without one): failres never blocks a person's merge.
- A hooks directory inside the working tree (`core.hooksPath = .githooks`,
  `.husky`) is committed and shared: there the scripts call `git failres` from
  PATH instead, and install says so.
- When failres cannot be reached (that Python is gone, `git-failres` is not on
  PATH), the post-merge script says so in one line naming the cause and the fix,
  and logs it: a stamp silently lost is how people stop trusting the lessons.
- A script with the marker that differs from every script failres writes has
  been changed by a person: it is theirs, and is neither overwritten nor removed.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from failres.errors import UsageError
from failres.gitops.git import run_git, try_git
from failres.hooks.run import HOOKS

MARKER = "# failres-managed-hook"
LEGACY_SUFFIX = ".legacy"
# What a hook runs when it cannot use a fixed interpreter: whichever `git failres` is on
# PATH. The scripts in the project's hooks/ directory use it, and so does `install` into
# a hooks directory that is part of the working tree (its files are committed, and a
# path to this machine's Python would be wrong on every other machine).
PORTABLE_RUNNER = "git failres hooks run"

_LEGACY_FIRST = {
    # pre-merge-commit: a legacy hook that refuses stops the merge; failres has nothing to add then.
    "pre-merge-commit": '    "$legacy" "$@" || exit $?\n',
    # post-merge: the merge is done whatever the legacy hook says; failres still records it.
    "post-merge": '    "$legacy" "$@"\n    status=$?\n',
}


def _sh_quoted(text: str) -> str:
    """`text` for inside a double-quoted sh string: nothing in it is expanded or run."""
    for special in ("\\", '"', "$", "`"):
        text = text.replace(special, "\\" + special)
    return text


_FIX_INSTALLED = _sh_quoted("run `git failres hooks install` with the failres you use now")
_FIX_PORTABLE = _sh_quoted("put failres on PATH (`pip install failres`, or the bin/ of its virtual environment)")


def installed_runner(python: str | None = None) -> str:
    """The command an installed hook runs: this very interpreter, on the light entry module."""
    return f"{shlex.quote(python or sys.executable)} -m failres.hooks.run"


def _python_of(runner: str) -> str | None:
    """The interpreter in an installed runner (`<python> -m failres.hooks.run`); None for the portable one."""
    if runner == PORTABLE_RUNNER:
        return None
    words = shlex.split(runner)
    # Hooks written before the modules were regrouped call `-m failres.hookrun`: the same runner.
    return words[0] if words[1:] in (["-m", "failres.hooks.run"], ["-m", "failres.hookrun"]) else None


def _reach(hook: str, runner: str) -> str:
    """The lines that hand over to failres, and say so, in one line, when it cannot be reached."""
    python = _python_of(runner)
    if python is None:
        return (
            "if ! command -v git-failres >/dev/null 2>&1; then\n"
            f'    failres_cannot "git-failres is not on PATH" "{_FIX_PORTABLE}"\n'
            f'elif ! out="$({runner} {hook} "$@" </dev/null 2>&1)"; then\n'
            f'    failres_cannot "\\`{runner} {hook}\\` failed ($(printf \'%s\' "$out" | tail -n 1))" '
            f'"{_FIX_PORTABLE}"\n'
        )
    return (
        f"python={shlex.quote(python)}\n"
        'if [ ! -x "$python" ]; then\n'
        f'    failres_cannot "the Python that installed this hook is gone ($python)" "{_FIX_INSTALLED}"\n'
        f'elif ! out="$("$python" -m failres.hooks.run {hook} "$@" </dev/null 2>&1)"; then\n'
        f'    failres_cannot "$python cannot run failres ($(printf \'%s\' "$out" | tail -n 1))" "{_FIX_INSTALLED}"\n'
    )


def render_script(hook: str, runner: str) -> str:
    """The sh script for `hook`; `runner` is the command that takes `HOOK ARGS...`.

    When failres cannot be reached (the interpreter it was installed with is gone,
    `git-failres` is not on PATH) the script says so in one line on stderr, naming the
    cause and the fix, appends it to `<git-common-dir>/failres/log/hooks.log`, and
    still exits with the legacy hook's status: the merge goes on either way.
    """
    if hook not in HOOKS:
        msg = f"failres has no {hook} hook (it installs {', '.join(HOOKS)})"
        raise UsageError(msg)
    # Only post-merge speaks up: both hooks run on most merges, and one line is enough.
    say = 'printf \'%s\\n\' "$line" >&2\n    ' if hook == "post-merge" else ""
    return (
        "#!/bin/sh\n"
        f"{MARKER}: {hook}\n"
        "# Written by `git failres hooks install`; `git failres hooks uninstall` puts back what was here.\n"
        f"# A hook that was here before lives on as {hook}{LEGACY_SUFFIX} and runs first, with the same\n"
        "# arguments and input; its exit status is this hook's. failres runs after it and cannot\n"
        "# change that status: a merge is never blocked because failres had a bad day.\n"
        "# Change this file and it is yours: failres will neither overwrite nor remove it.\n"
        "status=0\n"
        f'legacy="$(dirname "$0")/{hook}{LEGACY_SUFFIX}"\n'
        'if [ -x "$legacy" ]; then\n'
        f"{_LEGACY_FIRST[hook]}"
        "fi\n"
        "failres_cannot() {\n"
        f'    line="failres: cannot run the {hook} hook: $1 (the merge itself is fine). Fix: $2; then '
        '\\`git failres label\\` stamps what this merge landed"\n'
        f"    {say}"
        'log="$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null)"\n'
        '    [ -n "$log" ] && { mkdir -p "$log/failres/log" && printf -- \'--- %s\\n%s\\n\' '
        '"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$line" >>"$log/failres/log/hooks.log"; } 2>/dev/null\n'
        "}\n"
        f"{_reach(hook, runner)}"
        'elif [ -n "$out" ]; then\n'
        '    printf \'%s\\n\' "$out" >&2\n'
        "fi\n"
        'exit "$status"\n'
    )


def _render_first_version(hook: str, runner: str) -> str:
    """The script earlier versions of failres installed, recognised so that it is updated in place."""
    return (
        "#!/bin/sh\n"
        f"{MARKER}: {hook}\n"
        "# Written by `git failres hooks install`; `git failres hooks uninstall` puts back what was here.\n"
        f"# A hook that was here before lives on as {hook}{LEGACY_SUFFIX} and runs first, with the same\n"
        "# arguments and input; its exit status is this hook's. failres runs after it and cannot\n"
        "# change that status: a merge is never blocked because failres had a bad day.\n"
        "status=0\n"
        f'legacy="$(dirname "$0")/{hook}{LEGACY_SUFFIX}"\n'
        'if [ -x "$legacy" ]; then\n'
        f"{_LEGACY_FIRST[hook]}"
        "fi\n"
        f'{runner} {hook} "$@" </dev/null || :\n'
        'exit "$status"\n'
    )


_FIRST_VERSION_RUNNER = re.compile(r'(?m)^(?P<runner>.+) (?P<hook>[a-z-]+) "\$@" </dev/null \|\| :$')
_INSTALLED_PYTHON = re.compile(r"(?m)^python=(?P<python>.+)$")


def is_ours(path: Path) -> bool:
    """True when the file at `path` is a failres hook script (by its marker line), edited or not."""
    try:
        with path.open("rb") as handle:
            head = handle.read(512)
    except OSError:
        return False
    return MARKER.encode() in head


def _as_written(hook: str, text: str) -> bool:
    """Whether `text` is exactly a script failres writes for `hook` (any runner, any version).

    A script with the marker that matches none is one a person changed: it is theirs now.
    """
    renderings = [render_script(hook, PORTABLE_RUNNER)]
    found = _INSTALLED_PYTHON.search(text)
    if found:
        try:
            renderings.append(render_script(hook, installed_runner(shlex.split(found.group("python"))[0])))
        except (ValueError, IndexError):
            pass
    first = _FIRST_VERSION_RUNNER.search(text)
    if first and first.group("hook") == hook:
        renderings.append(_render_first_version(hook, first.group("runner")))
    return text in renderings


def hook_state(hook: str, path: Path) -> str:
    """"absent", "ours" (as failres wrote it), "edited" (ours, changed by a person) or "foreign"."""
    if not (path.exists() or path.is_symlink()):
        return "absent"
    if path.is_symlink() or not is_ours(path):
        return "foreign"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return "edited"
    return "ours" if _as_written(hook, text) else "edited"


@dataclass(frozen=True)
class HooksPlace:
    """Where git looks for hooks, and whether that is this repository's own."""

    path: Path
    configured: bool  # core.hooksPath is set
    inside: bool  # within the repository's worktree or git directory
    tracked: bool = False  # within the working tree: its files are committed and travel to other machines


@dataclass(frozen=True)
class HookAction:
    hook: str
    action: str  # installed, updated, unchanged, chained, kept-edited, removed, restored, not-ours, absent
    path: Path


@dataclass(frozen=True)
class HooksReport:
    place: HooksPlace
    actions: tuple[HookAction, ...]
    portable: bool = False  # the scripts call `git failres` from PATH rather than a fixed interpreter
    notes: tuple[str, ...] = ()  # what a person should know about what was (not) done


def _within(path: Path, root: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return False
    return True


def hooks_place(top: Path) -> HooksPlace:
    """The hooks directory git uses for the repository whose main worktree is `top`."""
    path = Path(run_git(top, ["rev-parse", "--path-format=absolute", "--git-path", "hooks"]).decode().strip())
    common = Path(run_git(top, ["rev-parse", "--path-format=absolute", "--git-common-dir"]).decode().strip())
    configured = try_git(top, ["config", "--get", "core.hooksPath"]).returncode == 0
    in_git_dir = _within(path, common)
    in_tree = _within(path, top) and not in_git_dir
    return HooksPlace(path, configured, in_tree or in_git_dir, tracked=in_tree)


def _refuse_shared(place: HooksPlace) -> None:
    msg = f"core.hooksPath points to {place.path}, outside this repository"
    hint = ("hooks there run for every repository that shares the directory; to install anyway run "
            "`git failres hooks install --shared`, or call `git failres hooks run post-merge \"$@\"` from "
            "your own post-merge hook")
    raise UsageError(msg, hint=hint)


def _write_script(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.failres-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)


def _edited_note(path: Path) -> str:
    return (f"{path} is a failres hook you changed: kept as it is (failres's part runs only if your "
            "version still calls it); remove it yourself to let failres write its own")


def install_hooks(top: Path, *, shared: bool = False, python: str | None = None) -> HooksReport:
    """Install (or update) failres's hooks, chaining to whatever hook was there.

    A hook failres wrote and a person changed since is theirs: kept, never overwritten.
    Into a hooks directory inside the working tree (`core.hooksPath = .githooks`, say),
    the scripts call `git failres` from PATH: those files are committed, and a path to
    this machine's interpreter would be wrong everywhere else.
    """
    place = hooks_place(top)
    if place.configured and not place.inside and not shared:
        _refuse_shared(place)
    states = {hook: hook_state(hook, place.path / hook) for hook in HOOKS}
    # Check every hook before changing any, so a refusal leaves everything as it was.
    for hook, state in states.items():
        path = place.path / hook
        legacy = place.path / f"{hook}{LEGACY_SUFFIX}"
        if state == "foreign" and (legacy.exists() or legacy.is_symlink()):
            msg = f"both {path} and {legacy.name} exist, and neither is failres's"
            raise UsageError(msg, hint=f"merge them into one hook (or remove {legacy.name}), then install again")
    place.path.mkdir(parents=True, exist_ok=True)
    portable = place.tracked
    runner = PORTABLE_RUNNER if portable else installed_runner(python)
    actions, notes = [], []
    if portable:
        notes.append(f"{place.path} is inside the working tree (its files are committed): the hooks call "
                     "`git failres` from PATH, so every machine needs failres installed there")
    for hook, state in states.items():
        path = place.path / hook
        text = render_script(hook, runner)
        if state == "edited":
            actions.append(HookAction(hook, "kept-edited", path))
            notes.append(_edited_note(path))
        elif state == "ours":
            same = path.read_text(encoding="utf-8") == text
            if not same:
                _write_script(path, text)
            actions.append(HookAction(hook, "unchanged" if same else "updated", path))
        elif state == "foreign":
            os.rename(path, place.path / f"{hook}{LEGACY_SUFFIX}")
            _write_script(path, text)
            actions.append(HookAction(hook, "chained", path))
        else:
            _write_script(path, text)
            actions.append(HookAction(hook, "installed", path))
    return HooksReport(place, tuple(actions), portable, tuple(notes))


def uninstall_hooks(top: Path) -> HooksReport:
    """Remove failres's hooks and put back the hooks they had moved aside, byte for byte.

    Only a hook exactly as failres wrote it is removed; one a person changed stays,
    and so does the hook it chains to.
    """
    place = hooks_place(top)
    actions, notes = [], []
    for hook in HOOKS:
        path = place.path / hook
        legacy = place.path / f"{hook}{LEGACY_SUFFIX}"
        state = hook_state(hook, path)
        if state == "foreign":
            actions.append(HookAction(hook, "not-ours", path))  # someone else's now: leave both alone
            continue
        if state == "edited":
            actions.append(HookAction(hook, "kept-edited", path))
            notes.append(_edited_note(path))
            continue
        if state == "ours":
            path.unlink()
        if legacy.exists() or legacy.is_symlink():
            os.rename(legacy, path)
            actions.append(HookAction(hook, "restored", path))
        else:
            actions.append(HookAction(hook, "removed" if state == "ours" else "absent", path))
    return HooksReport(place, tuple(actions), notes=tuple(notes))
