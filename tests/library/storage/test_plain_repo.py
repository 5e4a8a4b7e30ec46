"""A repository read through git itself (`PlainRepository`) reads as pygit2 reads it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from conftest import git
from lessons.storage.plain_repo import PlainOid, PlainRepository
from lessons.storage.records import change_of, new_id, read_collection, record_put
from lessons.storage.store import Change, Store
from lessons.storage.store_view import StoreView


def _filled(repo: Path) -> Store:
    store = Store(repo)
    puts = [record_put("journal", {"id": new_id(), "ts": f"2026-12-02T10:00:0{n}.000000Z", "slug": "p",
                                   "task": f"t{n}", "type": "task-started", "note": "naïve ✓"}, scope="p")
            for n in range(5)]
    store.commit(change_of(puts), "failres: five")
    store.commit(Change(puts={"raw/bytes.bin": bytes(range(256)) * 3, "raw/deep/a b.txt": b"x\n"}), "failres: raw")
    return store


def _sorted(records: list[dict]) -> list[dict]:
    return sorted(records, key=lambda r: r["id"])


def test_a_store_read_through_git_gives_what_pygit2_gives(repo: Path) -> None:
    """Every record, every file and its bytes, every directory listing: the same over either."""
    written = _filled(repo)
    with PlainRepository(written.common_dir, ["refs/failres"]) as plain:
        view = StoreView(plain, written.ref)
        assert str(view.tip()) == str(written.tip())
        assert _sorted(read_collection(view, "journal", scope="p").records) == \
            _sorted(read_collection(written, "journal", scope="p").records)
        assert [(p, str(o)) for p, o in view.walk("")] == [(p, str(o)) for p, o in written.walk("")]
        assert view.list_dir("raw") == written.list_dir("raw") == ["bytes.bin", "deep"]
        assert view.read_bytes("raw/bytes.bin") == bytes(range(256)) * 3
        assert view.read_bytes("raw/deep/a b.txt") == b"x\n"
        assert view.read_bytes("raw/deep") is None and view.read_bytes("raw/none") is None
        assert {k: str(v) for k, v in view.files_in(view.tree_at(view.commit_at()), "raw").items()} == \
            {k: str(v) for k, v in written.files_in(written.tree_at(written.commit_at()), "raw").items()}


def test_only_the_refs_asked_for_are_listed_and_a_missing_one_is_no_store(repo: Path) -> None:
    written = _filled(repo)
    git(repo, "update-ref", "refs/other/x", str(written.tip()))
    with PlainRepository(written.common_dir, ["refs/other"]) as plain:
        assert list(plain.references) == ["refs/other/x"]
        assert StoreView(plain, written.ref).tip() is None  # not listed: as if it were not there
    with PlainRepository(written.common_dir, []) as plain:
        assert list(plain.references) == []


def test_a_store_ref_on_a_blob_or_a_symbolic_ref_is_refused_as_pygit2_refuses_it(repo: Path) -> None:
    from lessons.errors import StoreDamaged

    written = _filled(repo)
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input="not a commit\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    git(repo, "update-ref", "refs/failres/blob-store", blob)
    git(repo, "symbolic-ref", "refs/failres/sym-store", written.ref)
    with PlainRepository(written.common_dir, ["refs/failres"]) as plain:
        for ref in ("refs/failres/blob-store", "refs/failres/sym-store"):
            with pytest.raises(StoreDamaged):
                StoreView(plain, ref).tip()
            with pytest.raises(StoreDamaged):
                Store(repo, ref).tip()


def test_names_git_cannot_take_on_one_line_and_missing_objects_are_nothing(repo: Path) -> None:
    written = _filled(repo)
    with PlainRepository(written.common_dir, []) as plain:
        assert plain.get("0" * 40) is None
        assert plain.get(f"{written.tip()}\n{written.tip()}") is None
        assert plain.get(f"{written.tip()} extra") is None
        assert plain.get("") is None
        with pytest.raises(KeyError):
            plain["f" * 40]
        commit = plain[str(written.tip())]  # after refusals, the batch still answers in step
        assert commit.type_str == "commit"
        assert commit.message == pygit2.Repository(str(repo))[written.tip()].message
        assert PlainOid(str(written.tip())) == str(written.tip())


def test_a_sha256_repository_reads_too(tmp_path: Path) -> None:
    """Ids of 32 bytes in trees, which pygit2's build here may not open at all."""
    top = tmp_path / "sha256"
    done = subprocess.run(["git", "init", "-q", "--object-format=sha256", str(top)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"this git makes no sha256 repository: {done.stderr.strip()}")
    (top / "d").mkdir()
    (top / "d" / "f.txt").write_bytes(b"hello\n")
    git(top, "add", "d/f.txt")
    git(top, "commit", "-q", "-m", "one")
    with PlainRepository(top / ".git", ["refs/heads"]) as plain:
        tip = plain.references["refs/heads/" + git(top, "branch", "--show-current").strip()].target
        assert len(str(tip)) == 64
        view = StoreView(plain, "refs/heads/" + git(top, "branch", "--show-current").strip())
        assert [path for path, _ in view.walk("")] == ["d/f.txt"]
        assert view.read_bytes("d/f.txt") == b"hello\n"


def test_pygit2_objects_and_plain_ones_agree_on_kinds(repo: Path) -> None:
    written = _filled(repo)
    theirs = pygit2.Repository(str(repo))
    with PlainRepository(written.common_dir, []) as plain:
        commit = theirs[written.tip()]
        for oid in (commit.id, commit.tree.id, commit.tree["raw"].id, theirs[commit.tree["raw"].id]["bytes.bin"].id):
            assert plain[str(oid)].type_str == theirs[oid].type_str


def test_a_replace_ref_does_not_change_what_an_id_reads_as(repo: Path) -> None:
    """libgit2 ignores `git replace`; so does the reader through git, or the two would disagree."""
    written = _filled(repo)
    other = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input="swapped\n",
                           capture_output=True, text=True, check=True).stdout.strip()
    blob = str(written.files_in(written.tree_at(written.commit_at()), "raw")["bytes.bin"])
    git(repo, "replace", "-f", blob, other)
    with PlainRepository(written.common_dir, []) as plain:
        assert plain[blob].data == bytes(range(256)) * 3
