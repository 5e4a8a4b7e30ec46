"""Finished tasks' claims folded into one record per plan: refs stay few, no task runs twice or is skipped,
a runner of the code before stops, and a record a peer forged or broke is refused with one line."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pygit2
import pytest

from conftest import git
from failres.remote.claims import new_claim
from failres.remote.folded import (LAYOUT, MAX_ENTRY_BYTES, CorruptRecord, Record, bucket_of, read_record,
                                   record_ref, write_record)
from failres.remote.transport import RemoteClaims
from remote_project import claim_history, clone, folded_entry, make_remote, start_runner

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def _claim(task: str, state: str = "committed", commit: str = "c" * 40):
    held = new_claim("rr", task, host="h", pid=7, run="r1", now=NOW, lease=60.0)
    return held.finished_as(state, commit=commit if state == "committed" else "")


def _claims_refs(bare: Path) -> list[str]:
    return git(bare, "for-each-ref", "--format=%(refname)", "refs/failres/claims/").split()


def _run(top: Path, plan: Path, *args: str) -> dict[str, str]:
    runner = start_runner(top, plan, *args)
    out, err = runner.communicate(timeout=240)
    assert runner.returncode == 0, err
    return {o["task"]: o["state"] for o in json.loads(out)}


def test_a_record_reads_back_what_was_folded_and_drops_only_what_it_is_told(tmp_path: Path):
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    folds = [_claim(f"t{i}") for i in range(40)] + [_claim("q", "quarantined")]
    first = read_record(repo, "rr", write_record(repo, Record("rr"), folds))
    assert set(first.entries) == {c.task for c in folds}
    assert all(c.folded and c.host == "h" and c.run == "r1" for c in first.entries.values())
    assert first.entries["t3"].commit == "c" * 40 and first.entries["q"].state == "quarantined"
    assert set(first.buckets) == {bucket_of(c.task) for c in folds}  # fanned out, not one flat listing
    second = read_record(repo, "rr", write_record(repo, first, [_claim("t40")], ("t0", "q")), first)
    assert set(second.entries) == set(first.entries) - {"t0", "q"} | {"t40"}
    assert repo.get(second.oid).parents == []  # fetching the record never brings every fold before it


def test_the_record_cannot_be_read_as_a_claim_by_code_that_reads_every_claim_commits_message(tmp_path: Path):
    # The code before folding asks each commit under a plan's claims for its message as text:
    # for the record that is an error, and it stops there, before claiming a folded task as unclaimed.
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    commit = repo.get(write_record(repo, Record("rr"), [_claim("t1")]))
    assert commit.message_encoding == LAYOUT
    with pytest.raises(LookupError, match=LAYOUT):
        commit.message  # noqa: B018


def _raw_commit(repo: pygit2.Repository, tree: pygit2.Oid, encoding: str | None = LAYOUT) -> str:
    header = f"encoding {encoding}\n" if encoding else ""
    body = f"tree {tree}\nauthor a <a@b> 0 +0000\ncommitter a <a@b> 0 +0000\n{header}\nforged\n"
    return str(repo.odb.write(pygit2.enums.ObjectType.COMMIT, body.encode()))


def _tree(repo: pygit2.Repository, entries: dict[str, object]) -> pygit2.Oid:
    """A tree from {name: bytes (a blob) or dict (a subtree)}."""
    builder = repo.TreeBuilder()
    for name, value in entries.items():
        if isinstance(value, dict):
            builder.insert(name, _tree(repo, value), pygit2.GIT_FILEMODE_TREE)
        else:
            builder.insert(name, repo.create_blob(value), pygit2.GIT_FILEMODE_BLOB)
    return builder.write()


GOOD = _claim("t1").message().encode()
FORGED = {
    "a blob beside the subtrees": ({"zz": GOOD}, LAYOUT),
    "a subtree not named by two hex digits": ({"xyz": {"t1": GOOD}}, LAYOUT),
    "an entry in another task's subtree": ({("00" if bucket_of("t1") != "00" else "01"): {"t1": GOOD}}, LAYOUT),
    "an entry named like no task": ({bucket_of("T1"): {"T1": GOOD}}, LAYOUT),
    "binary bytes": ({bucket_of("t1"): {"t1": b"\xff\xfe\x00state: committed\n"}}, LAYOUT),
    "a huge entry": ({bucket_of("t1"): {"t1": GOOD + b"x: " + b"y" * MAX_ENTRY_BYTES}}, LAYOUT),
    "an entry of a held claim": ({bucket_of("t1"): {"t1": _claim("t1").finished_as("held").message().encode()}},
                                 LAYOUT),
    "an entry that is no claim": ({bucket_of("t1"): {"t1": b"hello\n"}}, LAYOUT),
    "no layout": ({bucket_of("t1"): {"t1": GOOD}}, None),
    "a newer layout": ({bucket_of("t1"): {"t1": GOOD}}, "failres-claims-layout-3"),
}


@pytest.mark.parametrize("shape", list(FORGED))
def test_a_record_of_any_other_shape_is_refused_in_one_line(tmp_path: Path, shape: str):
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    entries, encoding = FORGED[shape]
    with pytest.raises(CorruptRecord) as refused:
        read_record(repo, "rr", _raw_commit(repo, _tree(repo, entries), encoding))
    assert "\n" not in str(refused.value) and "rr" in str(refused.value)
    if shape == "a newer layout":
        assert "layout 3" in str(refused.value) and "upgrade" in refused.value.hint


def test_runners_leave_one_record_and_no_claim_ref_and_run_each_task_once(tmp_path: Path):
    tasks = [f"t{i}" for i in range(4)]
    bare, plan, log = make_remote(tmp_path, tasks)
    runners = [start_runner(clone(tmp_path, bare, name), plan) for name in ("a", "b")]
    for runner in runners:
        _, err = runner.communicate(timeout=240)
        assert runner.returncode == 0, err
    assert sorted(log.read_text().split()) == tasks
    assert _claims_refs(bare) == [record_ref("rr")]
    for task in tasks:
        entry = folded_entry(bare, task)
        assert entry["state"] == "committed"
        assert git(bare, "rev-parse", f"refs/heads/failres/rr/{task}").strip() == entry["commit"]
        assert claim_history(bare, task)[-1]["state"] == "held"  # the entry names the claim's history
    assert subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=bare).returncode == 0
    later = clone(tmp_path, bare, "c")
    assert _run(later, plan) == dict.fromkeys(tasks, "committed")  # read from the record: none runs again
    assert sorted(log.read_text().split()) == tasks
    status = subprocess.run([sys.executable, "-m", "failres", "status", "rr", "--remote", "origin", "--json"],
                            cwd=later, capture_output=True, text=True, timeout=120)
    assert {(r["task"], r["state"], r["claim"]) for r in json.loads(status.stdout)} == {
        (t, "committed", "committed") for t in tasks}


def test_a_finished_claim_left_unfolded_is_folded_by_the_next_runner_and_not_run_again(tmp_path: Path):
    bare, plan, log = make_remote(tmp_path, ["t1", "t2"], lease="2s")
    old, runner = clone(tmp_path, bare, "old"), clone(tmp_path, bare, "new")
    # t1 committed as the code before folding left it: a committed claim ref and its branch.
    head = git(old, "rev-parse", "HEAD").strip()
    claims = RemoteClaims(old, "origin", "rr")
    held = claims.write(new_claim("rr", "t1", host="old", pid=1, run="o1", now=datetime.now(UTC), lease=2.0), "")
    assert claims.swap(held, "").accepted
    done = claims.write(held.finished_as("committed", commit=head), held.oid)
    assert claims.swap(done, held.oid, branch=(claims.branch_ref("t1"), head, "")).accepted

    assert _run(runner, plan) == {"t1": "committed", "t2": "committed"}
    assert log.read_text().split() == ["t2"]
    assert _claims_refs(bare) == [record_ref("rr")]
    assert folded_entry(bare, "t1")["host"] == "old" and folded_entry(bare, "t1")["claim"] == done.oid


def test_a_forged_record_stops_the_runner_in_one_line_with_nothing_claimed_or_run(tmp_path: Path):
    bare, plan, log = make_remote(tmp_path, ["t1"])
    forger, runner = clone(tmp_path, bare, "a"), clone(tmp_path, bare, "b")
    repo = pygit2.Repository(str(forger))
    forged = _raw_commit(repo, _tree(repo, {bucket_of("t1"): {"t1": b"\x00\x01binary"}}))
    git(forger, "push", "-q", "origin", f"{forged}:{record_ref('rr')}")
    refs = git(bare, "for-each-ref", "refs/failres/claims/", "refs/heads/")

    ran = start_runner(runner, plan)
    out, err = ran.communicate(timeout=240)
    assert ran.returncode == 2, err
    [line] = [line for line in err.splitlines() if line.startswith("error:")]
    assert "record of finished tasks of rr" in line
    assert not log.exists() or log.read_text() == ""
    # Nothing claimed, no branch pushed, the record left as it was (the store holds the plan's tasks as planned).
    assert git(bare, "for-each-ref", "refs/failres/claims/", "refs/heads/") == refs


def test_a_forged_entry_without_its_branch_does_not_make_a_runner_skip_the_task(tmp_path: Path):
    bare, plan, log = make_remote(tmp_path, ["t1"], lease="2s")
    forger, runner = clone(tmp_path, bare, "a"), clone(tmp_path, bare, "b")
    repo = pygit2.Repository(str(forger))
    oid = write_record(repo, Record("rr"), [_claim("t1", commit=git(forger, "rev-parse", "HEAD").strip())])
    git(forger, "push", "-q", "origin", f"{oid}:{record_ref('rr')}")
    assert _run(runner, plan) == {"t1": "committed"}
    assert log.read_text().split() == ["t1"]  # run, once the forged entry stood unchanged for a lease
    entry = folded_entry(bare, "t1")
    assert entry["host"] != "h" and git(bare, "rev-parse", "refs/heads/failres/rr/t1").strip() == entry["commit"]
