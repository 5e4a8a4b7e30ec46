"""What the seat world costs a dispatch, against the same dispatch with `[sandbox] mode = "off"`.

    python bench/bench_world.py [--tasks 6]

The same plan (independent tasks, a seat that makes its one edit at once, a gate that
checks it) runs through `git failres run --jobs 1` in two fresh repositories, once
with the world and once with it off; the ratio is the wall time of the first over the
second, so it holds every seat and gate start (goal: at most 1.1). The bare start of a
world (`bwrap ... true` against `true`) is printed beside it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_jobs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def measure(tasks: int, rounds: int = 1) -> tuple[float, float]:
    """(with the world, with mode off): the best wall time of `rounds` runs each."""
    world, off = [], []
    with tempfile.TemporaryDirectory(prefix="failres-bench-world-") as tmp:
        for n in range(rounds):
            for mode, times in (("auto", world), ("off", off)):
                repo = bench_jobs.make_project(Path(tmp) / f"{mode}-{n}", tasks, 0)
                config = repo / ".failres.toml"
                config.write_text(config.read_text() + f'[sandbox]\nmode = "{mode}"\n')
                times.append(bench_jobs.timed_run(repo, 1))
    return min(world), min(off)


def bare_start(rounds: int = 20) -> tuple[float, float]:
    """(a world running `true`, `true` alone), the median start in seconds."""
    from failres.sandbox.probe import machine_sandbox

    found = machine_sandbox()
    if not found.available:
        raise SystemExit(f"no seat world here: {found.why}")
    world = [found.program, "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib",
             "/lib", "--symlink", "usr/lib64", "/lib64", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
             "--unshare-pid", "--die-with-parent", "--new-session", "--", "/usr/bin/true"]

    def median(argv: list[str]) -> float:
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            subprocess.run(argv, check=True)
            times.append(time.perf_counter() - start)
        return sorted(times)[len(times) // 2]

    return median(world), median(["/usr/bin/true"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    world, off = measure(args.tasks, args.rounds)
    started, bare = bare_start()
    print(f"{args.tasks} tasks, one dispatch and one gate each, --jobs 1")
    print(f"world: {world:.2f} s; mode off: {off:.2f} s = ratio {world / off:.2f}")
    print(f"a world's start: {started * 1000:.1f} ms; `true` alone: {bare * 1000:.1f} ms")


if __name__ == "__main__":
    main()
