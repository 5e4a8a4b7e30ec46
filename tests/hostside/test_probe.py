"""The engine-down probe never runs a program the seat wrote: the kept paths it would run from are
rebuilt first, and the health command runs in the task's world where there is one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from project import Project

HEALTH = "node_modules/.bin/agent-health"
SETUP = (f"import os; os.makedirs('node_modules/.bin', exist_ok=True); "
         f"open('{HEALTH}', 'w').write('#!/bin/sh\\nexit 0\\n'); os.chmod('{HEALTH}', 0o755)")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


@pytest.mark.usefixtures("seat_world")
def test_a_health_program_the_seat_rewrote_in_a_kept_dir_never_runs_on_the_host(project: Project, cli,
                                                                               tmp_path: Path):
    marker = tmp_path / "ran-on-the-host"
    planted = f"#!/bin/sh\\ntouch {marker}\\nexit 0\\n"
    seat = (f"printf '{planted}' > {HEALTH}; chmod +x {HEALTH}; "
            "echo 'Error: connect ECONNREFUSED 127.0.0.1:443' >&2; exit 1")
    project.configure(implementer=[{"shell": [seat], "exit": 1}], health=[HEALTH])
    toml = project.top / ".failres.toml"
    toml.write_text(toml.read_text().replace(
        'cwd = "worktree"', f'cwd = "worktree"\nsetup = {json.dumps([sys.executable, "-c", SETUP])}\n'
                            'keep = ["node_modules/"]', 1))
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 1, result.out + result.err
    assert not marker.exists()
    assert "task-committed" not in project.types()
