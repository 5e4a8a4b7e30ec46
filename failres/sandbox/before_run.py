"""What a run says about its seat world before the first dispatch, once.

Where the world runs, nothing. Where it cannot (no bubblewrap, user namespaces switched
off, macOS) under `mode = "auto"`, or where a person turned it off, seats and gates run
as plain processes, and two things must be said before anything is judged: that the
tamper check is then the only wall, and — the trap that commits a wrong fix green —
whether the person's environment dirs point into their checkout, so that the gate
would import the person's files instead of the workspace's. A run with
`mode = "required"` and no world is refused (exit 2) before anything is written.
"""

from __future__ import annotations

import logging
from pathlib import Path

from failres.config.model import Config
from failres.sandbox.environment import environment_dirs, fix_advice, outside_environments, pointing_into_checkout
from failres.sandbox.probe import machine_sandbox
from failres.sandbox.world import world_wanted

log = logging.getLogger("failres.sandbox")
# How many of the paths found are named; the rest are counted.
_SHOWN = 3


def notices_before_run(config: Config, top: Path) -> list[str]:
    """The warning lines for this run (empty when seats run in a world); ConfigError when refused."""
    if world_wanted(config):
        return []
    lines = []
    if config.sandbox.mode == "auto":
        found = machine_sandbox()
        lines.append(f"no seat world on this machine ({found.why}): seats and gates run as plain processes, "
                     "and the tamper check is the only wall; see `git failres doctor`")
    world = world_fix(config)
    found_in = pointing_into_checkout(top, (*environment_dirs(config, top), *outside_environments(config, top)))
    if found_in:
        named = "; ".join(f"{p.where} {p.what}" for p in found_in[:_SHOWN])
        more = f" (and {len(found_in) - _SHOWN} more)" if len(found_in) > _SHOWN else ""
        lines.append(f"the environment points into your checkout, so a gate would judge your files, not the "
                     f"workspace's: {named}{more}; {fix_advice(found_in, top, world)}")
    return lines


def world_fix(config: Config) -> str:
    """What gives this run a seat world: the probe's fix for this machine (the package where
    bubblewrap is missing, the kernel setting where it is refused), or `mode = "auto"` where the
    person turned the world off."""
    if config.sandbox.mode == "off":
        return 'set [sandbox] mode = "auto"'
    return machine_sandbox().fix or "see `git failres doctor`"


def announce_before_run(config: Config, top: Path) -> None:
    """Say `notices_before_run` as warning lines (each once, for this run)."""
    for line in notices_before_run(config, top):
        log.warning("%s", line)
