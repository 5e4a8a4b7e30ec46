"""The lessons loop's read and hook costs, each against a baseline timed in the same run.

    python bench/bench_lessons.py [--big N] [--small N] [--repeat N]

- `git failres lessons relevant` as a whole process in a store of `--big` lessons vs one of
  `--small` (ratio; ~1 would mean a query does not read the whole store);
- the post-merge hook's added time on a merge of a non-task branch vs `python -c "import pygit2"`
  (ratio; the hook should cost no more than twice that);
- the same hook on a task merge, in the store of `--big` lessons: the merge with the hook minus
  the same merge with hooks off.

Stores are built the way other harnesses load lessons: `lessons import` of JSONL.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import ENV, git  # noqa: E402  (importing it sets the bench's git identity)
from failres.hooks.install import install_hooks  # noqa: E402
from failres.journal import event_put, make_event, sequence  # noqa: E402
from lessons.recall.importer import import_lessons  # noqa: E402
from lessons.recall.lesson import lesson_put, make_lesson  # noqa: E402
from lessons.storage.records import change_of  # noqa: E402
from lessons.storage.store import Store  # noqa: E402

CLASSES = ("gate-not-green-after-fixer", "fixer-scope-violation", "wrapper-engine-down", "seat-timeout")
RESOLUTIONS = (["unknown"], ["scope-widened"], ["integration-head-moved"], None)


def new_repo(root: Path, name: str) -> Path:
    path = root / name
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("bench\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial")
    return path


def jsonl(path: Path, count: int) -> Path:
    with path.open("w") as out:
        for n in range(count):
            day, second = divmod(n, 86_400)
            resolved = RESOLUTIONS[n % len(RESOLUTIONS)]
            doc = {"ts": f"2030-{1 + day // 28:02d}-{1 + day % 28:02d}T{second // 3600:02d}:{second // 60 % 60:02d}:"
                         f"{second % 60:02d}Z",
                   "slug": f"plan{n % 50}", "task": f"t{n % 97}", "failClass": CLASSES[n % len(CLASSES)],
                   "message": f"check {n % 13} failed after {n % 7}.{n % 10}s", "package": "src",
                   "resolved_by": resolved, "resolved_at": "2030-12-01T00:00:00Z" if resolved else None}
            out.write(json.dumps(doc) + "\n")
    return path


def build_store(root: Path, name: str, count: int) -> tuple[Path, float]:
    repo = new_repo(root, name)
    source = jsonl(root / f"{name}.jsonl", count)
    start = time.perf_counter()
    result = import_lessons(Store(repo), [source])
    assert result.imported == count, result
    return repo, time.perf_counter() - start


def timed(argv: list[str], cwd: Path, repeat: int) -> float:
    """Median wall time of a whole process."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=ENV, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def relevant(repo: Path, repeat: int) -> float:
    return timed([sys.executable, "-m", "failres", "lessons", "relevant", "--fail-class", CLASSES[0], "--json"],
                 repo, repeat)


def non_task_merge_hook(root: Path, repeat: int) -> tuple[float, float]:
    """(the installed post-merge script after a non-task merge, `python -c "import pygit2"`)."""
    repo = new_repo(root, "hooked")
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "side.txt").write_text("side\n")
    git(repo, "add", "side.txt")
    git(repo, "commit", "-q", "-m", "side work")
    git(repo, "checkout", "-q", "main")
    git(repo, "-c", "core.hooksPath=/dev/null", "merge", "-q", "--no-ff", "--no-edit", "side")  # sets ORIG_HEAD
    install_hooks(repo)
    hook = timed([str(repo / ".git" / "hooks" / "post-merge"), "0"], repo, repeat)
    baseline = timed([sys.executable, "-c", "import pygit2"], repo, repeat)
    return hook, baseline


def prepare_task(repo: Path) -> tuple[str, str]:
    """A quarantined-then-committed task rr/t1 on its branch; returns (main, store tip) to reset to."""
    base = git(repo, "rev-parse", "main").strip()
    store = Store(repo)
    lesson = make_lesson(slug="rr", task="t1", fail_class=CLASSES[0], message="check 1 failed", files=["src/a.py"],
                         int_head=base, snapshot=None)
    events = [make_event("task-started", "rr", "t1", intHead=base),
              make_event("quarantined", "rr", "t1", failClass=CLASSES[0], signature=lesson["signature"],
                         message="check 1 failed", intHead=base, lesson=lesson["id"]),
              make_event("task-started", "rr", "t1", intHead=base)]
    git(repo, "checkout", "-q", "-b", "failres/rr/t1")
    (repo / "fix.txt").write_text("fixed\n")
    git(repo, "add", "fix.txt")
    git(repo, "commit", "-q", "-m", "failres: rr/t1 fix\n\nFailres-Task: rr/t1")
    events.append(make_event("task-committed", "rr", "t1", commit=git(repo, "rev-parse", "HEAD").strip()))
    git(repo, "checkout", "-q", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "main moves on")  # so the merge is a true merge
    store.commit(change_of([lesson_put(lesson), *(event_put(e) for e in sequence(events))]), "bench: a task")
    install_hooks(repo)
    return git(repo, "rev-parse", "main").strip(), git(repo, "rev-parse", "refs/failres/store").strip()


def task_merge_hook(repo: Path, repeat: int) -> tuple[float, float]:
    """(merge of the task branch with the hook, the same merge with hooks off), medians."""
    main, store_tip = prepare_task(repo)

    def once(hooks: bool) -> float:
        git(repo, "reset", "-q", "--hard", main)
        git(repo, "update-ref", "refs/failres/store", store_tip)
        config = [] if hooks else ["-c", "core.hooksPath=/dev/null"]
        start = time.perf_counter()
        git(repo, *config, "merge", "-q", "--no-ff", "--no-edit", "failres/rr/t1")
        return time.perf_counter() - start

    with_hook = statistics.median(once(True) for _ in range(repeat))
    landed = "land rr/t1" in git(repo, "log", "-1", "--format=%s", "refs/failres/store")
    without = statistics.median(once(False) for _ in range(repeat))
    assert landed, "the hook did not stamp the task merge"
    return with_hook, without


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="failres-bench-lessons-") as tmp:
        root = Path(tmp)
        small, small_build = build_store(root, "small", args.small)
        big, big_build = build_store(root, "big", args.big)
        t_small, t_big = relevant(small, args.repeat), relevant(big, args.repeat)
        hook, pygit2_import = non_task_merge_hook(root, args.repeat)
        with_hook, without = task_merge_hook(big, args.repeat)
    rows = [
        ("import (build)", f"{args.big:,} lessons in {big_build:.1f} s", f"{args.big / big_build:,.0f} lessons/s"),
        ("lessons relevant", f"{t_big * 1000:.0f} ms at {args.big:,} vs {t_small * 1000:.0f} ms at {args.small:,}",
         f"ratio {t_big / t_small:.2f}"),
        ("post-merge hook, non-task merge", f"{hook * 1000:.0f} ms vs import pygit2 {pygit2_import * 1000:.0f} ms",
         f"ratio {hook / pygit2_import:.2f}"),
        (f"post-merge hook, task merge, {args.big:,} lessons",
         f"merge {with_hook * 1000:.0f} ms with hook vs {without * 1000:.0f} ms without",
         f"added {(with_hook - without) * 1000:.0f} ms"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, detail, ratio in rows:
        print(f"{name:<{width}}  {detail:<60}  {ratio}")
    print(f"(small store built in {small_build:.1f} s; medians of {args.repeat} runs)")


if __name__ == "__main__":
    main()
