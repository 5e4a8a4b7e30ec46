"""No process of a dispatch survives it, by construction: the whole tree is frozen before it is
killed, however deep a chain of `setsid` processes that ignore SIGTERM grows, and a seat gets
no handle to a daemon of the person's that would start a process outside the dispatch."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from failres.engine.seats import seat_env
from failres.processes import reaper
from failres.processes.process import run_process
from project import FIXED, Project
from test_process import is_gone

# Deeper than any bounded number of kill rounds: each link re-parents only when the one
# above it dies, so killing layer by layer needs one round per link.
DEPTH = 260
CHAIN = f"""
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
depth = 0
while True:
    with open("pids", "a") as out:
        out.write(f"{{os.getpid()}}\\n")
    if depth >= {DEPTH}:
        break
    child = os.fork()
    if child:
        break
    os.setsid()
    depth += 1
if depth == 0:
    while sum(1 for _ in open("pids")) < {DEPTH}:
        time.sleep(0.05)
    print("chain ready", flush=True)
    sys.exit(0)
while True:
    with open("late.txt", "a") as out:
        out.write("x")
    time.sleep(0.05)
"""


def wait_all_gone(pids: list[int], seconds: float = 15.0) -> list[int]:
    give_up = time.monotonic() + seconds
    alive = pids
    while alive and time.monotonic() < give_up:
        alive = [pid for pid in alive if not is_gone(pid)]
        time.sleep(0.1)
    return alive


def test_a_deep_setsid_chain_that_ignores_sigterm_leaves_no_process_15_seconds_after_the_run(tmp_path):
    reaper.become_subreaper()
    seat = tmp_path / "chain.py"
    seat.write_text(CHAIN)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    result = run_process([sys.executable, str(seat)], cwd=tmp_path, env=env, stdin_data=None, timeout=120)
    assert "chain ready" in result.text
    pids = [int(line) for line in (tmp_path / "pids").read_text().split()]
    assert len(pids) > DEPTH
    assert wait_all_gone(pids) == []
    size = (tmp_path / "late.txt").stat().st_size if (tmp_path / "late.txt").exists() else 0
    time.sleep(0.3)
    assert ((tmp_path / "late.txt").stat().st_size if (tmp_path / "late.txt").exists() else 0) == size
    assert reaper.leftovers() == []


def test_the_same_chain_started_by_a_gate_leaves_nothing_either(tmp_path):
    """Gates run the seat's code: they are supervised the same way (a gate's `run_process`)."""
    from failres.config.model import GateConfig, OutputConfig
    from failres.engine.gates import run_gate_process
    from failres.engine.prompts import JudgeInvocation

    reaper.become_subreaper()
    (tmp_path / "chain.py").write_text(CHAIN)
    gate = GateConfig(name="g", command=(sys.executable, "chain.py"), timeout=120)
    found = run_gate_process(gate, JudgeInvocation((sys.executable, "chain.py"), str(tmp_path)),
                             env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)},
                             cancelled=lambda: False, output=OutputConfig())
    assert "chain ready" in found.result.text
    pids = [int(line) for line in (tmp_path / "pids").read_text().split()]
    assert wait_all_gone(pids) == []


def test_a_seat_gets_no_handle_to_the_persons_daemons_unless_its_binding_names_one(monkeypatch):
    handles = {"TMUX": "/tmp/tmux-0/default,1,0", "TMUX_PANE": "%1", "SSH_AUTH_SOCK": "/tmp/agent.sock",
               "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus", "DISPLAY": ":0", "WAYLAND_DISPLAY": "wl-0",
               "XAUTHORITY": "/root/.Xauthority", "DOCKER_HOST": "unix:///run/docker.sock",
               "GPG_AGENT_INFO": "/run/gpg:0:1"}
    for name, value in handles.items():
        monkeypatch.setenv(name, value)
    values = {"slug": "s", "task": "t", "mode": "implement", "attempt": "1", "worktree": "/w", "prompt_file": "/p"}
    env = seat_env(values, {})
    assert not set(handles) & set(env)
    assert seat_env(values, {"SSH_AUTH_SOCK": "/tmp/agent.sock"})["SSH_AUTH_SOCK"] == "/tmp/agent.sock"


def test_a_seat_run_inside_tmux_cannot_start_a_window_outside_its_dispatch(tmp_path, monkeypatch, cli, seat_world):
    """What the seat sees of its environment when failres runs inside tmux, ssh-agent and a desktop."""
    project = Project.create(tmp_path)
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,4242,0")
    monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "agent.sock"))
    monkeypatch.setenv("DISPLAY", ":0")
    seen = project.agents / "seen-env"  # beside the scripted agents: a place its binding may write
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}, "shell": [f"env > {seen}"]}])
    assert cli(project.top, "run", str(project.plan()), "--quiet").code == 0
    names = {line.split("=", 1)[0] for line in seen.read_text().splitlines()}
    assert not names & {"TMUX", "SSH_AUTH_SOCK", "DISPLAY"}


def running(script: Path) -> list[int]:
    """The host's live processes whose command line names `script` (a fork keeps its parent's):
    found from outside, so a process in a PID namespace of its own is found too."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            named = entry.name.isdigit() and os.fsencode(script) in (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if named and not is_gone(int(entry.name)):
            found.append(int(entry.name))
    return found


def assert_none_left(script: Path, seconds: float = 15.0) -> None:
    give_up = time.monotonic() + seconds
    while running(script) and time.monotonic() < give_up:
        time.sleep(0.1)
    assert running(script) == []


def chain_project(tmp_path: Path) -> tuple[Project, Path]:
    project = Project.create(tmp_path)
    chain = project.agents / "chain.py"  # beside the scripted agents: a place its binding may write
    chain.write_text(CHAIN)
    return project, chain


def test_a_seat_that_leaves_a_deep_setsid_chain_leaves_no_process_15_seconds_after_the_run(tmp_path, cli, seat_world):
    project, chain = chain_project(tmp_path)
    project.configure(implementer=[{"write": {"src/calc.py": FIXED},
                                    "shell": [f"cd {project.agents} && {sys.executable} {chain}"]}])
    assert cli(project.top, "run", str(project.plan()), "--quiet").code == 0
    assert len((project.agents / "pids").read_text().split()) > DEPTH
    assert_none_left(chain)
    late = project.agents / "late.txt"
    size = late.stat().st_size if late.exists() else 0
    time.sleep(0.3)
    assert (late.stat().st_size if late.exists() else 0) == size


def test_a_gate_that_leaves_a_deep_setsid_chain_leaves_no_process_15_seconds_after_the_run(tmp_path, cli, seat_world):
    """The gate runs the seat's code: the same chain from the gate's own command."""
    project, chain = chain_project(tmp_path)
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    toml = project.top / ".failres.toml"
    toml.write_text(toml.read_text().replace(f"command = {json.dumps([sys.executable, 'tests/check.py'])}",
                                             f"command = {json.dumps([sys.executable, str(chain)])}"))
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    said = "".join((log / "gate.log").read_text() for log in project.dispatch_logs() if (log / "gate.log").exists())
    assert "chain ready" in said, (said, result)
    assert_none_left(chain)
