"""The claim protocol's rules, and its compare-and-swap pushes against a real bare remote."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from conftest import git
from failres.remote.claims import claim_verdict, format_ts, new_claim, parse_claim
from failres.remote.holder import Hold, Refusal, backoff, refused_for_good
from failres.remote.transport import RemoteClaims, first_refusal, remote_words
from remote_project import claim_history, clone, make_remote

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _claim(state: str = "held", run: str = "r1", until: datetime | None = None):
    claim = new_claim("rr", "t1", host="h", pid=7, run=run, now=NOW, lease=60)
    return parse_claim("rr", "t1", claim.finished_as(state, until=format_ts(until or NOW + timedelta(seconds=60)))
                       .message(), "abc")


def test_a_claim_reads_back_from_its_commit_message_field_for_field():
    claim = new_claim("rr", "t1", host="build-7", pid=4242, run="f00d", now=NOW, lease=120, int_head="1" * 40)
    assert parse_claim("rr", "t1", claim.message(), "oid") == replace(claim, oid="oid")
    assert claim.message().splitlines()[0] == "failres claim rr/t1: held by build-7 pid 4242"
    assert "until: 2026-01-02T03:06:05.000Z" in claim.message()


def test_a_message_that_is_no_claim_is_read_past():
    assert parse_claim("rr", "t1", "anything\n\nstate: mine\n", "x") is None


def test_a_held_claim_is_taken_only_after_a_whole_lease_unrenewed_by_the_takers_own_clock():
    held = _claim()
    assert not claim_verdict(held, unchanged_for=59, lease=60, run="r2", explicit=False).may_claim
    assert claim_verdict(held, unchanged_for=60, lease=60, run="r2", explicit=False).may_claim
    # An `until` long past by some clock proves nothing: the clocks of two machines differ.
    old = _claim(until=NOW - timedelta(days=1))
    assert not claim_verdict(old, unchanged_for=59, lease=60, run="r2", explicit=False).may_claim


def test_a_committed_claim_without_its_branch_is_not_trusted_and_is_taken_once_it_stood_a_lease():
    forged = _claim("committed")
    assert not claim_verdict(forged, unchanged_for=999, lease=60, run="r2", explicit=False).may_claim
    waiting = claim_verdict(forged, unchanged_for=59, lease=60, run="r2", explicit=False, branch_behind=False)
    assert not waiting.may_claim and "not trusted" in waiting.why
    assert claim_verdict(forged, unchanged_for=60, lease=60, run="r2", explicit=False, branch_behind=False).may_claim


def test_finished_claims_are_never_taken_and_quarantined_ones_only_when_asked():
    for state in ("committed", "quarantined", "cancelled"):
        assert not claim_verdict(_claim(state), unchanged_for=999, lease=60, run="r2",
                                 explicit=False).may_claim
    assert not claim_verdict(_claim("committed"), unchanged_for=999, lease=60, run="r2",
                             explicit=True).may_claim
    assert claim_verdict(_claim("quarantined"), unchanged_for=0, lease=60, run="r2", explicit=True).may_claim
    assert not claim_verdict(_claim("cancelled"), unchanged_for=0, lease=60, run="r2",
                             explicit=True).may_claim
    assert claim_verdict(_claim("released"), unchanged_for=0, lease=60, run="r2", explicit=False).may_claim
    assert claim_verdict(None, unchanged_for=0, lease=60, run="r2", explicit=False).may_claim


def _take(claims: RemoteClaims, expected: str, run: str, lease: float = 60.0):
    claim = claims.write(new_claim("rr", "t1", host="h", pid=1, run=run, now=datetime.now(UTC), lease=lease),
                         expected)
    return claim, claims.swap(claim, expected).accepted


def test_two_runners_claiming_one_task_at_once_get_it_once(tmp_path: Path):
    bare, _, _ = make_remote(tmp_path, ["t1"])
    a, b = (RemoteClaims(clone(tmp_path, bare, name), "origin", "rr") for name in ("a", "b"))
    _, first = _take(a, "", "ra")
    _, second = _take(b, "", "rb")  # b saw no claim either: its push must fail
    assert (first, second) == (True, False)
    assert claim_history(bare, "t1")[0]["run"] == "ra"


def test_a_late_result_is_refused_by_the_remote_when_the_claim_was_taken_over(tmp_path: Path):
    bare, _, _ = make_remote(tmp_path, ["t1"])
    top_a, top_b = clone(tmp_path, bare, "a"), clone(tmp_path, bare, "b")
    a, b = RemoteClaims(top_a, "origin", "rr"), RemoteClaims(top_b, "origin", "rr")
    mine, _ = _take(a, "", "ra")
    hold = Hold(a, mine, 60.0, pushed_at=time.monotonic(), branch_tip="")
    _, taken = _take(b, mine.oid, "rb")  # b took it over (it judged the lease expired)
    assert taken
    commit = git(top_a, "commit-tree", "-p", "HEAD", "-m", "late", "HEAD^{tree}").strip()
    assert not hold.finish("committed", branch=("refs/heads/failres/rr/t1", commit), commit=commit)
    assert hold.stop_reason() == "lost"
    assert git(bare, "for-each-ref", "refs/heads/failres/") == ""  # nothing published
    assert claim_history(bare, "t1")[0]["run"] == "rb"


def test_a_runner_cut_off_from_the_remote_stops_counting_the_task_as_its_own_after_its_lease(tmp_path: Path):
    bare, _, _ = make_remote(tmp_path, ["t1"])
    top_a = clone(tmp_path, bare, "a")
    a = RemoteClaims(top_a, "origin", "rr")
    mine, _ = _take(a, "", "ra", lease=1.5)
    hold = Hold(a, mine, 1.5, pushed_at=time.monotonic(), branch_tip="").start()
    git(top_a, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    deadline = time.monotonic() + 30
    while hold.stop_reason() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert hold.stop_reason() == "lost"
    git(top_a, "remote", "set-url", "origin", str(bare))
    assert not hold.finish("committed", branch=("refs/heads/failres/rr/t1", mine.oid))
    hold.close()
    assert claim_history(bare, "t1")[0]["state"] == "held"  # its last word on the remote: held, expiring
    assert git(bare, "for-each-ref", "refs/heads/failres/") == ""


def test_a_holder_renews_its_claim_while_it_holds_it(tmp_path: Path):
    bare, _, _ = make_remote(tmp_path, ["t1"])
    a = RemoteClaims(clone(tmp_path, bare, "a"), "origin", "rr")
    mine, _ = _take(a, "", "ra", lease=3.0)
    hold = Hold(a, mine, 3.0, pushed_at=time.monotonic(), branch_tip="").start()
    deadline = time.monotonic() + 60
    while len(claim_history(bare, "t1")) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert hold.finish("committed")
    hold.close()
    history = claim_history(bare, "t1")
    assert history[0]["state"] == "committed" and [h["state"] for h in history[1:]].count("held") >= 2
    assert len({h["until"] for h in history[1:]}) == len(history) - 1  # each renewal pushed the lease on


def test_a_failed_push_is_tried_again_at_once_then_with_a_doubling_wait_never_past_the_cap():
    assert [backoff(n, 2.0) for n in range(1, 8)] == [0.0, 0.25, 0.5, 1.0, 2.0, 2.0, 2.0]


def test_the_same_refusal_twice_is_final_and_a_changing_one_ends_after_three_pushes():
    hook = Refusal("refs/heads/failres/rr/t1", "pre-receive hook declined", "policy: protected")
    other = Refusal("refs/heads/failres/rr/t1", "pre-receive hook declined", "policy: busy, try later")
    assert not refused_for_good([hook])
    assert refused_for_good([hook, hook])
    assert not refused_for_good([other, hook])
    assert refused_for_good([other, hook, other])
    assert hook.describe() == "the remote refused refs/heads/failres/rr/t1 (pre-receive hook declined): policy: protected"


def test_the_ref_that_refused_an_atomic_push_is_named_past_the_refs_it_took_down_with_it():
    statuses = {"refs/failres/claims/rr/t1": (False, "[remote rejected] (atomic push failure)"),
                "refs/heads/failres/rr/t1": (False, "[remote rejected] (protected branch hook declined)")}
    assert first_refusal(statuses, ["refs/failres/claims/rr/t1", "refs/heads/failres/rr/t1"], "") == (
        "refs/heads/failres/rr/t1", "[remote rejected] (protected branch hook declined)")
    assert first_refusal({"refs/a": (True, "")}, ["refs/a"], "") is None
    assert remote_words(b"remote: policy: no        \nremote: \nerror: failed to push\n") == "policy: no"
