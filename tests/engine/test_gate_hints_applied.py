"""A gate that cannot run at the head is told, to the word, the gate `init` writes here in its place
(as `doctor` tells it): those lines, applied as written, make the next run commit the right fix."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, run_failres
from sandbox_machines import without_bubblewrap
from sandbox_projects import PY_FIXED, configure, plan, python_project, seat, the_test_site_packages

WRITE_FIX = f"import pathlib, sys\nsys.stdin.read()\npathlib.Path('src/calc/__init__.py').write_text({PY_FIXED!r})\n"
INIT_WRITES = re.compile(r"\[gates\.tests\] (command = \[[^\]]*\])(?:, (env = \{[^}]*\}))?")


def gate(command: list[str], extra: str = "") -> str:
    return "\n".join(["[gates.tests]", f"command = {json.dumps(command)}", 'cwd = "worktree"', 'timeout = "60s"',
                      extra, "[sandbox]", f"read = {json.dumps([the_test_site_packages()])}", ""])


def quarantined_message(top: Path) -> str:
    from failres.journal import read_journal
    from lessons.storage.store import Store

    events = [e for e in read_journal(Store(top), "rw").for_task("t1") if e["type"] == "quarantined"]
    assert events and events[-1]["failClass"] == "gate-unavailable", events
    return events[-1]["message"]


@pytest.mark.parametrize(("command", "world"), [(["tox", "-q"], "auto"),
                                                (["python3", "-m", "pytest", "-q"], "bwrap-missing")],
                         ids=["tox-missing", "python3-without-pytest-and-no-world"])
def test_the_gate_init_writes_here_is_named_in_the_refusal_and_applied_it_commits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], world: str):
    """A trial's tox.ini made the gate `tox -q` on a machine without tox; a python3 of PATH's own
    has no pytest on many machines: each quarantined every task with a fix that was not a line."""
    if world == "bwrap-missing":
        without_bubblewrap(monkeypatch)
    top = tmp_path / "calc"
    top.mkdir()
    python_project(top)
    (top / "tox.ini").write_text("[tox]\nenvlist = py311\n")
    git(top, "add", "tox.ini")
    git(top, "commit", "-q", "-m", "tox")
    bare = tmp_path / "bare-python"  # python3 without pytest, and no tox, first on PATH
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    env = {**os.environ, "PATH": os.pathsep.join([str(bare / "bin"), "/usr/bin", "/bin"])}
    implementer = seat(tmp_path, "fix", WRITE_FIX)
    configure(top, gate=gate(command), implementer=implementer)
    the_plan = plan(tmp_path / "plan.toml", ["src/calc/__init__.py"])
    assert run_failres(top, "run", str(the_plan), "--quiet", env=env).returncode == 1
    message = quarantined_message(top)
    found = INIT_WRITES.search(message)
    assert found is not None, message
    assert found.group(0) == ('[gates.tests] command = [".venv/bin/python", "-m", "pytest", "-q"], '
                              'env = { PYTHONPATH = "src" }')

    # The lines as the refusal gives them, in place of the gate's command.
    configure(top, gate=gate([], "\n".join(filter(None, found.groups()))).replace("command = []\n", ""),
              implementer=implementer)
    done = run_failres(top, "run", str(the_plan), "--quiet", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(top, "show", "failres/rw/t1:src/calc/__init__.py") == PY_FIXED
