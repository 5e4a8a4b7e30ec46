"""What the loop itself costs per task, against what git alone costs for the same work.

    python bench/bench_loop.py [--tasks N] [--files N] [--refs N]

A plan of N tasks whose seat appends a line to its file and whose gate is `true` runs
through `git failres run` in-process. From its time we subtract the time of the
commands themselves (three processes per task: the gate at the integration head, the
seat, the gate), and compare what is left with a baseline timed in the same run:
`git worktree add` + an edit + `git commit` + `git worktree remove` per task, the floor
of any worktree-per-task loop. `--files 5000 --refs 1000` is a git/git-sized repository.
Each side does one task first, not timed, so both are timed warm.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
os.environ.update(ENV)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_repo(path: Path, files: int = 200, refs: int = 0) -> None:
    """`files` small files (100 to a directory past the first 100), one commit on main, `refs` tags."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    for i in range(files):
        name = f"f{i}.txt" if i < 100 else f"d{i // 100:04d}/f{i}.txt"
        (path / name).parent.mkdir(exist_ok=True)
        (path / name).write_text(f"{i}\n")
    git(path, "add", ".")
    git(path, "commit", "-qm", "initial")
    if refs:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, check=True, capture_output=True,
                              text=True).stdout.strip()
        subprocess.run(["git", "update-ref", "--stdin"], cwd=path, check=True, capture_output=True,
                       input="".join(f"create refs/tags/v{i} {head}\n" for i in range(refs)),
                       text=True)


def cpu_seconds() -> float:
    """User and system time of this process and every child it has waited for: a figure
    that other work on a shared machine disturbs much less than the wall clock."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def time_true(n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        subprocess.run(["true"], check=True)
    return time.perf_counter() - start


def time_git_floor(repo: Path, n: int, first: int = 0) -> tuple[float, float]:
    start, cpu = time.perf_counter(), cpu_seconds()
    for i in range(first, first + n):
        wt = repo.parent / f"wt{i}"
        git(repo, "worktree", "add", "-q", "-b", f"floor/{i}", str(wt), "main")
        with (wt / f"f{i}.txt").open("a") as edited:
            edited.write("x\n")
        git(wt, "commit", "-q", "-a", "-m", "task")
        git(repo, "worktree", "remove", "--force", str(wt))
    return time.perf_counter() - start, cpu_seconds() - cpu


def time_failres(repo: Path, n: int, first: int = 0) -> tuple[float, float]:
    from failres.cli import run

    if not (repo / ".failres.toml").exists():
        (repo / ".failres.toml").write_text(
            '[gates.g]\ncommand = ["true"]\ncwd = "worktree"\n'
            '[bindings.b]\ncommand = ["sh", "-c", "echo x >> f$FAILRES_TASK.txt"]\n'
            '[seats]\nimplementer = "b"\n'
        )
        # Only `init` makes a store; without hooks, so the floor and the loop run the same git.
        cwd = os.getcwd()
        os.chdir(repo)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                if run(["init", "--no-hooks"]) != 0:
                    raise SystemExit("git failres init failed in the bench repository")
        finally:
            os.chdir(cwd)
    plan = repo.parent / "plan.toml"
    plan.write_text('slug = "bench"\n' + "".join(
        f'[[tasks]]\nid = "{i}"\nprompt = "nothing"\nfiles = ["f{i}.txt"]\n' for i in range(first, first + n)))
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        start, cpu = time.perf_counter(), cpu_seconds()
        code = run(["run", str(plan), "--quiet"])
        elapsed, used = time.perf_counter() - start, cpu_seconds() - cpu
    finally:
        os.chdir(cwd)
    if code != 0:
        raise SystemExit(f"the run failed with exit code {code}")
    return elapsed, used


def measure(n: int, files: int, refs: int = 0) -> tuple[float, float, float, float, float]:
    """Per task: the loop's wall time, the commands' share of it, the floor's wall time, and the
    loop's and the floor's cpu time."""
    with tempfile.TemporaryDirectory(prefix="failres-bench-loop-") as tmp:
        floor_repo = Path(tmp) / "floor" / "repo"
        floor_repo.parent.mkdir()
        make_repo(floor_repo, files, refs)
        loop_repo = Path(tmp) / "loop" / "repo"
        loop_repo.parent.mkdir()
        make_repo(loop_repo, files, refs)
        # One task on each side first, not counted: the first `git worktree add` of a large
        # tree meets a cold page cache, and the first run pays failres's imports; with three
        # tasks, that one made the baseline swing from 2.1 s to 0.5 s between two suites.
        time_git_floor(floor_repo, 1, first=n)
        time_failres(loop_repo, 1, first=n)
        floor, floor_cpu = (value / n for value in time_git_floor(floor_repo, n))
        total, total_cpu = (value / n for value in time_failres(loop_repo, n))
        commands = time_true(3 * n) / n
    return total, commands, floor, total_cpu, floor_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--files", type=int, default=200, help="files in each repository (50000: a large one)")
    parser.add_argument("--refs", type=int, default=0, help="tags in each repository (1000: git/git's count)")
    args = parser.parse_args()
    n = args.tasks
    total, commands, floor, total_cpu, floor_cpu = measure(n, args.files, args.refs)
    overhead = total - commands
    print(f"repository of {args.files} files and {args.refs} refs, {n} tasks")
    print(f"loop per task: {total * 1000:.0f} ms, of which seat+gate commands {commands * 1000:.1f} ms")
    print(f"loop overhead: {overhead * 1000:.0f} ms per task vs git worktree add+edit+commit+remove "
          f"{floor * 1000:.0f} ms = ratio {overhead / floor:.2f}")
    print(f"cpu time per task: loop {total_cpu * 1000:.0f} ms vs git worktree add+edit+commit+remove "
          f"{floor_cpu * 1000:.0f} ms = ratio {total_cpu / floor_cpu:.2f}")


if __name__ == "__main__":
    main()
