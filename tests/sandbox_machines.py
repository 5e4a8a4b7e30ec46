"""The machines a seat world cannot stand on, made for a test: one without bubblewrap, and one
where bubblewrap is installed and runs but the kernel refuses it the user namespace every world
needs — Ubuntu 24.04 with its AppArmor restriction, `unprivileged_userns_clone = 0`, many
containers. failres must judge a project the same on both: it cannot tell them apart by
anything but the reason it gives.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failres.sandbox import probe

MISSING = "/nonexistent/bwrap"
# What Ubuntu 24.04's bubblewrap says when AppArmor refuses it the namespace.
REFUSAL = "bwrap: setting up uid map: Permission denied"
# Unprivileged, bubblewrap makes a user namespace for every world it starts (and failres asks
# for one even as root: `layout.isolation_words`), so every start is refused; only a question
# about the program itself is answered.
REFUSING_BWRAP = f"""#!/bin/sh
[ "$1" = --version ] && {{ echo 'bubblewrap 0.9.0'; exit 0; }}
echo '{REFUSAL}' >&2
exit 1
"""


def without_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as one where bubblewrap is not installed."""
    monkeypatch.setenv(probe.PROGRAM_VARIABLE, MISSING)


def refusing_user_namespaces(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This machine as Ubuntu 24.04's: the bwrap failres finds (written into `folder`) runs, and
    refuses every world in bubblewrap's own words."""
    program = folder / "bwrap"
    folder.mkdir(parents=True, exist_ok=True)
    program.write_text(REFUSING_BWRAP)
    program.chmod(0o755)
    monkeypatch.setenv(probe.PROGRAM_VARIABLE, str(program))
    return program
