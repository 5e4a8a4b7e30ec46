"""A bare remote, a project pushed to it, and clones of it: the runners of `run --remote` tests."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from conftest import git
from failres.initialise import init_repository

SEAT = '''\
import os, pathlib, sys, time
sys.stdin.read()
task = os.environ["FAILRES_TASK"]
log = pathlib.Path({log!r})
with open(log, "a") as f:
    f.write(task + "\\n")
victim = pathlib.Path({victim_marker!r})
if task == {victim!r}:
    try:
        fd = os.open(victim, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        time.sleep(120)  # the first dispatch of the victim task: its runner is killed meanwhile
        sys.exit(1)
    except FileExistsError:
        pass
go, waited = pathlib.Path({go!r}), 0
while {go!r} and not go.exists() and waited < 2400:  # held until the test lets the seats finish
    time.sleep(0.05)
    waited += 1
time.sleep({seconds})
pathlib.Path("src", task + ".py").write_text("DONE = " + repr(task) + "\\n")
'''


def make_remote(tmp_path: Path, tasks: list[str], *, lease: str = "3s", victim: str = "",
                seconds: float = 0.0, go: bool = False, branches: str = "") -> tuple[Path, Path, Path]:
    """(bare remote, plan file, dispatch log): the remote holds a project whose store exists.
    `go`: each seat waits for the file `go` beside the log before it finishes; `branches`: the
    project's `[remote] branches`."""
    agents = tmp_path / "agents"
    agents.mkdir()
    log = agents / "dispatches.txt"
    seat = agents / "seat.py"
    seat.write_text(SEAT.format(log=str(log), victim_marker=str(agents / "victim-started"), victim=victim,
                                seconds=seconds, go=str(agents / "go") if go else ""))
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", "-b", "main", str(seed))
    (seed / "src").mkdir()
    (seed / "src" / "base.py").write_text("BASE = 1\n")
    config = [
        "[gates.check]", f"command = {json.dumps([sys.executable, '-c', 'pass'])}", 'cwd = "worktree"',
        'timeout = "60s"', "[bindings.impl]", f"command = {json.dumps([sys.executable, str(seat)])}",
        # The seat counts its dispatches beside itself: in the seat world, the one place outside
        # its workspace its binding lets it write.
        f"write = {json.dumps([str(agents)])}", 'timeout = "180s"', "[seats]", 'implementer = "impl"', "[remote]", f'lease = "{lease}"',
        *([f'branches = "{branches}"'] if branches else []),
    ]
    (seed / ".failres.toml").write_text("\n".join(config) + "\n")
    git(seed, "add", ".")
    git(seed, "commit", "-q", "-m", "a project")
    init_repository(seed, hooks=False)
    git(seed, "remote", "add", "origin", str(bare))
    git(seed, "push", "-q", "origin", "main", "refs/failres/store:refs/failres/store")
    plan = tmp_path / "plan.toml"
    body = 'slug = "rr"\n'
    for task in tasks:
        body += f'[[tasks]]\nid = "{task}"\nprompt = "Write src/{task}.py."\nfiles = ["src/{task}.py"]\n'
    plan.write_text(body)
    return bare, plan, log


def clone(tmp_path: Path, bare: Path, name: str) -> Path:
    target = tmp_path / name
    git(tmp_path, "clone", "-q", str(bare), str(target))
    return target


def start_runner(top: Path, plan: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "failres", "run", str(plan), "--remote", "origin", "--quiet",
                             "--json", *args], cwd=top, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def folded_entry(bare: Path, task: str, slug: str = "rr") -> dict[str, str]:
    """The task's entry in the plan's record of finished tasks on the remote, as its fields ({}: none)."""
    bucket = hashlib.sha256(task.encode()).hexdigest()[:2]
    found = subprocess.run(["git", "cat-file", "blob", f"refs/failres/claims/{slug}/_done:{bucket}/{task}"],
                           cwd=bare, capture_output=True, text=True)
    return dict(line.split(": ", 1) for line in found.stdout.splitlines()[1:] if ": " in line)


def claim_history(bare: Path, task: str, slug: str = "rr") -> list[dict[str, str]]:
    """Each claim commit of the task on the remote, newest first, as its fields; for a task folded
    into the record of finished tasks, the history of the claim commit its entry names."""
    ref = f"refs/failres/claims/{slug}/{task}"
    if subprocess.run(["git", "rev-parse", "-q", "--verify", ref], cwd=bare, capture_output=True).returncode:
        ref = folded_entry(bare, task, slug).get("claim", ref)
    out = git(bare, "log", "--format=%B%x00", ref)
    history = []
    for message in out.split("\0"):
        fields = dict(line.split(": ", 1) for line in message.strip().splitlines()[1:] if ": " in line)
        if fields:
            history.append(fields)
    return history
