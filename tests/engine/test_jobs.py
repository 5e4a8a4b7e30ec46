"""Many tasks at once (`run --jobs N`) and tasks that wait for others to land (`after`)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project

FIX = {"write": {"src/calc.py": FIXED}}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def plan_of(project: Project, tasks: list[tuple[str, list[str], list[str]]]) -> Path:
    """A plan with (id, files, after) tasks, each asked to fix add."""
    path = project.agents.parent / "plan.toml"
    body = f'slug = "{project.slug}"\n'
    for task, files, after in tasks:
        body += (f'[[tasks]]\nid = "{task}"\nprompt = "Make tests/check.py pass."\nfiles = {json.dumps(files)}\n'
                 f"after = {json.dumps(after)}\n")
    path.write_text(body)
    return path


def timed_seat(project: Project, seconds: float) -> list[str]:
    """A seat that records when it ran, sleeps, then fixes add."""
    script = project.agents / "timed.py"
    log = project.agents / "spans.txt"
    script.write_text(
        "import os, pathlib, sys, time\n"
        "sys.stdin.read()\n"
        f"start = time.time(); time.sleep({seconds})\n"
        "pathlib.Path('src/calc.py').write_text(" + repr(FIXED) + ")\n"
        f"with open({str(log)!r}, 'a') as f: f.write(f\"{{os.environ['FAILRES_TASK']}} {{start}} {{time.time()}}\\n\")\n")
    return [sys.executable, str(script)]


def spans(project: Project) -> dict[str, tuple[float, float]]:
    lines = (project.agents / "spans.txt").read_text().splitlines()
    return {task: (float(a), float(b)) for task, a, b in (line.split() for line in lines)}


def configure_timed(project: Project, seconds: float) -> None:
    project.configure(implementer=[FIX])
    config = project.top / ".failres.toml"
    text = config.read_text()
    old = text.split("[bindings.impl]\ncommand = ", 1)[1].split("\n", 1)[0]
    config.write_text(text.replace(old, json.dumps(timed_seat(project, seconds))))


def test_independent_tasks_run_at_once_each_in_its_own_workspace_and_all_commit(project: Project, cli):
    configure_timed(project, 1.5)
    plan = plan_of(project, [(f"t{i}", ["src/calc.py"], []) for i in range(4)])
    result = cli(project.top, "run", str(plan), "--quiet", "--jobs", "4", "--json")
    # On failure, say why each task did not commit (a tamper check taking another task's
    # commit for a seat's would show here).
    assert result.code == 0, [(i, e.get("failClass"), e.get("what"), str(e.get("message"))[:300])
                              for i in range(4) for e in project.events(f"t{i}")
                              if e["type"] in ("quarantined", "seat-tamper")]
    outcomes = json.loads(result.out)
    assert [(o["task"], o["state"]) for o in outcomes] == [(f"t{i}", "committed") for i in range(4)]
    ran = spans(project)
    latest_start = max(start for start, _ in ran.values())
    earliest_end = min(end for _, end in ran.values())
    assert latest_start < earliest_end  # all four seats were running at the same moment
    for i in range(4):
        assert project.branch_file("src/calc.py", f"t{i}") == FIXED
    assert all(e["type"] != "seat-tamper" for i in range(4) for e in project.events(f"t{i}"))


def test_a_task_waits_until_the_tasks_it_comes_after_have_landed(project: Project, cli):
    project.configure(implementer=[FIX])
    plan = plan_of(project, [("t1", ["src/calc.py"], []), ("t2", ["src/calc.py"], ["t1"])])
    first = cli(project.top, "run", str(plan), "--quiet", "--jobs", "2", "--json")
    assert first.code == 1, first.err  # a task still waiting has not gone green
    outcomes = {o["task"]: o for o in json.loads(first.out)}
    assert outcomes["t1"]["state"] == "committed"
    assert outcomes["t2"]["state"] == "pending" and "waits for t1 to land" in outcomes["t2"]["message"]
    assert project.types("t2") == ["task-planned"]  # on the status, and nothing dispatched for it
    assert cli(project.top, "land", project.slug, "t1").code == 0
    landed_head = git(project.top, "rev-parse", "main").strip()
    second = cli(project.top, "run", str(plan), "--quiet", "--json")
    assert second.code == 0, second.err
    started = [e for e in project.events("t2") if e["type"] == "task-started"]
    assert started[0]["intHead"] == landed_head  # it starts from the head that holds t1's work


def test_a_plan_whose_tasks_wait_for_each_other_in_a_circle_is_refused(project: Project, cli):
    project.configure(implementer=[FIX])
    plan = plan_of(project, [("t1", ["src/calc.py"], ["t2"]), ("t2", ["src/calc.py"], ["t1"])])
    result = cli(project.top, "run", str(plan))
    assert result.code == 2 and "wait for each other in a circle: t1 -> t2 -> t1" in result.err
    unknown = plan_of(project, [("t1", ["src/calc.py"], ["t9"])])
    result = cli(project.top, "run", str(unknown))
    assert result.code == 2 and 'no task "t9" in this plan' in result.err


def _alive_with(marker: str) -> list[int]:
    """Host pids of live (not zombie) processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes() and \
                    "Z" not in (entry / "stat").read_text().rsplit(")", 1)[1][:3]:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_ctrl_c_stops_every_task_of_a_jobs_run(project: Project):
    seat = project.agents / "hang.sh"
    # Each seat says it started, then hangs in a process the test can find on the host by its
    # marker (inside the seat world a seat's own pid is its namespace's, not the host's).
    marker = f"hanging-seat-{uuid.uuid4().hex}"
    seat.write_text(f"#!/bin/bash\ncat >/dev/null\necho $FAILRES_TASK >> {project.agents}/pids\n"
                    f"exec bash -c 'sleep 1000; : {marker}'\n")
    seat.chmod(0o755)
    project.configure(implementer=[FIX])
    config = project.top / ".failres.toml"
    text = config.read_text()
    old = text.split("[bindings.impl]\ncommand = ", 1)[1].split("\n", 1)[0]
    config.write_text(text.replace(old, json.dumps([str(seat)])))
    plan = plan_of(project, [(f"t{i}", ["src/calc.py"], []) for i in range(3)])
    proc = subprocess.Popen([sys.executable, "-m", "failres", "run", str(plan), "--quiet", "--jobs", "3"],
                            cwd=project.top, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids = project.agents / "pids"
    give_up = time.monotonic() + 60
    while not (pids.exists() and len(pids.read_text().split()) == 3):
        assert time.monotonic() < give_up, "the seats never started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130, proc.stderr.read()
    assert _alive_with(marker) == []
    for i in range(3):
        assert [e["reason"] for e in project.events(f"t{i}") if e["type"] == "interrupted"] == ["signal"]
