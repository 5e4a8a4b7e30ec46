"""Ctrl-C on a real terminal: the live view ends as `interrupted`, once, with the line that resumes.

The run is driven through a pseudo-terminal and stopped the way a terminal stops it: SIGINT
to the foreground process group. What the person sees is read from the bytes the terminal
got; what happened is read from the journal.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from project import Project

pty = pytest.importorskip("pty")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def drive_on_a_terminal(project: Project, plan: Path, *, until: bytes, limit: float = 300.0) -> tuple[int, str]:
    """Run `git failres run PLAN` on a pty; once `until` was printed, Ctrl-C it. (exit code, output)."""
    env = dict(os.environ, TERM="xterm", COLUMNS="120", LINES="40")
    env.pop("NO_COLOR", None)
    pid, fd = pty.fork()
    if pid == 0:  # the child: failres on the terminal
        os.chdir(project.top)
        os.execve(sys.executable, [sys.executable, "-m", "failres", "run", str(plan)], env)
    out, sent, deadline = b"", False, time.monotonic() + limit
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # the terminal closed: everything on it has exited
                    break
                if not chunk:
                    break
                out += chunk
            if not sent and until in out:
                os.killpg(os.tcgetpgrp(fd), signal.SIGINT)  # what the terminal does on Ctrl-C
                sent = True
    finally:
        os.close(fd)
    if not sent:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert sent, out.decode(errors="replace")[-2000:]
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


def last_frame(output: str) -> list[str]:
    """The lines the terminal shows after the live view's last redraw, escapes removed."""
    tail = output.rsplit("\x1b[1A", 1)[-1]
    return [ANSI.sub("", line).strip() for line in tail.replace("\r", "").split("\n") if ANSI.sub("", line).strip()]


def test_ctrl_c_on_a_terminal_ends_the_live_view_as_interrupted_with_the_line_that_resumes(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[{"write": {"src/calc.py": "x = 1\n"}, "sleep": 120}])
    plan = project.plan()
    code, output = drive_on_a_terminal(project, plan, until=b"implementer")
    assert code == 128 + signal.SIGINT
    frame = last_frame(output)
    rows = [line for line in frame if "rr/t1" in line and "│" in line]
    assert len(rows) == 1 and " interrupted " in rows[0] and " done " not in rows[0], frame
    assert [line for line in frame if line == "failres run"] == ["failres run"], frame  # the title, once
    resume = [line for line in frame if line.startswith("failres: interrupted by SIGINT")]
    assert resume == [f"failres: interrupted by SIGINT; resume with: git failres run {plan}"], frame
    assert frame[-1] == resume[0]  # below the table, not drawn over by it

    events = project.events()
    stops = [e for e in events if e["type"] == "interrupted"]
    assert [e["reason"] for e in stops] == ["signal"]
    finished = [e for e in events if e["type"] == "seat-finished"]
    assert [(e["timedOut"], e.get("stopped")) for e in finished] == [(False, "signal")]
    status = subprocess.run([sys.executable, "-m", "failres", "status", "--json"], cwd=project.top,
                            capture_output=True, text=True, check=True)
    assert [row["state"] for row in json.loads(status.stdout)] == ["interrupted"]
    logs = subprocess.run([sys.executable, "-m", "failres", "logs", "rr", "t1"], cwd=project.top,
                          capture_output=True, text=True, check=True)
    assert "dispatch 1: implementer (impl), implement attempt 1 — stopped (signal) in" in logs.stdout


def test_ctrl_c_with_output_in_a_file_leaves_the_same_line_that_resumes(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[{"sleep": 120}])
    plan = project.plan()
    log = tmp_path / "run.log"
    with log.open("w") as sink:
        child = subprocess.Popen([sys.executable, "-m", "failres", "run", str(plan)], cwd=project.top,
                                 stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 300
        while "seat  implementer" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        os.killpg(child.pid, signal.SIGINT)
        code = child.wait(timeout=300)
    lines = log.read_text().splitlines()
    assert code == 128 + signal.SIGINT
    assert lines[-1] == f"failres: interrupted by SIGINT; resume with: git failres run {plan}"
    assert lines[-2].startswith("[failres] rr/t1  interrupted")


def test_ctrl_c_that_kills_a_git_child_of_failres_too_is_still_an_interruption(tmp_path: Path) -> None:
    """Ctrl-C reaches the whole process group, git children included: a `git status` killed
    by it failed ("git status failed ... no message", exit 2) instead of stopping the run.
    A `git` first on PATH delivers the Ctrl-C the way a terminal does, to failres and to
    itself, at the first `git status` after the seat started."""
    project = Project.create(tmp_path)
    project.configure(implementer=[{"write": {"src/calc.py": "x = 1\n"}, "sleep": 2}])
    plan = project.plan()
    armed = tmp_path / "armed"
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "git").write_text(
        "#!/bin/sh\n"
        f'case " $* " in *" status "*) if rm "{armed}" 2>/dev/null; then kill -INT $PPID; kill -INT $$; fi;; esac\n'
        f'exec "{shutil.which("git")}" "$@"\n')
    (shim / "git").chmod(0o755)
    env = dict(os.environ, PATH=f"{shim}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "run.log"
    with log.open("w") as sink:
        child = subprocess.Popen([sys.executable, "-m", "failres", "run", str(plan)], cwd=project.top, env=env,
                                 stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 300
        while "seat  implementer" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        armed.write_text("")
        code = child.wait(timeout=300)
    lines = log.read_text().splitlines()
    assert not armed.exists(), lines  # the Ctrl-C was delivered during a git status
    assert code == 128 + signal.SIGINT, lines
    assert lines[-1] == f"failres: interrupted by SIGINT; resume with: git failres run {plan}"
    assert not [line for line in lines if "failed in" in line], lines
    assert [e["reason"] for e in project.events() if e["type"] == "interrupted"] == ["signal"]
