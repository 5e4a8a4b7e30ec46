"""Is the engine behind a binding reachable? Asked as the seat would run, never on the seat's files.

After a seat failed as if its engine were down, its binding's `health` command runs (else:
can its program start at all). The probe once ran with the workspace as the failed seat
left it and no world: the binding's `node_modules/.bin/agent --version` was a program the
seat had written into a kept `node_modules/`, and it ran on the host with the person's
rights. Now the caller puts the workspace back and rebuilds the kept paths first, and the
health command runs in the task's world where there is one (kept paths read-only there,
as for a seat). The program check without a health command reads only the person's `PATH`
and configuration, and a program named relative to the workspace is looked at without
following a link.

A probe only looks: it never restarts a service or a daemon (that is a person's call).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePath

from failres.config.model import BindingConfig
from failres.hostside import files
from failres.processes.process import run_process
from lessons.redaction.redact import redacted_head

PROBE_TIMEOUT_SECONDS = 60.0


def probe_binding(binding: BindingConfig, cwd: Path, env: Mapping[str, str], *, world=None,
                  kept: Sequence[str] = ()) -> tuple[bool, str]:
    """Is the engine behind a binding reachable? Its `health` command, else can it start at all.

    `world` (a `sandbox.world.SeatWorld`), when given, is where the health command runs,
    with the `kept` paths of the workspace read-only.
    """
    if binding.health:
        command = list(binding.health)
        if world is not None:
            command = world.wrap(command, env=env, network=binding.network, read=binding.read,
                                 write=[env.get("FAILRES_DISPATCH_DIR") or "", *binding.write], kept=kept)
        result = run_process(command, cwd=cwd, env=dict(env), stdin_data=None,
                             timeout=min(binding.timeout, PROBE_TIMEOUT_SECONDS), head_bytes=4096, tail_bytes=4096)
        if result.exit_code == 0:
            return True, "health command exited 0"
        detail = "timed out" if result.timed_out else f"exited {result.exit_code}"
        return False, f"health command {detail}: {redacted_head(result.text.strip(), 200)}"
    program = binding.command[0] if binding.command else ""
    if "{" in program:
        return False, "the binding's program is a placeholder; configure a health command"
    if os.sep not in program:
        found = files.which_on_path(program, env.get("PATH"))
    elif os.path.isabs(program):
        found = program if files.is_executable_file(program) else None
    else:
        found = program if files.executable_beneath(cwd, PurePath(os.path.normpath(program))) else None
    if found:
        return True, f"{program} can be started"
    return False, f"{program} is not an executable on PATH"


def probe_until_healthy(binding: BindingConfig, *, attempts: int, backoff: float, cwd: Path,
                        env: Mapping[str, str], sleep: Callable[[float], None],
                        record: Callable[[int, bool, str], None], world=None, kept: Sequence[str] = ()) -> bool:
    """Up to `attempts` probes, `backoff` apart; never more than configured."""
    for attempt in range(1, attempts + 1):
        if attempt > 1:
            sleep(backoff)
        healthy, detail = probe_binding(binding, cwd, env, world=world, kept=kept)
        record(attempt, healthy, detail)
        if healthy:
            return True
    return False
