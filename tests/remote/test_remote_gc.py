"""`gc --remote`: a landed task's claim and branch leave the remote, nothing else does, and no runner runs it again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git
from failres.errors import GitError
from failres.landing.gc import Item
from failres.remote.remote_gc import _delete_refs
from remote_project import clone, folded_entry, make_remote, start_runner

TASKS = ["t1", "t2", "t3"]


def failres(top: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "failres", *args], cwd=top, capture_output=True, text=True,
                          timeout=180)


def _refs(bare: Path) -> dict[str, str]:
    out = git(bare, "for-each-ref", "--format=%(refname) %(objectname)")
    return dict(line.split() for line in out.splitlines())


def _run(top: Path, plan: Path) -> dict[str, str]:
    runner = start_runner(top, plan)
    out, err = runner.communicate(timeout=240)
    assert runner.returncode == 0, err
    return {o["task"]: o["state"] for o in json.loads(out)}


def test_gc_remote_removes_only_landed_and_merged_tasks_refs_and_no_runner_runs_them_again(tmp_path: Path):
    bare, plan, log = make_remote(tmp_path, TASKS)
    assert _run(clone(tmp_path, bare, "a"), plan) == dict.fromkeys(TASKS, "committed")
    person = clone(tmp_path, bare, "person")
    assert failres(person, "sync", "origin").returncode == 0
    assert failres(person, "land", "rr", "t1").returncode == 0
    git(person, "push", "-q", "origin", "main")
    # t2 is landed here, its merge not pushed: the remote's main does not hold it. t3 never lands.
    assert failres(person, "land", "rr", "t2").returncode == 0
    assert failres(person, "sync", "origin").returncode == 0
    before = _refs(bare)
    t1_commit = before["refs/heads/failres/rr/t1"]

    assert "refs/failres/claims/rr/t1" not in before  # folded into the plan's record of finished tasks
    dry = failres(person, "gc", "--remote", "origin", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    shown = json.loads(dry.stdout)
    assert sorted(i["name"] for i in shown["items"]) == ["refs/heads/failres/rr/t1"]  # entries only when asked
    assert [i["name"] for i in shown["kept"]] == ["refs/heads/failres/rr/t2"]
    assert _refs(bare) == before  # a dry run moves nothing

    done = failres(person, "gc", "--remote", "origin", "--entries")
    assert done.returncode == 0, done.stderr
    assert "removed 1 merged task branch, 1 finished-task entry" in done.stdout
    after = _refs(bare)
    assert set(before) - set(after) == {"refs/heads/failres/rr/t1"}
    assert folded_entry(bare, "t1") == {} and folded_entry(bare, "t2")["state"] == "committed"
    record = "refs/failres/claims/rr/_done"
    after.pop(record), before.pop(record)  # the record moved: t1's entry dropped, nothing else
    assert all(after[ref] == before[ref] for ref in after)
    assert subprocess.run(["git", "cat-file", "-e", t1_commit], cwd=bare).returncode == 0  # no object deleted
    assert subprocess.run(["git", "fsck", "--strict"], cwd=bare, capture_output=True).returncode == 0

    # A new runner of the plan finds t1 landed in the store, with no claim: it does not run it again.
    dispatched = log.read_text().split()
    assert _run(clone(tmp_path, bare, "later"), plan) == {"t1": "landed", "t2": "committed", "t3": "committed"}
    assert log.read_text().split() == dispatched
    assert "refs/heads/failres/rr/t1" not in _refs(bare)


def test_a_ref_that_moved_since_it_was_read_makes_gc_remote_remove_nothing(tmp_path: Path):
    bare, _, _ = make_remote(tmp_path, [])
    top = clone(tmp_path, bare, "a")
    head = git(top, "rev-parse", "HEAD").strip()
    other = git(top, "commit-tree", "-m", "moved", "HEAD^{tree}").strip()
    for ref in ("refs/heads/failres/rr/t1", "refs/failres/claims/rr/t1"):
        git(top, "push", "-q", "origin", f"{head}:{ref}")
    git(top, "push", "-q", "origin", f"{other}:refs/failres/claims/rr/t1", "--force")  # moved after the read
    before = _refs(bare)
    with pytest.raises(GitError, match="nothing was removed"):
        _delete_refs(top, "origin", ((Item("branch", "refs/heads/failres/rr/t1", ""), head),
                                     (Item("claim", "refs/failres/claims/rr/t1", ""), head)))
    assert _refs(bare) == before
