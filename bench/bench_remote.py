"""How much three runners of one plan on one remote shorten it, against one runner.

    python bench/bench_remote.py [--tasks 12] [--seconds 5] [--runners 3]

A bare remote holds a project and its store; a plan of independent tasks whose seat
sleeps `--seconds` then makes its one edit is worked twice, each time on a fresh
remote: once by one runner (`git failres run PLAN --remote origin` in one clone),
once by `--runners` runners at once, each in a clone of its own. The ratio is the
wall time of the second over the first (goal: at most 0.45 for 12 tasks of 5 s and
3 runners: four rounds of seats instead of twelve, plus the claims and syncs).
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

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=ENV)


def make_remote(root: Path, tasks: int, seconds: float) -> tuple[Path, Path]:
    """(bare remote with a project and its store, plan file)."""
    root.mkdir(parents=True)
    bare = root / "remote.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = root / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    for i in range(tasks):
        (seed / f"f{i}.txt").write_text("before\n")
    (seed / "check.sh").write_text('#!/bin/sh\ngrep -q after "f${1#t}.txt"\n')
    (seed / "check.sh").chmod(0o755)
    seat = root / "seat.sh"
    seat.write_text(f"#!/bin/sh\ncat >/dev/null\nsleep {seconds}\n" 'echo after > "f${FAILRES_TASK#t}.txt"\n')
    seat.chmod(0o755)
    (seed / ".failres.toml").write_text(
        f'[gates.check]\ncommand = ["./check.sh", "{{task}}"]\ncwd = "worktree"\n'
        f'[bindings.seat]\ncommand = [{json.dumps(str(seat))}]\n[seats]\nimplementer = "seat"\n')
    git(seed, "add", ".")
    git(seed, "commit", "-qm", "files to change")
    subprocess.run([sys.executable, "-m", "failres", "init", "--no-hooks"], cwd=seed, check=True,
                   capture_output=True, env=ENV)
    git(seed, "push", "-q", str(bare), "main", "refs/failres/store:refs/failres/store")
    plan = root / "plan.toml"
    plan.write_text('slug = "remote"\n' + "".join(
        f'[[tasks]]\nid = "t{i}"\nprompt = "change f{i}.txt"\nfiles = ["f{i}.txt"]\n' for i in range(tasks)))
    return bare, plan


def timed_runners(root: Path, tasks: int, seconds: float, runners: int) -> float:
    bare, plan = make_remote(root, tasks, seconds)
    clones = []
    for i in range(runners):
        git(root, "clone", "-q", str(bare), str(root / f"clone{i}"))
        clones.append(root / f"clone{i}")
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "failres", "run", str(plan), "--remote", "origin", "--quiet"],
                              cwd=top, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
             for top in clones]
    outs = [p.communicate() for p in procs]
    elapsed = time.perf_counter() - start
    for proc, (_, err) in zip(procs, outs, strict=True):
        if proc.returncode != 0:
            raise SystemExit(f"a runner failed ({proc.returncode}): {err[-2000:]}")
    return elapsed


def measure(tasks: int, seconds: float, runners: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="failres-bench-remote-", ignore_cleanup_errors=True) as tmp:
        one = timed_runners(Path(tmp) / "one", tasks, seconds, 1)
        many = timed_runners(Path(tmp) / "many", tasks, seconds, runners)
    return one, many


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--runners", type=int, default=3)
    args = parser.parse_args()
    one, many = measure(args.tasks, args.seconds, args.runners)
    print(f"{args.tasks} tasks, seats of {args.seconds:g} s each")
    print(f"1 runner: {one:.1f} s; {args.runners} runners: {many:.1f} s = ratio {many / one:.2f}")


if __name__ == "__main__":
    main()
