"""The level-by-level union merge gives exactly the tree the file-by-file rule gives."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pygit2

from lessons.storage.history import _readable, union_change
from lessons.storage.store import Store
from lessons.storage.treemerge import merge_trees
from lessons.storage.trees import Change


def _paths(rng: random.Random, count: int) -> list[str]:
    return [f"lessons/{rng.choice('ab')}{rng.choice('cd')}/{rng.choice('ef')}/{rng.randrange(6)}.json"
            for _ in range(count)]


def _body(rng: random.Random) -> bytes:
    return json.dumps({"v": rng.randrange(4)}).encode() if rng.random() < 0.85 else b"{damaged"


def test_the_walked_union_equals_the_file_by_file_union_on_random_divergences(tmp_path: Path):
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    store = Store(repo, "refs/failres/store")
    rng = random.Random(7)
    for _ in range(300):
        base = store.apply(None, Change({p: _body(rng) for p in _paths(rng, 8)}))
        sides = []
        for _ in range(2):
            present = [e for e in _paths(rng, 30)]
            puts = {p: _body(rng) for p in present[:6]}
            deletes = frozenset(p for p in present[6:12] if p not in puts)
            sides.append(store.apply(repo[base], Change(puts, deletes)) if rng.random() < 0.9 else base)
        b, o, t = repo[base], repo[sides[0]], repo[sides[1]]
        for base_tree in (b, None):
            expected = store.apply(o, union_change(store, base_tree, o, t))
            walked = merge_trees(repo, base_tree, o, t, lambda path, oid: _readable(store, path, oid))
            assert walked == expected
