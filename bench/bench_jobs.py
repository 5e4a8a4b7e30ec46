"""How much `run --jobs N` shortens a plan whose seats take a while, against `--jobs 1`.

    python bench/bench_jobs.py [--tasks 8] [--seconds 5] [--jobs 4]

A plan of independent tasks whose seat sleeps `--seconds` then makes its one edit runs
through `git failres run` twice, in two fresh repositories: once with `--jobs 1`, once
with `--jobs N`. The ratio is the wall time of the second over the first (goal: at
most 0.3 for 8 tasks of 5 s at 4 jobs: two rounds of seats instead of eight).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=ENV)


def make_project(root: Path, tasks: int, seconds: float) -> Path:
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for i in range(tasks):
        (repo / f"f{i}.txt").write_text("before\n")
    # The gate takes the task's id: t3 is green once f3.txt says "after".
    (repo / "check.sh").write_text('#!/bin/sh\ngrep -q after "f${1#t}.txt"\n')
    (repo / "check.sh").chmod(0o755)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "files to change")
    seat = root / "seat.sh"
    seat.write_text(f"#!/bin/sh\ncat >/dev/null\nsleep {seconds}\n" 'echo after > "f${FAILRES_TASK#t}.txt"\n')
    seat.chmod(0o755)
    (repo / ".gitignore").write_text(".failres.toml\n")
    (repo / ".failres.toml").write_text(
        f'[worktrees]\ndir = "../workspaces"\n'
        f'[gates.check]\ncommand = ["./check.sh", "{{task}}"]\ncwd = "worktree"\n'
        f'[bindings.seat]\ncommand = [{json.dumps(str(seat))}]\n[seats]\nimplementer = "seat"\n')
    subprocess.run([sys.executable, "-m", "failres", "init", "--no-hooks"], cwd=repo, check=True, capture_output=True,
                   env=ENV)
    plan = root / "plan.toml"
    plan.write_text('slug = "jobs"\n' + "".join(
        f'[[tasks]]\nid = "t{i}"\nprompt = "change f{i}.txt"\nfiles = ["f{i}.txt"]\n' for i in range(tasks)))
    return repo


def timed_run(repo: Path, jobs: int) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "failres", "run", "../plan.toml", "--quiet", "--jobs", str(jobs)],
                          cwd=repo, capture_output=True, text=True, env=ENV)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"the run with --jobs {jobs} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def measure(tasks: int, seconds: float, jobs: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="failres-bench-jobs-") as tmp:
        serial = timed_run(make_project(Path(tmp) / "one", tasks, seconds), 1)
        parallel = timed_run(make_project(Path(tmp) / "many", tasks, seconds), jobs)
    return serial, parallel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--jobs", type=int, default=4)
    args = parser.parse_args()
    serial, parallel = measure(args.tasks, args.seconds, args.jobs)
    print(f"{args.tasks} tasks, seats of {args.seconds:g} s each")
    print(f"--jobs 1: {serial:.1f} s; --jobs {args.jobs}: {parallel:.1f} s = ratio {parallel / serial:.2f}")


if __name__ == "__main__":
    main()
