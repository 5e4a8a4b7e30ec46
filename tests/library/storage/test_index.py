"""The store index: its answers equal a direct read of the store, whatever happens to the
index file or to the store ref behind its back."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, git
from failres.decisions.records import answer_put, decision_put, make_decision
from failres.journal import event_order, event_put, make_event
from lessons.storage.index import StoreIndex, answer, index_path, parse_record_path
from lessons.recall.lesson import lesson_put, make_lesson, stamp_put
from lessons.storage.records import change_of, read_collection
from lessons.recall.retrieval import relevant_lessons
from lessons.storage.store import Change, Store
from lessons.storage.history import undo_commit

# ---- the oracle: the same questions answered by reading every record file ----


def newest_first(records: list[dict]) -> list[dict]:
    return sorted(records, key=lambda r: (str(r.get("ts", "")), str(r.get("id", ""))), reverse=True)


def store_lessons(store: Store) -> list[dict]:
    return newest_first(read_collection(store, "lessons").records)


def store_relevant(store: Store, fail_class: str, limit: int = 3) -> list[dict]:
    found = [r for r in store_lessons(store)
             if r.get("failClass") == fail_class and isinstance(r.get("resolved_by"), list) and r["resolved_by"]]
    return found[:limit]


def store_task_lessons(store: Store, slug: str, task: str) -> list[dict]:
    return [r for r in store_lessons(store) if r.get("slug") == slug and r.get("task") == task]


def store_open_decisions(store: Store) -> list[dict]:
    found = [d for d in read_collection(store, "decisions").records if d.get("status") == "open"]
    return sorted(found, key=lambda d: (str(d.get("ts", "")), str(d.get("id", ""))))


def store_events(store: Store, slug: str, task: str | None = None) -> list[dict]:
    events = sorted(read_collection(store, "journal", scope=slug).records, key=event_order)
    return [e for e in events if task is None or e.get("task") == task]


def assert_index_agrees(store: Store) -> None:
    """Every question the index answers, compared with the store read directly."""
    with StoreIndex.open(store) as index:
        assert index.lessons() == store_lessons(store)
        for fail_class in ("gate-not-green-after-fixer", "fixer-scope-violation", "seat-timeout"):
            assert index.relevant_lessons(fail_class) == store_relevant(store, fail_class)
            assert index.relevant_lessons(fail_class, limit=50) == store_relevant(store, fail_class, 50)
        for slug, task in (("s1", "t1"), ("s1", "t2"), ("s2", "t1"), ("nope", "t1")):
            assert index.task_lessons(slug, task) == store_task_lessons(store, slug, task)
            assert index.events(slug, task) == store_events(store, slug, task)
            assert index.events(slug) == store_events(store, slug)
        assert index.open_decisions() == store_open_decisions(store)


# ---- building a store with some of everything ----

TS = "2026-11-30T10:00:{:02d}.000000Z"


def lesson(n: int, *, slug: str = "s1", task: str = "t1", fail_class: str = "gate-not-green-after-fixer",
           ts: str | None = None) -> dict:
    return make_lesson(slug=slug, task=task, fail_class=fail_class, message=f"test {n} failed",
                       files=["src/a.py"], int_head="0" * 40, snapshot=None, ts=ts or TS.format(n))


def populate(store: Store) -> dict[str, list[dict]]:
    """Lessons (some stamped, two with the same timestamp), decisions (open and answered), events."""
    lessons = [lesson(1), lesson(2, task="t2"), lesson(3, fail_class="fixer-scope-violation"),
               lesson(4, slug="s2"), lesson(5, ts=TS.format(4)), lesson(6)]
    store.commit(change_of([lesson_put(d) for d in lessons]), "failres: lessons")
    store.commit(change_of([stamp_put(lessons[0]["id"], ["scope-widened"], TS.format(10), "a" * 40),
                            stamp_put(lessons[2]["id"], ["unknown"], TS.format(11), "b" * 40),
                            stamp_put(lessons[4]["id"], ["integration-head-moved"], TS.format(12), "c" * 40)]),
                 "failres: stamps")
    decisions = [make_decision(slug="s1", task="t1", files=["x.py"], requests=[], ts=TS.format(n)) for n in (1, 2, 3)]
    store.commit(change_of([decision_put(d) for d in decisions]), "failres: decisions")
    store.commit(change_of([answer_put(decisions[1]["id"], {"scopeFiles": ["x.py"]}, "person", TS.format(20))]),
                 "failres: answer")
    events = [make_event("task-started", slug, task, intHead="0" * 40, ts=TS.format(n))
              for n, (slug, task) in enumerate([("s1", "t1"), ("s1", "t2"), ("s2", "t1"), ("s1", "t1")])]
    events.append({**make_event("gate-result", "s1", "t1", gate="g", passed=False, exitCode=1, ts=TS.format(3)),
                   "seq": 1})
    store.commit(change_of([event_put(e) for e in events]), "failres: events")
    return {"lessons": lessons, "decisions": decisions, "events": events}


@pytest.fixture
def store(repo: Path) -> Store:
    built = Store(repo)
    populate(built)
    return built


# ---- answers ----


def test_every_question_answers_what_a_direct_store_read_answers(store: Store) -> None:
    assert_index_agrees(store)
    with StoreIndex.open(store) as index:
        assert [d["failClass"] for d in index.relevant_lessons("gate-not-green-after-fixer")] == [
            "gate-not-green-after-fixer"] * 2
        assert index.decisions(status="answered")[0]["answer"] == {"scopeFiles": ["x.py"]}


def test_the_index_lives_under_the_git_common_dir_named_by_the_ref(store: Store) -> None:
    with StoreIndex.open(store):
        pass
    path = index_path(store)
    assert path.parent == store.common_dir / "failres"
    assert path.name.startswith("index-") and path.name.endswith(".sqlite")
    assert index_path(Store(store.repo, "refs/failres/other")) != path


def test_an_append_is_indexed_from_the_tree_diff_alone(store: Store) -> None:
    with StoreIndex.open(store) as index:
        assert index.refresh().kind == "rebuild"
        assert index.refresh().kind == "current"
        store.commit(change_of([lesson_put(lesson(30))]), "failres: one more")
        done = index.refresh()
        assert (done.kind, done.files, done.commit) == ("incremental", 1, str(store.tip()))
    assert_index_agrees(store)


def test_a_new_stamp_is_folded_into_its_indexed_lesson(store: Store) -> None:
    fresh = lesson(40, fail_class="seat-timeout")
    store.commit(change_of([lesson_put(fresh)]), "failres: lesson")
    with StoreIndex.open(store) as index:
        assert index.relevant_lessons("seat-timeout") == []
        store.commit(change_of([stamp_put(fresh["id"], ["binding-changed"], TS.format(41), "d" * 40)]),
                     "failres: stamp")
        assert [d["id"] for d in index.relevant_lessons("seat-timeout")] == [fresh["id"]]
        assert index.relevant_lessons("seat-timeout")[0]["resolved_by"] == ["binding-changed"]


def test_undoing_a_stamp_unfolds_it_incrementally(store: Store) -> None:
    fresh = lesson(42, fail_class="seat-timeout")
    store.commit(change_of([lesson_put(fresh)]), "failres: lesson")
    stamp = store.commit(change_of([stamp_put(fresh["id"], ["unknown"], TS.format(43), "e" * 40)]), "failres: stamp")
    with StoreIndex.open(store) as index:
        assert len(index.relevant_lessons("seat-timeout")) == 1
        undo_commit(store, str(stamp))
        assert index.refresh().kind == "incremental"
        assert index.relevant_lessons("seat-timeout") == []
    assert_index_agrees(store)


def test_an_archived_lesson_leaves_the_live_answers(store: Store) -> None:
    first = store_lessons(store)[0]
    path = f"lessons/{first['id'][:2]}/{first['id'][2:4]}/{first['id']}.json"
    with StoreIndex.open(store) as index:
        index.refresh()
        store.commit(Change({f"archive/{path}": store.read_bytes(path)}, frozenset({path})), "failres: archive")
        assert first["id"] not in [d["id"] for d in index.lessons()]
    assert_index_agrees(store)


def test_a_corrupt_record_file_is_skipped_and_reported(store: Store) -> None:
    bad = "lessons/ab/cd/abcdabcdabcdabcd.json"
    store.commit(Change({bad: b"{not json"}), "failres: damage")
    with StoreIndex.open(store) as index:
        assert "abcdabcdabcdabcd" not in [d.get("id") for d in index.lessons()]
        assert [path for path, _ in index.problems("lessons")] == [bad]
    assert_index_agrees(store)


def test_the_tree_diff_lists_what_a_full_libgit2_diff_lists(store: Store) -> None:
    from lessons.storage.treediff import tree_changes

    before = store.commit_at()
    first = store_lessons(store)[0]
    path = f"lessons/{first['id'][:2]}/{first['id'][2:4]}/{first['id']}.json"
    gone = next(p for p, _ in store.walk("decisions"))
    store.commit(Change({f"archive/{path}": store.read_bytes(path), "lessons/ab/cd/abcd000000000000.json": b"{}\n",
                         "journal/s1/new.json": b"{}\n"}, frozenset({path, gone})), "failres: a mix")
    after = store.commit_at()
    for old, new in ((before.tree, after.tree), (after.tree, before.tree), (None, after.tree), (after.tree, None)):
        assert sorted(tree_changes(store.repo, old, new)) == sorted(store.diff_changes(old, new))
    assert list(tree_changes(store.repo, after.tree, after.tree)) == []


def test_only_canonical_record_paths_are_indexed() -> None:
    assert parse_record_path("lessons/ab/cd/abcd000000000000.json").record == "abcd000000000000"
    assert parse_record_path("lessons/ab/cd/abcd000000000000+ffff000000000000.json").record == "abcd000000000000"
    assert parse_record_path("journal/s1/ab/cd/abcd000000000000.json").scope == "s1"
    assert parse_record_path("lessons/zz/cd/abcd000000000000.json") is None
    assert parse_record_path("archive/lessons/ab/cd/abcd000000000000.json") is None
    assert parse_record_path("lessons/ab/cd/notes.txt") is None


# ---- what may happen to the index file ----


def test_a_deleted_index_is_rebuilt_with_the_same_answers(store: Store) -> None:
    assert_index_agrees(store)
    index_path(store).unlink()
    with StoreIndex.open(store) as index:
        assert index.refresh().kind == "rebuild"
    assert_index_agrees(store)


@pytest.mark.parametrize("damage", ["whole file", "first page"])
def test_garbage_in_the_index_file_is_noticed_and_rebuilt(store: Store, damage: str) -> None:
    assert_index_agrees(store)
    path = index_path(store)
    data = bytearray(path.read_bytes())
    if damage == "whole file":
        data = bytearray(os.urandom(len(data)))
    else:
        data[0:4096] = os.urandom(4096)
    path.write_bytes(bytes(data))
    kinds = answer(store, lambda index: index.refresh().kind, lambda: "fell back")
    assert kinds == "rebuild"
    assert_index_agrees(store)


def test_an_index_that_cannot_be_opened_falls_back_to_the_store(store: Store) -> None:
    path = index_path(store)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.mkdir()  # nothing can open a directory as a database, nor delete it as a file
    got = answer(store, lambda index: index.relevant_lessons("gate-not-green-after-fixer"),
                 lambda: store_relevant(store, "gate-not-green-after-fixer"))
    assert got == store_relevant(store, "gate-not-green-after-fixer")
    assert len(got) == 2


# ---- what may happen to the ref behind the index's back ----


def test_a_ref_moved_back_to_an_older_commit_gives_the_older_answers(store: Store) -> None:
    older = git(Path(store.repo.workdir), "rev-parse", "refs/failres/store~3").strip()
    assert_index_agrees(store)
    git(Path(store.repo.workdir), "update-ref", "refs/failres/store", older)
    with StoreIndex.open(store) as index:
        assert index.refresh().kind == "rebuild"
        assert index.open_decisions() == []  # the decisions came later
    assert_index_agrees(store)


def test_a_ref_moved_to_an_unrelated_history_gives_its_answers(store: Store) -> None:
    other = Store(store.repo, "refs/failres/elsewhere")
    other.create()
    populate(other)
    assert_index_agrees(store)
    git(Path(store.repo.workdir), "update-ref", "refs/failres/store", str(other.tip()))
    assert_index_agrees(store)
    with StoreIndex.open(store) as index:
        assert index.lessons() == store_lessons(other)


def test_a_deleted_store_ref_answers_empty_and_the_index_keeps_where_the_store_was(store: Store) -> None:
    tip = str(store.tip())
    assert_index_agrees(store)
    git(Path(store.repo.workdir), "update-ref", "-d", "refs/failres/store")
    assert relevant_lessons(store, "gate-not-green-after-fixer") == []  # answered by the (missing) store
    with StoreIndex.open(store) as index:
        assert index.indexed() == (True, tip)  # evidence for `lessons.storage.guard`, not emptied


# ---- many processes ----

WORKER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from lessons.storage.index import StoreIndex
    from lessons.recall.lesson import lesson_put, make_lesson, stamp_put
    from lessons.storage.records import change_of
    from lessons.storage.store import Store

    store = Store(sys.argv[1])
    worker = sys.argv[2]
    for n in range(int(sys.argv[3])):
        doc = make_lesson(slug="w", task=worker, fail_class="seat-timeout", message=f"{{worker}} {{n}}",
                          files=["src/a.py"], int_head="0" * 40, snapshot=None)
        store.commit(change_of([lesson_put(doc), stamp_put(doc["id"], ["unknown"], doc["ts"], "f" * 40)]),
                     f"failres: worker {{worker}} {{n}}")
        with StoreIndex.open(store) as index:
            mine = [d["id"] for d in index.task_lessons("w", worker)]
            assert doc["id"] in mine, (worker, n)
            assert len(mine) == n + 1, (worker, n, len(mine))
    """
)


def test_several_processes_write_and_read_through_one_index_at_once(store: Store, tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER.format(root=str(ROOT)))
    top = str(store.repo.workdir)
    workers = [subprocess.Popen([sys.executable, str(script), top, f"w{i}", "15"], stderr=subprocess.PIPE, text=True)
               for i in range(4)]
    errors = [(w.wait(timeout=120), w.stderr.read()) for w in workers]
    assert all(code == 0 for code, _ in errors), errors
    assert_index_agrees(store)
    with StoreIndex.open(store) as index:
        assert len(index.relevant_lessons("seat-timeout", limit=100)) == 60


# ---- the retrieval functions prompts and hooks call ----


def test_retrieval_answers_through_the_index(store: Store) -> None:
    from lessons.recall.retrieval import open_decisions, relevant_lessons, task_lessons

    assert not index_path(store).exists()
    assert relevant_lessons(store, "gate-not-green-after-fixer") == store_relevant(store, "gate-not-green-after-fixer")
    assert index_path(store).exists()
    assert task_lessons(store, "s1", "t1") == store_task_lessons(store, "s1", "t1")
    assert open_decisions(store) == store_open_decisions(store)


def test_retrieval_reads_the_store_when_the_index_cannot_be_used(store: Store) -> None:
    from lessons.recall.retrieval import LessonFilter, list_lessons, open_decisions, relevant_lessons

    index_path(store).parent.mkdir(parents=True, exist_ok=True)
    index_path(store).mkdir()
    assert relevant_lessons(store, "gate-not-green-after-fixer") == store_relevant(store, "gate-not-green-after-fixer")
    assert open_decisions(store) == store_open_decisions(store)
    assert list_lessons(store, LessonFilter(unresolved=True)) == [
        d for d in store_lessons(store) if not d.get("resolved_by")]
