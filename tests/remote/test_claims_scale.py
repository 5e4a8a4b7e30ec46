"""What keeps a crowd of runners cheap: an order of their own, idle backoff, narrow fetches, batched store pushes."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from conftest import ROOT, git
from failres.remote.pick import idle_seconds, poll_seconds, runner_order
from failres.remote.store_flush import StorePusher, unpushed_commits
from failres.remote.transport import RemoteClaims
from failres.journal import event_put, make_event
from lessons.storage.records import change_of
from lessons.storage.store import Store
from remote_project import clone, make_remote

TASKS = [f"t{i:03d}" for i in range(200)]


def test_runners_try_the_tasks_in_orders_of_their_own_so_they_rarely_want_the_same_one_first():
    runs = [f"run{i:02d}" for i in range(20)]
    orders = [runner_order(run, TASKS) for run in runs]
    assert all(sorted(order) == TASKS for order in orders)
    assert runner_order("run00", TASKS) == orders[0]  # stable across a runner's looks
    assert runner_order("run00", TASKS[::-1]) == orders[0]  # whatever order the plan lists them in
    firsts = [order[0] for order in orders]
    assert len(set(firsts)) >= 17  # plan order had all twenty push a claim of t000
    # Once a runner took its first choice, the others' next choices do not all fall on one task.
    assert len({order[1] for order in orders}) >= 17


def test_an_idle_runner_waits_longer_each_empty_look_never_past_half_a_lease_and_not_in_step():
    lease = 120.0
    waits = [idle_seconds(n, lease, 0.999) for n in range(1, 40)]
    assert waits == sorted(waits) and waits[0] < poll_seconds(lease)
    assert max(waits) <= lease / 2
    assert idle_seconds(5, lease, 0.0) < idle_seconds(5, lease, 0.9)  # the draw spreads a crowd


def test_a_look_asks_the_remote_only_for_its_plans_refs(tmp_path: Path, monkeypatch):
    """Protocol v2 with the plan's prefixes: the remote lists this plan's claims and branches, not the
    other plans' claims nor every branch, whatever protocol the person's git config asks for."""
    bare, _, _ = make_remote(tmp_path, ["t1"])
    top = clone(tmp_path, bare, "a")
    head = git(top, "rev-parse", "HEAD").strip()
    for ref in ("refs/failres/claims/other/t1", "refs/heads/failres/other/t1", "refs/heads/feature",
                "refs/failres/claims/rr/t1", "refs/heads/failres/rr/t1"):
        git(top, "push", "-q", "origin", f"{head}:{ref}")
    git(top, "config", "protocol.version", "0")  # the person's own setting: everything advertised
    trace = tmp_path / "packets.txt"
    monkeypatch.setenv("GIT_TRACE_PACKET", str(trace))
    look = RemoteClaims(top, "origin", "rr").look()
    monkeypatch.delenv("GIT_TRACE_PACKET")
    listed = trace.read_text(errors="replace")
    assert "ref-prefix refs/failres/claims/rr/" in listed and "ref-prefix refs/heads/failres/rr/" in listed
    assert "refs/heads/failres/rr/t1" in listed
    for other in ("refs/failres/claims/other/", "refs/heads/failres/other/", "refs/heads/feature"):
        assert other not in listed
    assert look.tips == {"t1": head} and look.claims == {}  # the commit there is no claim: read past


def _records(top: Path, n: int) -> None:
    store = Store(top)
    for i in range(n):
        store.commit(change_of([event_put(make_event("task-committed", "rr", f"t{i}", commit="1" * 40))]),
                     f"failres: task-committed rr/t{i}")


def _remote_store(bare: Path) -> str:
    return git(bare, "rev-parse", "refs/failres/store").strip()


def test_records_of_many_tasks_go_to_the_remote_in_one_store_push_an_interval(tmp_path: Path):
    bare, _, _ = make_remote(tmp_path, ["t1"])
    top = clone(tmp_path, bare, "a")
    git(top, "fetch", "-q", "origin", "refs/failres/store:refs/failres/store")
    now = [100.0]
    pusher = StorePusher(top, "refs/failres/store", "origin", interval=10.0, snapshots=False, clock=lambda: now[0])
    before = _remote_store(bare)
    for round_ in range(3):
        for _ in range(4):  # four tasks end within one interval
            _records(top, 1)
            pusher.records_waiting()
            pusher.push_if_due()
            now[0] += 1.0
        now[0] += 10.0
    assert pusher.syncs == 3
    pusher.records_waiting()
    pusher.push_if_due()  # the last interval's records go at its end
    assert git(bare, "rev-list", "--count", f"{before}..refs/failres/store").strip() != "0"
    assert git(top, "rev-parse", "refs/failres/store").strip() == _remote_store(bare)


def test_the_last_store_push_is_tried_until_it_lands_past_any_number_of_failures(tmp_path: Path):
    bare, _, _ = make_remote(tmp_path, ["t1"])
    top = clone(tmp_path, bare, "a")
    git(top, "fetch", "-q", "origin", "refs/failres/store:refs/failres/store")
    _records(top, 3)
    git(top, "remote", "set-url", "origin", str(tmp_path / "gone.git"))  # the remote is away
    pusher = StorePusher(top, "refs/failres/store", "origin", interval=1.0, snapshots=False)
    failed = threading.Event()

    def pause_and_count(seconds: float) -> bool:
        if pusher.syncs >= 12:  # more failures than a sync ever retried: then the remote is back
            git(top, "remote", "set-url", "origin", str(bare))
        failed.set()
        return False  # never interrupted

    stop = threading.Event()
    stop.wait = pause_and_count  # the pause between tries, without the waiting
    assert pusher.flush(stop)
    assert pusher.syncs >= 13 and failed.is_set()
    assert git(top, "rev-parse", "refs/failres/store").strip() == _remote_store(bare)
    assert unpushed_commits(top, "refs/failres/store", "origin") == 0


def test_an_interrupted_last_push_says_how_many_store_commits_wait_and_keeps_them(tmp_path: Path, caplog):
    bare, _, _ = make_remote(tmp_path, ["t1"])
    top = clone(tmp_path, bare, "a")
    git(top, "fetch", "-q", "origin", "refs/failres/store:refs/failres/store")
    git(top, "fetch", "-q", "origin", "refs/failres/store:refs/remotes/origin/failres/store")
    _records(top, 2)
    tip = git(top, "rev-parse", "refs/failres/store").strip()
    git(top, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    stop = threading.Event()
    stop.set()  # the person pressed Ctrl-C
    pusher = StorePusher(top, "refs/failres/store", "origin", interval=1.0, snapshots=False)
    with caplog.at_level("WARNING", logger="failres.remote"):
        assert not pusher.flush(stop)
    assert pusher.syncs == 1
    assert "2 store commits not on origin yet" in caplog.text and "git failres sync origin" in caplog.text
    assert git(top, "rev-parse", "refs/failres/store").strip() == tip


def test_the_scale_bench_runs_its_runners_to_every_task_committed_once():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_claims_scale.py"), "--runners", "3",
                           "--tasks", "18", "--no-baseline"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "per task:" in done.stdout and "polls" in done.stdout and "ideal" in done.stdout
