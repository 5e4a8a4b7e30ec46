"""`[remote] branches`: task branches kept on the remote outside refs/heads, found there by status and land."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import git
from remote_project import claim_history, clone, make_remote, start_runner

TASKS = ["t1", "t2"]


def failres(top: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "failres", *args], cwd=top, capture_output=True, text=True,
                          timeout=180)


def test_task_branches_under_refs_failres_tasks_stay_out_of_a_persons_fetch_and_still_land(tmp_path: Path):
    bare, plan, _ = make_remote(tmp_path, TASKS, branches="refs/failres/tasks")
    runner = start_runner(clone(tmp_path, bare, "a"), plan)
    out, err = runner.communicate(timeout=240)
    assert runner.returncode == 0, err
    assert {o["task"]: o["state"] for o in json.loads(out)} == dict.fromkeys(TASKS, "committed")

    tips = dict(line.split()[::-1] for line in git(bare, "for-each-ref", "--format=%(objectname) %(refname)",
                                                     "refs/failres/tasks/", "refs/heads/").splitlines())
    assert sorted(tips) == ["refs/failres/tasks/rr/t1", "refs/failres/tasks/rr/t2", "refs/heads/main"]
    for task in TASKS:
        assert claim_history(bare, task)[0]["commit"] == tips[f"refs/failres/tasks/rr/{task}"]

    person = clone(tmp_path, bare, "person")  # a plain clone and fetch bring no task branch
    git(person, "fetch", "-q", "origin")
    assert git(person, "for-each-ref", "--format=%(refname)", "refs/remotes/").split() == [
        "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]

    seen = failres(person, "status", "rr", "--remote", "origin", "--json")
    assert seen.returncode == 0, seen.stderr
    rows = {row["task"]: row for row in json.loads(seen.stdout)}
    assert {task: (rows[task]["state"], rows[task]["claimProblem"]) for task in TASKS} == dict.fromkeys(
        TASKS, ("committed", None))

    assert failres(person, "sync", "origin").returncode == 0
    landed = failres(person, "land", "rr", "t1")
    assert landed.returncode == 0, landed.stderr
    assert git(person, "diff", "--name-only", "main^1", "main").split() == ["src/t1.py"]
    assert git(person, "rev-parse", "main^2").strip() == tips["refs/failres/tasks/rr/t1"]
    assert subprocess.run(["git", "fsck", "--strict"], cwd=person, capture_output=True).returncode == 0


def test_a_branches_prefix_that_would_mix_task_branches_with_other_refs_is_refused_in_one_line(tmp_path: Path):
    bare, _, _ = make_remote(tmp_path, TASKS)
    top = clone(tmp_path, bare, "a")
    config = top / ".failres.toml"
    before = config.read_text()
    for bad in ("refs/failres/claims", "refs/tags/tasks", "heads/failres", "refs/failres/tasks/"):
        config.write_text(before.replace('[remote]\n', f'[remote]\nbranches = "{bad}"\n'))
        done = failres(top, "status")
        assert done.returncode == 2, (bad, done.stdout, done.stderr)
        lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("hint:")]
        assert len(lines) == 1 and "branches" in lines[0], (bad, done.stderr)
    assert git(top, "status", "--porcelain").split() == ["M", ".failres.toml"]
