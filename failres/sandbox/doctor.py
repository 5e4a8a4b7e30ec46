"""`git failres doctor`: what this machine gives failres, one line each, with a fix.

A person setting failres up (or wondering why a run warned) wants one screen that
says: is there a seat world here and if not why, are git and Python new enough, can
each configured agent start and is it logged in, and can each gate's program be found.
Every check only looks, or runs what the person configured to be asked (a binding's
`health`, with a timeout), and writes nothing, so it is safe to run anywhere, inside a
repository or not.

Its exit status is the answer scripts read: a trial run printed "no" for the agent and
exited 0, so a setup script went on to a run that could not dispatch. So every line is
*needed* or not (a missing world is a "no" that matters only where `[sandbox] mode =
"required"`), and doctor exits 1 when a needed line says "no" (`DoctorReport.usable`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from failres.agents.keys import AGENT_KEYS
from failres.agents.program_path import find_program, is_templated, not_found_detail, not_found_fix
from failres.config.model import Config
from failres.sandbox.doctor_configured import Check, GateCheck, HealthRun, gate_check, run_health
from failres.sandbox.probe import described, machine_sandbox

MIN_PYTHON = (3, 11)
MIN_GIT = (2, 31)


@dataclass(frozen=True)
class AgentCheck:
    binding: str
    program: str
    path: str | None
    logged_in: bool | None  # None: failres cannot tell for this program
    login: str
    fix: str
    health: HealthRun | None = None  # the binding's `health` command, run; None where it has none

    @property
    def usable(self) -> bool:
        """Found, and logged in as far as failres can tell; a health command that was run decides the login."""
        if self.path is None:
            return False
        if self.health is not None and self.health.passed is not None:
            return self.health.passed
        return self.logged_in is not False

    def line(self) -> Check:
        where = f"{self.path}" if self.path else not_found_detail(self.program)
        said = f"; {self.health.detail}" if self.health is not None else ""
        return Check(f"agent {self.binding}", self.usable, f"{where}; {self.login}{said}", self.fix)

    def as_json(self) -> dict:
        return {"binding": self.binding, "program": self.program, "onPath": self.path is not None,
                "path": self.path, "loggedIn": self.logged_in, "login": self.login, "fix": self.fix or None,
                "health": None if self.health is None else self.health.as_json(), "usable": self.usable}


@dataclass(frozen=True)
class DoctorReport:
    checks: tuple[Check, ...]
    agents: tuple[AgentCheck, ...]
    sandbox: dict
    git: str
    python: str
    gates: tuple[GateCheck, ...] = ()

    def lines(self) -> list[Check]:
        return [*self.checks, *(agent.line() for agent in self.agents), *(gate.line() for gate in self.gates)]

    @property
    def usable(self) -> bool:
        """Whether everything configured can be used here: no needed line says "no"."""
        return all(check.ok or not check.needed for check in self.lines())

    def document(self) -> dict:
        return {"sandbox": self.sandbox, "git": {"version": self.git}, "python": {"version": self.python,
                                                                                "executable": sys.executable},
                "agents": [a.as_json() for a in self.agents], "gates": [g.as_json() for g in self.gates],
                "usable": self.usable, "checks": [c.as_json() for c in self.lines()]}


def doctor_report(config: Config | None, environ: Mapping[str, str], top: Path | None = None) -> DoctorReport:
    found = described(machine_sandbox())
    required = config is not None and config.sandbox.mode == "required"
    why = found.why if found.available else f"no seat world: {found.why}"
    if required and not found.available:
        why += ' ([sandbox] mode = "required": every run is refused until there is one)'
    checks = [Check("sandbox", found.available, why, found.fix, needed=required)]
    if config is not None and config.sandbox.mode == "off":
        checks[0] = Check("sandbox", found.available, f"{checks[0].detail} ([sandbox] mode = \"off\" here)",
                          'set [sandbox] mode = "auto" to use it' if found.available else found.fix, needed=False)
    git_version = _git_version()
    git_ok = git_version is not None and _numbers(git_version) >= MIN_GIT
    checks.append(Check("git", git_ok, git_version or "git is not on PATH",
                        "" if git_ok else f"install git {'.'.join(map(str, MIN_GIT))} or later"))
    python_version = ".".join(map(str, sys.version_info[:3]))
    python_ok = sys.version_info[:2] >= MIN_PYTHON
    checks.append(Check("python", python_ok, f"{python_version} ({sys.executable})",
                        "" if python_ok else "failres needs Python 3.11 or later"))
    if config is None:
        checks.append(Check("config", True, "not in a repository with .failres.toml: no agents to check "
                            "(`git failres init --agent claude|codex|aider` writes one)"))
    checks += configured_absences(config)
    agents = tuple(_agent_check(name, binding.command, binding.env, environ, top, binding.health)
                   for name, binding in (config.bindings.items() if config is not None else ()))
    checks += [replace(check, needed=required) for check in apparmor_userns_checks(found, read_apparmor_userns())]
    in_world = found.available and config is not None and config.sandbox.mode != "off"
    gates = tuple(gate_check(gate, top, environ, in_world=in_world)
                  for gate in (config.gates.values() if config is not None else ()))
    return DoctorReport(tuple(checks), agents, found.as_json(), git_version or "", python_version, gates)


def configured_absences(config: Config | None) -> list[Check]:
    """A "no" for what a run needs and the configuration does not name: a plan whose tasks carry
    no exact patch refuses to start without an implementer seat, and nothing judges without a gate."""
    if config is None:
        return []
    found = []
    if not config.seats.implementer:
        found.append(Check("seats", False, "no implementer seat is configured: nothing would make the change",
                           'a [bindings.NAME] with its command and [seats] implementer = "NAME" (git failres init '
                           "--force --agent claude|codex|aider writes one that runs)"))
    if not config.gates:
        found.append(Check("gates", False, "no gate is configured: nothing would judge the tasks",
                           "a [gates.NAME] whose exit 0 means green (git failres init --force guesses one from "
                           "your project's files)"))
    return found


def _git_version() -> str | None:
    try:
        done = subprocess.run(["git", "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = done.stdout.split()
    return words[2] if len(words) >= 3 and done.returncode == 0 else None


def _numbers(version: str) -> tuple[int, ...]:
    parts = []
    for word in version.split(".")[:3]:
        digits = "".join(c for c in word if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


_INSTALL = {
    "claude": "npm install -g @anthropic-ai/claude-code",
    "codex": "npm install -g @openai/codex",
    "aider": "pipx install aider-chat",
}
_KEYS = AGENT_KEYS
_LOGIN_HINT = {
    "claude": "run `claude` once and /login, or set ANTHROPIC_API_KEY",
    "codex": "run `codex login`, or set OPENAI_API_KEY",
    "aider": "set an API key (OPENAI_API_KEY, ANTHROPIC_API_KEY ...) or put one in ~/.aider.conf.yml",
}


def _agent_check(name: str, command: tuple[str, ...], env: Mapping[str, str],
                 environ: Mapping[str, str], top: Path | None = None, health: tuple[str, ...] = ()) -> AgentCheck:
    program = command[0] if command else ""
    path = None
    if program and not is_templated(program):
        path = find_program(program, top, environ.get("PATH", os.defpath))
    probe = run_health(health, env, environ, top) if path is not None and health else None
    agent = next((a for a in _INSTALL if a in Path(program).name), None)
    if agent is None:
        fix = "" if path else not_found_fix(program)
        if probe is not None and probe.passed is False:
            fix = f"run `{' '.join(health)}` by hand and fix what it says"
        return AgentCheck(name, program, path, None, "login not checked (not a known agent CLI)", fix, probe)
    fix = "" if path else not_found_fix(program, _INSTALL[agent])
    logged_in, login = _login(agent, command, env, environ)
    failed = probe.passed is False if probe is not None else not logged_in
    if failed and not fix:
        fix = _LOGIN_HINT[agent]
    return AgentCheck(name, program, path, logged_in, login, fix, probe)


def _login(agent: str, command: tuple[str, ...], env: Mapping[str, str],
           environ: Mapping[str, str]) -> tuple[bool, str]:
    for key in _KEYS[agent]:
        if env.get(key) or environ.get(key):
            return True, f"logged in ({key} is set)"
    home = Path(environ.get("HOME") or Path.home())
    if agent == "aider":
        if any(flag in command for flag in ("--api-key", "--openai-api-key", "--anthropic-api-key")):
            return True, "logged in (an API key on its command line)"
        for name in (".aider.conf.yml", ".env"):
            if _mentions_key(home / name):
                return True, f"logged in (an API key in ~/{name})"
        return False, "not logged in: no API key found"
    variable, default, files = (("CLAUDE_CONFIG_DIR", ".claude", (".credentials.json",)) if agent == "claude"
                                else ("CODEX_HOME", ".codex", ("auth.json",)))
    where = Path(environ[variable]).expanduser() if environ.get(variable) else home / default
    for file in files:
        if (where / file).is_file():
            return True, f"logged in ({where / file})"
    if agent == "claude" and _mentions(where / "settings.json", "apiKeyHelper"):
        return True, f"logged in (an apiKeyHelper in {where / 'settings.json'})"
    return False, f"not logged in: no {files[0]} in {where}"


def _mentions_key(path: Path) -> bool:
    return _mentions(path, "api-key") or _mentions(path, "API_KEY")


def _mentions(path: Path, word: str) -> bool:
    try:
        return word in path.read_text(encoding="utf-8", errors="replace")[:65536]
    except OSError:
        return False


# Ubuntu 24.04 (and its CI runners) ship with this set: AppArmor then refuses an
# unprivileged user namespace to any program without a profile that allows one, and
# bubblewrap's own words ("setting up uid map: Permission denied") do not say why.
APPARMOR_USERNS = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")


def read_apparmor_userns(path: Path | None = None) -> str | None:
    """The restriction's value ("0", "1"), or None where the kernel has no such switch."""
    try:
        return (path or APPARMOR_USERNS).read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None


def apparmor_userns_checks(found, restriction: str | None) -> list[Check]:
    """One line naming AppArmor's restriction and its fix, when bubblewrap is there but
    cannot make a world and the restriction is on; none otherwise."""
    if found.available or restriction != "1" or not found.why.startswith("bubblewrap cannot make a world"):
        return []
    return [Check("apparmor", False,
                  "kernel.apparmor_restrict_unprivileged_userns = 1: AppArmor refuses bubblewrap the user "
                  "namespace a seat world needs",
                  "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (until reboot; a file in "
                  "/etc/sysctl.d keeps it), or give bwrap an AppArmor profile that allows userns")]
