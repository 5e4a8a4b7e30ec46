"""Many runners, one plan, one local bare remote: what the claim protocol costs per task.

Each runner is a process with a clone of its own, running the real claim code
(`failres.remote`: the narrow look, this runner's own order, the verdicts, the
compare-and-swap claim, the atomic publish of branch and claim, the batched store
pushes and the last flush) with real git pushes and fetches; only the seat is replaced
by a sleep (`--seconds`, 0.1 s) and the task commit by an empty one. Printed: per task,
pushes, fetches, refused pushes and lost store pushes (retries); per runner per minute,
polls; the wall against the ideal (tasks x seconds / runners) and against one runner
(measured on a slice of the plan, scaled to the whole). `--quick` (4 x 100) is the smoke
test the suite runs; the numbers there mean little.

    python bench/bench_claims_scale.py [--runners 20] [--tasks 2000] [--seconds 0.1] [--quick]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import resource
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from failres.journal import event_put, make_event  # noqa: E402
from failres.remote.claims import FINISHED, claim_verdict, new_claim  # noqa: E402
from failres.remote.holder import Hold, utc_now  # noqa: E402
from failres.remote.pick import idle_seconds, runner_order  # noqa: E402
from failres.remote.runner import FOLD_AT  # noqa: E402
from failres.remote.store_flush import StorePusher  # noqa: E402
from failres.remote.transport import RemoteClaims, Unreachable  # noqa: E402
from lessons.storage.records import change_of  # noqa: E402
from lessons.storage.store import Store  # noqa: E402

SLUG = "scale"
LEASE = 60.0  # long enough that a 0.1 s task never renews: renewals are measured by bench_remote


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make_remote(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    bare = root / "remote.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = root / "seed"
    git(root, "init", "-q", "-b", "main", str(seed))
    (seed / "README").write_text("a project\n")
    git(seed, "add", ".")
    git(seed, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "a project")
    Store(seed).create()
    git(seed, "push", "-q", str(bare), "main", "refs/failres/store:refs/failres/store")
    return bare


def make_clone(root: Path, bare: Path, name: str) -> Path:
    top = root / name
    git(root, "clone", "-q", str(bare), str(top))
    git(top, "fetch", "-q", "origin", "refs/failres/store:refs/failres/store")
    return top


@dataclass
class Tally:
    tasks: int = 0
    looks: int = 0
    claim_pushes: int = 0
    refused: int = 0
    fetches: int = 0
    store_syncs: int = 0
    store_retries: int = 0
    busy_seconds: float = 0.0
    cpu_seconds: float = 0.0


def run_runner(top: Path, tasks: list[str], seconds: float, store_interval: float, out, fold: bool = True) -> None:
    """One runner's loop, as `RemoteRun._schedule` does it with --jobs 1, the seat a sleep; `fold`:
    each look folds the claims this runner finished into the plan's record (off: as before folding)."""
    tally = Tally()
    claims = RemoteClaims(top, "origin", SLUG)
    store = StorePusher(top, "refs/failres/store", "origin", interval=store_interval, snapshots=False)
    run_id, seen, behind, finished, idle, unfolded = secrets.token_hex(8), {}, {}, set(), 0, set()
    ending = False
    order = runner_order(run_id, tasks)
    looks = 0
    while True:
        try:
            look = claims.look()
        except Unreachable:
            time.sleep(0.2)
            continue
        looks += 1
        now = time.monotonic()
        for task, claim in look.claims.items():
            if seen.get(task, ("", 0.0))[0] != claim.oid:
                seen[task] = (claim.oid, now)
            if claim.state == "committed":
                behind[claim.oid] = look.tips.get(task) == claim.commit
        unfolded = {t for t in unfolded if t in look.claims and not look.claims[t].folded}  # others may fold
        mine = [look.claims[t] for t in sorted(unfolded)]
        if mine and (ending or len(mine) >= FOLD_AT):
            try:
                if claims.fold(look.record, mine) is not None:
                    unfolded -= {c.task for c in mine}
            except Unreachable:
                pass
        hold, waiting = None, False
        for task in order:
            if task in finished:
                continue
            claim = look.claims.get(task)
            trusted = claim is None or behind.get(claim.oid, True)
            verdict = claim_verdict(claim, unchanged_for=now - seen.get(task, ("", now))[1], lease=LEASE,
                                    run=run_id, explicit=False, branch_behind=trusted)
            if not verdict.may_claim:
                if claim is not None and claim.state in FINISHED and trusted:
                    finished.add(task)
                else:
                    waiting = True
                continue
            started = time.monotonic()
            mine = claims.write(new_claim(SLUG, task, host="bench", pid=0, run=run_id, now=utc_now(),
                                          lease=LEASE), claim.last_commit if claim else "")
            try:
                if claims.swap(mine, claim.expected if claim else "").accepted:
                    hold = Hold(claims, mine, LEASE, pushed_at=started, branch_tip=look.tips.get(task, ""))
                    break
            except Unreachable:
                pass
            waiting = True  # another runner's push came first: its next choice
        if hold is None:
            if not waiting and not unfolded:
                break
            ending = not waiting  # the runner's last look folds what it finished
            idle += 1
            time.sleep(idle_seconds(idle, LEASE, random.random()))
            continue
        idle = 0
        task = hold.claim.task
        busy = time.monotonic()
        time.sleep(seconds)  # the seat
        commit = git(top, "commit-tree", "-p", "HEAD", "-m", f"{SLUG}/{task}", "HEAD^{tree}").strip()
        if hold.finish("committed", branch=(claims.branch_ref(task), commit), commit=commit):
            Store(top).commit(change_of([event_put(make_event("task-committed", SLUG, task, commit=commit))]),
                              f"failres: task-committed {SLUG}/{task}")
            store.records_waiting()
            finished.add(task)
            unfolded |= {task} if fold else set()
            tally.tasks += 1
        hold.close()
        tally.busy_seconds += time.monotonic() - busy
        store.push_if_due()
    store.flush(threading.Event())
    tally.looks = looks
    tally.claim_pushes = claims.traffic.pushes
    tally.refused = claims.traffic.rejected
    tally.fetches = claims.traffic.fetches + claims.traffic.listings
    tally.store_syncs = store.syncs
    tally.store_retries = store.retries
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    tally.cpu_seconds = me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime
    out.put(tally)


def cas_push_seconds(bare: Path, top: Path, pushes: int = 5) -> float:
    """The median of `pushes` compare-and-swap pushes of one claim ref to the remote as it stands."""
    claims, times, expected = RemoteClaims(top, "origin", "probe"), [], ""
    for _ in range(pushes):
        mine = claims.write(new_claim("probe", "t", host="bench", pid=0, run="probe", now=utc_now(), lease=LEASE),
                            expected)
        started = time.monotonic()
        assert claims.swap(mine, expected).accepted
        times.append(time.monotonic() - started)
        expected = mine.oid
    git(bare, "update-ref", "-d", "refs/failres/claims/probe/t")
    return sorted(times)[len(times) // 2]


def simulate(root: Path, runners: int, tasks: int, seconds: float, fold: bool = True) -> tuple[Tally, float]:
    bare = make_remote(root)
    clones = [make_clone(root, bare, f"runner-{i:02d}") for i in range(runners)]
    ids = [f"t{i:05d}" for i in range(tasks)]
    store_interval = 2.0
    # Processes, not threads: runners in one process would take turns at its fetch lock and its GIL.
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    processes = [context.Process(target=run_runner, args=(top, ids, seconds, store_interval, out, fold))
                 for top in clones]
    started = time.monotonic()
    for process in processes:
        process.start()
    tallies = [out.get() for _ in processes]
    wall = time.monotonic() - started
    for process in processes:
        process.join()
    tally = Tally(*(sum(getattr(t, name) for t in tallies) for name in Tally.__dataclass_fields__))
    committed = git(bare, "for-each-ref", "--format=%(refname)", f"refs/heads/failres/{SLUG}/").split()
    if len(committed) != tasks or tally.tasks != tasks:
        msg = f"{tally.tasks} tasks committed by the runners, {len(committed)} branches on the remote, of {tasks}"
        raise SystemExit(msg)
    refs = git(bare, "for-each-ref", "--format=%(refname)").split()
    claim_refs = sum(1 for ref in refs if ref.startswith(f"refs/failres/claims/{SLUG}/"))
    print(f"  refs on the remote at the end: {len(refs)} ({claim_refs} claim refs); "
          f"a compare-and-swap push there: {cas_push_seconds(bare, clones[0]):.3f} s")
    return tally, wall


def report(label: str, runners: int, tasks: int, seconds: float, tally: Tally, wall: float) -> None:
    # A store sync is one fetch and one push; a push lost to another runner's costs an ls-remote more.
    pushes = tally.claim_pushes + tally.store_syncs
    fetches = tally.fetches + tally.store_syncs + tally.store_retries
    refused = tally.refused + tally.store_retries
    ideal = tasks * seconds / runners
    print(f"{label}: {runners} runners x {tasks} tasks of {seconds:g} s")
    print(f"  per task: {pushes / tasks:.2f} pushes ({tally.claim_pushes / tasks:.2f} claim, "
          f"{tally.store_syncs / tasks:.2f} store), {fetches / tasks:.2f} fetches, "
          f"{refused / tasks:.3f} refused pushes ({100 * refused / max(pushes, 1):.1f}% of pushes), "
          f"{tally.store_retries / tasks:.3f} store retries")
    print(f"  cpu per task: {1000 * tally.cpu_seconds / tasks:.0f} ms (git and the runner, all processes)")
    print(f"  per runner per minute: {tally.looks / runners / (wall / 60):.0f} polls")
    print(f"  wall {wall:.1f} s; ideal {ideal:.1f} s ({wall / ideal:.2f}x)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runners", type=int, default=20)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=0.1)
    parser.add_argument("--quick", action="store_true", help="4 runners x 100 tasks: a smoke test")
    parser.add_argument("--no-baseline", action="store_true", help="skip the one-runner measurement")
    parser.add_argument("--no-fold", action="store_true", help="leave finished claims unfolded, as before folding")
    args = parser.parse_args()
    runners, tasks = (4, 100) if args.quick else (args.runners, args.tasks)
    with tempfile.TemporaryDirectory(prefix="failres-bench-claims-") as tmp:
        tally, wall = simulate(Path(tmp) / "many", runners, tasks, args.seconds, not args.no_fold)
        report("many", runners, tasks, args.seconds, tally, wall)
        if not args.no_baseline and runners > 1:
            # One runner on this many runners' share of the plan, scaled up: what one runner
            # would take for the whole plan, without waiting tasks x seconds for it.
            share = max(10, tasks // runners)
            one, one_wall = simulate(Path(tmp) / "one", 1, share, args.seconds, not args.no_fold)
            report("one", 1, share, args.seconds, one, one_wall)
            whole = one_wall * tasks / share
            print(f"  one runner, whole plan (scaled from {share} tasks): {whole:.1f} s; "
                  f"{runners} runners are {whole / wall:.1f}x faster (ideal {runners}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
