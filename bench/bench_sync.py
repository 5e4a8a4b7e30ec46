"""What a sync of two diverged stores costs, against `git fetch` of the same objects.

    python bench/bench_sync.py [--records N]

Two clones of one bare remote each write N records (default 10,000) into their
own store; the first syncs, so the remote holds its N. Then, in the same run,
on two identical copies of the second clone:

- baseline: `git fetch` of the remote's store (the objects a sync must bring in);
- sync: `git failres sync` in-process: that same fetch, the merge of the two
  stores (N records each side), and the push of the result.

The ratio says what the merge and the push add to the transport git does anyway.

`--little N`: instead, the cost of a sync when little diverged: two clones share a
store of N records (and, in the same run, of N / 10) and each writes 10 more; the
ratio of the two syncs says whether the cost grows with the store (goal: about 1).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import ENV, fill, lesson  # noqa: E402
from failres.remote.sync import fetch_refspecs, sync_store  # noqa: E402
from lessons.storage.records import change_of, read_collection, record_put  # noqa: E402
from lessons.storage.store import DEFAULT_REF, Store  # noqa: E402


@dataclass(frozen=True)
class SyncTimes:
    records: int  # per side
    fetch: float  # seconds, the baseline
    sync: float


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True).stdout


def diverged_clones(root: Path, records: int) -> tuple[Path, Path]:
    """(bare remote holding clone a's N records, clone b with its own N records, not synced)."""
    bare = root / "remote.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = root / "seed"
    git(root, "init", "-q", "-b", "main", str(seed))
    git(seed, "commit", "-q", "--allow-empty", "-m", "initial")
    git(seed, "push", "-q", str(bare), "main")
    clones = []
    for name in ("a", "b"):
        git(root, "clone", "-q", str(bare), str(root / name))
        fill(Store(root / name), records)
        clones.append(root / name)
    sync_store(clones[0], DEFAULT_REF, "origin")
    return bare, clones[1]


def copy_of(clone: Path, name: str) -> Path:
    target = clone.parent / name
    shutil.copytree(clone, target, symlinks=True)
    return target


def measure(root: Path, records: int) -> SyncTimes:
    bare, b = diverged_clones(root, records)
    fetch_copy = copy_of(b, "b-fetch")

    start = time.perf_counter()
    git(fetch_copy, "fetch", "-q", "--no-tags", "origin", *fetch_refspecs("origin"))
    fetch = time.perf_counter() - start

    start = time.perf_counter()
    result = sync_store(b, DEFAULT_REF, "origin")
    sync = time.perf_counter() - start

    if not result.pushed or len(read_collection(Store(bare), "lessons").records) != 2 * records:
        raise SystemExit("the sync did not leave every record of both sides on the remote")
    return SyncTimes(records, fetch, sync)


def shared_clones(root: Path, records: int, each: int = 10) -> Path:
    """A clone whose store and the remote's share `records` records and differ by `each` on each side."""
    root.mkdir(parents=True)
    bare = root / "remote.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = root / "seed"
    git(root, "init", "-q", "-b", "main", str(seed))
    git(seed, "commit", "-q", "--allow-empty", "-m", "initial")
    fill(Store(seed), records)
    git(seed, "push", "-q", str(bare), "main", f"{DEFAULT_REF}:{DEFAULT_REF}")
    clones = []
    for name in ("a", "b"):
        git(root, "clone", "-q", str(bare), str(root / name))
        sync_store(root / name, DEFAULT_REF, "origin")
        store = Store(root / name)
        for i in range(each):
            store.commit(change_of([record_put("lessons", lesson(records + i))]), f"failres: bench {name} {i}")
        clones.append(root / name)
    sync_store(clones[0], DEFAULT_REF, "origin")
    return clones[1]


def little_divergence(root: Path, records: int) -> tuple[float, float]:
    """(seconds of the sync at `records` shared records, at records / 10): 10 records diverged per side."""
    times = []
    for shared in (records, max(1, records // 10)):
        b = shared_clones(root / f"shared-{shared}", shared)
        start = time.perf_counter()
        sync_store(b, DEFAULT_REF, "origin")
        times.append(time.perf_counter() - start)
    return times[0], times[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--little", type=int, default=0, metavar="N")
    args = parser.parse_args()
    if args.little:
        with tempfile.TemporaryDirectory(prefix="failres-bench-sync-", ignore_cleanup_errors=True) as tmp:
            big, small = little_divergence(Path(tmp), args.little)
        print(f"sync, 10 records diverged per side: {args.little:,} shared {big:.2f} s vs "
              f"{args.little // 10:,} shared {small:.2f} s = ratio {big / small:.2f}")
        return
    with tempfile.TemporaryDirectory(prefix="failres-bench-sync-", ignore_cleanup_errors=True) as tmp:
        times = measure(Path(tmp), args.records)
    print(f"sync of two stores of {times.records:,} records each: {times.sync:.2f} s "
          f"vs git fetch {times.fetch:.2f} s = ratio {times.sync / times.fetch:.2f}")


if __name__ == "__main__":
    main()
