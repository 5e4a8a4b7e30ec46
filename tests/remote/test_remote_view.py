"""`status --remote` and `cancel --remote`: who holds what, seen and stopped from another clone."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from conftest import git
from failres.journal import read_journal
from lessons.storage.store import Store
from remote_project import claim_history, clone, make_remote, start_runner


def failres(top: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "failres", *args], cwd=top, capture_output=True, text=True,
                          timeout=120)


def _live_seats(seat: Path) -> list[int]:
    """Host pids of live (not zombie) processes running `seat`: inside the seat world a seat's
    own pid is its namespace's, so the test finds it on the host by its command line."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(seat).encode() in (entry / "cmdline").read_bytes() and \
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_status_shows_the_holder_and_cancel_stops_it_from_another_clone(tmp_path: Path):
    bare, plan, _ = make_remote(tmp_path, ["t00"], lease="6s", victim="t00")
    runner_top, other = clone(tmp_path, bare, "a"), clone(tmp_path, bare, "b")
    runner = start_runner(runner_top, plan)
    marker = tmp_path / "agents" / "victim-started"
    try:
        deadline = time.monotonic() + 120
        while not (marker.exists() and marker.read_text()) and runner.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _live_seats(tmp_path / "agents" / "seat.py")
        seen = failres(other, "status", "rr", "--remote", "origin", "--json")
        assert seen.returncode == 0, seen.stderr
        [row] = json.loads(seen.stdout)
        assert (row["task"], row["state"], row["claim"], row["holder"]["pid"]) == ("t00", "running", "held", runner.pid)
        assert row["leaseLeft"] > 0
        text = failres(other, "status", "rr", "--remote", "origin")
        assert f"pid {runner.pid}" in text.stdout and "running" in text.stdout

        stopped = failres(other, "cancel", "rr", "--remote", "origin", "--json")
        assert stopped.returncode == 0, stopped.stderr
        assert json.loads(stopped.stdout) == [{"slug": "rr", "task": "t00", "host": row["holder"]["host"],
                                               "pid": runner.pid, "requested": True, "schemaVersion": 1}]
        out, err = runner.communicate(timeout=120)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == 1, err
    assert [(o["task"], o["state"]) for o in json.loads(out)] == [("t00", "interrupted")]
    assert _live_seats(tmp_path / "agents" / "seat.py") == []
    events = read_journal(Store(runner_top), "rr").for_task("t00")
    assert [e["reason"] for e in events if e["type"] == "interrupted"] == ["cancel"]
    assert claim_history(bare, "t00")[0]["state"] == "cancelled"
    assert git(bare, "for-each-ref", "refs/heads/failres/") == ""
    # The cancelled task is nobody's to take: a second runner leaves it alone.
    again = failres(other, "run", str(plan), "--remote", "origin", "--json", "--quiet")
    assert again.returncode == 1, again.stderr
    assert [(o["task"], o["state"]) for o in json.loads(again.stdout)] == [("t00", "interrupted")]
    after = json.loads(failres(other, "status", "rr", "--remote", "origin", "--json").stdout)
    assert [(r["task"], r["state"], r["claim"]) for r in after] == [("t00", "interrupted", "cancelled")]


def test_cancel_of_a_plan_nobody_runs_on_the_remote_is_refused(tmp_path: Path):
    bare, _, _ = make_remote(tmp_path, ["t00"])
    top = clone(tmp_path, bare, "a")
    done = failres(top, "cancel", "rr", "--remote", "origin")
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == "error: no task of rr is running on origin"


def test_an_unknown_remote_is_refused_before_anything_runs(tmp_path: Path):
    bare, plan, log = make_remote(tmp_path, ["t00"])
    top = clone(tmp_path, bare, "a")
    done = failres(top, "run", str(plan), "--remote", "nowhere")
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == 'error: no remote named "nowhere"'
    assert not log.exists()
    assert git(bare, "for-each-ref", "refs/failres/claims/") == ""
