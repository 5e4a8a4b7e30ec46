"""Store write costs, each against a baseline timed in the same run.

    python bench/bench_store.py [--appends N] [--big N]

- single-record appends vs a `git notes add` loop (both one git object write + ref move per item);
- append cost in a store of `--big` records vs one of 1,000 (should be ~1: appends rewrite a
  fixed number of small trees), in wall time and in cpu time (the steadier on a busy machine);
- batch import rate for 10,000 records;
- loose objects and bytes per appended record, and what `git gc` makes of them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lessons.storage.records import change_of, new_id, record_put  # noqa: E402
from lessons.storage.store import Store  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
os.environ.update({k: v for k, v in ENV.items() if k.startswith("GIT_")})


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True).stdout


def new_repo(root: Path, name: str) -> Path:
    path = root / name
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "commit", "-q", "--allow-empty", "-m", "initial")
    Store(path).create()  # as `git failres init` leaves it: a write never creates a store
    return path


def lesson(n: int) -> dict:
    return {"id": new_id(), "ts": "2026-11-30T00:00:00.000000Z", "slug": "bench", "task": f"t{n % 97}",
            "failClass": "gate-not-green-after-fixer", "signature": f"gate-not-green-after-fixer|test {n % 13} failed",
            "package": "src", "message": f"test {n % 13} failed", "intHead": "0" * 40, "resolved_by": None}


def fill(store: Store, count: int) -> None:
    store.create()  # a no-op on a store that exists
    changes = (change_of([record_put("lessons", lesson(i))]) for i in range(count))
    store.commit_batches(changes, "failres: bench fill", batch_size=10_000)


def time_appends(store: Store, count: int) -> float:
    start = time.perf_counter()
    for i in range(count):
        store.commit(change_of([record_put("lessons", lesson(i))]), f"failres: bench append {i}")
    return (time.perf_counter() - start) / count


def time_appends_interleaved(small: Store, big: Store, count: int, rounds: int = 10) -> tuple[float, float]:
    """Median per-append time of each store, measured in alternating rounds after a warm-up,
    so neither side gets the cold start (imports, first lock file) or a quieter moment."""
    import statistics

    for store in (small, big):
        time_appends(store, 5)
    per_round = max(1, count // rounds)
    a, b = [], []
    for _ in range(rounds):
        a.append(time_appends(small, per_round))
        b.append(time_appends(big, per_round))
    return statistics.median(a), statistics.median(b)


def cpu_appends_interleaved(small: Store, big: Store, count: int) -> tuple[float, float]:
    """Median cpu time of one append in each store, the stores taking turns append by append:
    on a shared machine the wall time of a round follows the neighbours, the cpu time much less."""
    import statistics

    times: tuple[list[float], list[float]] = ([], [])
    for i in range(count + 10):
        for side, store in enumerate((small, big)):
            change = change_of([record_put("lessons", lesson(i))])
            start = time.process_time()
            store.commit(change, f"failres: bench append {i}")
            if i >= 10:  # the first few pay for imports and cold caches
                times[side].append(time.process_time() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def time_notes(repo: Path, count: int) -> float:
    commits = git(repo, "rev-list", "HEAD").split()
    start = time.perf_counter()
    for i in range(count):
        git(repo, "notes", "--ref", "bench", "add", "-f", "-m", f"note {i}", commits[0])
    return (time.perf_counter() - start) / count


def loose_stats(repo: Path) -> tuple[int, int]:
    out = git(repo, "count-objects", "-v")
    fields = dict(line.split(": ") for line in out.splitlines())
    return int(fields["count"]), int(fields["size"]) * 1024 + int(fields.get("size-pack", 0)) * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=300)
    parser.add_argument("--big", type=int, default=100_000)
    args = parser.parse_args()
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="failres-bench-") as tmp:
        root = Path(tmp)

        notes_repo = new_repo(root, "notes")
        per_note = time_notes(notes_repo, args.appends)
        small = Store(new_repo(root, "small"))
        fill(small, 1_000)
        big_repo = new_repo(root, "big")
        big = Store(big_repo)
        start = time.perf_counter()
        fill(big, 10_000)
        batch_rate = 10_000 / (time.perf_counter() - start)
        fill(big, args.big - 10_000)
        per_small, per_big = time_appends_interleaved(small, big, args.appends)
        rows.append(("append one record (1k store)", f"{1 / per_small:,.0f}/s", f"git notes add {1 / per_note:,.0f}/s",
                     f"{per_small / per_note:.2f}x the time"))
        rows.append(("batch import 10k records", f"{batch_rate:,.0f} records/s", "-", "-"))
        rows.append((f"append at {args.big:,} vs 1k records", f"{per_big * 1000:.2f} ms", f"{per_small * 1000:.2f} ms",
                     f"{per_big / per_small:.2f}x"))
        cpu_small, cpu_big = cpu_appends_interleaved(small, big, args.appends)
        rows.append(("the same, cpu time", f"{cpu_big * 1000:.2f} ms", f"{cpu_small * 1000:.2f} ms",
                     f"{cpu_big / cpu_small:.2f}x"))

        git(big_repo, "gc", "-q")
        loose0, bytes0 = loose_stats(big_repo)
        n = args.appends
        time_appends(big, n)
        loose1, bytes1 = loose_stats(big_repo)
        rows.append(("loose objects per append", f"{(loose1 - loose0) / n:.1f} objects",
                     f"{(bytes1 - bytes0) / n / 1024:.1f} KiB", "before gc"))
        git(big_repo, "gc", "-q")
        loose2, bytes2 = loose_stats(big_repo)
        rows.append(("after git gc", f"{loose2} loose", f"{(bytes2 - bytes0) / n / 1024:.2f} KiB/record", "packed"))

    width = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(width[i]) for i, cell in enumerate(row)))


if __name__ == "__main__":
    main()
