"""The git-native store: commits on a private ref, add-only records, merge, undo, crashes."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pygit2
import pytest

from conftest import ROOT, git
from lessons.errors import CorruptRecord, InvalidInput, NotFound
from lessons.storage.records import (
    amendment_put,
    change_of,
    encode,
    make_amendment,
    new_id,
    read_collection,
    read_record,
    record_put,
    resolve_id,
)
from lessons.storage.store import Change, Store
from lessons.storage.history import merge_line, undo_commit


def lesson(**fields) -> dict:
    return {"id": new_id(), "ts": "2026-11-30T03:00:00.000000Z", "slug": "s", "task": "t1", **fields}


def test_a_written_record_reads_back_byte_for_byte(repo: Path) -> None:
    store = Store(repo)
    doc = lesson(message="héllo", failClass="unknown")
    store.commit(change_of([record_put("lessons", doc)]), "failres: quarantine s/t1 (unknown)")
    assert read_record(store, "lessons", doc["id"]) == doc
    path = f"lessons/{doc['id'][:2]}/{doc['id'][2:4]}/{doc['id']}.json"
    assert git(repo, "show", f"refs/failres/store:{path}").encode() == encode(doc)
    assert encode(doc).endswith(b"}\n") and b'  "failClass": "unknown"' in encode(doc)


def test_store_writes_never_touch_branches_index_or_worktree(repo: Path) -> None:
    head_before = git(repo, "rev-parse", "HEAD")
    (repo / "dirty.txt").write_text("work in progress\n")
    git(repo, "add", "dirty.txt")
    status_before = git(repo, "status", "--porcelain")
    Store(repo).commit(change_of([record_put("lessons", lesson())]), "failres: test")
    assert git(repo, "rev-parse", "HEAD") == head_before
    assert git(repo, "status", "--porcelain") == status_before
    assert git(repo, "branch", "--list") == "* main\n"


def test_git_log_reads_as_an_audit_trail(repo: Path) -> None:
    store = Store(repo)
    doc = lesson()
    store.commit(change_of([record_put("lessons", doc)]), "failres: quarantine release-readiness/t16 (fixer-scope-violation)")
    log = git(repo, "log", "-p", "refs/failres/store")
    assert "failres: quarantine release-readiness/t16 (fixer-scope-violation)" in log
    assert f"+ lessons/{doc['id'][:2]}/{doc['id'][2:4]}/{doc['id']}.json" in log
    assert '+  "slug": "s",' in log
    reflog = git(repo, "reflog", "show", "refs/failres/store")
    assert "failres: quarantine release-readiness/t16" in reflog


def test_amendments_fold_last_wins_and_first_wins(repo: Path) -> None:
    store = Store(repo)
    doc = lesson(resolved_by=None, status="open")
    store.commit(change_of([record_put("lessons", doc)]), "failres: add")
    later = make_amendment(doc["id"], {"status": "answered"}, ts="2026-11-30T05:00:00.000000Z")
    earlier = make_amendment(doc["id"], {"status": "stale"}, ts="2026-11-30T04:00:00.000000Z")
    stamp1 = make_amendment(doc["id"], {"resolved_by": ["scope-widened"]}, first_wins=True,
                            ts="2026-11-30T04:30:00.000000Z")
    stamp2 = make_amendment(doc["id"], {"resolved_by": ["unknown"]}, first_wins=True,
                            ts="2026-11-30T06:00:00.000000Z")
    store.commit(change_of([amendment_put("lessons", doc["id"], a) for a in (later, stamp2)]), "failres: a")
    store.commit(change_of([amendment_put("lessons", doc["id"], a) for a in (earlier, stamp1)]), "failres: b")
    folded = read_record(store, "lessons", doc["id"])
    assert folded["status"] == "answered"
    assert folded["resolved_by"] == ["scope-widened"]
    # The record itself was never edited: its file is the one first written.
    assert json.loads(store.read_bytes(
        f"lessons/{doc['id'][:2]}/{doc['id'][2:4]}/{doc['id']}.json"))["status"] == "open"


def test_a_corrupt_record_file_is_skipped_and_reported_with_its_path(repo: Path) -> None:
    store = Store(repo)
    good = lesson()
    store.commit(change_of([record_put("lessons", good)]), "failres: good")
    bad_id = new_id()
    bad_path = f"lessons/{bad_id[:2]}/{bad_id[2:4]}/{bad_id}.json"
    store.commit(Change({bad_path: b"{not json\xff"}), "failres: a torn write")
    result = read_collection(store, "lessons")
    assert [r["id"] for r in result.records] == [good["id"]]
    assert [p.path for p in result.problems] == [bad_path]
    with pytest.raises(CorruptRecord, match=bad_path):
        read_record(store, "lessons", bad_id)


def test_undo_reverts_exactly_one_write(repo: Path) -> None:
    store = Store(repo)
    a, b = lesson(), lesson()
    first = store.commit(change_of([record_put("lessons", a)]), "failres: write a")
    store.commit(change_of([record_put("lessons", b)]), "failres: write b")
    undo_commit(store, str(first))
    ids = {r["id"] for r in read_collection(store, "lessons").records}
    assert ids == {b["id"]}
    assert git(repo, "log", "-1", "--format=%s", "refs/failres/store").startswith(f"failres: undo {str(first)[:12]}")
    with pytest.raises(InvalidInput, match="already undone"):
        undo_commit(store, str(first))


def test_undo_refuses_a_commit_outside_the_store(repo: Path) -> None:
    store = Store(repo)
    store.create()
    with pytest.raises(NotFound):
        undo_commit(store, git(repo, "rev-parse", "HEAD").strip())


def test_merge_of_two_diverged_stores_keeps_every_record_of_both(repo: Path) -> None:
    store = Store(repo)
    base = lesson()
    store.commit(change_of([record_put("lessons", base)]), "failres: base")
    fork = store.tip()
    ours = [lesson() for _ in range(5)]
    for doc in ours:
        store.commit(change_of([record_put("lessons", doc)]), "failres: ours")
    our_tip = store.tip()
    # The other replica: same base, its own writes, on a ref of its own.
    other = Store(repo, "refs/failres/other")
    other.repo.create_reference("refs/failres/other", fork)
    theirs = [lesson() for _ in range(5)]
    for doc in theirs:
        other.commit(change_of([record_put("lessons", doc)]), "failres: theirs")
    stamp = make_amendment(base["id"], {"resolved_by": ["unknown"]}, first_wins=True)
    other.commit(change_of([amendment_put("lessons", base["id"], stamp)]), "failres: stamp")
    merged = merge_line(store, other.tip())
    commit = store.repo[merged]
    assert [p.id for p in commit.parents] == [our_tip, other.tip()]
    ids = {r["id"] for r in read_collection(store, "lessons").records}
    assert ids == {d["id"] for d in [base, *ours, *theirs]}
    assert read_record(store, "lessons", base["id"])["resolved_by"] == ["unknown"]
    assert git(repo, "fsck", "--strict", check=False) is not None
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)


def test_merge_is_the_same_in_either_order_when_both_sides_wrote_one_path(repo: Path) -> None:
    store = Store(repo)
    store.create()
    fork = store.tip()
    one = Store(repo, "refs/failres/one")
    two = Store(repo, "refs/failres/two")
    one.repo.create_reference("refs/failres/one", fork)
    two.repo.create_reference("refs/failres/two", fork)
    fact, one_only, two_only = (f"facts/aa/bb/aabb{n:012d}.json" for n in range(3))
    one.commit(Change({fact: b'{"v": 1}\n', one_only: b"{}\n"}), "failres: one")
    two.commit(Change({fact: b'{"v": 2}\n', two_only: b"{}\n"}), "failres: two")
    a = Store(repo, "refs/failres/a")
    b = Store(repo, "refs/failres/b")
    a.repo.create_reference("refs/failres/a", one.tip())
    b.repo.create_reference("refs/failres/b", two.tip())
    merge_line(a, two.tip())
    merge_line(b, one.tip())
    assert a.repo[a.tip()].tree.id == b.repo[b.tip()].tree.id


def test_merge_keeps_an_archive_move_from_the_other_side(repo: Path) -> None:
    store = Store(repo)
    x, y, z = (f"lessons/ab/cd/abcd{n:012d}.json" for n in range(3))
    store.commit(Change({x: b"{}\n", y: b"{}\n"}), "failres: two records")
    other = Store(repo, "refs/failres/other")
    other.repo.create_reference("refs/failres/other", store.tip())
    other.commit(Change({f"archive/{x}": b"{}\n"}, frozenset({x})), "failres: archive x")
    store.commit(Change({z: b"{}\n"}), "failres: z")
    merge_line(store, other.tip())
    files = {path for path, _ in store.walk()}
    assert files == {f"archive/{x}", y, z}


def test_a_prefix_resolves_to_one_record_id(repo: Path) -> None:
    store = Store(repo)
    doc = lesson()
    store.commit(change_of([record_put("decisions", doc)]), "failres: d")
    assert resolve_id(store, "decisions", doc["id"][:6]) == doc["id"]
    with pytest.raises(InvalidInput):
        resolve_id(store, "decisions", "zz")


def test_batch_writes_land_in_few_commits(repo: Path) -> None:
    store = Store(repo)
    docs = [lesson() for _ in range(250)]
    commits = store.commit_batches((change_of([record_put("lessons", d)]) for d in docs), "failres: import",
                                   batch_size=100)
    assert len(commits) == 3
    assert len(read_collection(store, "lessons").records) == 250


def test_store_works_without_any_git_identity(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(key)
    store = Store(repo)
    store.commit(change_of([record_put("lessons", lesson())]), "failres: no identity")
    assert git(repo, "log", "-1", "--format=%an <%ae>", "refs/failres/store").strip() == "failres <failres@localhost>"


WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from lessons.storage.records import change_of, record_put, new_id
    from lessons.storage.store import Store
    store = Store(sys.argv[1])
    for i in range(int(sys.argv[2])):
        doc = {{"id": new_id(), "ts": "2026-11-30T00:00:00.000000Z", "writer": sys.argv[3], "n": i}}
        store.commit(change_of([record_put("lessons", doc)]), f"failres: writer {{sys.argv[3]}} record {{i}}")
        if len(sys.argv) > 4:
            print(i, flush=True)
    """
)


@pytest.mark.slow
def test_eight_processes_writing_at_once_all_land(repo: Path, tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(root=str(ROOT)))
    Store(repo).create()
    procs = [subprocess.Popen([sys.executable, str(script), str(repo), "200", str(w)]) for w in range(8)]
    assert [p.wait(timeout=600) for p in procs] == [0] * 8
    records = read_collection(Store(repo), "lessons").records
    assert len(records) == 1600
    assert {(r["writer"], r["n"]) for r in records} == {(str(w), n) for w in range(8) for n in range(200)}
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)


@pytest.mark.slow
def test_a_writer_killed_at_random_instants_never_breaks_the_store(repo: Path, tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(root=str(ROOT)))
    store = Store(repo)
    store.create()
    rng = random.Random(1234)
    acknowledged = 0
    for round_no in range(50):
        proc = subprocess.Popen([sys.executable, str(script), str(repo), "1000", f"k{round_no}", "ack"],
                                stdout=subprocess.PIPE, text=True)
        time.sleep(0.15 + rng.random() * 0.25)
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        acknowledged += len(out.split())
        # After every kill the ref names a whole commit whose every record reads.
        result = read_collection(Store(repo), "lessons")
        assert result.problems == []
        assert len(result.records) >= acknowledged
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)
    # And the store still takes writes (a stale ref lock, if any, was cleared).
    Store(repo).commit(change_of([record_put("lessons", lesson())]), "failres: after the crashes")
    assert pygit2.Repository(str(repo)).references["refs/failres/store"] is not None


def test_a_store_opened_in_a_linked_worktree_takes_turns_with_the_main_one(repo: Path, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"), "-b", "side")
    main, linked = Store(repo), Store(tmp_path / "linked")
    assert linked.common_dir == main.common_dir == (repo / ".git").resolve()
    # A writer in the linked worktree waits for the main one's lock: one lock file, not two.
    probe = textwrap.dedent(f"""
        import fcntl, os, sys
        from lessons.storage.store import Store
        store = Store({str(tmp_path / "linked")!r})
        path = store.common_dir / "failres" / ("ref-" + store.ref.replace("/", "-") + ".flock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.exit(3)
        """)
    with main.locked():
        held = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert held.returncode == 3, held.stderr
    doc = lesson(message="from the linked worktree")
    linked.commit(change_of([record_put("lessons", doc)]), "failres: a lesson written in a linked worktree")
    assert read_record(main, "lessons", doc["id"]) == doc
