"""How much a scope check costs next to `git status --porcelain`, on 50,000 files.

    .venv/bin/python bench/bench_scope.py [--rounds N]

Builds (once, cached under bench/out/) a 50,000-file repository and a task
worktree of it, changes a few files, then times in the same run, best of N:
`git status --porcelain` as a subprocess, and `changed_paths` from a clean
baseline. Also reports capturing a baseline and a check from a dirty baseline.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from failres import gitops  # noqa: E402

OUT = ROOT / "bench" / "out" / "scope-50k"
REPO = OUT / "repo"
WORKTREE = OUT / "task"
BUILT_MARKER = OUT / "built"
DIRECTORIES = 500
FILES_PER_DIRECTORY = 100
BRANCH = "failres/bench/scope"

# The bench's own commits need an identity on a machine that has none.
BENCH_IDENTITY = {
    "GIT_AUTHOR_NAME": "failres bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "failres bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **BENCH_IDENTITY}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def build_repository() -> None:
    """50,000 small files in 500 directories, one commit, and a task worktree of it."""
    if BUILT_MARKER.exists():
        return
    print(f"building {DIRECTORIES * FILES_PER_DIRECTORY} files under {OUT} (once) ...", flush=True)
    REPO.mkdir(parents=True, exist_ok=True)
    git(REPO, "init", "-q", "-b", "main")
    for d in range(DIRECTORIES):
        directory = REPO / f"pkg{d:03d}"
        directory.mkdir(exist_ok=True)
        for f in range(FILES_PER_DIRECTORY):
            (directory / f"mod{f:03d}.py").write_text(f"VALUE = {d * FILES_PER_DIRECTORY + f}\n")
    git(REPO, "add", "-A")
    git(REPO, "commit", "-q", "-m", "50k files")
    gitops.add_task_worktree(REPO, WORKTREE, BRANCH, "main")
    BUILT_MARKER.write_text("ok\n")


def make_clean() -> None:
    gitops.reset_hard(WORKTREE, "main")
    git(WORKTREE, "clean", "-ffdq")
    # A status that may write the index refreshes its stat cache, so neither
    # timed command pays for re-hashing files the reset rewrote.
    git(WORKTREE, "status", "--porcelain")


def seat_changes() -> None:
    """What a seat typically leaves: a few edits, a deletion, new files."""
    for d in (1, 250, 499):
        (WORKTREE / f"pkg{d:03d}" / "mod007.py").write_text("VALUE = 'changed'\n")
    (WORKTREE / "pkg100" / "mod000.py").unlink()
    (WORKTREE / "pkg002" / "new_module.py").write_text("NEW = 1\n")
    (WORKTREE / "newpkg").mkdir(exist_ok=True)
    (WORKTREE / "newpkg" / "__init__.py").write_text("")


EXPECTED = (
    "newpkg/__init__.py",
    "pkg001/mod007.py",
    "pkg002/new_module.py",
    "pkg100/mod000.py",
    "pkg250/mod007.py",
    "pkg499/mod007.py",
)


def best_ms(action: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def git_status() -> None:
    subprocess.run(["git", "status", "--porcelain"], cwd=WORKTREE, check=True, capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds

    build_repository()
    make_clean()
    capture_ms = best_ms(lambda: gitops.capture_baseline(WORKTREE), rounds)
    baseline = gitops.capture_baseline(WORKTREE)
    seat_changes()

    found = gitops.changed_paths(WORKTREE, baseline).paths
    if found != EXPECTED:
        print(f"wrong answer: {found}", file=sys.stderr)
        return 1
    # Interleave the two so drift in the machine's load hits both alike.
    status_ms = scope_ms = float("inf")
    for _ in range(rounds):
        status_ms = min(status_ms, best_ms(git_status, 1))
        scope_ms = min(scope_ms, best_ms(lambda: gitops.changed_paths(WORKTREE, baseline), 1))

    dirty = gitops.capture_baseline(WORKTREE)
    (WORKTREE / "pkg003" / "mod003.py").write_text("VALUE = 'after dirty baseline'\n")
    dirty_ms = best_ms(lambda: gitops.changed_paths(WORKTREE, dirty), rounds)
    restore_ms = best_ms(lambda: gitops.restore_baseline(WORKTREE, baseline), 1)

    print(f"files: {DIRECTORIES * FILES_PER_DIRECTORY}, rounds: {rounds} (best of)")
    print(f"capture baseline (clean worktree): {capture_ms:.1f} ms")
    print(f"scope check from a dirty baseline: {dirty_ms:.1f} ms")
    print(f"restore to a clean baseline: {restore_ms:.1f} ms")
    print(f"scope check: {scope_ms:.1f} ms vs git status {status_ms:.1f} ms = ratio {scope_ms / status_ms:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
