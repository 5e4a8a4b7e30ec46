"""A gate that writes where the seat world lets nothing be written is refused before any seat,
with the fix that lets it run, not judged red and paid a fixer for.

tox keeps its logs in `.tox/` whenever it runs, and the world lends the person's environment
directories read-only: `tox -e py3.11` there dies with "Read-only file system" before a test
runs, on every tree. Judged red, the implementer and the fixer were dispatched and the task
quarantined `gate-not-green-after-fixer`, a right fix never committed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project
from failres.engine.preflight import RED, UNAVAILABLE, HeadRun, judge_at_head
from failres.sandbox.probe import machine_sandbox

# What tox 4 printed in a world, its environment directory lent read-only.
TOX_SAID = """py3.11: internal error
Traceback (most recent call last):
  File "/usr/lib/python3/dist-packages/tox/util/path.py", line 98, in _empty_dir_fd
    os.unlink(entry.name, dir_fd=dir_fd)
OSError: [Errno 30] Read-only file system: '2-uv-sync.log'
  py3.11: FAIL code 2 (0.00 seconds)
  evaluation failed :( (0.05 seconds)
"""


def tox_at_head(in_world: bool) -> HeadRun:
    return HeadRun("tests", ("tox", "-q", "-e", "py3.11"), 2, False, False, TOX_SAID, "/w", ("pkg",),
                   in_world=in_world, read_only=(".tox", ".venv"))


def test_tox_refused_its_own_directory_is_told_to_run_its_environments_interpreter():
    verdict = judge_at_head(tox_at_head(in_world=True), (), in_scope=lambda path: False)
    assert verdict.kind == UNAVAILABLE
    assert "([Errno 30] Read-only file system: '2-uv-sync.log')" in verdict.cause
    assert verdict.fix.startswith("tox writes into .tox/ whenever it runs")
    assert ('[gates.tests] command = [".tox/py3.11/bin/python", "-m", "pytest", "-q"], '
            'env = { PYTHONPATH = "src" }') in verdict.fix
    assert "tox -e py3.11 --notest" in verdict.fix


def test_without_a_world_the_same_words_are_an_ordinary_red():
    """Outside the world nothing of the person's is read-only: a test that met such an error is red."""
    assert judge_at_head(tox_at_head(in_world=False), (), in_scope=lambda path: False).kind == RED


# A gate that keeps a cache in the checkout's `.venv/`, as tox keeps its logs in `.tox/`.
CACHING_GATE = ("import pathlib, subprocess, sys\n"
                "pathlib.Path('.venv/gate-cache').write_text('seen')\n"
                "sys.exit(subprocess.call([sys.executable, 'tests/check.py']))\n")


@pytest.mark.skipif(not machine_sandbox().available, reason="no seat world on this machine")
def test_in_the_world_a_gate_writing_into_a_lent_directory_dispatches_no_seat(tmp_path: Path, cli):
    project = Project.create(tmp_path)
    (project.top / ".venv").mkdir()  # untracked: lent to the world read-only
    (project.top / "gate.py").write_text(CACHING_GATE)
    git(project.top, "add", "gate.py")
    git(project.top, "commit", "-q", "-m", "a gate that caches")
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}],
                      extra=f'[gates.cached]\ncommand = {json.dumps([sys.executable, "gate.py"])}\n'
                            'cwd = "worktree"\ntimeout = "60s"\n')
    plan = project.plan()
    plan.write_text(plan.read_text() + 'gate = "cached"\n')
    result = cli(project.top, "run", str(plan), "--quiet")
    assert result.code == 1
    assert project.calls("impl") == 0
    event = [e for e in project.events() if e["type"] == "quarantined"][-1]
    assert event["failClass"] == "gate-unavailable"
    assert "Read-only file system" in event["message"] and "the world shows read-only .venv/" in event["message"]
    assert not (project.top / ".venv" / "gate-cache").exists()  # the person's directory, untouched
