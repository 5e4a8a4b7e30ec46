"""What a sync of two diverged stores costs, against `git fetch` of the same objects.

    python bench/bench_sync.py [--records N] [--rounds N]
    python bench/bench_sync.py --little N [--rounds N]

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
The same ratio for a plain `git fetch` is printed beside it: what git's own
connectivity checks add as the store grows.

Every figure is a median of `--rounds` rounds (default 5), each from a fresh copy
of the same repositories, the timings of a round taken in turn.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
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
    fetch: float  # seconds, the baseline (median of the rounds)
    sync: float  # median of the rounds
    ratios: tuple[float, ...] = ()  # sync / fetch, round by round


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True).stdout


def new_remote(root: Path) -> Path:
    bare = root / "remote.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = root / "seed"
    git(root, "init", "-q", "-b", "main", str(seed))
    git(seed, "commit", "-q", "--allow-empty", "-m", "initial")
    git(seed, "push", "-q", str(bare), "main")
    return bare


def diverged_clones(root: Path, records: int) -> tuple[Path, Path]:
    """(bare remote holding clone a's N records, clone b with its own N records, not synced)."""
    bare = new_remote(root)
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


def fresh_pair(bare: Path, clone: Path, where: Path) -> tuple[Path, Path, Path]:
    """Copies of the remote and the clone (the clone pointing at the copy), and a second copy of
    the clone for the baseline: every round starts from the same state."""
    where.mkdir()
    remote = where / "remote.git"
    shutil.copytree(bare, remote, symlinks=True)
    b = where / "b"
    shutil.copytree(clone, b, symlinks=True)
    git(b, "remote", "set-url", "origin", str(remote))
    return remote, b, copy_of(b, "b-fetch")


def timed_fetch(clone: Path) -> float:
    start = time.perf_counter()
    git(clone, "fetch", "-q", "--no-tags", "origin", *fetch_refspecs("origin"))
    return time.perf_counter() - start


def timed_sync(clone: Path) -> tuple[float, object]:
    start = time.perf_counter()
    result = sync_store(clone, DEFAULT_REF, "origin")
    return time.perf_counter() - start, result


def measure(root: Path, records: int, rounds: int = 5) -> SyncTimes:
    """Medians over `rounds`, each from a fresh copy of the same two diverged stores, the
    baseline and the sync timed in turn (a shared machine is noisy)."""
    bare, b = diverged_clones(root, records)
    fetches, syncs = [], []
    for n in range(rounds):
        remote, clone, fetch_copy = fresh_pair(bare, b, root / f"round-{n}")
        fetches.append(timed_fetch(fetch_copy))
        seconds, result = timed_sync(clone)
        syncs.append(seconds)
        if not result.pushed or len(read_collection(Store(remote), "lessons").records) != 2 * records:
            raise SystemExit("the sync did not leave every record of both sides on the remote")
        shutil.rmtree(root / f"round-{n}", ignore_errors=True)
    return SyncTimes(records, statistics.median(fetches), statistics.median(syncs),
                     tuple(s / f for s, f in zip(syncs, fetches, strict=True)))


def shared_clones(root: Path, records: int, each: int = 10) -> tuple[Path, Path]:
    """(remote, clone) whose stores share `records` records and differ by `each` on each side."""
    root.mkdir(parents=True)
    bare = new_remote(root)
    seed = root / "seed"
    fill(Store(seed), records)
    git(seed, "push", "-q", str(bare), f"{DEFAULT_REF}:{DEFAULT_REF}")
    clones = []
    for name in ("a", "b"):
        git(root, "clone", "-q", str(bare), str(root / name))
        sync_store(root / name, DEFAULT_REF, "origin")
        store = Store(root / name)
        for i in range(each):
            store.commit(change_of([record_put("lessons", lesson(records + i))]), f"failres: bench {name} {i}")
        clones.append(root / name)
    sync_store(clones[0], DEFAULT_REF, "origin")
    return bare, clones[1]


def little_divergence(root: Path, records: int, rounds: int = 5) -> tuple[SyncTimes, SyncTimes]:
    """(at `records` shared records, at records / 10), 10 records diverged per side: medians
    of the sync and of the `git fetch` baseline, the sizes timed in turn."""
    sizes = (records, max(1, records // 10))
    built = {shared: shared_clones(root / f"shared-{shared}", shared) for shared in sizes}
    fetches: dict[int, list[float]] = {shared: [] for shared in sizes}
    syncs: dict[int, list[float]] = {shared: [] for shared in sizes}
    for n in range(rounds):
        for shared in sizes:
            where = root / f"round-{shared}-{n}"
            _, clone, fetch_copy = fresh_pair(*built[shared], where)
            fetches[shared].append(timed_fetch(fetch_copy))
            syncs[shared].append(timed_sync(clone)[0])
            shutil.rmtree(where, ignore_errors=True)
    return tuple(SyncTimes(shared, statistics.median(fetches[shared]), statistics.median(syncs[shared]))
                 for shared in sizes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--little", type=int, default=0, metavar="N")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.little:
        with tempfile.TemporaryDirectory(prefix="failres-bench-sync-", ignore_cleanup_errors=True) as tmp:
            big, small = little_divergence(Path(tmp), args.little, args.rounds)
        print(f"sync, 10 records diverged per side: {big.records:,} shared {big.sync:.3f} s vs "
              f"{small.records:,} shared {small.sync:.3f} s = ratio {big.sync / small.sync:.2f} "
              f"(git fetch alone: {big.fetch:.3f} s vs {small.fetch:.3f} s = ratio {big.fetch / small.fetch:.2f}); "
              f"medians of {args.rounds}")
        return
    with tempfile.TemporaryDirectory(prefix="failres-bench-sync-", ignore_cleanup_errors=True) as tmp:
        times = measure(Path(tmp), args.records, args.rounds)
    low, high = min(times.ratios), max(times.ratios)
    print(f"sync of two stores of {times.records:,} records each: {times.sync:.2f} s "
          f"vs git fetch {times.fetch:.2f} s = ratio {times.sync / times.fetch:.2f} "
          f"(medians of {args.rounds}; round by round {low:.2f}-{high:.2f})")


if __name__ == "__main__":
    main()
