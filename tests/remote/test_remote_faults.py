"""The remote's faults on real clones and a local bare remote: each is bounded, and none costs finished work.

A remote that refuses one task branch for good, a remote gone for a few seconds inside
the lease, a runner whose clock is five minutes ahead: each task is still committed
exactly once, and a seat's work is never run twice (counted in the scripted seat's own log).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

from conftest import git
from failres.journal import read_journal
from lessons.storage.store import Store
from remote_project import claim_history, clone, make_remote, start_runner

REFUSED = "t2"


def _finish(runners: list[subprocess.Popen], seconds: float = 180) -> list[tuple[int, list[dict], str]]:
    try:
        done = [r.communicate(timeout=seconds) for r in runners]
    finally:
        for runner in runners:
            if runner.poll() is None:
                runner.kill()
                runner.wait()
    return [(r.returncode, json.loads(out) if out.strip() else [], err) for r, (out, err) in zip(runners, done)]


def _wait_until(check, what: str, runners: list[subprocess.Popen], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline or any(r.poll() is not None for r in runners):
            raise AssertionError(f"{what} never happened")
        time.sleep(0.05)


def _dispatches(log: Path) -> Counter:
    return Counter(log.read_text().split()) if log.exists() else Counter()


def _has_ref(top: Path, ref: str) -> bool:
    return subprocess.run(["git", "show-ref", "--verify", "--quiet", ref], cwd=top).returncode == 0


def _fsck_clean(*tops: Path) -> None:
    for top in tops:
        check = subprocess.run(["git", "fsck", "--strict"], cwd=top, capture_output=True, text=True)
        assert check.returncode == 0, (top, check.stdout, check.stderr)


def _refusing_hook(bare: Path, branch: str, pushes: Path) -> None:
    """A pre-receive hook that refuses one task branch for good and counts the pushes of it."""
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        refused=0
        while read old new ref; do
          if [ "$ref" = "refs/heads/{branch}" ]; then refused=1; echo "$new" >> {pushes}; fi
        done
        if [ $refused = 1 ]; then echo "policy: {branch} is protected here" >&2; exit 1; fi
        exit 0
    """))
    hook.chmod(0o755)


def test_a_branch_the_remote_refuses_for_good_is_quarantined_publish_refused_and_the_plan_goes_on(tmp_path: Path):
    bare, plan, log = make_remote(tmp_path, ["t1", REFUSED, "t3"], lease="10s")
    pushes = tmp_path / "refused-pushes.txt"
    _refusing_hook(bare, f"failres/rr/{REFUSED}", pushes)
    top = clone(tmp_path, bare, "a")
    [(_, outcomes, err)] = _finish([start_runner(top, plan, "--jobs", "2")])

    states = {o["task"]: (o["state"], o["failClass"]) for o in outcomes}
    assert states == {"t1": ("committed", None), "t3": ("committed", None),
                      REFUSED: ("quarantined", "publish-refused")}, err
    # Bounded: at most three pushes of the refused branch, one seat run, and no branch on the remote.
    assert 1 <= len(pushes.read_text().split()) <= 3
    assert _dispatches(log)[REFUSED] == 1
    assert git(bare, "for-each-ref", f"refs/heads/failres/rr/{REFUSED}") == ""
    assert claim_history(bare, REFUSED)[0]["state"] == "quarantined"
    for task in ("t1", "t3"):
        assert claim_history(bare, task)[0]["state"] == "committed"
        assert git(bare, "rev-parse", f"failres/rr/{task}").strip() == claim_history(bare, task)[0]["commit"]
    # The remote's own words reach the person, and the finished work is kept in the quarantine's snapshot.
    quarantined = [e for e in read_journal(Store(top), "rr").for_task(REFUSED) if e["type"] == "quarantined"]
    assert len(quarantined) == 1 and quarantined[0]["failClass"] == "publish-refused"
    assert f"policy: failres/rr/{REFUSED} is protected here" in quarantined[0]["message"]
    lessons = subprocess.run([sys.executable, "-m", "failres", "lessons", "list", "--json"], cwd=top,
                             capture_output=True, text=True, check=True)
    [lesson] = [entry for entry in json.loads(lessons.stdout) if entry["task"] == REFUSED]
    assert lesson["failClass"] == "publish-refused" and lesson["snapshotBundle"]
    _fsck_clean(bare, top)


def test_a_remote_gone_for_seconds_inside_the_lease_costs_no_finished_work(tmp_path: Path):
    tasks = ["t1", "t2", "t3", "t4"]
    bare, plan, log = make_remote(tmp_path, tasks, lease="15s", seconds=1.0)
    top = clone(tmp_path, bare, "a")
    runner = start_runner(top, plan, "--jobs", "4")
    gone = tmp_path / "remote-gone.git"
    try:
        _wait_until(lambda: sum(_dispatches(log).values()) == len(tasks), "every seat's start", [runner])
        bare.rename(gone)  # the seats finish and their results are pushed while the remote is away
        time.sleep(3.0)
    finally:
        if gone.exists():
            gone.rename(bare)
    [(code, outcomes, err)] = _finish([runner])

    assert code == 0, err
    assert {o["task"]: o["state"] for o in outcomes} == dict.fromkeys(tasks, "committed")
    assert _dispatches(log) == Counter(tasks)  # each seat ran once: nothing finished was thrown away
    for task in tasks:
        history = claim_history(bare, task)
        assert history[0]["state"] == "committed"
        assert {h["run"] for h in history} == {history[0]["run"]}  # never given up, never taken again
        assert git(bare, "rev-parse", f"failres/rr/{task}").strip() == history[0]["commit"]
    _fsck_clean(bare, top)


SKEWED = """\
import datetime as real
import sys

import failres.remote.holder as holder


class Ahead(real.datetime):
    \"\"\"This runner's wall clock, five minutes ahead of every other machine's.\"\"\"

    @classmethod
    def now(cls, tz=None):
        return real.datetime.now(tz) + real.timedelta(minutes=5)


holder.datetime = Ahead
sys.argv[0] = "failres"
from failres.cli import main

main()
"""


def test_a_runner_whose_clock_runs_five_minutes_ahead_takes_no_live_claim(tmp_path: Path):
    tasks = ["t1", "t2", "t3"]
    bare, plan, log = make_remote(tmp_path, tasks, lease="10s", seconds=1.0, go=True)
    first, skewed = clone(tmp_path, bare, "a"), clone(tmp_path, bare, "b")
    wrapper = tmp_path / "skewed_failres.py"
    wrapper.write_text(SKEWED)
    runners = [start_runner(first, plan, "--jobs", "3")]
    _wait_until(lambda: sum(_dispatches(log).values()) == len(tasks), "every seat's start", runners)
    runners.append(subprocess.Popen([sys.executable, str(wrapper), "run", str(plan), "--remote", "origin",
                                     "--quiet", "--json", "--jobs", "3"], cwd=skewed, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True,
                                    env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}))
    # The seats finish only once the skewed runner has read every live claim.
    looked = [f"refs/remotes/origin/failres-claims/rr/{task}" for task in tasks]
    _wait_until(lambda: all(_has_ref(skewed, ref) for ref in looked), "the skewed runner's look", runners)
    (log.parent / "go").write_text("")
    results = _finish(runners)

    for code, outcomes, err in results:
        assert code == 0, err
        assert {o["task"]: o["state"] for o in outcomes} == dict.fromkeys(tasks, "committed")
    assert _dispatches(log) == Counter(tasks)
    for task in tasks:
        runs = {h["run"] for h in claim_history(bare, task)}
        assert len(runs) == 1, (task, claim_history(bare, task))  # the live holder kept every task
    _fsck_clean(bare, first, skewed)
