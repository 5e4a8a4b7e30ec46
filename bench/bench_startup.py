"""How long a read command takes to start: `--version`, `status`, `journal`, against `import pygit2`.

    python bench/bench_startup.py [ROUNDS] [DEMO]

Every failres process pays Python's start and pygit2's import; a read command should
pay little more (the command modules it needs, not every command's imports). Each
command is timed as a whole process in the demo's repository, alternating with the
baseline `python -c "import pygit2"`, medians of ROUNDS. The warm-up runs write the
bytecode cache even where PYTHONDONTWRITEBYTECODE is set: an installed failres has its
`.pyc` files, and compiling the sources on every start is no cost a person pays.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

COMMANDS = {"--version": ["--version"], "status --json": ["status", "--json"],
            "journal demo --json": ["journal", "demo", "--json"]}


@dataclass(frozen=True)
class StartupTimes:
    commands: dict[str, float]  # name -> median seconds
    baseline: float  # python -c "import pygit2"


def _timed(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, cwd=cwd, env=env)
    return time.perf_counter() - start


def measure(rounds: int, demo: Path | None = None) -> StartupTimes:
    failres = [sys.executable, "-m", "failres"]
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        if demo is None:
            demo = Path(tmp) / "demo"
            subprocess.run([*failres, "demo", "--keep", str(demo)], check=True, capture_output=True)
        caching = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        for args in COMMANDS.values():
            _timed([*failres, *args], cwd=demo, env=caching)  # warm the file and bytecode caches before timing
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        baseline = []
        for _ in range(rounds):
            baseline.append(_timed([sys.executable, "-c", "import pygit2"]))
            for name, args in COMMANDS.items():
                times[name].append(_timed([*failres, *args], cwd=demo))
    return StartupTimes({name: statistics.median(values) for name, values in times.items()},
                        statistics.median(baseline))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time failres's read commands as whole processes, "
                                     'against `python -c "import pygit2"` in the same run.')
    parser.add_argument("rounds", nargs="?", type=int, default=15, help="timed rounds, medians taken (default 15)")
    parser.add_argument("demo", nargs="?", type=Path, default=None,
                        help="a repository made by `git failres demo --keep DIR` (default: a fresh one)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("ROUNDS must be at least 1")
    found = measure(args.rounds, args.demo)
    for name, seconds in found.commands.items():
        print(f"{name:<22} {seconds * 1000:.0f} ms  {seconds / found.baseline:.2f}x")
    print(f'python -c "import pygit2"  {found.baseline * 1000:.0f} ms')


if __name__ == "__main__":
    main()
