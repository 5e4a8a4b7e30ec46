"""No process of a dispatch survives it, by construction: the whole tree is frozen before it is
killed, however deep a chain of `setsid` processes that ignore SIGTERM grows, and a seat gets
no handle to a daemon of the person's that would start a process outside the dispatch."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from failres.engine.seats import seat_env
from failres.processes import reaper
from failres.processes.process import run_process
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


def test_a_seat_run_inside_tmux_cannot_start_a_window_outside_its_dispatch(tmp_path, monkeypatch, cli):
    """What the seat sees of its environment when failres runs inside tmux, ssh-agent and a desktop."""
    from project import FIXED, Project

    project = Project.create(tmp_path)
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,4242,0")
    monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "agent.sock"))
    monkeypatch.setenv("DISPLAY", ":0")
    seen = project.agents / "seen-env"  # beside the scripted agents: a place its binding may write
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}, "shell": [f"env > {seen}"]}])
    assert cli(project.top, "run", str(project.plan()), "--quiet").code == 0
    names = {line.split("=", 1)[0] for line in seen.read_text().splitlines()}
    assert not names & {"TMUX", "SSH_AUTH_SOCK", "DISPLAY"}
