"""A big batch written through git fast-import is the same store write as one made object by object."""

from __future__ import annotations

from pathlib import Path

from conftest import git
from lessons.storage import bulk
from lessons.storage.records import change_of, record_put
from lessons.storage.store import Store


def lessons(count: int) -> list:
    return [change_of([record_put("lessons", {"id": f"{n:016x}", "slug": "s", "task": "t", "message": f"m{n}"})])
            for n in range(count)]


def written_tree(top: Path, monkeypatch, *, bulk_from: int) -> tuple[str, str]:
    monkeypatch.setattr(bulk, "MIN_BULK_FILES", bulk_from)
    store = Store(top)
    store.create()
    store.commit(lessons(1)[0], "failres: first")
    store.commit_batches(lessons(700), "failres: import", batch_size=1000)
    return git(top, "rev-parse", "refs/failres/store^{tree}").strip(), git(top, "log", "-1", "--format=%B",
                                                                             "refs/failres/store")


def test_a_fast_import_batch_writes_exactly_the_tree_and_message_of_an_ordinary_one(tmp_path, monkeypatch):
    tops = []
    for which in ("bulk", "plain"):
        top = tmp_path / which
        top.mkdir()
        git(top, "init", "-q", "-b", "main")
        tops.append(top)
    bulk_tree, bulk_message = written_tree(tops[0], monkeypatch, bulk_from=500)
    plain_tree, plain_message = written_tree(tops[1], monkeypatch, bulk_from=10**9)
    assert bulk_tree == plain_tree and bulk_message == plain_message
    assert "+ lessons/" in bulk_message
    assert git(tops[0], "for-each-ref", "refs/failres/bulk").strip() == ""  # the private ref is gone
    git(tops[0], "fsck", "--strict", "--no-dangling")
    assert git(tops[0], "count-objects", "-v").count("packs: 1") == 1  # one pack, not 700 loose blobs
    # On top of the store's tip like any write: root, the first record, the batch.
    assert int(git(tops[0], "rev-list", "--count", "refs/failres/store")) == 3


def objects_in(top: Path) -> int:
    counts = dict(line.split(": ") for line in git(top, "count-objects", "-v").splitlines())
    return int(counts["count"]) + int(counts["in-pack"])


def reclaimed_tree(top: Path, monkeypatch, *, bulk_from: int) -> tuple[str, str]:
    from datetime import UTC, datetime

    from lessons.bounds.capacity import consolidate
    from lessons.bounds.policy import Policy

    git(top, "init", "-q", "-b", "main")
    store = Store(top)
    store.create()
    monkeypatch.setattr(bulk, "MIN_BULK_FILES", 10**9)
    store.commit_batches(lessons(800), "failres: import", batch_size=1000)
    before = objects_in(top)
    monkeypatch.setattr(bulk, "MIN_BULK_FILES", bulk_from)
    done = consolidate(store, Policy(max_lessons=100), now=datetime(2030, 1, 1, tzinfo=UTC), names=("lessons",))
    assert done.commits and sum(len(p.evicted) for p in done.plans) > 500
    # A move puts the same blob by its id: only trees and the commit are new, no blob is written again.
    assert objects_in(top) - before < 300
    return git(top, "rev-parse", "refs/failres/store^{tree}").strip(), git(top, "log", "-1", "--format=%B",
                                                                             "refs/failres/store")


def test_a_reclaim_of_hundreds_of_records_through_fast_import_moves_what_an_ordinary_one_does(tmp_path, monkeypatch):
    fast_top, plain_top = tmp_path / "fast", tmp_path / "plain"
    fast_top.mkdir()
    plain_top.mkdir()
    fast = reclaimed_tree(fast_top, monkeypatch, bulk_from=500)
    plain = reclaimed_tree(plain_top, monkeypatch, bulk_from=10**9)
    assert fast == plain and "archive/lessons/" in fast[1]
    assert git(fast_top, "for-each-ref", "refs/failres/bulk").strip() == ""
    git(fast_top, "fsck", "--strict", "--no-dangling")
