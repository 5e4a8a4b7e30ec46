"""A finished task run again on a folded plan: a quarantined task folded into the record is claimed
anew with `--task` (once, however many runners are told to), and a cancelled one keeps its claim
ref, unfolded, until a later `--task` run takes it."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from conftest import git
from failres.remote.claims import claim_ref, new_claim
from failres.remote.folded import Record, record_ref
from failres.remote.transport import RemoteClaims
from remote_project import claim_history, clone, folded_entry, make_remote, start_runner


def _claims_refs(bare: Path) -> list[str]:
    return git(bare, "for-each-ref", "--format=%(refname)", "refs/failres/claims/").split()


def _status(top: Path) -> dict[str, tuple[str, str]]:
    shown = subprocess.run([sys.executable, "-m", "failres", "status", "rr", "--remote", "origin", "--json"],
                           cwd=top, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    return {r["task"]: (r["state"], r["claim"]) for r in json.loads(shown.stdout)}


def _finish(runner: subprocess.Popen) -> tuple[int, dict[str, str]]:
    out, err = runner.communicate(timeout=240)
    assert out, err
    return runner.returncode, {o["task"]: o["state"] for o in json.loads(out)}


def _held(top: Path, task: str) -> tuple[RemoteClaims, object]:
    """A claim of `task` pushed by a holder on another host, as a runner's first push leaves it."""
    claims = RemoteClaims(top, "origin", "rr")
    held = claims.write(new_claim("rr", task, host="elsewhere", pid=1, run="e1", now=datetime.now(UTC),
                                  lease=2.0), "")
    assert claims.swap(held, "").accepted
    return claims, held


def _quarantined_and_folded(top: Path, bare: Path, task: str) -> str:
    """`task` quarantined by another runner, its claim folded into the record: the claim commit."""
    claims, held = _held(top, task)
    done = claims.write(held.finished_as("quarantined"), held.oid)
    assert claims.swap(done, held.oid).accepted
    assert claims.fold(Record("rr"), [done]) is not None
    assert _claims_refs(bare) == [record_ref("rr")]
    assert folded_entry(bare, task)["state"] == "quarantined"
    return done.oid


def test_a_folded_quarantined_task_run_with_task_is_dispatched_once_and_its_entry_replaced(tmp_path: Path):
    bare, plan, log = make_remote(tmp_path, ["t1", "t2"], lease="2s")
    setup, runner = clone(tmp_path, bare, "setup"), clone(tmp_path, bare, "runner")
    quarantined = _quarantined_and_folded(setup, bare, "t1")

    assert _finish(start_runner(runner, plan, "--task", "t1")) == (0, {"t1": "committed"})
    assert log.read_text().split() == ["t1"]  # claimed anew with the ref absent, run once; t2 not asked for
    entry = folded_entry(bare, "t1")
    assert entry["state"] == "committed" and entry["host"] != "elsewhere" and entry["claim"] != quarantined
    assert git(bare, "rev-parse", "refs/heads/failres/rr/t1").strip() == entry["commit"]
    assert _claims_refs(bare) == [record_ref("rr")]  # the new claim folded too, replacing the entry
    assert claim_history(bare, "t1")[0]["state"] == "committed"
    assert _status(clone(tmp_path, bare, "viewer"))["t1"] == ("committed", "committed")
    assert subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=bare).returncode == 0


BARRIER = """\
#!{python}
import os, pathlib, sys, time
# Each push creating the task's claim ref waits here until two have come: both runners looked
# and saw the ref absent before either push landed.
arrived = pathlib.Path({arrived!r})
if any(line.split()[0] == "0" * 40 and line.split()[2] == {ref!r} for line in sys.stdin.read().splitlines()):
    (arrived / str(os.getpid())).touch()
    waited = 0
    while len(list(arrived.iterdir())) < 2 and waited < 1200:
        time.sleep(0.05)
        waited += 1
"""


def test_two_runners_told_to_run_the_same_folded_quarantined_task_dispatch_it_once(tmp_path: Path):
    bare, plan, log = make_remote(tmp_path, ["t1"], lease="2s")
    setup = clone(tmp_path, bare, "setup")
    _quarantined_and_folded(setup, bare, "t1")
    (tmp_path / "arrived").mkdir()
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(BARRIER.format(python=sys.executable, arrived=str(tmp_path / "arrived"),
                                   ref=claim_ref("rr", "t1")))
    hook.chmod(0o755)
    tops = [clone(tmp_path, bare, name) for name in ("a", "b")]
    runners = [start_runner(top, plan, "--task", "t1") for top in tops]
    results = [_finish(runner) for runner in runners]

    assert len(list((tmp_path / "arrived").iterdir())) == 2  # both pushed a claim expecting no ref
    assert log.read_text().split() == ["t1"]  # one push won
    assert results == [(0, {"t1": "committed"})] * 2
    entry = folded_entry(bare, "t1")
    assert entry["state"] == "committed"
    assert git(bare, "rev-parse", "refs/heads/failres/rr/t1").strip() == entry["commit"]
    assert _claims_refs(bare) == [record_ref("rr")]
    assert _status(tops[0])["t1"] == ("committed", "committed")


def test_a_cancelled_claim_is_not_folded_and_a_later_task_run_takes_it(tmp_path: Path):
    bare, plan, log = make_remote(tmp_path, ["t1", "t2"], lease="2s")
    setup, runner = clone(tmp_path, bare, "setup"), clone(tmp_path, bare, "runner")
    _held(setup, "t1")
    cancel = subprocess.run([sys.executable, "-m", "failres", "cancel", "rr", "t1", "--remote", "origin"],
                            cwd=setup, capture_output=True, text=True, timeout=120)
    assert cancel.returncode == 0, cancel.stderr
    cancelled = git(bare, "rev-parse", claim_ref("rr", "t1")).strip()

    # A plain run takes t2 and leaves t1 alone; at its end it folds t2, never t1.
    assert _finish(start_runner(runner, plan)) == (1, {"t1": "interrupted", "t2": "committed"})
    assert log.read_text().split() == ["t2"]
    assert sorted(_claims_refs(bare)) == sorted([claim_ref("rr", "t1"), record_ref("rr")])
    assert git(bare, "rev-parse", claim_ref("rr", "t1")).strip() == cancelled
    assert folded_entry(bare, "t1") == {} and folded_entry(bare, "t2")["state"] == "committed"
    assert _status(runner)["t1"] == ("interrupted", "cancelled")

    # Run again with --task once the lease is out: claimed over the cancelled claim, run once, folded.
    assert _finish(start_runner(runner, plan, "--task", "t1")) == (0, {"t1": "committed"})
    assert log.read_text().split() == ["t2", "t1"]
    assert _claims_refs(bare) == [record_ref("rr")]
    assert folded_entry(bare, "t1")["state"] == "committed"
    assert [c["state"] for c in claim_history(bare, "t1")][-2:] == ["cancelled", "held"]
    assert _status(runner) == {"t1": ("committed", "committed"), "t2": ("committed", "committed")}
