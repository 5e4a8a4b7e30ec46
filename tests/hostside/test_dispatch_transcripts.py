"""A dispatch's transcripts are collected with no link followed, and never count as a person's evidence."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import ROOT
from failres.agents.homes import TranscriptPlace
from failres.hostside.transcripts import find_transcripts
from project import FIXED, Project

INTERACTIVE = ROOT / "tests/data/transcripts/claude-code/interactive-461d04c2-44ed-4b78-92d8-a1c75fd423a6.jsonl"
CLAUDE_HOME = '[bindings.impl.env]\nCLAUDE_CONFIG_DIR = "{dispatch_dir}/claude"\n'


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def run(cli, project: Project):
    return cli(project.top, "run", str(project.plan()), "--quiet")


@pytest.mark.usefixtures("seat_world")
def test_a_link_into_another_projects_sessions_is_never_followed(project: Project, cli, isolated_home: Path):
    marker = f"OTHER-PROJECT-{uuid.uuid4().hex}"
    other = isolated_home / ".claude" / "projects" / "-srv-other-project"
    other.mkdir(parents=True)
    session = INTERACTIVE.read_text().replace("never delete build/", f"never delete build/ {marker}")
    (other / "6c0b5a1e-0000-4000-8000-000000000001.jsonl").write_text(session)
    plant = f'mkdir -p "$CLAUDE_CONFIG_DIR/projects" && ln -s {other} "$CLAUDE_CONFIG_DIR/projects/x"'
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}, "shell": [plant]}], extra=CLAUDE_HOME)
    result = run(cli, project)
    assert result.code == 0, result.out + result.err
    [log] = project.dispatch_logs()
    assert sorted(p.name for p in log.glob("transcript*")) == []
    store = subprocess.run(["git", "rev-parse", "refs/failres/store"], cwd=project.top, capture_output=True,
                           text=True).stdout
    reflected = cli(project.top, "reflect", "--json")
    assert reflected.code == 0, reflected.out + reflected.err
    assert json.loads(reflected.out) == []
    assert marker.encode() not in project.everything_failres_wrote()
    assert subprocess.run(["git", "rev-parse", "refs/failres/store"], cwd=project.top, capture_output=True,
                          text=True).stdout == store


@pytest.mark.usefixtures("seat_world")
def test_a_seat_written_interactive_transcript_is_derived_never_clean(project: Project, cli):
    shutil.copy(INTERACTIVE, project.agents / "session.jsonl")
    leave = (f'mkdir -p "$CLAUDE_CONFIG_DIR/projects/x" && '
             f'cp {project.agents}/session.jsonl "$CLAUDE_CONFIG_DIR/projects/x/s.jsonl"')
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}, "shell": [leave]}], extra=CLAUDE_HOME)
    result = run(cli, project)
    assert result.code == 0, result.out + result.err
    [log] = project.dispatch_logs()
    assert [p.name for p in log.glob("transcript*")] == ["transcript.jsonl"]
    reflected = cli(project.top, "reflect", "--json")
    assert reflected.code == 0, reflected.out + reflected.err
    records = json.loads(reflected.out)
    assert records, reflected.out
    assert {r["origin"] for r in records} == {"derived"}


def test_finding_transcripts_walks_no_link_below_the_root(tmp_path: Path):
    root = tmp_path / "ws"
    real = root / "t1.dispatch" / "1" / "claude" / "projects" / "a"
    real.mkdir(parents=True)
    (real / "s.jsonl").write_text("{}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "o.jsonl").write_text("{}\n")
    (real.parent / "b").symlink_to(elsewhere)
    (real / "l.jsonl").symlink_to(elsewhere / "o.jsonl")
    place = TranscriptPlace("claude", root / "t1.dispatch" / "1" / "claude", "projects/*/*.jsonl")
    assert find_transcripts([place], root=root) == (("claude", real / "s.jsonl"),)
    (root / "t1.dispatch" / "2").symlink_to(root / "t1.dispatch" / "1")
    moved = TranscriptPlace("claude", root / "t1.dispatch" / "2" / "claude", "projects/*/*.jsonl")
    assert find_transcripts([moved], root=root) == ()
