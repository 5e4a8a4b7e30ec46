"""Whether this machine gives failres a seat world, asked once per process.

A world is always a user namespace (root's too: `layout.isolation_words`), so bubblewrap
needs user namespaces, and some Ubuntu releases (AppArmor), hardened kernels and many
containers switch them off; macOS has no bubblewrap at all. So the program being
installed proves nothing: a tiny world with the very namespaces (its network's too) and
dropped capabilities a seat's has is started (`true` inside, a few milliseconds), and its
failure, in bubblewrap's own words with the kernel setting behind it, is the reason `doctor`
and the run's one warning line give.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from lessons.frozen import record
from failres.sandbox.layout import isolation_words

# Names the bubblewrap program to use; a path, or a name on PATH (tests point it at
# nothing to see how failres runs on a machine without one).
PROGRAM_VARIABLE = "FAILRES_BWRAP"
KIND = "bubblewrap"
_TRIAL_TIMEOUT_SECONDS = 10.0
# The kernel settings that decide whether an unprivileged user namespace can be made.
USERNS_SYSCTLS = ("kernel.apparmor_restrict_unprivileged_userns", "kernel.unprivileged_userns_clone",
                  "user.max_user_namespaces")


@record
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
    # Every world has its own network namespace (`layout_argv`; the network a command may have goes
    # through failres's bridge), and bringing up its loopback is a step a kernel can refuse on its
    # own: Ubuntu 24.04's AppArmor says "loopback: Failed RTM_NEWADDR" where the ids were mapped. A
    # trial without one found a world, and every seat then "crashed" before it ran.
    trial = [found, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
             "--unshare-pid", "--die-with-parent", "--new-session", *isolation_words(os.getuid(), os.getgid()),
             "--unshare-net", "--", "true"]
    try:
        done = subprocess.run(trial, stdin=subprocess.DEVNULL, capture_output=True, timeout=_TRIAL_TIMEOUT_SECONDS,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Availability(False, "", f"bubblewrap could not start: {error}")
    if done.returncode != 0:
        words = done.stderr.decode("utf-8", "replace").strip().splitlines()
        said = words[-1] if words else f"exit {done.returncode}"
        cause, fix = namespace_cause(_userns_sysctls())
        return Availability(False, "", f"bubblewrap cannot make a world here: {said[:200]}{cause}", fix=fix)
    # The version is asked for by `described` (doctor), not here: every run probes, and
    # `bwrap --version` was one more process a run started only to know what it never says.
    return Availability(True, KIND, f"bubblewrap at {found}", program=found)


def described(found: Availability) -> Availability:
    """`found` with the version of its bubblewrap in `why`, as doctor shows it."""
    if not found.available or not found.program:
        return found
    return replace(found, why=f"bubblewrap {_version(found.program)} at {found.program}")


def namespace_cause(sysctls: Mapping[str, str]) -> tuple[str, str]:
    """What in the kernel's settings keeps user namespaces from bubblewrap, and the fix (pure).

    `sysctls` holds the values this machine has (a setting it lacks is absent). Where
    none of them says no, the cause is elsewhere (a container's seccomp profile, a
    nested namespace limit), and the fix names all three so a person can look.
    """
    if sysctls.get("kernel.apparmor_restrict_unprivileged_userns") == "1":
        return ("; kernel.apparmor_restrict_unprivileged_userns = 1 (AppArmor keeps unprivileged user namespaces "
                "from programs without a profile allowing them)",
                "sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile for bwrap "
                "with `userns,` (Ubuntu: /etc/apparmor.d/bwrap-userns-restrict)")
    if sysctls.get("kernel.unprivileged_userns_clone") == "0":
        return ("; kernel.unprivileged_userns_clone = 0 (unprivileged user namespaces are off)",
                "sudo sysctl kernel.unprivileged_userns_clone=1")
    if sysctls.get("user.max_user_namespaces") == "0":
        return ("; user.max_user_namespaces = 0 (no user namespace may be made)",
                "sudo sysctl user.max_user_namespaces=15000")
    return ("", "allow user namespaces (sysctl kernel.apparmor_restrict_unprivileged_userns=0, "
                "kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0; a container needs "
                "a seccomp profile that allows unshare and clone of a user namespace)")


def _userns_sysctls(root: Path = Path("/proc/sys")) -> dict[str, str]:
    found = {}
    for name in USERNS_SYSCTLS:
        try:
            found[name] = (root / name.replace(".", "/")).read_text(encoding="ascii").strip()
        except (OSError, ValueError):
            continue
    return found


def _version(program: str) -> str:
    try:
        done = subprocess.run([program, "--version"], capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return done.stdout.decode("utf-8", "replace").strip().rpartition(" ")[2] or "?"
