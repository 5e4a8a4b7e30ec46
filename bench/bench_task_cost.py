"""One task through `git failres run` against doing it by hand, on a project shaped like people's.

    python bench/bench_task_cost.py [--rounds N] [--tests N]

The project: a src layout (`src/calc/`), a `.venv/` in the checkout with the package
installed editable into it, and a pytest suite of a few seconds of cpu work. Its gate is
the venv's pytest by its path from the repository top (what `init` writes for it).

Each round times, as whole processes:

- green: `git failres run PLAN --task T` of a task whose seat writes the right fix, against
  `git worktree add` + the same fix + one run of the gate + `git commit -a` + `git worktree remove`;
- wrong: the same with a seat that writes a wrong fix (no fixer: the gate's red quarantines
  the task), against `git worktree add` + the wrong fix + one run of the gate (red) +
  `git worktree remove`.

Every round is a new task at the same integration head, as the tasks of a plan are: the
first task at a head pays the preflight (the gate once at the head, before any seat), the
others reuse its verdict (`engine/preflight_steps.py`). A warm-up round on both sides,
not counted, pays the first imports and page cache; then the rounds alternate sides, and
the median of each is printed with its range, in wall and in cpu time (this process's
children: everything failres and the gate ran). The "first task at a head" row is the
warm-up's own figure: one round, not a median.

Both sides run with Python's bytecode cache written, as a person's installed failres and
project have it, even where PYTHONDONTWRITEBYTECODE is set: without it, every process
compiled its modules again (pytest's among them) and the suite read 1.4 s of cpu where it
takes 0.9 s. This process is its children's subreaper and reaps whatever they leave, so
a world's processes (whose first one bwrap leaves to its parent's reaper) are counted.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
       "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a + b + 1\n"
# A test module of cpu work, like a real suite's: each test sums a range.
SLOW_TEST = ("import pytest\n\n\n@pytest.mark.parametrize('n', range({count}))\n"
             "def test_work(n):\n    assert sum(i * i for i in range(120_000)) > n\n")
CALC_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
GATE = [".venv/bin/python", "-m", "pytest", "-q", "-p", "no:cacheprovider"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def cpu_of_children() -> float:
    _reap_orphans()
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _reap_orphans() -> None:
    """Wait for every child that is done (orphans reparented to this process included), so their cpu is counted."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _become_subreaper() -> None:
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def make_project(top: Path, tests: int) -> None:
    """The src-layout package with its editable install in `.venv/` (pytest borrowed from this
    interpreter's site-packages, as a system's would be: nothing downloaded)."""
    (top / "src" / "calc").mkdir(parents=True)
    (top / "tests").mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / "src" / "calc" / "__init__.py").write_text(BROKEN)
    (top / "tests" / "test_calc.py").write_text(CALC_TEST)
    (top / "tests" / "test_work.py").write_text(SLOW_TEST.format(count=tests))
    (top / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "calc"\nversion = "0.1"\n[tool.setuptools.packages.find]\nwhere = ["src"]\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (top / ".gitignore").write_text(".venv/\n*.egg-info/\n__pycache__/\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "calc with a bug")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(top / ".venv")], check=True)
    python = top / ".venv" / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "toolchain.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index",
                    "-e", str(top)], check=True, capture_output=True, cwd=top)
    shutil.rmtree(top / "src" / "calc.egg-info", ignore_errors=True)


def configure_failres(top: Path, seats: Path, tasks: list[tuple[str, str]]) -> Path:
    """The gate init writes for this project, a seat per kind of fix, and a plan of every task."""
    for kind, text in (("green", FIXED), ("wrong", WRONG)):
        seat = seats / f"{kind}.sh"
        seat.write_text(f"#!/bin/sh\ncat > src/calc/__init__.py <<'EOF'\n{text}EOF\n")
        seat.chmod(0o755)
    import json

    lines = ["[gates.tests]", f"command = {json.dumps(GATE)}", 'cwd = "worktree"', 'timeout = "5m"']
    for kind in ("green", "wrong"):
        lines += [f"[bindings.{kind}]", f'command = ["{seats / (kind + ".sh")}"]', 'timeout = "1m"']
    lines += ["[seats]", 'implementer = "green"', "[repair]", "max_attempts = 0",
              # The venv borrows this interpreter's pytest: the seat world reads it there.
              "[sandbox]", f"read = {json.dumps([sysconfig.get_paths()['purelib']])}", ""]
    (top / ".failres.toml").write_text("\n".join(lines))
    subprocess.run([sys.executable, "-m", "failres", "init", "--no-hooks"], cwd=top, check=True, capture_output=True)
    plan = seats / "plan.toml"
    plan.write_text('slug = "cost"\n' + "".join(
        f'[[tasks]]\nid = "{task}"\nprompt = "Fix add."\nfiles = ["src/calc/__init__.py"]\n' for task, _ in tasks))
    return plan


def by_failres(top: Path, plan: Path, task: str, kind: str) -> tuple[float, float]:
    """One task as a whole `git failres run` process; the seat is chosen by the configuration's implementer."""
    config = top / ".failres.toml"
    text = config.read_text()
    config.write_text(text.replace('implementer = "green"', f'implementer = "{kind}"').replace(
        'implementer = "wrong"', f'implementer = "{kind}"'))
    start, cpu = time.perf_counter(), cpu_of_children()
    done = subprocess.run([sys.executable, "-m", "failres", "run", str(plan), "--task", task, "--quiet"], cwd=top,
                          capture_output=True, text=True)
    took = time.perf_counter() - start, cpu_of_children() - cpu
    expected = 0 if kind == "green" else 1
    if done.returncode != expected:
        raise SystemExit(f"failres run of {task} ({kind}) exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return took


SUITE: list[float] = []  # the cpu of each hand-run gate: the suite alone


def by_hand(top: Path, task: str, kind: str) -> tuple[float, float]:
    """The same task by hand: a worktree, the fix, the gate once, a commit when green, the worktree removed."""
    wt = top.parent / f"hand-{task}"
    start, cpu = time.perf_counter(), cpu_of_children()
    git(top, "worktree", "add", "-q", "-b", f"hand/{task}", str(wt), "main")
    (wt / "src" / "calc" / "__init__.py").write_text(FIXED if kind == "green" else WRONG)
    # The venv is the checkout's: by hand, the gate is run from the worktree with it.
    before_gate = cpu_of_children()
    gate = subprocess.run([str(top / GATE[0]), *GATE[1:]], cwd=wt, capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(wt / "src")})
    SUITE.append(cpu_of_children() - before_gate)
    if (gate.returncode == 0) != (kind == "green"):
        raise SystemExit(f"the hand-run gate of {task} ({kind}) exited {gate.returncode}")
    if kind == "green":
        git(wt, "commit", "-q", "-a", "-m", "fix add")
    git(top, "worktree", "remove", "--force", str(wt))
    return time.perf_counter() - start, cpu_of_children() - cpu


def measure(rounds: int, tests: int) -> dict[str, dict[str, list[float]]]:
    """Per kind: the wall and cpu seconds of each round on each side, the warm-up kept apart."""
    with tempfile.TemporaryDirectory(prefix="failres-bench-cost-", dir=os.environ.get("BENCH_TMP")) as tmp:
        root = Path(tmp)
        loop, hand, seats = root / "loop" / "project", root / "hand" / "project", root / "seats"
        for path in (loop, hand):
            path.parent.mkdir()
            make_project(path, tests)
        seats.mkdir()
        tasks = [(f"{kind[0]}{n}", kind) for n in range(rounds + 1) for kind in ("green", "wrong")]
        plan = configure_failres(loop, seats, tasks)
        found: dict[str, dict[str, list[float]]] = {}
        for n in range(rounds + 1):
            for kind in ("green", "wrong"):
                task = f"{kind[0]}{n}"
                # Alternate which side goes first, so neither always meets the other's leftovers.
                sides = [("failres", lambda: by_failres(loop, plan, task, kind)), ("hand", lambda: by_hand(hand, task, kind))]
                for side, timed in (sides if n % 2 == 0 else sides[::-1]):
                    wall, cpu = timed()
                    slot = found.setdefault(f"{kind} {side}" + (" warm-up" if n == 0 else ""),
                                            {"wall": [], "cpu": []})
                    slot["wall"].append(wall)
                    slot["cpu"].append(cpu)
                print(f"round {n}: {kind} done", file=sys.stderr)
        return found


def summary(found: dict[str, dict[str, list[float]]], kind: str) -> list[str]:
    loop, hand = found[f"{kind} failres"], found[f"{kind} hand"]
    lines = []
    for what in ("wall", "cpu"):
        a, b = statistics.median(loop[what]), statistics.median(hand[what])
        lines.append(f"{kind} task, {what}: failres {a:.2f} s ({min(loop[what]):.2f}-{max(loop[what]):.2f}) vs by hand "
                     f"{b:.2f} s ({min(hand[what]):.2f}-{max(hand[what]):.2f}) = ratio {a / b:.2f}")
    first, by = found[f"{kind} failres warm-up"], found[f"{kind} hand warm-up"]
    lines.append(f"{kind} task, first at its head (one round): failres {first['wall'][0]:.2f} s wall "
                 f"{first['cpu'][0]:.2f} s cpu vs by hand {by['wall'][0]:.2f} s wall {by['cpu'][0]:.2f} s cpu")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tests", type=int, default=60,
                        help="tests of cpu work in the suite (60: about 1.4 s of cpu, 2-3 s of wall)")
    args = parser.parse_args()
    os.environ.update(ENV)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    _become_subreaper()
    found = measure(args.rounds, args.tests)
    print(f"{args.rounds} rounds, a suite of {args.tests + 1} tests ({statistics.median(SUITE):.2f} s of cpu, "
          f"{min(SUITE):.2f}-{max(SUITE):.2f}); median (range)")
    for kind in ("green", "wrong"):
        for line in summary(found, kind):
            print(line)


if __name__ == "__main__":
    main()
