"""How long a read command takes to start: `--version`, `status`, `journal`, against `import pygit2`.

    python bench/bench_startup.py [ROUNDS]

Every failres process pays Python's start and pygit2's import; a read command should
pay little more (the command modules it needs, not every command's imports). Each
command is timed as a whole process in the demo's repository, alternating with the
baseline `python -c "import pygit2"`, medians of ROUNDS.
"""

from __future__ import annotations

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


def _timed(argv: list[str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, cwd=cwd)
    return time.perf_counter() - start


def measure(rounds: int, demo: Path | None = None) -> StartupTimes:
    failres = [sys.executable, "-m", "failres"]
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        if demo is None:
            demo = Path(tmp) / "demo"
            subprocess.run([*failres, "demo", "--keep", str(demo)], check=True, capture_output=True)
        for args in COMMANDS.values():
            _timed([*failres, *args], cwd=demo)  # warm the file cache before timing anything
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        baseline = []
        for _ in range(rounds):
            baseline.append(_timed([sys.executable, "-c", "import pygit2"]))
            for name, args in COMMANDS.items():
                times[name].append(_timed([*failres, *args], cwd=demo))
    return StartupTimes({name: statistics.median(values) for name, values in times.items()},
                        statistics.median(baseline))


if __name__ == "__main__":
    found = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 15,
                    Path(sys.argv[2]) if len(sys.argv) > 2 else None)
    for name, seconds in found.commands.items():
        print(f"{name:<22} {seconds * 1000:.0f} ms  {seconds / found.baseline:.2f}x")
    print(f'python -c "import pygit2"  {found.baseline * 1000:.0f} ms')
