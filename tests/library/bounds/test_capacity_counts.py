"""A store's record count, kept from one count to the next, is always the count a whole walk gives."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pygit2

from lessons.bounds.capacity import COUNTS_NOTE, count_records
from lessons.storage.records import iter_record_files
from lessons.storage.store import Change, Store


def walked(store: Store, prefix: str, commit: pygit2.Commit | None = None) -> int:
    return sum(1 for _, _, amend, _ in iter_record_files(store, prefix, commit) if amend is None)


def note(store: Store) -> Path:
    return store.common_dir / "failres" / COUNTS_NOTE


def _path(rng: random.Random, prefix: str) -> str:
    rec = f"{rng.choice('abc')}{rng.randrange(40):02d}"
    name = rec + (f"+{rng.randrange(3)}" if rng.random() < 0.3 else "")
    return f"{prefix}/{rec[:1]}/{rec[1:]}/{name}{'.json' if rng.random() < 0.95 else '.txt'}"


def test_counts_after_random_writes_equal_a_whole_walk(repo: Path) -> None:
    store = Store(repo)
    rng = random.Random(11)
    present: set[str] = set()
    for step in range(120):
        prefix = rng.choice(["lessons", "archive/lessons", "journal/s1"])
        puts = {_path(rng, prefix): b"{}" for _ in range(rng.randrange(4))}
        deletes = frozenset(rng.sample(sorted(present), min(len(present), rng.randrange(3))))
        store.commit(Change(puts, deletes), f"failres: step {step}")
        present = (present | set(puts)) - deletes
        for prefix in ("lessons", "archive/lessons", "journal/s1", "journal", ""):
            assert count_records(store, prefix) == walked(store, prefix)
    assert note(store).exists()  # the counts were noted, and every later count started from them


def test_a_count_of_an_older_commit_and_of_a_missing_prefix(repo: Path) -> None:
    store = Store(repo)
    store.commit(Change({"lessons/a/01/a01.json": b"{}", "lessons/a/02/a02.json": b"{}"}), "two")
    first = store.commit_at()
    store.commit(Change({"lessons/b/01/b01.json": b"{}"}, frozenset({"lessons/a/01/a01.json"})), "one more, one less")
    assert count_records(store, "lessons") == 2
    assert count_records(store, "lessons", first) == walked(store, "lessons", first) == 2
    store.commit(Change({}, frozenset({"lessons/a/02/a02.json", "lessons/b/01/b01.json"})), "none left")
    assert count_records(store, "lessons") == 0 and count_records(store, "decisions") == 0


def test_a_note_that_is_garbage_or_names_a_tree_that_is_gone_costs_a_whole_count(repo: Path) -> None:
    store = Store(repo)
    store.commit(Change({f"lessons/a/{n:02d}/a{n:02d}.json": b"{}" for n in range(5)}), "five")
    note(store).parent.mkdir(exist_ok=True)
    for garbage in ("not json", "[1, 2]", json.dumps({"lessons": ["0" * 40, 999]}),
                    json.dumps({"lessons": ["zz", 1]}), json.dumps({"lessons": [1, "x"]})):
        note(store).write_text(garbage, encoding="utf-8")
        assert count_records(store, "lessons") == 5
