"""Installing the `SessionEnd` hook into Claude Code's `.claude/settings.local.json`.

The local file, never the committed `.claude/settings.json`: the hook's command names
this machine's Python, which means nothing on a colleague's. The file is the person's
(permissions, other hooks, an `env`), so the hook is merged in: every other key and
hook is kept, failres's own entry is recognised by its module name and updated in
place, and a second install writes nothing. A file that does not parse, or whose
`hooks` are not the shape Claude Code reads, is refused before anything is written:
rewriting what failres cannot read would lose the person's settings.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from failres.agents.session_hook import HOOK_MODULE
from failres.errors import UsageError

SETTINGS_FILE = Path(".claude") / "settings.local.json"
EVENT = "SessionEnd"
# Seconds Claude Code allows the command; it needs well under one (a note, then exit).
HOOK_TIMEOUT = 10


def hook_command(python: str | None = None) -> str:
    return f"{shlex.quote(python or sys.executable)} -m {HOOK_MODULE}"


def _is_ours(hook: object) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and HOOK_MODULE in hook["command"]


def merged_settings(existing: str | None, command: str, where: str = str(SETTINGS_FILE)) -> str | None:
    """The settings text with failres's SessionEnd hook in it; None when it is already there as is.

    UsageError naming `where` when `existing` is not settings failres can merge into.
    """
    document: object = {}
    if existing is not None and existing.strip():
        try:
            document = json.loads(existing)
        except ValueError as bad:
            msg = f"{where} is not valid JSON ({bad.msg} at line {bad.lineno}, column {bad.colno}); not changed"
            raise UsageError(msg, hint="fix or remove the file, then run init --session-hooks again") from None
    if not isinstance(document, dict):
        msg = f"{where} is not a JSON object; not changed"
        raise UsageError(msg)
    hooks = document.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        msg = f'{where}: "hooks" is not an object; not changed'
        raise UsageError(msg)
    groups = hooks.setdefault(EVENT, [])
    if not isinstance(groups, list) or not all(isinstance(g, dict) and isinstance(g.get("hooks", []), list)
                                               for g in groups):
        msg = f'{where}: "hooks.{EVENT}" is not a list of {{"hooks": [...]}} groups; not changed'
        raise UsageError(msg)
    wanted = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT}
    ours = [(group, i) for group in groups for i, hook in enumerate(group.get("hooks", [])) if _is_ours(hook)]
    if ours:
        if all(group["hooks"][i] == wanted for group, i in ours) and len(ours) == 1:
            return None
        first_group, first = ours[0]
        first_group["hooks"][first] = wanted
        for group, i in reversed(ours[1:]):  # a hand-copied duplicate would note every session twice
            del group["hooks"][i]
    else:
        groups.append({"hooks": [wanted]})
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class SettingsPlan:
    path: Path
    shown: str
    text: str | None  # None: nothing to write


def plan_session_hooks(top: Path, python: str | None = None) -> SettingsPlan:
    """What installing the hook would write; UsageError (nothing written) when refused."""
    top = top.resolve()
    path = top / SETTINGS_FILE
    shown = SETTINGS_FILE.as_posix()
    resolved = path.resolve()
    if not resolved.is_relative_to(top):
        msg = f"{shown} leads out of the repository (to {resolved}); not changed"
        raise UsageError(msg, hint="failres writes only this repository's own local settings")
    if resolved.parent.exists() and not resolved.parent.is_dir():
        msg = f"{SETTINGS_FILE.parent.as_posix()} is not a directory; not changed"
        raise UsageError(msg)
    existing = None
    if path.exists() or path.is_symlink():
        if not resolved.is_file():
            msg = f"{shown} is not a regular file; not changed"
            raise UsageError(msg)
        try:
            existing = resolved.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            msg = f"{shown} is not UTF-8 text; not changed"
            raise UsageError(msg) from None
    return SettingsPlan(resolved, shown, merged_settings(existing, hook_command(python), shown))


def write_session_hooks(top: Path, plan: SettingsPlan) -> bool:
    """Write the plan (temporary file, then rename); keep the file out of `git add .`."""
    if plan.text is None:
        return False
    plan.path.parent.mkdir(parents=True, exist_ok=True)
    tmp = plan.path.with_name(f".{plan.path.name}.failres-{os.getpid()}.tmp")
    tmp.write_text(plan.text, encoding="utf-8")
    os.replace(tmp, plan.path)
    _exclude_from_git(top, plan.shown)
    return True


def _exclude_from_git(top: Path, shown: str) -> None:
    """Claude Code ignores the local file where it creates it; where failres does, it adds
    it to `.git/info/exclude` (the repository's own, uncommitted ignore list)."""
    ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", shown], cwd=top,
                             capture_output=True).returncode == 0
    if ignored:
        return
    common = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"], cwd=top,
                            capture_output=True, text=True, check=True).stdout.strip()
    exclude = Path(common) / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    before = exclude.read_text(encoding="utf-8", errors="surrogateescape") if exclude.exists() else ""
    separator = "" if not before or before.endswith("\n") else "\n"
    with exclude.open("a", encoding="utf-8", errors="surrogateescape") as out:
        out.write(f"{separator}/{shown}\n")
