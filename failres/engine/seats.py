"""One seat dispatch under the scope guard, and the probe of a binding that looks down.

Everything here is one step of the loop with its side effects (a subprocess, the
worktree, the journal); the decisions about what the step means are the pure
functions in `taxonomy`, `resolver` and `scope`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from failres import gitops
from failres.config import BindingConfig, Config, render_command
from failres.engine.process import ProcessResult, run_process
from failres.engine.scope import match_scope
from failres.engine.taxonomy import ScopeRequest, parse_scope_requests

PROBE_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class Dispatch:
    """What one seat dispatch did, as the scope guard and the classifier see it."""

    seat: str
    binding: str
    result: ProcessResult
    changed: tuple[str, ...]
    rejected: tuple[str, ...]
    requests: tuple[ScopeRequest, ...]
    baseline: gitops.Baseline

    @property
    def failed(self) -> bool:
        return self.result.timed_out or self.result.exit_code != 0


def seat_env(values: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """The seat's environment: ours, the binding's own, and the contract's FAILRES_* variables."""
    env = dict(os.environ)
    env.update(extra)
    env.update({
        "FAILRES_SLUG": values["slug"],
        "FAILRES_TASK": values["task"],
        "FAILRES_MODE": values["mode"],
        "FAILRES_ATTEMPT": values["attempt"],
        "FAILRES_WORKTREE": values["worktree"],
        "FAILRES_REPO": values["repo"],
        "FAILRES_PROMPT_FILE": values["prompt_file"],
    })
    return env


def dispatch_seat(
    *,
    config: Config,
    seat: str,
    binding_name: str,
    worktree: Path,
    prompt: str,
    prompt_file: Path,
    values: Mapping[str, str],
    allow: tuple[str, ...],
) -> Dispatch:
    """Run the seat once in the task worktree and read from git every path it changed."""
    binding = config.bindings[binding_name]
    prompt_file.parent.mkdir(parents=True, exist_ok=True)
    prompt_file.write_text(prompt, encoding="utf-8")
    baseline = gitops.capture_baseline(worktree)
    result = run_process(
        render_command(binding.command, values),
        cwd=worktree,
        env=seat_env(values, binding.env),
        stdin_data=prompt.encode("utf-8"),
        timeout=binding.timeout,
        head_bytes=config.output.head_bytes,
        tail_bytes=config.output.tail_bytes,
    )
    changes = gitops.changed_paths(worktree, baseline)
    _, rejected = match_scope(changes.paths, allow, config.scope.protected)
    return Dispatch(
        seat=seat,
        binding=binding_name,
        result=result,
        changed=tuple(changes.paths),
        rejected=tuple(rejected),
        requests=parse_scope_requests(result.text),
        baseline=baseline,
    )


def probe_binding(binding: BindingConfig, cwd: Path, env: Mapping[str, str]) -> tuple[bool, str]:
    """Is the engine behind a binding reachable? Its `health` command, else can it start at all.

    A probe only looks: it never restarts a service or a daemon (that is a person's call).
    """
    if binding.health:
        result = run_process(binding.health, cwd=cwd, env=dict(env), stdin_data=None,
                             timeout=min(binding.timeout, PROBE_TIMEOUT_SECONDS), head_bytes=4096, tail_bytes=4096)
        if result.exit_code == 0:
            return True, "health command exited 0"
        detail = "timed out" if result.timed_out else f"exited {result.exit_code}"
        return False, f"health command {detail}: {result.text.strip()[:200]}"
    program = binding.command[0] if binding.command else ""
    if "{" in program:
        return False, "the binding's program is a placeholder; configure a health command"
    found = shutil.which(program, path=env.get("PATH")) if os.sep not in program else (
        program if os.access(program, os.X_OK) else None)
    if found:
        return True, f"{program} can be started"
    return False, f"{program} is not an executable on PATH"


def probe_until_healthy(binding: BindingConfig, *, attempts: int, backoff: float, cwd: Path,
                        env: Mapping[str, str], sleep: Callable[[float], None],
                        record: Callable[[int, bool, str], None]) -> bool:
    """Up to `attempts` probes, `backoff` apart; never more than configured."""
    for attempt in range(1, attempts + 1):
        if attempt > 1:
            sleep(backoff)
        healthy, detail = probe_binding(binding, cwd, env)
        record(attempt, healthy, detail)
        if healthy:
            return True
    return False
