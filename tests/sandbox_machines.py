"""The machines a seat world cannot stand on, made for a test: one without bubblewrap, and one
where bubblewrap is installed and runs but the kernel refuses the namespaces every world needs —
Ubuntu 24.04 with its AppArmor restriction, `unprivileged_userns_clone = 0`, many containers.
failres must judge a project the same on all of them: they differ in nothing but the reason it
gives.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from failres.sandbox import probe

MISSING = "/nonexistent/bwrap"
# What Ubuntu 24.04's bubblewrap says when AppArmor refuses it the namespace, by the step that
# fails: mapping the ids into the new user namespace, or, where the world has its own network
# namespace, bringing up that namespace's loopback (both are reported from that release).
REFUSALS = {"uid-map": "bwrap: setting up uid map: Permission denied",
            "loopback": "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted"}
REFUSAL = REFUSALS["uid-map"]
# Unprivileged, bubblewrap makes a user namespace for every world it starts (and failres asks
# for one even as root: `layout.isolation_words`), so every start is refused; only a question
# about the program itself is answered.
REFUSING_BWRAP = f"""#!/bin/sh
[ "$1" = --version ] && {{ echo 'bubblewrap 0.9.0'; exit 0; }}
echo '{REFUSAL}' >&2
exit 1
"""
# Refused only where the world has a network namespace: every other world starts, with the
# machine's own bubblewrap, so a check that does not ask for one is told a world can be made.
REFUSING_LOOPBACK_BWRAP = f"""#!/bin/sh
for word in "$@"; do
  [ "$word" = --unshare-net ] && {{ echo '{REFUSALS["loopback"]}' >&2; exit 1; }}
done
exec {{bwrap}} "$@"
"""


def without_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as one where bubblewrap is not installed."""
    monkeypatch.setenv(probe.PROGRAM_VARIABLE, MISSING)


def refusing_user_namespaces(folder: Path, monkeypatch: pytest.MonkeyPatch, at: str = "uid-map") -> Path:
    """This machine as Ubuntu 24.04's: the bwrap failres finds (written into `folder`) runs, and
    refuses every world in bubblewrap's own words — `at` the uid map, or at the loopback of a
    world's network namespace (that one needs a machine whose bubblewrap starts the other worlds)."""
    program = folder / "bwrap"
    folder.mkdir(parents=True, exist_ok=True)
    if at == "loopback":
        found = probe.machine_sandbox()
        if not found.available:
            pytest.skip(f"no seat world on this machine to refuse only in part: {found.why}")
        program.write_text(REFUSING_LOOPBACK_BWRAP.replace("{bwrap}", shlex.quote(found.program)))
    else:
        program.write_text(REFUSING_BWRAP)
    program.chmod(0o755)
    monkeypatch.setenv(probe.PROGRAM_VARIABLE, str(program))
    return program
