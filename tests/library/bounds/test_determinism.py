"""The knowledge policy asks for determinism: the same inputs give the same records in any
repository. One story -- a fact, reflections, a proposal partly accepted, a retirement,
a measured outcome -- runs in two fresh repositories on the same clock, and their store
trees are compared byte for byte (every record's id is derived from its content)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import git
from failres.config.loading import load_config
from failres.knowledge.learning import accept, learn, reflect, retire
from lessons.bounds.facts import set_fact
from lessons.rulebook.ledger import record_outcome
from lessons.bounds.policy import Policy
from lessons.rulebook.rules import rules_in_force
from lessons.storage.store import Store
from test_learning_budget import refusal_session, steer_session, write_sessions

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def story(top: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the story in `top` on a clock that ticks a second per reading; the store's tree."""
    ticks = itertools.count()

    def clock() -> str:
        return (START + timedelta(seconds=next(ticks))).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    monkeypatch.chdir(top)
    store = Store(top)
    store.create()  # as `git failres init` does: a write never creates a store
    config = load_config(top)
    set_fact(store, "judge", "command", "python -m pytest -q", policy=Policy(), now=START)
    set_fact(store, "judge", "command", "make check", policy=Policy(), now=START + timedelta(hours=1))
    write_sessions(top / "sessions", {"a": steer_session("a", "always keep the changelog short"),
                                      "b": steer_session("b", "never touch vendor/"),
                                      "c": refusal_session("c", "mix phx.server 2>&1 | head -80")})
    reflect(store, store.repo, config, top, [Path("sessions")], clock=clock)
    (first,) = learn(store, config, top, None, clock=clock)
    assert first.proposal is not None and len(first.proposal.rules) == 3
    keep = [r.id for r in first.proposal.rules if "vendor" not in r.text]
    accept(store, config, first.proposal.id, keep, clock=clock)
    retired = next(r.id for r in first.proposal.rules if "changelog" in r.text)
    retirement = retire(store, config, retired, "too narrow", clock=clock)
    accept(store, config, retirement.id, clock=clock)
    force = rules_in_force(store)
    record_outcome(store, force.block_hash, force.rule_ids, "committed", slug="rr", task="t1", ts=clock())
    record_outcome(store, force.block_hash, force.rule_ids, "committed", slug="rr", task="t1", ts=clock())
    return git(top, "rev-parse", "refs/failres/store^{tree}").strip()


def fresh_repository(root: Path) -> Path:
    top = root / "project"
    top.mkdir(parents=True)
    git(top, "init", "-q", "-b", "main")
    git(top, "commit", "-q", "--allow-empty", "-m", "start")
    return top


def test_the_same_story_in_two_repositories_writes_the_same_store_tree(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    first = story(fresh_repository(tmp_path / "one"), monkeypatch)
    second = story(fresh_repository(tmp_path / "two"), monkeypatch)
    assert first == second
    # And the story wrote what it says: two fact versions, three reflections, two
    # proposals, a rules file and two equal measurements kept apart.
    top = tmp_path / "one" / "project"
    files = git(top, "ls-tree", "-r", "--name-only", "refs/failres/store").split()
    assert sum(f.startswith("facts/") and "+" not in f for f in files) == 2
    assert sum(f.startswith("reflections/") and "+" not in f for f in files) == 3
    assert sum(f.startswith("proposals/") and "+" not in f for f in files) == 2
    assert sum(f.startswith("validations/") for f in files) == 2
    assert len(rules_in_force(Store(top)).rule_ids) == 1  # the refusal rule; vendor declined, changelog retired
