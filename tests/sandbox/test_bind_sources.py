"""What the world binds comes from the person's configuration, PATH and the system, never from a file
a seat wrote; and a PATH prefix shows its programs and libraries, not its data."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project
from failres.sandbox.probe import machine_sandbox

pytestmark = pytest.mark.skipif(not machine_sandbox().available, reason="no seat world on this machine")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setattr(Project, "sandbox_mode", "required")  # what is bound matters only in a world
    return Project.create(tmp_path)


def test_a_seats_shebang_naming_another_project_binds_none_of_it(project: Project, cli, tmp_path: Path):
    marker = f"OTHER-NOTES-{uuid.uuid4().hex}"
    other = tmp_path / "other-project"
    other.mkdir()
    (other / "NOTES.md").write_text(marker + "\n")
    (other / "gradlew").write_text(f"#!/bin/sh\ncat {other}/NOTES.md\nexit 1\n")
    (other / "gradlew").chmod(0o755)
    gate = project.top / "tests" / "run"
    gate.write_text("#!/bin/sh\nexec python3 tests/check.py\n")
    gate.chmod(0o755)
    git(project.top, "add", "tests/run")
    git(project.top, "commit", "-q", "-m", "a gate script")
    hijack = f"#!/usr/bin/env -S /bin/sh {other}/gradlew\n"
    seat = {"write": {"tests/run": hijack}, "chmod_x": ["tests/run"]}
    project.configure(implementer=[seat], fixer=[{"write": {"src/calc.py": FIXED}}])
    toml = project.top / ".failres.toml"
    text = toml.read_text().split("\n")
    text[1] = f"command = {json.dumps(['tests/run'])}"
    toml.write_text("\n".join(text))
    cli(project.top, "run", str(project.plan(files=["src/calc.py", "tests/run"])), "--quiet")
    for log in project.dispatch_logs():
        for path in log.iterdir():
            assert marker not in path.read_text(errors="replace"), path
    for path in (project.top / ".git" / "failres").rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert marker.encode() not in path.read_bytes(), path


def test_a_local_bin_on_path_shows_no_local_share(project: Project, cli, isolated_home: Path,
                                                  monkeypatch: pytest.MonkeyPatch):
    marker = f"HISTORY-{uuid.uuid4().hex}"
    local = isolated_home / ".local"
    (local / "bin").mkdir(parents=True)
    (local / "share" / "keyrings").mkdir(parents=True)
    (local / "share" / "keyrings" / "login.keyring").write_text(marker + "\n")
    (local / "bin" / "tool").write_text("#!/bin/sh\nexit 0\n")
    (local / "bin" / "tool").chmod(0o755)
    monkeypatch.setenv("PATH", f"{local / 'bin'}{os.pathsep}{os.environ['PATH']}")
    look = (f"cat {local}/share/keyrings/login.keyring > src/calc.py 2>/dev/null || true; "
            f"ls {local}/bin")
    project.configure(implementer=[{"shell": [look]}])
    cli(project.top, "run", str(project.plan(files=["src/calc.py"])), "--quiet")
    [log] = project.dispatch_logs()
    seat_log = (log / "seat.log").read_text()
    assert "tool" in seat_log  # the PATH directory itself is there
    assert marker not in seat_log
    for path in (project.top / ".git" / "failres").rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert marker.encode() not in path.read_bytes(), path
    shown = git(project.top, "log", "-p", "--all")
    assert marker not in shown
