"""`doctor`'s look at what the configuration names: each gate's program, each binding's `health`.

A gate whose program is not there quarantines every task `gate-unavailable` at its first
run; doctor says so before, on a line of its own per gate, by the rule `run` applies
(`agents.program_path`). It does not run the gate: a test suite takes minutes, and
`git failres run PLAN --dry-run --preflight` runs it at the integration head, as a run would.

A binding's `health` is the command the person wrote to ask whether the agent can work
(`claude auth status`); doctor runs it as the probe would, with a timeout, in the person's
own environment: a value the run fills per dispatch (`{dispatch_dir}` in `env`) is left
out, so the agent reads the person's own login, the one a dispatch links in.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from failres.agents.program_path import find_program, is_templated, not_found_detail, not_found_fix

HEALTH_TIMEOUT = 20.0


@dataclass(frozen=True)
class Check:
    """One line of the report."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    needed: bool = True  # False: a "no" here is said, but what is configured still works

    def as_json(self) -> dict:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix or None,
                "needed": self.needed}


@dataclass(frozen=True)
class HealthRun:
    """A binding's `health` command, run once."""

    command: tuple[str, ...]
    passed: bool | None  # None: not run (it names a placeholder only a run fills)
    detail: str

    def as_json(self) -> dict:
        return {"command": list(self.command), "passed": self.passed, "detail": self.detail}


@dataclass(frozen=True)
class GateCheck:
    """Whether a gate's program (and its setup's) can be found here."""

    gate: str
    program: str
    path: str | None  # where it is; None when it cannot be found, or is known only at run time
    templated: bool = False
    setup_program: str = ""
    setup_path: str | None = None
    problem: str = ""  # found, and still cannot run here (init's words: no pytest in it, tox without a test env)
    instead: str = ""  # the lines init writes here in place of this gate ("" when it has none to offer)

    @property
    def runs(self) -> bool:
        setup_found = not self.setup_program or self.setup_path is not None or is_templated(self.setup_program)
        return (self.templated or self.path is not None) and setup_found and not self.problem

    def line(self) -> Check:
        name = f"gate {self.gate}"
        init_writes = f"; or what init writes here: {self.instead}" if self.instead else ""
        if self.problem:
            fix = self.instead or f"in [gates.{self.gate}]: name a command that runs the tests here"
            return Check(name, False, f"cannot run: {self.problem}", fix)
        if not self.runs:
            missing = self.program if not self.templated and self.path is None else self.setup_program
            what = "its program" if missing == self.program else "its setup's program"
            return Check(name, False, f"cannot run: {what} {not_found_detail(missing)}",
                         f"in [gates.{self.gate}]: {not_found_fix(missing)}{init_writes}")
        where = "is found when the run fills its placeholders" if self.templated else f"found: {self.path}"
        return Check(name, True, f'runs: "{self.program}" {where} (not run here; git failres run PLAN '
                                 "--dry-run --preflight runs it at the integration head)")

    def as_json(self) -> dict:
        return {"gate": self.gate, "program": self.program, "path": self.path, "runs": self.runs,
                "problem": self.problem or None, "instead": self.instead or None}


def gate_check(gate, top: Path | None, environ: Mapping[str, str], *, in_world: bool = False) -> GateCheck:
    """The gate judged here as `init` judges the gate it guesses (`agents.gate_here`), with the gate
    init would write in its place as the fix; `in_world`: runs here judge in the seat world."""
    from failres.agents.gate_here import ProjectLook, gate_lines

    program = gate.command[0] if gate.command else ""
    path_env = environ.get("PATH", os.defpath)
    templated = is_templated(program)
    path = None if templated else find_program(program, top, path_env)
    setup = gate.setup[0] if gate.setup else ""
    setup_path = find_program(setup, top, path_env) if setup and not is_templated(setup) else None
    if templated or any(is_templated(word) for word in gate.command):
        return GateCheck(gate.name, program, path, templated, setup, setup_path)
    look = ProjectLook.of(top, path=path_env)
    problem = look.why_gate_cannot_run(gate.command, in_world=in_world) if path is not None else None
    instead = look.gate_instead(gate.command, gate.env, in_world=in_world) if path is None or problem else None
    return GateCheck(gate.name, program, path, templated, setup, setup_path, problem or "",
                     gate_lines(gate.name, instead) if instead is not None else "")


def run_health(command: tuple[str, ...], env: Mapping[str, str], environ: Mapping[str, str],
               top: Path | None) -> HealthRun:
    """Run the binding's health command as the person would; its exit status is the answer."""
    shown = " ".join(command)
    if any(is_templated(argument) for argument in command):
        return HealthRun(command, None, f"health `{shown}` not run: it names a placeholder only a run fills")
    own = {name: value for name, value in env.items() if not is_templated(value)}
    try:
        done = subprocess.run(list(command), cwd=top, env={**environ, **own}, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, errors="replace", timeout=HEALTH_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return HealthRun(command, False, f"health `{shown}` did not answer within {HEALTH_TIMEOUT:.0f} s")
    except OSError as error:
        return HealthRun(command, False, f"health `{shown}` cannot start: {error.strerror or error}")
    if done.returncode == 0:
        return HealthRun(command, True, f"health `{shown}` passed")
    said = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    tail = f": {said[-1][:160]}" if said else ""
    return HealthRun(command, False, f"health `{shown}` failed (exit {done.returncode}){tail}")
