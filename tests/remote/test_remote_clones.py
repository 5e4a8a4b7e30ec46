"""What one clone sees of the work of another through the remote: pending tasks, committed branches,
the integration head a later task starts from, and a committed claim nothing stands behind."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from conftest import git
from failres.remote.claims import new_claim
from failres.remote.transport import RemoteClaims
from remote_project import claim_history, clone, make_remote, start_runner


def failres(top: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "failres", *args], cwd=top, capture_output=True, text=True,
                          timeout=180)


def _run(top: Path, plan: Path, *args: str) -> list[dict]:
    runner = start_runner(top, plan, *args)
    out, err = runner.communicate(timeout=180)
    assert runner.returncode == 0, err
    return json.loads(out)


def _remote_rows(top: Path) -> dict[str, dict]:
    seen = failres(top, "status", "rr", "--remote", "origin", "--json")
    assert seen.returncode == 0, seen.stderr
    return {row["task"]: row for row in json.loads(seen.stdout)}


def test_a_task_after_one_landed_from_another_clone_starts_from_the_remotes_integration_head(tmp_path: Path):
    bare, plan, log = make_remote(tmp_path, ["t1", "t2"])
    plan.write_text(plan.read_text().replace('id = "t2"\n', 'id = "t2"\nafter = ["t1"]\n'))
    runner, lander, later = (clone(tmp_path, bare, name) for name in ("a", "b", "c"))

    [t1] = _run(runner, plan, "--task", "t1")
    assert t1["state"] == "committed"
    # No runner started t2, and the remote's status lists it all the same.
    rows = _remote_rows(later)
    assert (rows["t2"]["state"], rows["t2"]["claim"]) == ("pending", None)

    # Another clone, which never ran t1, lands it from the remote's branch and pushes its main.
    assert failres(lander, "sync", "origin").returncode == 0
    landed = failres(lander, "land", "rr", "t1")
    assert landed.returncode == 0, landed.stderr
    assert git(lander, "rev-parse", "failres/rr/t1").strip() == claim_history(bare, "t1")[0]["commit"]
    git(lander, "push", "-q", "origin", "main")
    assert failres(lander, "sync", "origin").returncode == 0
    merged = git(bare, "rev-parse", "main").strip()

    # A third clone, its own main still the first commit, runs the plan: t2 starts from the landing.
    stale = git(later, "rev-parse", "main").strip()
    assert stale != merged
    outcomes = {o["task"]: o["state"] for o in _run(later, plan)}
    assert outcomes == {"t1": "committed", "t2": "committed"}
    assert git(bare, "rev-parse", "failres/rr/t2^").strip() == merged
    assert git(bare, "show", "failres/rr/t2:src/t1.py") == "DONE = 't1'\n"
    assert git(later, "rev-parse", "main").strip() == stale  # the person's branch is theirs to move
    assert log.read_text().split() == ["t1", "t2"]


def test_a_committed_claim_with_no_branch_behind_it_is_not_trusted(tmp_path: Path):
    bare, plan, log = make_remote(tmp_path, ["t1"], lease="2s")
    forger, runner = clone(tmp_path, bare, "a"), clone(tmp_path, bare, "b")
    claims = RemoteClaims(forger, "origin", "rr")
    head = git(forger, "rev-parse", "HEAD").strip()
    held = new_claim("rr", "t1", host="forger", pid=1, run="f0", now=datetime.now(UTC), lease=2.0)
    forged = claims.write(held.finished_as("committed", commit=head), "")
    assert claims.swap(forged, "").accepted
    assert git(bare, "for-each-ref", "refs/heads/failres/") == ""

    row = _remote_rows(runner)["t1"]
    assert row["claim"] == "committed" and row["state"] != "committed" and row["claimProblem"]
    assert "not trusted" in failres(runner, "status", "rr", "--remote", "origin").stdout

    [outcome] = _run(runner, plan)
    assert outcome["state"] == "committed"
    assert log.read_text().split() == ["t1"]
    history = claim_history(bare, "t1")
    assert history[0]["state"] == "committed" and history[0]["host"] != "forger"
    assert history[-1]["host"] == "forger"  # taken over the forged claim, by compare-and-swap
    assert git(bare, "rev-parse", "failres/rr/t1").strip() == history[0]["commit"]
    assert _remote_rows(runner)["t1"]["claimProblem"] is None
