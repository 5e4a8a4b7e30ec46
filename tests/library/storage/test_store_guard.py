"""The store is never silently replaced, and no tree is trusted as a store unchecked:
a deleted store ref, a ref at a non-commit, a malformed tree, locally or on a sync remote."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pygit2
import pytest

from conftest import git
from failres.journal import event_put, make_event
from lessons.errors import StoreDamaged
from lessons.storage.guard import last_tip_path, layout_problems
from lessons.storage.index import index_path
from lessons.recall.lesson import lesson_put, make_lesson
from lessons.storage.records import change_of
from lessons.storage.store import Change, Store
from lessons.storage.history import merge_line
from project import Project

REF = "refs/failres/store"


def lessons_file(tmp_path: Path, name: str, count: int, start: int = 0) -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps({"ts": f"2026-01-{n + 1:02d}T00:00:00Z", "slug": "s", "task": f"t{n}",
                                        "failClass": "unknown", "message": f"failure {n}"}) + "\n"
                            for n in range(start, start + count)))
    return path


def listed(cli, top: Path) -> set[str]:
    result = cli(top, "lessons", "list", "--json")
    assert result.code == 0, result.err
    return {doc["task"] for doc in json.loads(result.out)}


def refs(top: Path, prefix: str = "refs/") -> str:
    return git(top, "for-each-ref", "--format=%(objectname) %(refname)", prefix)


def one_error(result) -> str:
    """The refusal as a person reads it: one `error:` line, a `hint:` line at most, no traceback."""
    lines = result.err.splitlines()
    assert result.code == 2, (result.code, result.err)
    assert lines and lines[0].startswith("error: ") and len(lines) <= 2, result.err
    assert all(line.startswith(("error: ", "hint: ")) for line in lines), result.err
    return result.err


def restore_command(err: str) -> list[str]:
    found = re.search(r"`(git update-ref [^`]+)`", err)
    assert found, err
    return shlex.split(found.group(1))


@pytest.fixture
def stocked(plain_repo: Path, tmp_path: Path, cli) -> Path:
    """A repository that ran `git failres init` and holds three lessons."""
    assert cli(plain_repo, "init", "--no-hooks").code == 0
    assert cli(plain_repo, "lessons", "import", str(lessons_file(tmp_path, "first", 3))).code == 0
    assert listed(cli, plain_repo) == {"t0", "t1", "t2"}  # a read: the index now exists too
    return plain_repo


# ── a store ref that is gone ────────────────────────────────────────────────


def test_a_write_to_a_deleted_store_is_refused_and_the_hint_brings_every_record_back(
        stocked: Path, tmp_path: Path, cli) -> None:
    git(stocked, "update-ref", "-d", REF)  # also deletes the ref's reflog
    result = cli(stocked, "lessons", "import", str(lessons_file(tmp_path, "more", 2, start=10)))
    err = one_error(result)
    assert "is gone" in err and "the last tip failres wrote" in err
    assert refs(stocked, REF) == ""  # no empty store was created in its place
    subprocess.run(restore_command(err), cwd=stocked, check=True)
    assert listed(cli, stocked) == {"t0", "t1", "t2"}


def test_reading_a_deleted_store_says_so_instead_of_showing_nothing(stocked: Path, cli) -> None:
    git(stocked, "update-ref", "-d", REF)
    for args in (("status",), ("lessons", "list"), ("journal", "s"), ("decisions",), ("report",)):
        err = one_error(cli(stocked, *args))
        assert "is gone" in err and "git update-ref" in err, args


def test_a_store_ref_file_removed_by_hand_is_traced_through_its_reflog(stocked: Path, cli) -> None:
    tip = git(stocked, "rev-parse", REF).strip()
    git(stocked, "pack-refs", "--all")  # the ref now lives in packed-refs ...
    packed = stocked / ".git" / "packed-refs"
    packed.write_text("".join(line + "\n" for line in packed.read_text().splitlines() if REF not in line))
    last_tip_path(stocked / ".git", REF).unlink()
    err = one_error(cli(stocked, "status"))
    assert "its reflog" in err and tip in err


def test_the_sqlite_index_alone_shows_that_a_deleted_store_existed(stocked: Path, cli) -> None:
    tip = git(stocked, "rev-parse", REF).strip()
    git(stocked, "update-ref", "-d", REF)
    last_tip_path(stocked / ".git", REF).unlink()
    err = one_error(cli(stocked, "status"))
    assert "the SQLite index" in err and tip in err


def synced_then_deleted(stocked: Path, tmp_path: Path, cli) -> None:
    """The store synced to a remote `origin`, then deleted here with every local trace of it."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(stocked, "remote", "add", "origin", str(bare))
    assert cli(stocked, "sync", "origin").code == 0
    git(stocked, "update-ref", "-d", REF)
    last_tip_path(stocked / ".git", REF).unlink()
    index_path(Store(stocked)).unlink()


def test_a_remote_tracking_copy_shows_that_a_deleted_store_existed(stocked: Path, tmp_path: Path, cli) -> None:
    synced_then_deleted(stocked, tmp_path, cli)
    err = one_error(cli(stocked, "status"))
    assert "refs/remotes/origin/failres/store" in err


def test_a_sync_brings_back_a_store_only_that_remote_still_had(stocked: Path, tmp_path: Path, cli) -> None:
    synced_then_deleted(stocked, tmp_path, cli)
    done = cli(stocked, "sync", "origin", "--json")
    assert done.code == 0, done.err
    assert json.loads(done.out)["join"] == "adopted"
    assert listed(cli, stocked) == {"t0", "t1", "t2"}


def test_a_sync_refuses_while_the_local_index_shows_records_the_remote_may_lack(
        stocked: Path, tmp_path: Path, cli) -> None:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(stocked, "remote", "add", "origin", str(bare))
    assert cli(stocked, "sync", "origin").code == 0
    git(stocked, "update-ref", "-d", REF)
    err = one_error(cli(stocked, "sync", "origin"))
    assert "is gone" in err
    assert refs(stocked, REF) == ""


def test_a_repository_that_never_had_a_store_reads_empty_and_writes_only_after_init(
        plain_repo: Path, tmp_path: Path, cli) -> None:
    assert cli(plain_repo, "status").code == 0
    err = one_error(cli(plain_repo, "lessons", "import", str(lessons_file(tmp_path, "x", 1))))
    assert "no store" in err and "git failres init" in err
    assert refs(plain_repo, "refs/failres/") == ""


def test_init_refuses_to_put_an_empty_store_where_one_was_deleted_and_writes_nothing(
        stocked: Path, cli) -> None:
    old = git(stocked, "rev-parse", REF).strip()
    git(stocked, "update-ref", "-d", REF)
    (stocked / ".failres.toml").unlink()
    err = one_error(cli(stocked, "init", "--no-hooks"))
    assert "creating an empty one would hide it" in err and "--new-store" in err
    assert not (stocked / ".failres.toml").exists() and refs(stocked, REF) == ""
    fresh = cli(stocked, "init", "--no-hooks", "--new-store", "--json")
    assert fresh.code == 0, fresh.err
    new = json.loads(fresh.out)["storeTip"]
    assert new != old and listed(cli, stocked) == set()


def test_a_store_deleted_while_a_writer_runs_is_never_recreated(repo: Path) -> None:
    store = Store(repo)
    calls = []

    def change(tip):
        if not calls:
            git(repo, "update-ref", "-d", REF)  # gone between the check and the write
            calls.append(tip)
            return Change({"lessons/ab/cd/abcd000000000000.json": b"{}\n"})
        return Change({"lessons/ab/cd/abcd000000000001.json": b"{}\n"})

    with pytest.raises(Exception, match="is gone"):
        store.commit(change, "failres: a write that loses its store")
    assert refs(repo, REF) == ""


# ── a store ref that names no commit ────────────────────────────────────────


def _point_store_at(top: Path, kind: str) -> str:
    head = git(top, "rev-parse", "HEAD").strip()
    if kind == "blob":
        target = git(top, "hash-object", "-w", "src/calc.py").strip()
    elif kind == "tree":
        target = git(top, "rev-parse", "HEAD^{tree}").strip()
    elif kind == "tag":
        git(top, "tag", "-a", "-m", "a tag", "v1", git(top, "rev-parse", REF).strip())
        target = git(top, "rev-parse", "v1").strip()
    else:
        git(top, "symbolic-ref", REF, "refs/heads/main")
        return head
    git(top, "update-ref", REF, target)
    return target


COMMANDS = [("status",), ("journal", "rr"), ("lessons", "list"), ("decisions",), ("report",), ("undo", "HEAD"),
            ("label",), ("facts", "set", "judge", "command", "pytest"), ("run", "PLAN")]


@pytest.mark.parametrize("kind", ["blob", "tree", "tag", "symbolic"])
def test_a_store_ref_that_names_no_commit_is_refused_by_every_command(kind: str, tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[])
    plan = project.plan()
    _point_store_at(project.top, kind)
    before = refs(project.top)
    for args in COMMANDS:
        args = tuple(str(plan) if a == "PLAN" else a for a in args)
        err = one_error(cli(project.top, *args))
        assert REF in err, (args, err)
    assert refs(project.top) == before  # nothing moved, nothing created
    assert project.calls("impl") == 0


def test_a_store_ref_at_a_tag_names_the_commit_to_point_it_at(tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[])
    commit = git(project.top, "rev-parse", REF).strip()
    _point_store_at(project.top, "tag")
    assert commit in one_error(cli(project.top, "status"))


def malformed_tip(store: Store, **replace: bytes) -> pygit2.Oid:
    """A commit on the store's tip whose tree has files where the layout keeps directories."""
    parent = store.commit_at()
    tree = store.apply(parent.tree, Change(dict(replace)))
    sig = store.signature()
    return store.repo.create_commit(None, sig, sig, "a foreign tree\n", tree, [parent.id])


def test_a_local_store_whose_journal_is_a_file_is_refused_by_name(tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[])
    store = Store(project.top)
    bad = malformed_tip(store, journal=b"not a directory\n")
    git(project.top, "update-ref", REF, str(bad))
    err = one_error(cli(project.top, "status"))
    assert "journal is a file where the store keeps a directory" in err


# ── trees from elsewhere ────────────────────────────────────────────────────


@pytest.fixture
def network(tmp_path: Path, cli) -> tuple[Path, Path, Path]:
    """A bare remote and two clones, each with an initialised store holding lessons, synced once."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    clones = []
    for name, start in (("a", 0), ("b", 10)):
        top = tmp_path / name
        git(tmp_path, "init", "-q", "-b", "main", str(top))
        git(top, "commit", "-q", "--allow-empty", "-m", "initial")
        git(top, "remote", "add", "origin", str(bare))
        assert cli(top, "init", "--no-hooks").code == 0
        assert cli(top, "lessons", "import", str(lessons_file(tmp_path, name, 2, start=start))).code == 0
        clones.append(top)
    assert cli(clones[0], "sync").code == 0
    return bare, clones[0], clones[1]


def test_a_remote_store_whose_journal_is_a_file_is_refused_and_nothing_changes(network, cli) -> None:
    bare, a, b = network
    event = make_event("task-started", "s", "t10", intHead="0" * 40)
    Store(b).commit(change_of([event_put(event)]), "failres: a journal record of b's")
    store_a = Store(a)
    store_a.commit(change_of([lesson_put(make_lesson(slug="s", task="ta", fail_class="unknown", message="m",
                                                      files=[], int_head="0" * 40, snapshot=None))]), "a lesson")
    bad = malformed_tip(store_a, journal=b"not a directory\n")
    git(a, "push", "-q", "--force", "origin", f"{bad}:{REF}")
    git(a, "update-ref", "refs/failres/snapshots/s/t1/aaaa000000000000", "HEAD")
    git(a, "push", "-q", "origin", "refs/failres/snapshots/s/t1/aaaa000000000000")
    (b / ".failres.toml").write_text("[sync]\nsnapshots = true\n")
    local_before, remote_before = refs(b), refs(bare)
    err = one_error(cli(b, "sync"))
    assert "origin's store" in err and "journal is a file where the store keeps a directory" in err
    assert refs(b) == local_before  # no merge, no adopted snapshot, tracking refs as they were
    assert refs(bare) == remote_before  # nothing pushed
    assert listed(cli, b) == {"t10", "t11"}
    assert [e["id"] for e in json.loads(cli(b, "journal", "s", "--json").out)] == [event["id"]]


def test_a_remote_store_ref_at_a_blob_is_refused_and_nothing_changes(network, cli) -> None:
    bare, a, b = network
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=bare, input=b"x\n",
                          capture_output=True, check=True).stdout.decode().strip()
    git(bare, "update-ref", REF, blob)
    local_before, remote_before = refs(b), refs(bare)
    err = one_error(cli(b, "sync"))
    assert "origin's store" in err and "blob" in err
    assert refs(b) == local_before and refs(bare) == remote_before


def test_merging_a_line_with_a_fan_out_directory_turned_file_raises_and_moves_nothing(repo: Path) -> None:
    store = Store(repo)
    store.commit(change_of([lesson_put(make_lesson(slug="s", task="t", fail_class="unknown", message="m",
                                                   files=[], int_head="0" * 40, snapshot=None))]), "a lesson")
    fan_out = next(name for name in store.list_dir("lessons"))
    bad = malformed_tip(store, **{f"lessons/{fan_out}": b"flat\n"})
    tip = store.tip()
    with pytest.raises(StoreDamaged, match=f"lessons/{fan_out} is a file"):
        merge_line(store, bad)
    assert store.tip() == tip


# ── the layout, as a pure check over trees ──────────────────────────────────


def tree_of(repo: pygit2.Repository, files: dict[str, bytes]) -> pygit2.Tree:
    store = Store(repo)
    return repo[store.apply(None, Change(files))]


@pytest.mark.parametrize(("files", "problem"), [
    ({"lessons/ab/cd/abcd000000000000.json": b"{}"}, None),
    ({"journal/rr/ab/cd/abcd000000000000.json": b"{}", "rules/behavior.user.toml": b""}, None),
    ({"archive/lessons/ab/cd/abcd000000000000.json": b"{}"}, None),
    ({"lessons/ab/cd/x.json": b"{}", "outcomes/new/kind.json": b"{}"}, None),  # a newer failres's collection
    ({"journal": b"x"}, "journal is a file where the store keeps a directory"),
    ({"decisions/ab": b"x"}, "decisions/ab is a file where the store keeps a directory"),
    ({"journal/rr/ab/cd/x.json/y": b"x"}, "journal/rr/ab/cd/x.json is a directory where the store keeps files"),
    ({"archive/lessons": b"x"}, "archive/lessons is a file where the store keeps a directory"),
    ({"rules/sub/x.toml": b""}, "rules/sub is a directory where the store keeps files"),
    ({"src/main.py": b"", "README.md": b""}, "it is not a failres store"),
])
def test_layout_problems_name_what_is_out_of_place(repo: Path, files: dict[str, bytes], problem: str | None) -> None:
    found = layout_problems(pygit2.Repository(str(repo)), tree_of(pygit2.Repository(str(repo)), files))
    if problem is None:
        assert found == []
    else:
        assert any(problem in line for line in found), found


def test_a_shallow_check_reads_only_the_top_two_levels(repo: Path) -> None:
    r = pygit2.Repository(str(repo))
    deep_flaw = tree_of(r, {"journal/rr/ab": b"x"})
    assert layout_problems(r, deep_flaw, deep=False) == []
    assert layout_problems(r, deep_flaw) == ["journal/rr/ab is a file where the store keeps a directory"]


# ── refs failres did not make ───────────────────────────────────────────────


def test_land_refuses_a_branch_in_failres_s_namespace_that_no_run_made(tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[])
    git(project.top, "branch", "failres/rr/mine")  # a person's branch that merely looks like a task's
    before = refs(project.top)
    result = cli(project.top, "land", "rr", "mine")
    assert result.code == 2 and "no run of rr/mine" in result.err
    assert refs(project.top) == before


def test_sync_never_replaces_a_snapshot_ref_on_either_side(network, cli) -> None:
    bare, a, b = network
    for clone in (a, b):
        (clone / ".failres.toml").write_text("[sync]\nsnapshots = true\n")
    name = "refs/failres/snapshots/s/t1/aaaa000000000000"
    git(a, "update-ref", name, "HEAD")
    assert cli(a, "sync").code == 0
    git(b, "commit", "-q", "--allow-empty", "-m", "b's own work")
    git(b, "update-ref", name, "HEAD")  # b's own snapshot under the same name, another commit
    mine = git(b, "rev-parse", name)
    done = cli(b, "sync", "--json")
    assert done.code == 0, done.err
    assert json.loads(done.out)["snapshots"]["rejected"] == ["s/t1/aaaa000000000000"]
    assert git(b, "rev-parse", name) == mine  # not overwritten by the remote's
    assert git(bare, "rev-parse", name) == git(a, "rev-parse", name)  # not forced over the remote's either
