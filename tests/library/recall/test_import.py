"""`lessons import`: JSONL from other harnesses, checked whole before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git
from lessons.recall.importer import import_lessons
from lessons.recall.lesson import read_lessons
from lessons.storage.store import Store

LINE = {"ts": "2030-01-02T03:04:05.123Z", "slug": "release-readiness", "task": "t16",
        "failClass": "gate-not-green-after-fixer", "message": "gate0 failed in /tmp/tmp.Xa81kq/worktree after 12.5s"}


def jsonl(path: Path, *docs: object) -> Path:
    path.write_text("".join((d if isinstance(d, str) else json.dumps(d)) + "\n" for d in docs))
    return path


@pytest.fixture
def store(repo: Path) -> Store:
    store = Store(repo)
    store.create()
    return store


def tip(repo: Path) -> str:
    return git(repo, "rev-parse", "refs/failres/store").strip()


def test_import_writes_lessons_with_the_write_paths_redaction_and_signature(repo: Path, store: Store, cli) -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    source = jsonl(repo.parent / "lessons.jsonl", {**LINE, "message": LINE["message"] + f" token={secret}"},
                   {**LINE, "task": "t17", "resolved_by": ["scope-widened"], "resolved_at": "2030-01-03T00:00:00Z",
                    "package": "src", "snapshotBundle": None})
    result = cli(repo, "lessons", "import", str(source), "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["imported"] == 2
    lessons, problems = read_lessons(store)
    assert problems == []
    by_task = {x["task"]: x for x in lessons}
    first = by_task["t16"]
    assert first["signature"] == ("gate-not-green-after-fixer|gate0 failed in <tmp>/worktree after <dur> "
                                  "token=[REDACTED:github-token]")
    assert secret not in first["message"] and "[REDACTED" in first["message"]
    assert first["ts"] == "2030-01-02T03:04:05.123000Z" and first["resolved_by"] is None
    assert by_task["t17"]["resolved_by"] == ["scope-widened"] and by_task["t17"]["package"] == "src"
    assert secret not in git(repo, "log", "-p", "refs/failres/store")


def test_a_bad_line_is_reported_by_file_and_line_and_nothing_is_written(repo: Path, store: Store, cli) -> None:
    good = jsonl(repo.parent / "good.jsonl", LINE)
    bad = jsonl(repo.parent / "bad.jsonl", {**LINE, "task": "a"}, "", {**LINE, "task": "b"}, {"ts": LINE["ts"]})
    before = tip(repo)
    result = cli(repo, "lessons", "import", str(good), str(bad))
    assert result.code == 2
    assert result.err.startswith(f"error: {bad}:4: missing required field 'slug'")
    assert tip(repo) == before


@pytest.mark.parametrize(("change", "says"), [
    ({"ts": "yesterday"}, "not an RFC 3339 timestamp"),
    ({"ts": "2030-01-02T03:04:05"}, "no time zone"),
    ({"failClass": ""}, "failClass must be a non-empty string"),
    ({"message": 3}, "message must be a string"),
    ({"id": "XYZ"}, "16 lowercase hex"),
    ({"resolved_by": ["fixed-it"]}, "resolved_by must be"),
    ({"resolved_by": ["unknown", "scope-widened"]}, "stands alone"),
    ({"runId": 7}, "unknown field 'runId'"),
])
def test_each_kind_of_bad_line_is_named(repo: Path, store: Store, change: dict, says: str) -> None:
    from lessons.errors import InvalidInput

    with pytest.raises(InvalidInput, match=says):
        import_lessons(store, [jsonl(repo.parent / "x.jsonl", {**LINE, **change})])


def test_a_line_that_is_not_json_names_its_line(repo: Path, store: Store, cli) -> None:
    source = jsonl(repo.parent / "x.jsonl", LINE, "{not json")
    result = cli(repo, "lessons", "import", str(source))
    assert result.code == 2 and f"{source}:2: not valid JSON" in result.err


def test_importing_the_same_file_twice_writes_nothing_new(repo: Path, store: Store) -> None:
    source = jsonl(repo.parent / "x.jsonl", LINE, {**LINE, "task": "t2"})
    assert import_lessons(store, [source]).imported == 2
    before = tip(repo)
    again = import_lessons(store, [source])
    assert (again.imported, again.unchanged, again.commits) == (0, 2, ())
    assert tip(repo) == before


def test_an_id_already_in_the_store_with_other_content_is_refused(repo: Path, store: Store) -> None:
    from lessons.errors import InvalidInput

    import_lessons(store, [jsonl(repo.parent / "a.jsonl", {**LINE, "id": "0123456789abcdef"})])
    before = tip(repo)
    with pytest.raises(InvalidInput, match="already in the store"):
        import_lessons(store, [jsonl(repo.parent / "b.jsonl", {**LINE, "id": "0123456789abcdef", "task": "t9"})])
    assert tip(repo) == before


def test_a_given_signature_is_normalised_like_the_write_path(repo: Path, store: Store) -> None:
    source = jsonl(repo.parent / "x.jsonl", {**LINE, "signature": "wrapper-engine-down|connect to 10.0.0.1 pid 4242"})
    import_lessons(store, [source])
    [found] = read_lessons(store)[0]
    assert found["signature"] == "wrapper-engine-down|connect to 10.0.0.1 pid <n>"


def test_large_imports_are_written_in_batch_commits(repo: Path, store: Store) -> None:
    source = jsonl(repo.parent / "x.jsonl", *({**LINE, "task": f"t{n}"} for n in range(25)))
    result = import_lessons(store, [source], batch_size=10)
    assert result.imported == 25 and len(result.commits) == 3
    assert len(read_lessons(store)[0]) == 25


def test_an_import_that_fills_the_lessons_store_settles_it_into_the_archive(tmp_path: Path, cli) -> None:
    top = tmp_path / "repo"
    top.mkdir()
    git(top, "init", "-q")
    (top / ".failres.toml").write_text("[policy]\nmax_lessons = 10\nreclaim_headroom_pct = 0.5\n")
    assert cli(top, "init", "--no-hooks").code == 0
    source = tmp_path / "many.jsonl"
    source.write_text("".join(
        json.dumps({"ts": f"2026-11-{n + 1:02d}T00:00:00Z", "slug": "s", "task": f"t{n}", "failClass": "unknown",
                    "message": f"failure {n}"}) + "\n" for n in range(12)))
    result = cli(top, "lessons", "import", str(source))
    assert result.code == 0, result.err
    listed = json.loads(cli(top, "lessons", "list", "--json").out)
    assert len(listed) == 5  # floor(10 * (1 - 0.5)): the store settled, the rest moved to the archive
    restored = cli(top, "restore", "--store", "lessons", "--limit", "100", "--json")
    assert restored.code == 0, restored.err
    assert len(json.loads(cli(top, "lessons", "list", "--json").out)) == 12
