"""An interrupted `lessons import` writes all or nothing: Ctrl-C after its first batch landed
leaves the store without any of the file's lessons."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import git
from test_import import LINE

REPO_ROOT = Path(__file__).resolve().parents[3]
LINES = 30000


def imported(repo: Path) -> int:
    names = git(repo, "ls-tree", "-r", "--name-only", "refs/failres/store").split()
    # An import that landed whole may be consolidated at once (a store past its bound archives
    # what it keeps no room for): archived lessons are imported lessons too.
    return sum(1 for name in names if name.startswith(("lessons/", "archive/lessons/")))


def test_an_import_interrupted_once_its_first_batch_could_have_landed_writes_nothing_or_everything(repo: Path):
    source = repo.parent / "many.jsonl"
    source.write_text("".join(json.dumps({**LINE, "task": f"t{i}", "message": f"failure number {i}"}) + "\n"
                              for i in range(LINES)))
    before = imported(repo)
    start = git(repo, "rev-parse", "refs/failres/store").strip()
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    child = subprocess.Popen([sys.executable, "-m", "failres", "lessons", "import", str(source)], cwd=repo, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Ctrl-C the moment the store moves (a first batch) or, failing that, once it is gone.
    while child.poll() is None and git(repo, "rev-parse", "refs/failres/store").strip() == start:
        time.sleep(0.01)
    if child.poll() is None:
        child.send_signal(signal.SIGINT)
    child.wait(timeout=120)
    assert imported(repo) - before in (0, LINES)
