"""A repository's first contact with failres: reads before `init` leave nothing that
locks it, and a store a remote already holds is taken, not replaced by an empty one."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import git
from lessons.storage.guard import existence_traces
from lessons.storage.index import index_path
from lessons.storage.store import Store

REF = "refs/failres/store"

READS = (
    ("status",), ("status", "--json"), ("lessons", "list"), ("lessons", "list", "--json"),
    ("lessons", "relevant", "--fail-class", "unknown"), ("journal", "s"), ("decisions",),
    ("report",), ("report", "--json"), ("facts", "list"), ("proposals", "list"), ("rules",),
    ("policy", "show"), ("gc", "--dry-run"), ("consolidate", "--dry-run"),
)


def store_refs(top: Path) -> str:
    return git(top, "for-each-ref", "--format=%(objectname) %(refname)", "refs/failres/")


def test_reads_before_init_leave_no_sign_of_a_store_and_init_then_works(plain_repo: Path, cli) -> None:
    for args in READS:
        done = cli(plain_repo, *args)
        assert done.code in (0, 2) and "Traceback" not in done.err, (args, done.err)  # 2: no such plan
    assert existence_traces(Store(plain_repo)) == []
    assert store_refs(plain_repo) == ""
    made = cli(plain_repo, "init", "--no-hooks", "--json")
    assert made.code == 0, made.err
    tip = json.loads(made.out)["storeTip"]
    assert git(plain_repo, "rev-parse", REF).strip() == tip


def test_a_read_before_init_writes_no_index_file(plain_repo: Path, cli) -> None:
    assert cli(plain_repo, "lessons", "list").code == 0
    assert cli(plain_repo, "lessons", "relevant", "--fail-class", "unknown").code == 0
    assert not index_path(Store(plain_repo)).exists()


def test_an_index_of_no_store_left_by_an_older_version_does_not_lock_init(plain_repo: Path, cli) -> None:
    """Older versions wrote an index recording "the empty store" on a read before init."""
    path = index_path(Store(plain_repo))
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO meta VALUES ('schema', '1'), ('commit', '')")
    conn.close()
    assert cli(plain_repo, "init", "--no-hooks").code == 0
    assert git(plain_repo, "rev-parse", REF).strip()


def test_a_store_deleted_after_reads_is_still_refused(plain_repo: Path, cli, tmp_path: Path) -> None:
    """The guard still sees a real deletion: reads of a store that existed leave their index."""
    records = tmp_path / "one.jsonl"
    records.write_text(json.dumps({"ts": "2026-01-01T00:00:00Z", "slug": "s", "task": "t", "failClass": "unknown", "message": "m"}) + "\n")
    assert cli(plain_repo, "lessons", "list").code == 0
    assert cli(plain_repo, "init", "--no-hooks").code == 0
    assert cli(plain_repo, "lessons", "import", str(records)).code == 0
    assert cli(plain_repo, "lessons", "list").code == 0
    git(plain_repo, "update-ref", "-d", REF)
    (plain_repo / ".git" / "failres" / ("last-tip-" + REF.replace("/", "-"))).unlink()
    refused = cli(plain_repo, "init", "--no-hooks")
    assert refused.code == 2 and "the SQLite index" in refused.err
    assert store_refs(plain_repo) == ""


@pytest.fixture
def teammate(tmp_path: Path, cli) -> Path:
    """A bare repository that holds a branch and a store with one lesson, as a team's remote does."""
    origin_work = tmp_path / "theirs"
    origin_work.mkdir()
    git(origin_work, "init", "-q", "-b", "main")
    (origin_work / "README.md").write_text("a project\n")
    git(origin_work, "add", "README.md")
    git(origin_work, "commit", "-q", "-m", "initial")
    assert cli(origin_work, "init", "--no-hooks").code == 0
    records = tmp_path / "theirs.jsonl"
    records.write_text(json.dumps({"ts": "2026-01-01T00:00:00Z", "slug": "s", "task": "t9", "failClass": "unknown", "message": "theirs"}) + "\n")
    assert cli(origin_work, "lessons", "import", str(records)).code == 0
    bare = tmp_path / "team.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin_work), str(bare))
    git(origin_work, "push", "-q", str(bare), f"{REF}:{REF}")
    return bare


@pytest.fixture
def clone(teammate: Path, tmp_path: Path) -> Path:
    """A plain `git clone` of the team's remote: its branches, and no store (git does not fetch refs/failres/)."""
    top = tmp_path / "mine"
    git(tmp_path, "clone", "-q", str(teammate), str(top))
    assert store_refs(top) == ""
    return top


def one_error(result) -> str:
    lines = result.err.splitlines()
    assert result.code == 2, (result.code, result.err)
    assert lines and lines[0].startswith("error: ") and len(lines) <= 2, result.err
    return result.err


def test_a_write_in_a_clone_before_any_sync_names_the_sync_that_brings_the_store(
        clone: Path, tmp_path: Path, cli) -> None:
    records = tmp_path / "mine.jsonl"
    records.write_text(json.dumps({"ts": "2026-01-01T00:00:00Z", "slug": "s", "task": "t1", "failClass": "unknown", "message": "mine"}) + "\n")
    err = one_error(cli(clone, "lessons", "import", str(records)))
    assert "git failres sync origin" in err
    assert store_refs(clone) == ""


def test_init_in_a_clone_takes_the_remote_s_store_instead_of_starting_an_empty_one(
        clone: Path, teammate: Path, cli) -> None:
    theirs = git(teammate, "rev-parse", REF).strip()
    made = cli(clone, "init", "--no-hooks", "--json")
    assert made.code == 0, made.err
    doc = json.loads(made.out)
    assert doc["storeFrom"] == "origin" and doc["storeTip"] == theirs
    assert git(clone, "rev-parse", REF).strip() == theirs
    listed = cli(clone, "lessons", "list", "--json")
    assert [lesson["task"] for lesson in json.loads(listed.out)] == ["t9"]


def test_init_names_the_remote_whose_store_it_took(clone: Path, cli) -> None:
    made = cli(clone, "init", "--no-hooks")
    assert made.code == 0, made.err
    assert "taken from origin" in made.out and "git failres sync origin" in made.out


def test_init_new_store_in_a_clone_starts_an_unrelated_empty_store_when_asked(
        clone: Path, teammate: Path, cli) -> None:
    made = cli(clone, "init", "--no-hooks", "--new-store", "--json")
    assert made.code == 0, made.err
    doc = json.loads(made.out)
    assert doc["storeFrom"] is None and doc["storeTip"] != git(teammate, "rev-parse", REF).strip()
    assert json.loads(cli(clone, "lessons", "list", "--json").out) == []


def test_init_takes_a_store_already_fetched_from_a_remote_it_cannot_reach(
        clone: Path, teammate: Path, cli) -> None:
    """A remote-tracking copy (fetched earlier) is taken as it is; the remote is not contacted."""
    git(clone, "fetch", "-q", "origin", f"+refs/failres/*:refs/remotes/origin/failres/*")
    git(clone, "remote", "set-url", "origin", "https://example.invalid/team.git")
    theirs = git(teammate, "rev-parse", REF).strip()
    made = cli(clone, "init", "--no-hooks", "--json")
    assert made.code == 0, made.err
    assert json.loads(made.out)["storeFrom"] == "origin"
    assert git(clone, "rev-parse", REF).strip() == theirs


def test_a_hint_names_sync_for_a_remote_that_cannot_be_checked_without_the_network(
        plain_repo: Path, tmp_path: Path, cli) -> None:
    git(plain_repo, "remote", "add", "upstream", "https://example.invalid/team.git")
    records = tmp_path / "mine.jsonl"
    records.write_text(json.dumps({"ts": "2026-01-01T00:00:00Z", "slug": "s", "task": "t1", "failClass": "unknown", "message": "m"}) + "\n")
    err = one_error(cli(plain_repo, "lessons", "import", str(records)))
    assert "git failres init" in err and "git failres sync upstream" in err


def test_a_repository_with_no_remote_store_is_told_to_init(plain_repo: Path, tmp_path: Path, cli) -> None:
    records = tmp_path / "mine.jsonl"
    records.write_text(json.dumps({"ts": "2026-01-01T00:00:00Z", "slug": "s", "task": "t1", "failClass": "unknown", "message": "m"}) + "\n")
    err = one_error(cli(plain_repo, "lessons", "import", str(records)))
    assert "git failres init" in err and "sync" not in err


def test_a_taken_store_that_is_deleted_afterwards_is_refused_like_any_other(clone: Path, cli) -> None:
    assert cli(clone, "init", "--no-hooks").code == 0
    git(clone, "update-ref", "-d", REF)
    for name in git(clone, "for-each-ref", "--format=%(refname)", "refs/remotes/").split():
        git(clone, "update-ref", "-d", name)
    refused = cli(clone, "init", "--no-hooks")
    assert refused.code == 2 and "is gone" in refused.err
    assert store_refs(clone) == ""
