"""A large store merge writes its trees as one pack: git reads it, verifies it, pushes it; no record is lost."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pygit2

from conftest import git
from lessons.storage.history import _readable, merge_line, union_change
from lessons.recall.lesson import lesson_put, make_lesson
from lessons.storage.packs import BLOB, COMMIT, TREE, write_pack
from lessons.storage.records import change_of, read_collection
from lessons.storage.store import Change, Store
from lessons.storage.treemerge import PACK_AT, merge_trees

SIDE = 400  # records each side writes: enough that a merge rebuilds more than PACK_AT trees


def lesson(n: int) -> dict:
    return make_lesson(slug="s", task=f"t{n}", fail_class="gate-not-green-after-fixer", message=f"test {n} failed",
                       files=["src/a.py"], int_head="0" * 40, snapshot=None)


def fill(store: Store, start: int, count: int) -> set[str]:
    """`count` lessons in batches (one pack through fast-import), then three appends (loose objects)."""
    store.create()
    docs = [lesson(start + n) for n in range(count)]
    store.commit_batches((change_of([lesson_put(doc)]) for doc in docs[:-3]), "failres: test fill", batch_size=500)
    for doc in docs[-3:]:
        store.commit(change_of([lesson_put(doc)]), f"failres: lesson {doc['task']}")
    return {doc["id"] for doc in docs}


def lesson_ids(store: Store) -> set[str]:
    return {doc["id"] for doc in read_collection(store, "lessons").records}


def packs(repo: Path) -> set[str]:
    return {p.name for p in git_dir(repo).joinpath("objects", "pack").glob("*.pack")}


def git_dir(repo: Path) -> Path:
    return Path(pygit2.Repository(str(repo)).path)


def loose_objects(repo: Path) -> int:
    counts = dict(line.split(": ") for line in git(repo, "count-objects", "-v").splitlines())
    return int(counts["count"])


def fsck(repo: Path) -> None:
    git(repo, "fsck", "--strict", "--no-dangling")


def raw_id(kind: str, data: bytes) -> pygit2.Oid:
    return pygit2.Oid(raw=hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).digest())  # noqa: S324


def test_a_written_pack_is_read_by_libgit2_and_verified_by_git(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    blobs = [b"", b"x" * 5000, json.dumps({"id": "a"}).encode()]  # sizes that need 1, 3 and 2 header bytes
    objects = [(BLOB, raw_id("blob", data), data) for data in blobs]
    tree = b"".join(b"100644 f%d\0%s" % (n, oid.raw) for n, (_, oid, _) in enumerate(objects))
    tree_id = raw_id("tree", tree)
    commit = (f"tree {tree_id}\nauthor A <a@example.com> 0 +0000\ncommitter A <a@example.com> 0 +0000\n\n"
              "packed\n").encode()
    commit_id = raw_id("commit", commit)
    pack = write_pack(repo, [*objects, (TREE, tree_id, tree), (COMMIT, commit_id, commit)])
    assert pack.exists() and pack.with_suffix(".idx").exists()
    assert not list(pack.parent.glob("tmp_pack_*"))  # nothing left under a temporary name
    assert [repo[oid].data for _, oid, _ in objects] == blobs
    assert repo[commit_id].tree.id == tree_id
    git(tmp_path / "r", "verify-pack", str(pack.with_suffix(".idx")))
    git(tmp_path / "r", "update-ref", "refs/heads/main", str(commit_id))
    git(tmp_path / "r", "fsck", "--strict", "--no-dangling")
    assert git(tmp_path / "r", "cat-file", "-p", f"{commit_id}:f1") == "x" * 5000


def diverged(repo: Path) -> tuple[Store, Store, str]:
    """Two lines of one store, each with its own SIDE records (packed and loose) and its own
    version of one shared record; the record's path."""
    base = Store(repo)
    base.create()
    shared = lesson(0)
    base.commit(change_of([lesson_put(shared)]), "failres: shared lesson")
    path = lesson_put(shared).path
    lines = []
    for n, name in enumerate(("ours", "theirs")):
        base.repo.references.create(f"refs/failres/{name}", base.tip())
        line = Store(base.repo, f"refs/failres/{name}")
        fill(line, 1000 * (n + 1), SIDE)
        line.commit(Change({path: json.dumps({**shared, "message": f"changed by {name}"}).encode()}), "failres: edit")
        lines.append(line)
    return lines[0], lines[1], path


def test_a_large_merge_is_the_file_by_file_union_written_as_one_pack(repo: Path) -> None:
    ours, theirs, _ = diverged(repo)
    o, t = ours.commit_at(), theirs.commit_at()
    base = ours.repo[ours.repo.merge_base(o.id, t.id)].tree
    before, loose = packs(repo), loose_objects(repo)
    merged = merge_trees(ours.repo, base, o.tree, t.tree, lambda path, oid: _readable(ours, path, oid))
    new = packs(repo) - before
    assert len(new) == 1 and loose_objects(repo) == loose  # every rebuilt tree in the one pack
    git(repo, "verify-pack", str(git_dir(repo) / "objects" / "pack" / next(iter(new)).replace(".pack", ".idx")))
    assert merged == ours.apply(o.tree, union_change(ours, base, o.tree, t.tree))  # the rule, file by file


def test_both_sides_changing_one_record_keep_one_version_and_lose_no_other_record(repo: Path) -> None:
    ours, theirs, path = diverged(repo)
    everything = lesson_ids(ours) | lesson_ids(theirs)
    versions = {ours.commit_at().tree[path].id, theirs.commit_at().tree[path].id}
    merge_line(ours, theirs.tip(), "failres: test merge")
    assert lesson_ids(ours) == everything and len(everything) == 2 * SIDE + 1
    assert ours.commit_at().tree[path].id == min(versions, key=str)  # the smaller blob id, either order
    assert len(ours.commit_at().parents) == 2  # the other version stays in its parent's history
    fsck(repo)


def test_a_small_merge_writes_no_pack(repo: Path) -> None:
    base = Store(repo)
    base.commit(change_of([lesson_put(lesson(0))]), "failres: shared lesson")
    lines = []
    for n, name in enumerate(("ours", "theirs")):
        base.repo.references.create(f"refs/failres/{name}", base.tip())
        lines.append(Store(base.repo, f"refs/failres/{name}"))
        lines[-1].commit(change_of([lesson_put(lesson(n + 1))]), "failres: lesson")
    before = packs(repo)
    merge_line(lines[0], lines[1].tip(), "failres: test merge")
    assert packs(repo) == before  # a pack per little sync would pile up; a few loose trees do not
    assert len(lesson_ids(lines[0])) == 3
    assert PACK_AT > 10


def test_a_sync_of_two_large_diverged_clones_loses_no_record_anywhere(cli, tmp_path: Path) -> None:
    from test_sync import make_clone, make_remote, sync

    bare = make_remote(tmp_path)
    a, b = make_clone(tmp_path, bare, "a"), make_clone(tmp_path, bare, "b")
    shared = lesson(0)
    path = lesson_put(shared).path
    Store(a).create()
    Store(a).commit(change_of([lesson_put(shared)]), "failres: shared lesson")
    sync(cli, a)
    sync(cli, b)
    ids = {shared["id"]}
    for n, clone in enumerate((a, b)):
        store = Store(clone)
        ids |= fill(store, 1000 * (n + 1), SIDE)
        store.commit(Change({path: json.dumps({**shared, "message": f"changed in {clone.name}"}).encode()}), "edit")
    versions = {str(Store(clone).commit_at().tree[path].id) for clone in (a, b)}
    assert sync(cli, a)["pushed"] is True
    loose = loose_objects(b)
    done = sync(cli, b)
    assert (done["join"], done["pushed"]) == ("merged", True)
    assert loose_objects(b) - loose < 10  # the merge's trees went into a pack: the commit is all that is loose
    assert sync(cli, a)["join"] == "fast-forward"
    for clone in (a, b, bare):
        store = Store(clone)
        assert lesson_ids(store) == ids
        assert str(store.commit_at().tree[path].id) == min(versions)
        for version in versions:  # both versions stay in history
            git(clone, "cat-file", "-e", version)
        fsck(clone)
    assert git(a, "rev-parse", "refs/failres/store") == git(bare, "rev-parse", "refs/failres/store") \
        == git(b, "rev-parse", "refs/failres/store")


def test_a_large_merge_in_a_linked_worktree_writes_its_pack_where_every_worktree_reads(repo: Path,
                                                                                    tmp_path: Path) -> None:
    ours, theirs, _ = diverged(repo)
    everything = lesson_ids(ours) | lesson_ids(theirs)
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"))
    linked = Store(tmp_path / "linked", ours.ref)
    merge_line(linked, theirs.tip(), "failres: test merge")
    assert not list(Path(linked.repo.path).glob("objects"))  # nothing under the worktree's own git dir
    assert lesson_ids(Store(repo, ours.ref)) == everything
    fsck(repo)
