"""Running the gate (the judge) and its one-time setup.

The gate is the person's own command, so it is trusted with the repository's path
(`{repo}`, `FAILRES_REPO`); it runs the seat's code, so its whole process tree is
frozen and killed when it ends, and a writing failres command run below it is refused
as a seat's is (its environment carries `GATE_MARKER`, see `processes.ancestry`). A gate whose program cannot be started at all (missing, not
executable) is a configuration error, not a red verdict: `gate-unavailable`, and no
fixer is dispatched to chase it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from lessons.frozen import record
from failres.agents.keys import AGENT_KEY_VARIABLES
from failres.config.model import GateConfig, OutputConfig
from failres.processes.ancestry import GATE_MARKER
from failres.processes.process import ProcessResult, run_process
from failres.engine.prompts import JudgeInvocation
from failres.engine.seats import seat_env
from failres.config.placeholders import render_command


@record
class GateRun:
    result: ProcessResult
    meta: dict

    @property
    def unavailable_message(self) -> str | None:
        if not self.result.not_found:
            return None
        argv = self.meta.get("argv") or []
        return (f"gate {self.meta.get('gate')} cannot run: {self.result.text.strip()} "
                f"(command: {' '.join(argv)}); fix [gates.{self.meta.get('gate')}] command in .failres.toml")


def gate_env(values: Mapping[str, str], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A gate's environment: a seat's, the gate's own `env`, and where the repository is
    (the person wrote the gate); but no agent's API key (`AGENT_KEY_VARIABLES`) unless the
    gate's own `env` sets it: the gate runs tests the agent wrote, which would read it."""
    own = extra or {}
    env = {name: value for name, value in seat_env(values, own).items()
           if name not in AGENT_KEY_VARIABLES or name in own}
    env["FAILRES_REPO"] = values["repo"]
    env[GATE_MARKER] = "1"
    return env


def run_gate_process(gate: GateConfig, judge: JudgeInvocation, *, env: Mapping[str, str],
                     cancelled: Callable[[], bool], output: OutputConfig, world=None,
                     workspace: Path | None = None) -> GateRun:
    """Run the judge; in a `world` (judge and env already as the world sees them) from `workspace`."""
    # The gate is the person's command: no supervisor (its whole tree is frozen and
    # killed when it ends, and what left it is swept; in a world its PID namespace ends
    # with it too). Its environment carries a gate marker, so a writing command the
    # seat's code runs below it is refused.
    command, cwd = judge.argv, Path(judge.cwd)
    if world is not None and workspace is not None:
        command, cwd = tuple(world.wrap(judge.argv, env=env, network=gate.network, role="gate",
                                        who=f"[gates.{gate.name}]", kept=gate.keep)), workspace
    result = run_process(command, cwd=cwd, env=env, stdin_data=None, timeout=gate.timeout,
                         head_bytes=output.head_bytes, tail_bytes=output.tail_bytes, cancelled=cancelled,
                         supervised=False)
    result = replace(result, argv=tuple(judge.argv))
    meta = {"gate": gate.name, "argv": list(judge.argv), "cwd": judge.cwd, "exitCode": result.exit_code,
            "timedOut": result.timed_out, "durationMs": int(result.duration * 1000), "notFound": result.not_found}
    return GateRun(result, meta)


def run_setup(gate: GateConfig, *, values: Mapping[str, str], cwd: Path, cancelled: Callable[[], bool],
              output: OutputConfig, world=None, redirect=None) -> str | None:
    """Run the gate's setup once in a new workspace; None when it worked, else what went wrong.

    It runs the workspace's code (a build, an install) like the gate: in the world, when
    there is one, where the person's environment dirs are read-only.
    """
    if world is not None:
        values = world.inside_values(values)
    command = render_command(gate.setup, values)
    env = gate_env(values, gate.env)
    if redirect is not None:  # no world: the workspace's import roots first (`sandbox.redirect`)
        from failres.sandbox.redirect import redirected_env

        env = redirected_env(redirect, env)
    if world is not None:
        command = world.wrap(command, env=env, network=gate.network, role="setup", who=f"[gates.{gate.name}]")
    result = run_process(command, cwd=cwd, env=env, stdin_data=None,
                         timeout=gate.timeout, head_bytes=output.head_bytes, tail_bytes=output.tail_bytes,
                         cancelled=cancelled, supervised=False)
    if result.exit_code == 0 and not result.timed_out:
        return None
    if result.not_found:
        return f"cannot run: {result.text.strip()}"
    status = "timed out" if result.timed_out else f"exited {result.exit_code}"
    tail = result.text.strip().splitlines()[-1:] or ["no output"]
    return f"{status}: {tail[0][:200]}"
