"""Whether this machine gives failres a seat world, asked once per process.

bubblewrap needs unprivileged user namespaces (or root); some Ubuntu releases and many
containers switch them off, and macOS has no bubblewrap at all. So the program being
installed proves nothing: a tiny world is started (`true` inside, a few milliseconds)
and its failure, in bubblewrap's own words, is the reason `doctor` and the run's one
warning line give.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

# Names the bubblewrap program to use; a path, or a name on PATH (tests point it at
# nothing to see how failres runs on a machine without one).
PROGRAM_VARIABLE = "FAILRES_BWRAP"
KIND = "bubblewrap"
_TRIAL_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class Availability:
    """What this machine gives: a world (`kind`), or why not."""

    available: bool
    kind: str  # "bubblewrap", or "" when none
    why: str  # why not, or what was found
    program: str = ""  # the bwrap executable, when available
    fix: str = ""  # what a person can do about it

    def as_json(self) -> dict:
        return {"available": self.available, "kind": self.kind or None, "why": self.why}


def machine_sandbox() -> Availability:
    """The answer for this process's environment (cached per bubblewrap program)."""
    return _probe(os.environ.get(PROGRAM_VARIABLE, "bwrap"), sys.platform)


@functools.lru_cache(maxsize=8)
def _probe(program: str, platform: str) -> Availability:
    if platform == "darwin":
        return Availability(False, "", "macOS has no bubblewrap; a Seatbelt world is planned, not built",
                            fix="run untrusted agents as another user, or in a Linux VM or container")
    if not platform.startswith("linux"):
        return Availability(False, "", f"no seat world on {platform}")
    found = shutil.which(program) if os.sep not in program else (program if os.access(program, os.X_OK) else None)
    if found is None:
        return Availability(False, "", f"bubblewrap ({program}) is not installed",
                            fix="install it: apt-get install bubblewrap (dnf install bubblewrap, pacman -S bubblewrap)")
    trial = [found, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
             "--unshare-pid", "--die-with-parent", "--new-session", "--", "true"]
    try:
        done = subprocess.run(trial, stdin=subprocess.DEVNULL, capture_output=True, timeout=_TRIAL_TIMEOUT_SECONDS,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Availability(False, "", f"bubblewrap could not start: {error}")
    if done.returncode != 0:
        words = done.stderr.decode("utf-8", "replace").strip().splitlines()
        said = words[-1] if words else f"exit {done.returncode}"
        return Availability(False, "", f"bubblewrap cannot make a world here: {said[:200]}",
                            fix="allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
                                "or on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0)")
    return Availability(True, KIND, f"bubblewrap {_version(found)} at {found}", program=found)


def _version(program: str) -> str:
    try:
        done = subprocess.run([program, "--version"], capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return done.stdout.decode("utf-8", "replace").strip().rpartition(" ")[2] or "?"
