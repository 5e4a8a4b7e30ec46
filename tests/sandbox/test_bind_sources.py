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


def world_for(project: Project, tmp_path: Path):
    from failres.config.loading import load_config
    from failres.sandbox.world import SeatWorld

    project.configure(implementer=[{}])
    workspace = tmp_path / "workspaces" / "rr" / "t1"
    workspace.mkdir(parents=True)
    return SeatWorld.for_task(load_config(project.top), top=project.top, workspace=workspace,
                              git_dir=project.top / ".git", workspaces_root=tmp_path / "workspaces",
                              dispatch_root=tmp_path / "workspaces" / "rr" / "t1.dispatch")


def bound(words: list[str]) -> set[str]:
    return {words[i + 1] for i, word in enumerate(words[:-1]) if word in ("--ro-bind", "--ro-bind-try", "--bind")}


def test_a_workspace_programs_shebang_is_never_read_for_a_bind_and_a_path_programs_is(project: Project,
                                                                                       tmp_path: Path):
    world = world_for(project, tmp_path)
    other, person = tmp_path / "other-project", tmp_path / "person-tools"
    (other).mkdir()
    (other / "gradlew").write_text("#!/bin/sh\n")
    (other / "gradlew").chmod(0o755)
    (person / "bin").mkdir(parents=True)
    (person / "libexec").mkdir()
    (person / "libexec" / "helper").write_text("#!/bin/sh\n")
    (person / "libexec" / "helper").chmod(0o755)
    for place, name in ((world.workspace, "run"), (person / "bin", "tool")):
        target = other / "gradlew" if name == "run" else person / "libexec" / "helper"
        (place / name).write_text(f"#!/usr/bin/env -S /bin/sh {target}\n")
        (place / name).chmod(0o755)
    seat = world.wrap(["./run"], env={"PATH": os.environ["PATH"]})
    assert not any(str(other) in path for path in bound(seat))
    persons = world.wrap(["tool"], env={"PATH": f"{person / 'bin'}{os.pathsep}{os.environ['PATH']}"})
    assert str(person / "libexec" / "helper") in bound(persons) or str(person / "libexec") in bound(persons)


def test_the_kept_paths_are_laid_read_only_over_the_workspace_and_a_kept_link_is_not(project: Project,
                                                                                    tmp_path: Path):
    world = world_for(project, tmp_path)
    (world.workspace / ".venv").mkdir()
    elsewhere = tmp_path / "secrets"
    elsewhere.mkdir()
    (world.workspace / "node_modules").symlink_to(elsewhere)
    words = world.wrap(["true"], env={"PATH": os.environ["PATH"]}, kept=[".venv/", "node_modules/"])
    pairs = [(words[i + 1], words[i + 2]) for i, word in enumerate(words) if word == "--ro-bind"]
    venv = str(world.workspace / ".venv")
    assert (venv, str(project.top / ".venv")) in pairs and (venv, venv) in pairs
    workspace_bind = next(i for i, w in enumerate(words) if w == "--bind" and words[i + 1] == str(world.workspace))
    kept_bind = next(i for i, w in enumerate(words) if w == "--ro-bind" and words[i + 1] == venv)
    assert kept_bind > workspace_bind  # laid over the read-write workspace, not under it
    assert not any(str(elsewhere) in word or word.endswith("node_modules") for word in words)
