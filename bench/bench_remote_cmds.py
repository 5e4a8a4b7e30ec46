"""What `status --remote` and `sync` cost as whole processes, against starting failres and a `git fetch`.

    python bench/bench_remote_cmds.py [--rounds N] [--records N]

People run both many times a day, and a runner after every task. A clone and a bare
remote hold the same store (a plan's journal and claims of its tasks on the remote, and
N lessons: a small store, then one of `--records`, default 10,000), so a sync finds
nothing new, as most do. Timed in turns, each a whole process, medians of the rounds,
wall and cpu time (the process and its children):

- `python -c "import pygit2"`: what any failres process pays to start;
- `git fetch` of the remote's store ref into a tracking ref: git's own look at the remote;
- `git failres status --remote origin --json` and `git failres sync origin --json`.

The ratio is the command's time over start + fetch; the goal is at most
(start + 1.5 x fetch) / (start + fetch), printed beside it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import ENV, fill, git  # noqa: E402
from failres.journal import event_put, make_event  # noqa: E402
from failres.remote.claims import new_claim  # noqa: E402
from failres.remote.transport import RemoteClaims  # noqa: E402
from lessons.storage.records import change_of  # noqa: E402
from lessons.storage.store import Store  # noqa: E402

FETCH = ["git", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "origin",
         "+refs/failres/store:refs/remotes/origin/bench-store"]


@dataclass(frozen=True)
class Timed:
    wall: float  # median seconds
    cpu: float  # median seconds of cpu, the process and its children


@dataclass(frozen=True)
class RemoteCmdTimes:
    records: int
    start: Timed  # python -c "import pygit2"
    fetch: Timed  # git fetch of the store
    status: Timed  # status --remote origin --json
    sync: Timed  # sync origin --json

    def ratio(self, measured: Timed, cpu: bool = False) -> float:
        if cpu:
            return measured.cpu / (self.start.cpu + self.fetch.cpu)
        return measured.wall / (self.start.wall + self.fetch.wall)

    def goal(self, cpu: bool = False) -> float:
        start, fetch = (self.start.cpu, self.fetch.cpu) if cpu else (self.start.wall, self.fetch.wall)
        return (start + 1.5 * fetch) / (start + fetch)


def _run(argv: list[str], cwd: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=ENV, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def prepare(root: Path, records: int, tasks: int = 6) -> Path:
    """A clone whose store (a plan's journal and `records` lessons) and claims are on its bare remote too."""
    bare, clone = root / "remote.git", root / "clone"
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    git(root, "init", "-q", "-b", "main", str(clone))
    git(clone, "commit", "-q", "--allow-empty", "-m", "initial")
    git(clone, "remote", "add", "origin", str(bare))
    git(clone, "push", "-q", "origin", "main")
    store = Store(clone)
    fill(store, records)
    events = [make_event("task-started", "bench", f"t{n}", intHead="0" * 40) for n in range(tasks)]
    store.commit(change_of([event_put(e) for e in events]), "failres: bench journal")
    claims = RemoteClaims(clone, "origin", "bench")
    for n in range(tasks):
        claim = new_claim("bench", f"t{n}", host="bench", pid=1, run="r", now=datetime.now(UTC), lease=3600)
        claims.swap(claims.write(claim, ""), "")
    subprocess.run([sys.executable, "-m", "failres", "sync", "origin"], cwd=clone, env=ENV, check=True,
                   capture_output=True)
    return clone


def measure(rounds: int, records: int, root: Path | None = None) -> RemoteCmdTimes:
    failres = [sys.executable, "-m", "failres"]
    commands = {"start": [sys.executable, "-c", "import pygit2"], "fetch": FETCH,
                "status": [*failres, "status", "--remote", "origin", "--json"],
                "sync": [*failres, "sync", "origin", "--json"]}
    with tempfile.TemporaryDirectory(prefix="bench-remote-cmds-", dir=root) as tmp:
        clone = prepare(Path(tmp), records)
        # An installed failres has its bytecode: write it once, even under PYTHONDONTWRITEBYTECODE.
        caching = {k: v for k, v in ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for argv in commands.values():
            subprocess.run(argv, cwd=clone, env=caching, check=True, capture_output=True)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(rounds):
            for name, argv in commands.items():
                times[name].append(_run(argv, clone))

    def median(name: str) -> Timed:
        return Timed(statistics.median(w for w, _ in times[name]), statistics.median(c for _, c in times[name]))

    return RemoteCmdTimes(records, median("start"), median("fetch"), median("status"), median("sync"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21, help="timed rounds, medians taken (default 21)")
    parser.add_argument("--records", type=int, default=10_000, help="lessons in the large store (default 10,000)")
    args = parser.parse_args(argv)
    for records in (0, args.records):
        found = measure(args.rounds, records)
        print(f"{records:,} records: import pygit2 {found.start.wall * 1000:.0f} ms (cpu {found.start.cpu * 1000:.0f}),"
              f" git fetch {found.fetch.wall * 1000:.0f} ms (cpu {found.fetch.cpu * 1000:.0f})")
        for name, timed in (("status --remote", found.status), ("sync", found.sync)):
            print(f"  {name:<16} {timed.wall * 1000:.0f} ms {found.ratio(timed):.2f}x (goal <= {found.goal():.2f}x);"
                  f" cpu {timed.cpu * 1000:.0f} ms {found.ratio(timed, cpu=True):.2f}x"
                  f" (goal <= {found.goal(cpu=True):.2f}x)")


if __name__ == "__main__":
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    main()
