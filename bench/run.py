"""The benchmark suite: one table, every figure a ratio against a baseline timed in the same run.

    python bench/run.py [--quick] [--row NAME] [--import-lessons N]

Builds its own data (in a temporary directory; the 50,000-file repository of the
scope row is cached under bench/out/) and prints one row per measure. `--quick`
uses small sizes so the whole suite runs in seconds (a smoke test runs it); its
ratios are not the ones to quote. bench/README.md says what each row measures.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))
# The hooks call `git failres`: the suite measures this installation's, not whatever is on PATH.
os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
# No automatic `git gc`: it would land, detached, in whichever timing happened to trigger it
# (and still be writing into a repository when the suite removes it).
os.environ.update({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "gc.auto", "GIT_CONFIG_VALUE_0": "0"})

import bench_store  # noqa: E402  (sets the bench's git identity)
from lessons.recall.lesson import stamp_put  # noqa: E402
from lessons.storage.records import change_of, record_put  # noqa: E402
from lessons.recall.retrieval import relevant_lessons  # noqa: E402
from lessons.storage.store import Store  # noqa: E402

ROWS = ("store append", "append at big vs small", "retrieval at big vs small", "scope check", "first scope check",
        "hook overhead",
        "sync of diverged stores", "tab completion", "tasks at once", "runners of one plan",
        "one task, git/git-sized", "one task, 50,000 files", "read command start-up", "bulk import", "seat world",
        "remote commands, small store", "remote commands, 10,000 records")


@dataclass(frozen=True)
class Sizes:
    appends: int  # timed appends per store
    small: int  # records in the small store
    big: int  # records in the big store
    queries: int  # timed retrievals per store
    scope_files_per_directory: int  # x 500 directories; 100 is the real 50,000
    rounds: int  # best-of / median-of repetitions
    sync_records: int  # per side
    job_tasks: int = 8  # tasks of the --jobs row, each a seat of job_seconds
    job_seconds: float = 5.0
    remote_tasks: int = 12  # tasks of the --remote row, worked by one runner, then by three
    loop_tasks: int = 6  # tasks of the one-task rows (per-task figures, after one warm-up task each side)
    loop_files: tuple[int, int] = (5_000, 50_000)  # the git/git-sized repository (with 1,000 refs), the large one
    import_lessons: int = 20_000
    world_tasks: int = 6  # tasks of the seat-world row, each one dispatch and one gate
    remote_cmd_records: int = 10_000  # lessons in the large store of the remote-commands rows


FULL = Sizes(appends=300, small=1_000, big=100_000, queries=50, scope_files_per_directory=100, rounds=15,
             sync_records=10_000)
QUICK = Sizes(appends=10, small=100, big=1_000, queries=5, scope_files_per_directory=8, rounds=2,
              sync_records=200, job_tasks=4, job_seconds=0.5, remote_tasks=3, loop_tasks=1,
              loop_files=(300, 1_000), import_lessons=500, world_tasks=2, remote_cmd_records=200)


@dataclass(frozen=True)
class Row:
    """One measure: what was timed, the baseline it is compared with, and their ratio."""

    name: str
    what: str
    measured: str
    baseline: str
    ratio: str


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms" if seconds < 0.1 else f"{seconds * 1000:.0f} ms"


def ratio(measured: float, baseline: float) -> str:
    return f"{measured / baseline:.2f}x" if baseline > 0 else "-"


# ---- the rows ----


def fill_lessons(store: Store, count: int) -> None:
    """`count` lessons, every fourth resolved (retrieval returns resolved lessons only)."""
    def changes():
        for n in range(count):
            doc = bench_store.lesson(n)
            if n % 4 == 0:
                doc["resolved_by"] = ["unknown"]
            yield change_of([record_put("lessons", doc)])

    store.commit_batches(changes(), "failres: bench fill", batch_size=10_000)


def time_retrieval(store: Store, queries: int) -> tuple[float, float]:
    """(first query: the index is built, median query after a fresh stamped append)."""
    start = time.perf_counter()
    relevant_lessons(store, "gate-not-green-after-fixer")
    first = time.perf_counter() - start
    times = []
    for n in range(queries):
        doc = {**bench_store.lesson(n), "ts": f"2030-01-01T00:00:00.{n:06d}Z"}  # newer than the fill
        store.commit(change_of([record_put("lessons", doc),
                                stamp_put(doc["id"], ["unknown"], doc["ts"], "0" * 40)]), "failres: bench stamp")
        start = time.perf_counter()
        found = relevant_lessons(store, "gate-not-green-after-fixer")
        times.append(time.perf_counter() - start)
        if doc["id"] not in [d["id"] for d in found]:
            raise SystemExit("retrieval missed the lesson written just before it")
    return first, statistics.median(times)


def store_rows(root: Path, sizes: Sizes) -> list[Row]:
    per_note = bench_store.time_notes(bench_store.new_repo(root, "notes"), sizes.appends)
    small = Store(bench_store.new_repo(root, "small"))
    fill_lessons(small, sizes.small)
    big = Store(bench_store.new_repo(root, "big"))
    fill_lessons(big, sizes.big)
    for store in (small, big):
        bench_store.time_appends(store, 5)  # warm-up: the first appends of a process pay for loading
    per_small = bench_store.time_appends(small, sizes.appends)
    per_big = bench_store.time_appends(big, sizes.appends)
    build_small, query_small = time_retrieval(small, sizes.queries)
    build_big, query_big = time_retrieval(big, sizes.queries)
    print(f"index built in {build_small:.2f} s ({sizes.small:,}) and {build_big:.2f} s ({sizes.big:,})",
          file=sys.stderr)
    return [
        Row(ROWS[0], f"one record, {sizes.small:,}-record store", ms(per_small), f"git notes add {ms(per_note)}",
            ratio(per_small, per_note)),
        Row(ROWS[1], f"one record at {sizes.big:,} vs {sizes.small:,}", ms(per_big), ms(per_small),
            ratio(per_big, per_small)),
        Row(ROWS[2], f"relevant lessons at {sizes.big:,} vs {sizes.small:,}", ms(query_big), ms(query_small),
            ratio(query_big, query_small)),
    ]


def scope_row(root: Path, sizes: Sizes) -> list[Row]:
    import bench_scope as scope

    if sizes.scope_files_per_directory != scope.FILES_PER_DIRECTORY:
        # A smaller repository in this run's directory; the cached 50,000 files stay as they are.
        out = root / "scope"
        scope.OUT, scope.REPO, scope.WORKTREE, scope.BUILT_MARKER = out, out / "repo", out / "task", out / "built"
        scope.FILES_PER_DIRECTORY = sizes.scope_files_per_directory
    scope.build_repository()
    workspace = scope.make_workspace()
    found = scope.dispatch_checks(workspace, sizes.rounds)
    workspace.remove()
    files = scope.DIRECTORIES * scope.FILES_PER_DIRECTORY
    return [Row(ROWS[3], f"{files:,} files, 6 changed, at a dispatch", f"{found.later_ms:.0f} ms",
                f"git status --porcelain {found.later_status_ms:.0f} ms", ratio(found.later_ms, found.later_status_ms)),
            Row(ROWS[4], f"the same, a task's first ({found.racy:,} files in the index's second;"
                f" handover {found.handover_ms:.0f} ms)",
                f"{found.first_ms:.0f} ms", f"git status --porcelain {found.first_status_ms:.0f} ms",
                ratio(found.first_ms, found.first_status_ms))]


def hook_row(root: Path, sizes: Sizes) -> Row:
    if importlib.util.find_spec("failres.hooks.run") is None or not (BENCH / "bench_lessons.py").exists():
        return Row(ROWS[5], "post-merge hook", "not available", "-", "-")
    import bench_lessons

    hook, pygit2_import = bench_lessons.non_task_merge_hook(root, max(3, sizes.rounds))
    return Row(ROWS[5], "post-merge hook, non-task merge", ms(hook), f'python -c "import pygit2" {ms(pygit2_import)}',
               ratio(hook, pygit2_import))


def sync_row(root: Path, sizes: Sizes) -> Row:
    import bench_sync

    (root / "sync").mkdir()
    times = bench_sync.measure(root / "sync", sizes.sync_records, rounds=min(5, sizes.rounds))
    return Row(ROWS[6], f"{times.records:,} + {times.records:,} records, fetch + merge + push (median)",
               f"{times.sync:.2f} s", f"git fetch {times.fetch:.2f} s", ratio(times.sync, times.fetch))


def completion_row(sizes: Sizes) -> Row:
    import bench_cli

    times = bench_cli.measure(max(3, sizes.rounds))
    return Row(ROWS[7], "git-failres __complete lessons l, a process", ms(times.complete),
               f'python -c "import pygit2" {ms(times.baseline)}', ratio(times.complete, times.baseline))


def remote_cmd_rows(sizes: Sizes) -> list[Row]:
    import bench_remote_cmds

    rows = []
    for name, records in zip(ROWS[15:17], (0, sizes.remote_cmd_records)):
        found = bench_remote_cmds.measure(max(3, sizes.rounds), records)
        for command, timed in (("status --remote", found.status), ("sync", found.sync)):
            rows.append(Row(name, f"{command}, a process, {records:,} records (cpu {ms(timed.cpu)}, "
                            f"{found.ratio(timed, cpu=True):.2f}x; goal <= {found.goal():.2f}x)", ms(timed.wall),
                            f"import pygit2 {ms(found.start.wall)} + git fetch {ms(found.fetch.wall)}",
                            ratio(timed.wall, found.start.wall + found.fetch.wall)))
    return rows


# ---- the table ----


def run_row(build: Callable[[], Row | list[Row]], names: tuple[str, ...]) -> list[Row]:
    """A row that fails says so in the table instead of taking the others down with it."""
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(sys.stderr):  # progress lines go to stderr; stdout is the table
            built = build()
    except (Exception, SystemExit) as problem:  # noqa: BLE001 - reported in the table
        return [Row(name, "failed", f"{type(problem).__name__}: {problem}"[:60], "-", "-") for name in names]
    print(f"{', '.join(names)}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return built if isinstance(built, list) else [built]


def render(rows: list[Row], quick: bool) -> str:
    header = Row("row", "what", "measured", "baseline", "ratio")
    table = [header, *rows]
    widths = [max(len(getattr(r, f)) for r in table) for f in ("name", "what", "measured", "baseline", "ratio")]
    lines = [f"failres benchmarks ({'quick sizes: smoke test only' if quick else 'full sizes'}); "
             "ratio = measured / baseline, both timed in this run"]
    for row in table:
        cells = (row.name, row.what, row.measured, row.baseline, row.ratio)
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip())
    return "\n".join(lines)


def jobs_row(sizes: Sizes) -> Row:
    import bench_jobs

    serial, parallel = bench_jobs.measure(sizes.job_tasks, sizes.job_seconds, 4)
    return Row(ROWS[8], f"run --jobs 4, {sizes.job_tasks} tasks of {sizes.job_seconds:g} s", f"{parallel:.1f} s",
               f"--jobs 1 {serial:.1f} s", ratio(parallel, serial))


def remote_row(sizes: Sizes) -> Row:
    import bench_remote

    one, many = bench_remote.measure(sizes.remote_tasks, sizes.job_seconds, 3)
    return Row(ROWS[9], f"run --remote, 3 runners vs 1, {sizes.remote_tasks} tasks of {sizes.job_seconds:g} s",
               f"{many:.1f} s", f"1 runner {one:.1f} s", ratio(many, one))


def loop_rows(sizes: Sizes) -> list[Row]:
    import bench_loop

    rows = []
    for name, files, refs in ((ROWS[10], sizes.loop_files[0], 1_000), (ROWS[11], sizes.loop_files[1], 0)):
        total, commands, floor, cpu, floor_cpu = bench_loop.measure(sizes.loop_tasks, files, refs)
        rows.append(Row(name, f"run of a task, {files:,} files, {refs:,} refs (overhead per task; cpu "
                              f"{ms(cpu)} vs {ms(floor_cpu)} = {ratio(cpu, floor_cpu)})",
                        ms(total - commands), f"worktree add+edit+commit+remove {ms(floor)}",
                        ratio(total - commands, floor)))
    return rows


def startup_row(sizes: Sizes) -> Row:
    import bench_startup

    times = bench_startup.measure(max(3, sizes.rounds))
    status = times.commands["status --json"]
    return Row(ROWS[12], "status --json, a process (--version: " + ms(times.commands["--version"]) + ")",
               ms(status), f'python -c "import pygit2" {ms(times.baseline)}', ratio(status, times.baseline))


def import_row(root: Path, sizes: Sizes) -> Row:
    """`git failres lessons import` as users run it: a whole process, with the store's policy in force
    (its reclaim after the write included). An in-process import without the policy once read 9,089/s
    where the command itself made ~2,600/s."""
    import json as json_module
    import subprocess

    repo = bench_store.new_repo(root, "import")
    lines = root / "import.jsonl"
    with lines.open("w") as out:
        for i in range(sizes.import_lessons):
            out.write(json_module.dumps({
                "ts": "2026-11-30T00:00:00Z", "slug": "other", "task": f"t{i % 97}",
                "failClass": "gate-not-green-after-fixer",
                "message": f"FAILED tests/test_m{i % 50}.py::test_{i} - AssertionError: assert {i} == {i + 1}"}) + "\n")
    before = os.times()
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "failres", "lessons", "import", str(lines)], cwd=repo, env=bench_store.ENV,
                   check=True, capture_output=True)
    took = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    # The floor: the same records, already checked and encoded, written by git fast-import alone.
    from lessons.storage import bulk
    from lessons.storage.trees import Change

    store = Store(repo)
    # The import's own last commit (the policy's reclaim may have moved records on after it).
    tip = next(commit for commit in store.repo.walk(store.commit_at().id)
               if commit.message.startswith("failres: import"))
    records = {path: store.blob(oid) for path, oid in store.walk("lessons", tip)}
    floor_store = Store(bench_store.new_repo(root, "import-floor"))
    start = time.perf_counter()
    bulk.write_commit(floor_store.common_dir, floor_store.commit_at(), Change(records), "floor", store.signature())
    floor = time.perf_counter() - start
    rate = sizes.import_lessons / took
    return Row(ROWS[13], f"git failres lessons import of {sizes.import_lessons:,} lines, a process "
               f"({rate:,.0f} lessons/s; {sizes.import_lessons / max(cpu, 1e-9):,.0f}/s of cpu)", ms(took),
               f"git fast-import of the records {ms(floor)}", ratio(took, floor))


def world_row(sizes: Sizes) -> Row:
    import bench_world

    world, off = bench_world.measure(sizes.world_tasks, max(1, sizes.rounds // 5))
    return Row(ROWS[14], f"run of {sizes.world_tasks} tasks, world vs mode off", f"{world:.2f} s",
               f"mode off {off:.2f} s", ratio(world, off))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: checks the suite runs, in seconds")
    parser.add_argument("--row", action="append", choices=ROWS, metavar="NAME",
                        help="measure only this row (repeatable); the others are left out of the table")
    parser.add_argument("--import-lessons", type=int, metavar="N", help="lines of the bulk import row's file")
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    if args.import_lessons:
        sizes = replace(sizes, import_lessons=args.import_lessons)
    wanted = set(args.row or ROWS)
    with tempfile.TemporaryDirectory(prefix="failres-bench-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        measures = (
            (0, 3, lambda: store_rows(root, sizes)),
            (3, 5, lambda: scope_row(root, sizes)),
            (5, 6, lambda: hook_row(root, sizes)),
            (6, 7, lambda: sync_row(root, sizes)),
            (7, 8, lambda: completion_row(sizes)),
            (8, 9, lambda: jobs_row(sizes)),
            (9, 10, lambda: remote_row(sizes)),
            (10, 12, lambda: loop_rows(sizes)),
            (12, 13, lambda: startup_row(sizes)),
            (13, 14, lambda: import_row(root, sizes)),
            (14, 15, lambda: world_row(sizes)),
            (15, 17, lambda: remote_cmd_rows(sizes)),
        )
        rows: list[Row] = []
        for first, last, build in measures:
            if wanted.intersection(ROWS[first:last]):
                rows += run_row(build, ROWS[first:last])
    print(render(rows, args.quick))
    return 1 if any(row.what == "failed" for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
