"""Hostile seats inside the seat world: each test asserts the guarantee itself.

The seat runs any command: it reads the person's SSH key, writes into the person's
checkout by absolute path, writes into another task's workspace while that task runs
(`--jobs 4`), and leaves a process behind while its supervisor and failres are killed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project
from sandbox_projects import checkout_bytes
from failres.sandbox.probe import machine_sandbox

pytestmark = pytest.mark.skipif(not machine_sandbox().available, reason="no seat world on this machine")

FIX = {"write": {"src/calc.py": FIXED}}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def run(cli, project: Project, *args: str):
    return cli(project.top, "run", str(project.plan()), "--quiet", *args)


def test_a_key_in_the_persons_home_is_in_no_log_record_or_output(project: Project, cli, isolated_home: Path):
    marker = f"FAKE-KEY-{uuid.uuid4().hex}"
    ssh = isolated_home / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text(f"{marker}\nnot a real key either\n")
    steal = (f"cat ~/.ssh/id_ed25519; cat {ssh}/id_ed25519; cat {ssh}/id_ed25519 > src/calc.py; "
             f"grep -r {marker[:12]} / 2>/dev/null | head -3; true")
    project.configure(implementer=[{**FIX, "shell": [steal]}])
    result = run(cli, project)
    assert marker not in result.out + result.err
    assert marker.encode() not in project.everything_failres_wrote()
    assert (ssh / "id_ed25519").read_text().startswith(marker)


def test_writes_by_absolute_path_into_the_persons_checkout_leave_it_byte_identical(project: Project, cli):
    project.configure(implementer=[{**FIX}])
    top = project.top
    before = checkout_bytes(top)
    attack = (f"echo evil > {top}/src/calc.py; echo evil > {top}/README; echo evil >> {top}/docs/notes.md; "
              f"mkdir -p {top}/.git/hooks && printf '#!/bin/sh\\necho owned\\n' > {top}/.git/hooks/pre-commit; "
              f"git -C {top} config user.name evil; rm -f {top}/src/other.py; true")
    project.configure(implementer=[{**FIX, "shell": [attack]}])
    before = checkout_bytes(top)
    run(cli, project)
    assert checkout_bytes(top) == before


def test_under_jobs_4_a_seat_writing_into_another_tasks_workspace_changes_nothing_of_its_commit(tmp_path: Path,
                                                                                               cli):
    top = tmp_path / "four"
    (top / "src").mkdir(parents=True)
    git(top, "init", "-q", "-b", "main")
    for task in ("t1", "t2", "t3", "t4"):
        (top / "src" / f"{task}.py").write_text("BAD\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "four files")
    agents = tmp_path / "agents"
    agents.mkdir()
    project = Project(top, agents)
    workspaces = {task: project.workspace(task) for task in ("t2", "t3", "t4")}
    evil = "; ".join(f"mkdir -p {w}/src; echo EVIL > {w}/src/{t}.py" for t, w in workspaces.items())
    hostile = agents / "hostile.sh"
    hostile.write_text(f'echo GOOD > src/$FAILRES_TASK.py\nif [ "$FAILRES_TASK" = t1 ]; then\n'
                       f"  for i in $(seq 40); do {evil}; sleep 0.1; done\nelse\n  sleep 2\nfi\n")
    gate = [sys.executable, "-c", "import sys; t = open('src/' + sys.argv[1] + '.py').read(); "
            "sys.exit(t != 'GOOD\\n')", "{task}"]
    (top / ".failres.toml").write_text("\n".join([
        "[gates.check]", f"command = {json.dumps(gate)}", 'cwd = "worktree"', 'timeout = "60s"',
        "[bindings.impl]", f'command = ["bash", "{hostile}"]', 'timeout = "60s"',
        "[seats]", 'implementer = "impl"', "[repair]", "max_attempts = 0", ""]))
    from failres.initialise import init_repository

    init_repository(top, hooks=False)
    plan = tmp_path / "plan.toml"
    plan.write_text('slug = "rr"\n' + "".join(
        f'[[tasks]]\nid = "{t}"\ntitle = "good {t}"\nprompt = "x"\nfiles = ["src/{t}.py"]\n'
        for t in ("t1", "t2", "t3", "t4")))
    result = cli(top, "run", str(plan), "--quiet", "--jobs", "4")
    assert result.code == 0, result.out + result.err
    for task in ("t2", "t3", "t4"):
        assert git(top, "show", f"failres/rr/{task}:src/{task}.py") == "GOOD\n"
        assert git(top, "diff", "--name-only", "main", f"failres/rr/{task}").split() == [f"src/{task}.py"]


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _ancestors(pid: int) -> list[int]:
    chain = []
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        chain.append(pid)
    return chain


def test_a_seat_whose_supervisor_and_failres_are_killed_leaves_no_process_behind(project: Project):
    marker = f"leftover-{uuid.uuid4().hex}"
    started = project.agents / "started"
    leave = (f"setsid nohup sh -c 'sleep 300; : {marker}' >/dev/null 2>&1 & "
             f"nohup sh -c 'sleep 300; : {marker}' >/dev/null 2>&1 & touch {started}; sleep 120")
    project.configure(implementer=[{**FIX, "shell": [leave]}], timeout="300s")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAILRES_")}
    failres = subprocess.Popen([sys.executable, "-m", "failres", "run", str(project.plan()), "--quiet"],
                               cwd=project.top, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        give_up = time.monotonic() + 60
        while not started.exists() and time.monotonic() < give_up and failres.poll() is None:
            time.sleep(0.1)
        assert started.exists(), "the seat never started"
        left = _processes_with(marker)
        assert len(left) >= 2
        # What a seat with the person's rights could do: kill its supervisor and failres at once.
        supervisors = {p for pid in left for p in _ancestors(pid)
                       if b"supervise.py" in Path(f"/proc/{p}/cmdline").read_bytes()}
        for pid in [failres.pid, *supervisors]:
            os.kill(pid, signal.SIGKILL)
        failres.wait()
        give_up = time.monotonic() + 15
        while _processes_with(marker) and time.monotonic() < give_up:
            time.sleep(0.2)
        assert _processes_with(marker) == []
    finally:
        for pid in _processes_with(marker):
            os.kill(pid, signal.SIGKILL)
        if failres.poll() is None:
            failres.kill()
