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
  them (`<python> -m failres.hookrun`), which imports only what a non-task merge
  needs. Whatever failres does, the script's status is the legacy hook's (0
  without one): failres never blocks a person's merge.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from failres.errors import UsageError
from failres.gitops.git import run_git, try_git
from failres.hookrun import HOOKS

MARKER = "# failres-managed-hook"
LEGACY_SUFFIX = ".legacy"
# What the scripts in the project's hooks/ directory call: whichever `git failres`
# is on PATH. `install` writes the faster absolute form instead.
PORTABLE_RUNNER = "git failres hooks run"

_LEGACY_FIRST = {
    # pre-merge-commit: a legacy hook that refuses stops the merge; failres has nothing to add then.
    "pre-merge-commit": '    "$legacy" "$@" || exit $?\n',
    # post-merge: the merge is done whatever the legacy hook says; failres still records it.
    "post-merge": '    "$legacy" "$@"\n    status=$?\n',
}


def installed_runner(python: str | None = None) -> str:
    """The command an installed hook runs: this very interpreter, on the light entry module."""
    return f"{shlex.quote(python or sys.executable)} -m failres.hookrun"


def render_script(hook: str, runner: str) -> str:
    """The sh script for `hook`; `runner` is the command that takes `HOOK ARGS...`."""
    if hook not in HOOKS:
        msg = f"failres has no {hook} hook (it installs {', '.join(HOOKS)})"
        raise UsageError(msg)
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


def is_ours(path: Path) -> bool:
    """True when the file at `path` is a failres hook script (by its marker line)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(512)
    except OSError:
        return False
    return MARKER.encode() in head


@dataclass(frozen=True)
class HooksPlace:
    """Where git looks for hooks, and whether that is this repository's own."""

    path: Path
    configured: bool  # core.hooksPath is set
    inside: bool  # within the repository's worktree or git directory


@dataclass(frozen=True)
class HookAction:
    hook: str
    action: str  # installed, updated, unchanged, chained, removed, restored, not-ours, absent
    path: Path


@dataclass(frozen=True)
class HooksReport:
    place: HooksPlace
    actions: tuple[HookAction, ...]


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
    return HooksPlace(path, configured, _within(path, top) or _within(path, common))


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


def install_hooks(top: Path, *, shared: bool = False, python: str | None = None) -> HooksReport:
    """Install (or update) failres's hooks, chaining to whatever hook was there."""
    place = hooks_place(top)
    if place.configured and not place.inside and not shared:
        _refuse_shared(place)
    # Check every hook before changing any, so a refusal leaves everything as it was.
    for hook in HOOKS:
        path = place.path / hook
        legacy = place.path / f"{hook}{LEGACY_SUFFIX}"
        if (path.exists() or path.is_symlink()) and not is_ours(path) and (legacy.exists() or legacy.is_symlink()):
            msg = f"both {path} and {legacy.name} exist, and neither is failres's"
            raise UsageError(msg, hint=f"merge them into one hook (or remove {legacy.name}), then install again")
    place.path.mkdir(parents=True, exist_ok=True)
    actions = []
    runner = installed_runner(python)
    for hook in HOOKS:
        path = place.path / hook
        text = render_script(hook, runner)
        if is_ours(path):
            same = path.read_text(encoding="utf-8", errors="replace") == text
            if not same:
                _write_script(path, text)
            actions.append(HookAction(hook, "unchanged" if same else "updated", path))
            continue
        if path.exists() or path.is_symlink():
            os.rename(path, place.path / f"{hook}{LEGACY_SUFFIX}")
            _write_script(path, text)
            actions.append(HookAction(hook, "chained", path))
            continue
        _write_script(path, text)
        actions.append(HookAction(hook, "installed", path))
    return HooksReport(place, tuple(actions))


def uninstall_hooks(top: Path) -> HooksReport:
    """Remove failres's hooks and put back the hooks they had moved aside, byte for byte."""
    place = hooks_place(top)
    actions = []
    for hook in HOOKS:
        path = place.path / hook
        legacy = place.path / f"{hook}{LEGACY_SUFFIX}"
        present = path.exists() or path.is_symlink()
        if present and not is_ours(path):
            actions.append(HookAction(hook, "not-ours", path))  # someone else's now: leave both alone
            continue
        if present:
            path.unlink()
        if legacy.exists() or legacy.is_symlink():
            os.rename(legacy, path)
            actions.append(HookAction(hook, "restored", path))
        else:
            actions.append(HookAction(hook, "removed" if present else "absent", path))
    return HooksReport(place, tuple(actions))
