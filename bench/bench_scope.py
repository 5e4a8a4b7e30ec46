"""How much a scope check costs next to `git status --porcelain`, on 50,000 files.

    .venv/bin/python bench/bench_scope.py [--rounds N]

Builds (once, cached under bench/out/) a 50,000-file repository, makes a task
workspace of it, changes a few files as a seat would, then times in the same run,
best of N: `git status --porcelain` in the workspace as a subprocess, and the
workspace's scope check (`Workspace.check`: the files against failres's private
index, restored from memory first). Also reports creating the workspace and
putting its files back.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from failres.gitops.workspace import Workspace  # noqa: E402

OUT = ROOT / "bench" / "out" / "scope-50k"
REPO = OUT / "repo"
WORKTREE = OUT / "task"
BUILT_MARKER = OUT / "built-v2"
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
    BUILT_MARKER.write_text("ok\n")


def make_workspace() -> Workspace:
    """A fresh task workspace of the repository, as the loop makes one."""
    start = git(REPO, "rev-parse", "main").strip()
    return Workspace.create(path=WORKTREE, git_dir=REPO / ".git", state_dir=REPO / ".git" / "failres" / "bench",
                            branch=BRANCH, base=start)


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


@dataclass(frozen=True)
class Checks:
    first_ms: float  # the check of a task's first dispatch, handed over as the checkout ends
    first_status_ms: float
    racy: int  # files the checkout wrote in its index's own second, when the seat was handed over
    handover_ms: float  # the first handover: a big checkout waits out its own second there
    later_ms: float  # the check at any later dispatch: after the files were put back
    later_status_ms: float
    put_back_ms: float


def interleaved(workspace: Workspace, rounds: int) -> tuple[float, float]:
    """Best check and best `git status`, alternated so drift in the machine's load hits both alike."""
    if workspace.check().paths != EXPECTED:
        raise SystemExit(f"the scope check found the wrong paths: {workspace.check().paths}")
    status_ms = scope_ms = float("inf")
    for _ in range(rounds):
        status_ms = min(status_ms, best_ms(git_status, 1))
        scope_ms = min(scope_ms, best_ms(workspace.check, 1))
    return scope_ms, status_ms


def files_in_second(top: Path, second: int) -> int:
    count = 0
    for root, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if d != ".git"]
        count += sum(1 for name in names if os.lstat(os.path.join(root, name)).st_mtime_ns // 10**9 >= second)
    return count


def dispatch_checks(workspace: Workspace, rounds: int) -> Checks:
    """The checks of two dispatches in the loop's order: the first, then one after a put back.

    git re-reads every file written in the second its index was (racy git) until the
    clock has left that second with the files untouched; a big checkout handed over in
    that second waits for the next, a small one leaves its seat to meet those files. A
    later dispatch starts from files put back, and its index says only those as new.
    """
    git(WORKTREE, "status", "--porcelain")  # the seat's own index, refreshed as an agent's git would
    index_second = workspace.index.stat().st_mtime_ns // 10**9
    began = time.perf_counter()
    workspace.handed_over()  # as the loop does before a seat runs
    handover_ms = (time.perf_counter() - began) * 1000
    racy = files_in_second(WORKTREE, index_second) if workspace._index_mtime_ns // 10**9 == index_second else 0
    seat_changes()
    first_ms, first_status_ms = interleaved(workspace, rounds)
    put_back_ms = best_ms(lambda: workspace.purify(workspace.tree), 1)
    workspace.handed_over()
    seat_changes()
    later_ms, later_status_ms = interleaved(workspace, rounds)
    return Checks(first_ms, first_status_ms, racy, handover_ms, later_ms, later_status_ms, put_back_ms)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds

    build_repository()
    began = time.perf_counter()
    workspace = make_workspace()
    create_ms = (time.perf_counter() - began) * 1000
    found = dispatch_checks(workspace, rounds)
    files = DIRECTORIES * FILES_PER_DIRECTORY
    print(f"files: {files}, rounds: {rounds} (best of)")
    print(f"create a workspace: {create_ms:.0f} ms")
    print(f"put the files back after the seat: {found.put_back_ms:.0f} ms")
    print(f"scope check at a dispatch: {found.later_ms:.1f} ms vs git status {found.later_status_ms:.1f} ms"
          f" = ratio {found.later_ms / found.later_status_ms:.2f}")
    print(f"first check of a task: {found.first_ms:.1f} ms vs git status {found.first_status_ms:.1f} ms"
          f" = ratio {found.first_ms / found.first_status_ms:.2f}"
          f" ({found.racy} of {files} files still in the index's own second at the handover,"
          f" which took {found.handover_ms:.0f} ms)")
    workspace.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())
