"""How long a person waits for the command line itself: a <TAB>, and `-h`.

    python bench/bench_cli.py [ROUNDS]

Completion runs `git-failres __complete ...` as a process on every <TAB>, so its
latency is the start of failres plus reading the command tree kept for this source
(described from the app once, in the warm-up, as after an install); a value only the
repository knows (`decide <TAB>`, `land demo <TAB>`) adds the git reads that find it,
timed in the demo's repository. Each is timed as a whole process, alternating with the
baseline `python -c "import pygit2"` (what any failres process pays to start), medians
of ROUNDS.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CliTimes:
    complete: float  # git-failres __complete lessons l
    values: float  # git-failres __complete lessons show '' in the demo's repository
    help: float  # git-failres run -h
    baseline: float  # python -c "import pygit2"


def _timed(argv: list[str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, cwd=cwd)
    return time.perf_counter() - start


def measure(rounds: int) -> CliTimes:
    failres = [sys.executable, "-m", "failres"]
    complete, values, helps, baseline = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        demo = Path(tmp) / "demo"
        subprocess.run([*failres, "demo", "--keep", str(demo)], check=True, capture_output=True)
        _timed([*failres, "__complete", ""])  # warm the file cache before timing anything
        for _ in range(rounds):
            baseline.append(_timed([sys.executable, "-c", "import pygit2"]))
            complete.append(_timed([*failres, "__complete", "lessons", "l"]))
            values.append(_timed([*failres, "__complete", "lessons", "show", ""], cwd=demo))
            helps.append(_timed([*failres, "run", "-h"]))
    return CliTimes(statistics.median(complete), statistics.median(values), statistics.median(helps),
                    statistics.median(baseline))


if __name__ == "__main__":
    times = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
    print(f"<TAB> (__complete)  {times.complete * 1000:.0f} ms  {times.complete / times.baseline:.2f}x")
    print(f"<TAB> for lesson ids  {times.values * 1000:.0f} ms  {times.values / times.baseline:.2f}x")
    print(f"run -h              {times.help * 1000:.0f} ms  {times.help / times.baseline:.2f}x")
    print(f'python -c "import pygit2"  {times.baseline * 1000:.0f} ms')
