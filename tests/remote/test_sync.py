"""`git failres sync`: clones and a bare remote exchange stores; nothing is ever lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, git, run_failres
from failres.remote.sync import (
    BACKOFF_CAP,
    backoff_seconds,
    clashing_snapshots,
    default_remote,
    missing_snapshots,
    tracking_ref,
)
from lessons.recall.lesson import lesson_put, make_lesson, stamp_put
from lessons.storage.records import change_of, read_collection, read_record
from lessons.storage.settle import orphan_moves
from lessons.storage.store import Change, Store
from lessons.storage.history import merge_line

# ---- a small network: one bare remote, clones of it ----


def make_remote(root: Path) -> Path:
    bare = root / "remote.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = root / "seed"
    git(root, "init", "-q", "-b", "main", str(seed))
    git(seed, "commit", "-q", "--allow-empty", "-m", "initial")
    git(seed, "push", "-q", str(bare), "main")
    return bare


def make_clone(root: Path, bare: Path, name: str) -> Path:
    git(root, "clone", "-q", str(bare), str(root / name))
    return root / name


@pytest.fixture
def network(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(bare remote, clone a, clone b)."""
    bare = make_remote(tmp_path)
    return bare, make_clone(tmp_path, bare, "a"), make_clone(tmp_path, bare, "b")


def lesson(n: int, **extra: object) -> dict:
    return make_lesson(slug="s", task=f"t{n}", fail_class="gate-not-green-after-fixer", message=f"test {n} failed",
                       files=["src/a.py"], int_head="0" * 40, snapshot=None, **extra)


def write_lessons(clone: Path, count: int, start: int = 0) -> list[dict]:
    store = Store(clone)
    store.create()  # as `git failres init` does; a no-op where the store exists
    docs = [lesson(start + n) for n in range(count)]
    for doc in docs:
        store.commit(change_of([lesson_put(doc)]), f"failres: lesson {doc['task']}")
    return docs


def lesson_ids(repo: Path) -> set[str]:
    return {doc["id"] for doc in read_collection(Store(repo), "lessons").records}


def remote_lesson_ids(bare: Path) -> set[str]:
    return lesson_ids(bare)


def sync(cli, clone: Path, *args: str) -> dict:
    result = cli(clone, "sync", "--json", *args)
    assert result.code == 0, result.err
    return json.loads(result.out)


def fsck(repo: Path) -> None:
    git(repo, "fsck", "--strict", "--no-dangling")


# ---- the exchange ----


def test_a_first_sync_pushes_the_local_store_to_a_remote_without_one(cli, network) -> None:
    bare, a, _ = network
    docs = write_lessons(a, 3)
    done = sync(cli, a)
    assert (done["fetched"], done["join"], done["pushed"], done["retries"]) == (None, "none", True, 0)
    assert done["tip"] == git(bare, "rev-parse", "refs/failres/store").strip()
    assert remote_lesson_ids(bare) == {d["id"] for d in docs}


def test_a_clone_without_a_store_takes_the_remote_one(cli, network) -> None:
    bare, a, b = network
    docs = write_lessons(a, 2)
    sync(cli, a)
    done = sync(cli, b)
    assert done["join"] == "adopted" and done["pushed"] is False
    assert git(b, "rev-parse", "refs/failres/store") == git(bare, "rev-parse", "refs/failres/store")
    assert lesson_ids(b) == {d["id"] for d in docs}


def test_two_diverged_clones_end_with_every_record_of_both(cli, network) -> None:
    bare, a, b = network
    mine, theirs = write_lessons(a, 4), write_lessons(b, 5, start=10)
    sync(cli, a)
    joined = sync(cli, b)
    assert joined["join"] == "merged" and joined["pushed"] is True
    assert git(b, "log", "-1", "--format=%s", "refs/failres/store").startswith("failres: sync origin: merge store ")
    assert git(b, "rev-list", "--parents", "-1", "refs/failres/store").count(" ") == 2  # a merge commit
    back = sync(cli, a)
    assert back["join"] == "fast-forward" and back["pushed"] is False
    everything = {d["id"] for d in mine + theirs}
    assert lesson_ids(a) == lesson_ids(b) == remote_lesson_ids(bare) == everything
    for repo in (a, b, bare):
        fsck(repo)


def test_a_sync_with_nothing_anywhere_changes_nothing(cli, network) -> None:
    bare, a, _ = network
    done = sync(cli, a)
    assert (done["fetched"], done["tip"], done["pushed"]) == (None, None, False)
    assert git(bare, "for-each-ref", "refs/failres").strip() == ""


def test_a_remote_whose_store_was_deleted_gets_it_back(cli, network) -> None:
    bare, a, _ = network
    docs = write_lessons(a, 2)
    sync(cli, a)
    git(bare, "update-ref", "-d", "refs/failres/store")
    done = sync(cli, a)
    assert (done["fetched"], done["pushed"]) == (None, True)
    assert remote_lesson_ids(bare) == {d["id"] for d in docs}


def test_the_human_report_says_what_happened(cli, network) -> None:
    _, a, _ = network
    write_lessons(a, 1)
    result = cli(a, "sync")
    assert result.code == 0
    assert result.out.splitlines()[0] == "origin has no store yet"
    assert result.out.splitlines()[1].startswith("pushed ")


def test_snapshot_refs_travel_both_ways_where_configured(cli, network) -> None:
    bare, a, b = network
    for clone in (a, b):
        (clone / ".failres.toml").write_text("[sync]\nsnapshots = true\n")
    head = git(a, "rev-parse", "HEAD").strip()
    git(a, "update-ref", "refs/failres/snapshots/s/t1/aaaa000000000000", head)
    write_lessons(a, 1)
    assert sync(cli, a)["snapshots"]["pushed"] == 1
    git(b, "update-ref", "refs/failres/snapshots/s/t2/bbbb000000000000", head)
    done = sync(cli, b)
    assert (done["snapshots"]["fetched"], done["snapshots"]["pushed"]) == (1, 1)
    sync(cli, a)
    for repo in (a, b, bare):
        names = git(repo, "for-each-ref", "--format=%(refname)", "refs/failres/snapshots").split()
        assert names == ["refs/failres/snapshots/s/t1/aaaa000000000000", "refs/failres/snapshots/s/t2/bbbb000000000000"]


# ---- which remote ----


def test_the_default_remote_is_configured_then_upstream_then_origin() -> None:
    assert default_remote("team", "upstream") == "team"
    assert default_remote("", "upstream") == "upstream"
    assert default_remote("", ".") == "origin"  # "." is the repository itself
    assert default_remote("", None) == "origin"
    assert tracking_ref("origin", "refs/failres/store") == "refs/remotes/origin/failres/store"


def test_integration_remote_in_the_configuration_is_used(cli, network) -> None:
    bare, a, _ = network
    git(a, "remote", "rename", "origin", "team")
    (a / ".failres.toml").write_text('[integration]\nremote = "team"\n')
    write_lessons(a, 1)
    assert sync(cli, a)["remote"] == "team"
    assert git(a, "rev-parse", "refs/remotes/team/failres/store") == git(bare, "rev-parse", "refs/failres/store")


def test_without_configuration_the_integration_branch_upstream_is_used(cli, network) -> None:
    bare, a, _ = network
    git(a, "remote", "rename", "origin", "upstream")  # main now tracks upstream/main
    write_lessons(a, 1)
    assert sync(cli, a)["remote"] == "upstream"
    assert git(a, "rev-parse", "refs/remotes/upstream/failres/store") == git(bare, "rev-parse", "refs/failres/store")


def test_an_unknown_remote_is_bad_input(cli, network) -> None:
    _, a, _ = network
    result = cli(a, "sync", "nowhere")
    assert result.code == 2
    assert result.err.splitlines()[0] == 'error: no remote named "nowhere"'


# ---- races and refusals ----

COMPETITOR = """#!/bin/sh
# Someone else pushes to the store every time this clone tries to.
tip=$(git -C {bare} rev-parse refs/failres/store)
new=$(git -C {bare} commit-tree "$tip^{{tree}}" -p "$tip" -m "failres: someone else" </dev/null)
git -C {bare} update-ref refs/failres/store "$new" "$tip"
"""


def test_a_push_that_keeps_losing_exits_1_and_keeps_every_local_record(cli, network) -> None:
    bare, a, b = network
    write_lessons(b, 2)
    sync(cli, b)
    docs = write_lessons(a, 3)
    hook = a / ".git" / "hooks" / "pre-push"
    hook.write_text(COMPETITOR.format(bare=bare))
    hook.chmod(0o755)
    result = cli(a, "sync", "--json")
    assert result.code == 1
    assert "lost to other pushes 8 times in a row" in result.err
    assert "nothing was lost" in result.err
    assert {d["id"] for d in docs} <= lesson_ids(a)
    assert not {d["id"] for d in docs} & remote_lesson_ids(bare)
    fsck(a)


def test_a_remote_that_refuses_the_push_is_reported_once(cli, network) -> None:
    bare, a, _ = network
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'no pushes today' >&2\nexit 1\n")
    hook.chmod(0o755)
    docs = write_lessons(a, 1)
    result = cli(a, "sync")
    assert result.code == 2
    assert result.err.startswith("error: origin refused the store push")
    assert lesson_ids(a) == {docs[0]["id"]}


def test_backoff_grows_and_stays_bounded() -> None:
    assert backoff_seconds(0, 1.0) < backoff_seconds(3, 1.0) <= backoff_seconds(30, 1.0) == BACKOFF_CAP
    assert backoff_seconds(5, 0.0) == 0.0


def test_only_snapshots_the_remote_lacks_are_pushed_and_a_name_held_by_both_is_left_alone() -> None:
    local = {"s/t/a": "1", "s/t/b": "2", "s/t/c": "3"}
    assert missing_snapshots(local, {"s/t/a": "1", "s/t/c": "9"}) == ["s/t/b"]  # type: ignore[arg-type]
    assert clashing_snapshots(local, {"s/t/a": "1", "s/t/c": "9"}) == ["s/t/c"]  # type: ignore[arg-type]


# ---- the merge rules, in either order ----


def forked(repo: Path, *names: str) -> list[Store]:
    """Stores on refs that all start at the current tip of the main store ref."""
    base = Store(repo)
    base.create()
    stores = []
    for name in names:
        base.repo.references.create(f"refs/failres/{name}", base.tip())
        stores.append(Store(repo, f"refs/failres/{name}"))
    return stores


def merge_both_ways(repo: Path, one: Store, two: Store) -> tuple[Store, Store]:
    """one <- two and two <- one, each on a fresh ref, with the sync settle step."""
    from lessons.storage.settle import settle_merge

    left, right = forked(repo, "left", "right")
    for target, first, second in ((left, one, two), (right, two, one)):
        target.repo.references["refs/failres/" + target.ref.rsplit("/", 1)[1]].set_target(first.tip())
        other = target.repo[second.tip()]
        merge_line(target, second.tip(), "failres: test merge", settle=settle_merge(target, other))
    return left, right


def tree_files(store: Store) -> dict[str, str]:
    return {path: str(oid) for path, oid in store.walk()}


def test_two_stamps_of_one_lesson_keep_both_files_and_the_first_wins_in_either_order(repo: Path) -> None:
    base = Store(repo)
    doc = lesson(1)
    base.commit(change_of([lesson_put(doc)]), "failres: lesson")
    one, two = forked(repo, "one", "two")
    one.commit(change_of([stamp_put(doc["id"], ["scope-widened"], "2026-11-30T10:00:02.000000Z", "b" * 40)]), "s1")
    two.commit(change_of([stamp_put(doc["id"], ["unknown"], "2026-11-30T10:00:01.000000Z", "a" * 40)]), "s2")
    left, right = merge_both_ways(repo, one, two)
    assert tree_files(left) == tree_files(right)
    assert len([p for p in tree_files(left) if "+" in p]) == 2  # both facts stay
    for merged in (left, right):
        folded = read_record(merged, "lessons", doc["id"])
        assert folded["resolved_by"] == ["unknown"]  # the earlier stamp
        assert folded["resolved_at"] == "2026-11-30T10:00:01.000000Z"


def test_a_stamp_on_a_lesson_archived_elsewhere_follows_it_into_the_archive_in_either_order(repo: Path) -> None:
    base = Store(repo)
    doc, other = lesson(1), lesson(2)
    base.commit(change_of([lesson_put(doc), lesson_put(other)]), "failres: lessons")
    live = f"lessons/{doc['id'][:2]}/{doc['id'][2:4]}/{doc['id']}.json"
    archiver, stamper = forked(repo, "archiver", "stamper")
    archiver.commit(Change({f"archive/{live}": archiver.read_bytes(live)}, frozenset({live})), "failres: archive")
    stamp = stamp_put(doc["id"], ["decision-answered"], "2026-11-30T10:00:05.000000Z", "c" * 40)
    stamper.commit(change_of([stamp]), "failres: stamp")
    left, right = merge_both_ways(repo, archiver, stamper)
    assert tree_files(left) == tree_files(right)
    files = tree_files(left)
    assert f"archive/{stamp.path}" in files and stamp.path not in files
    assert files[f"archive/{stamp.path}"] == str(stamper.repo[stamper.tip()].tree[stamp.path].id)  # same bytes
    assert live not in files
    history = git(repo, "log", "--format=%s", "refs/failres/left")
    assert "failres: stamp" in history and "failres: archive" in history  # both facts in history


def test_an_amendment_written_in_the_archive_follows_a_record_restored_elsewhere(repo: Path) -> None:
    base = Store(repo)
    doc = lesson(1)
    live = f"lessons/{doc['id'][:2]}/{doc['id'][2:4]}/{doc['id']}.json"
    base.commit(Change({f"archive/{live}": change_of([lesson_put(doc)]).puts[live]}), "failres: archived lesson")
    restorer, amender = forked(repo, "restorer", "amender")
    restorer.commit(Change({live: restorer.read_bytes(f"archive/{live}")}, frozenset({f"archive/{live}"})),
                    "failres: restore")
    stamp = stamp_put(doc["id"], ["unknown"], "2026-11-30T10:00:05.000000Z", "d" * 40)
    amender.commit(Change({f"archive/{stamp.path}": change_of([stamp]).puts[stamp.path]}), "failres: amend archived")
    left, right = merge_both_ways(repo, restorer, amender)
    assert tree_files(left) == tree_files(right)
    assert stamp.path in tree_files(left) and f"archive/{stamp.path}" not in tree_files(left)
    assert read_record(left, "lessons", doc["id"])["resolved_by"] == ["unknown"]


def test_an_orphan_already_in_the_merge_base_is_left_alone_in_either_order(repo: Path) -> None:
    base = Store(repo)
    doc = lesson(1)
    live = f"lessons/{doc['id'][:2]}/{doc['id'][2:4]}/{doc['id']}.json"
    stamp = stamp_put(doc["id"], ["unknown"], "2026-11-30T10:00:05.000000Z", "e" * 40)
    # A stamp written beside a record that had already been archived: orphaned before any merge.
    base.commit(Change({f"archive/{live}": change_of([lesson_put(doc)]).puts[live],
                        **change_of([stamp]).puts}), "failres: orphan at the base")
    one, two = forked(repo, "one", "two")
    neighbour = f"lessons/{doc['id'][:2]}/{doc['id'][2:4]}/{doc['id'][:4]}000000000001.json"
    one.commit(Change({neighbour: b"{}\n"}), "failres: one touches the directory")
    two.commit(change_of([lesson_put(lesson(2))]), "failres: two writes elsewhere")
    left, right = merge_both_ways(repo, one, two)
    assert tree_files(left) == tree_files(right)
    assert stamp.path in tree_files(left)


def test_an_amendment_with_no_record_anywhere_stays_where_it_is(repo: Path) -> None:
    store = Store(repo)
    store.commit(Change({"lessons/ab/cd/abcd000000000000+ffff000000000000.json": b"{}\n"}), "failres: orphan")
    assert orphan_moves(store, store.commit_at().tree).is_empty()


# ---- many machines at once ----

WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from lessons.recall.lesson import lesson_put, make_lesson
    from lessons.storage.records import change_of
    from lessons.storage.store import Store

    store = Store(sys.argv[1])
    store.create()
    for n in range(int(sys.argv[2])):
        doc = make_lesson(slug="load", task=sys.argv[3], fail_class="unknown", message=f"{{n}}",
                          files=["src/a.py"], int_head="0" * 40, snapshot=None)
        store.commit(change_of([lesson_put(doc)]), f"failres: {{sys.argv[3]}} lesson {{n}}")
    open(sys.argv[4], "w").close()
    """
)

SYNCER = textwrap.dedent(
    """
    import os, sys
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from failres.errors import Busy
    from failres.remote.sync import sync_store

    top, done = Path(sys.argv[1]), Path(sys.argv[2])
    syncs = lost = 0
    while True:
        finished = done.exists()
        try:
            sync_store(top, "refs/failres/store", "origin")
            syncs += 1
        except Busy:
            lost += 1  # the crowd won this round; the next round or the final sync catches up
        if finished:
            break
    print(syncs, lost)
    """
)


@pytest.mark.slow
def test_three_clones_writing_while_syncing_end_with_all_900_records(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    clones = [make_clone(tmp_path, bare, name) for name in ("a", "b", "c")]
    writer, syncer = tmp_path / "writer.py", tmp_path / "syncer.py"
    writer.write_text(WRITER.format(root=str(ROOT)))
    syncer.write_text(SYNCER.format(root=str(ROOT)))
    procs = []
    for clone in clones:
        done = tmp_path / f"{clone.name}.done"
        procs.append(subprocess.Popen([sys.executable, str(writer), str(clone), "300", clone.name, str(done)],
                                      stderr=subprocess.PIPE, text=True))
        procs.append(subprocess.Popen([sys.executable, str(syncer), str(clone), str(done)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outcomes = [(p.wait(timeout=240), p.stderr.read(), p.stdout.read() if p.stdout else "") for p in procs]
    assert all(code == 0 for code, _, _ in outcomes), outcomes
    assert sum(int(out.split()[0]) for _, _, out in outcomes if out) >= 3  # syncs really ran alongside writes
    for clone in clones + clones[:2]:  # a round, then enough to carry the last merge everywhere
        result = run_failres(clone, "sync", "--json", env=dict(os.environ))
        assert result.returncode == 0, result.stderr
    tips = {git(clone, "rev-parse", "refs/failres/store").strip() for clone in clones}
    assert len(tips) == 1 and tips == {git(bare, "rev-parse", "refs/failres/store").strip()}
    for clone in clones:
        records = read_collection(Store(clone), "lessons").records
        assert len(records) == 900
        assert {r["task"] for r in records} == {"a", "b", "c"}
        fsck(clone)
    fsck(bare)


def test_syncs_started_together_in_one_clone_take_turns(network) -> None:
    bare, a, _ = network
    write_lessons(a, 2)
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-m", "failres", "sync", "--json"], cwd=a, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in procs]
    assert [code for code, _, _ in results] == [0, 0, 0], results
    assert sorted(json.loads(out)["pushed"] for _, out, _ in results) == [False, False, True]
    assert git(a, "rev-parse", "refs/failres/store") == git(bare, "rev-parse", "refs/failres/store")


def test_a_join_lands_while_a_local_writer_never_pauses(repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """With no optimistic catch-up allowed, the join holds the writers back once and lands."""
    from lessons.storage import settle

    local = Store(repo)
    write_lessons(repo, 1)
    fork = local.tip()
    other = Store(repo, "refs/failres/other")
    other.repo.references.create("refs/failres/other", fork)
    theirs_docs = [lesson(100 + n) for n in range(50)]
    other.commit(change_of([lesson_put(d) for d in theirs_docs]), "failres: the other line")
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(root=str(ROOT)))
    done = tmp_path / "writer.done"
    writer = subprocess.Popen([sys.executable, str(script), str(repo), "150", "w", str(done)], stderr=subprocess.PIPE,
                              text=True)
    try:
        while len(lesson_ids(repo)) < 10:  # the writer is under way
            pass
        monkeypatch.setattr(settle, "OPTIMISTIC_CATCH_UPS", 0)
        how, landed = settle.join(local, other.tip(), "failres: join under load")
    finally:
        assert writer.wait(timeout=120) == 0, writer.stderr.read()
    assert how == "merged"
    assert local.tip() == landed or local.repo.descendant_of(local.tip(), landed)  # the writer went on after it
    ids = lesson_ids(repo)
    assert {d["id"] for d in theirs_docs} <= ids
    assert len(ids) == 1 + 50 + 150
    assert settle.SCRATCH_REF not in local.repo.references
