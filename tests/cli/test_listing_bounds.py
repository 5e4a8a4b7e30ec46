"""A listing the policy cuts says so, with how to see more; a long list in one cell is bounded
with a count. A person who sees 50 rows must not take them for all there are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_failres
from failres.decisions.records import decision_put, make_decision
from lessons.recall.lesson import lesson_put, make_lesson, stamp_put
from lessons.storage.records import change_of
from lessons.storage.store import Store


@pytest.fixture(scope="module")
def three_hundred(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose store holds 300 lessons (120 of them resolved) and one decision over 949 files."""
    import subprocess

    top = tmp_path_factory.mktemp("bounds") / "repo"
    top.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=top, check=True, capture_output=True)
    store = Store(top)
    store.create()
    lessons = [make_lesson(slug="big", task=f"t{n:03d}", fail_class="gate-not-green-after-fixer",
                           message=f"gate still red {n}", files=["src/a.py"], int_head="0" * 40, snapshot=None,
                           ts=f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000000Z") for n in range(300)]
    store.commit(change_of([lesson_put(lesson) for lesson in lessons]), "300 lessons")
    stamps = [stamp_put(lesson["id"], ["integration-head-moved"], "2026-01-02T00:00:00.000000Z", "1" * 40)
              for lesson in lessons[:120]]
    store.commit(change_of(stamps), "120 resolved")
    files = [f"src/generated/module_{n:04d}.py" for n in range(949)]
    store.commit(change_of([decision_put(make_decision(slug="big", task="t001", files=files, requests=[]))]),
                 "a wide violation")
    return top


def test_the_default_listing_says_it_shows_50_of_300(three_hundred: Path) -> None:
    proc = run_failres(three_hundred, "lessons", "list")
    assert proc.returncode == 0
    assert len(proc.stdout.splitlines()) == 1 + 50
    assert proc.stderr == "50 of 300 lessons shown; --limit N shows more\n"


def test_json_stays_the_records_shown_and_the_note_goes_to_stderr(three_hundred: Path) -> None:
    proc = run_failres(three_hundred, "lessons", "list", "--json", "--limit", "10")
    assert len(json.loads(proc.stdout)) == 10
    assert proc.stderr == "10 of 300 lessons shown; --limit N shows more\n"


@pytest.mark.parametrize("args", [["lessons", "list", "--limit", "300"], ["lessons", "list", "--limit", "999"],
                                  ["lessons", "list", "--slug", "big", "--task", "t007"]])
def test_a_listing_that_shows_everything_says_nothing(three_hundred: Path, args: list[str]) -> None:
    proc = run_failres(three_hundred, *args)
    assert (proc.returncode, proc.stderr) == (0, "")


def test_relevant_lessons_say_how_many_of_the_resolved_ones_they_show(three_hundred: Path) -> None:
    proc = run_failres(three_hundred, "lessons", "relevant", "--fail-class", "gate-not-green-after-fixer")
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 1 + 3  # lessons_per_prompt
    assert proc.stderr == "3 of 120 resolved gate-not-green-after-fixer lessons shown; --limit N shows more\n"


def test_facts_list_and_timeline_say_when_they_are_cut(three_hundred: Path, tmp_path: Path) -> None:
    import shutil

    top = tmp_path / "copy"
    shutil.copytree(three_hundred, top, symlinks=True)
    for n in range(4):
        assert run_failres(top, "facts", "set", "judge", f"k{n}", f"v{n}").returncode == 0
        assert run_failres(top, "facts", "set", "judge", "command", f"pytest -q {n}").returncode == 0
    (top / ".failres.toml").write_text("[policy]\nlist_limit = 2\ntimeline_limit = 3\n")
    listed = run_failres(top, "facts", "list")
    assert (listed.returncode, listed.stderr) == (0, "2 of 5 facts shown; --limit N shows more\n")
    assert len(listed.stdout.splitlines()) == 1 + 2
    assert len(json.loads(run_failres(top, "facts", "list", "--limit", "5", "--json").stdout)) == 5
    timeline = run_failres(top, "facts", "timeline", "judge", "command", "--json")
    assert [v["value"] for v in json.loads(timeline.stdout)] == ["pytest -q 1", "pytest -q 2", "pytest -q 3"]
    assert timeline.stderr == "3 of 4 versions (the newest) shown; --limit N shows more\n"


def test_a_949_file_decision_is_one_short_line_and_whole_in_json(three_hundred: Path) -> None:
    proc = run_failres(three_hundred, "decisions")
    [header, row] = proc.stdout.splitlines()
    assert "src/generated/module_0000.py, src/generated/module_0001.py, src/generated/module_0002.py " \
           "… and 946 more" in row
    assert len(row) < 200
    [decision] = json.loads(run_failres(three_hundred, "decisions", "--json").stdout)
    assert len(decision["files"]) == 949


def test_a_seat_that_touches_949_files_out_of_scope_leaves_messages_a_person_can_read(tmp_path: Path) -> None:
    """A real run: the seat writes 949 files outside its scope, twice; every line for people stays short,
    and the journal's `scope-violation` event keeps every path."""
    from project import Project

    project = Project.create(tmp_path)
    wide = {f"gen/module_{n:04d}.py": "X = 1\n" for n in range(949)}
    project.configure(implementer=[{"write": wide}, {"write": wide}])
    assert run_failres(project.top, "run", str(project.plan()), "--quiet").returncode == 1
    events = json.loads(run_failres(project.top, "journal", "rr", "--json").stdout)
    violations = [e for e in events if e["type"] == "scope-violation"]
    assert violations and len(violations[-1]["files"]) == 949
    [quarantined] = [e for e in events if e["type"] == "quarantined"]
    assert quarantined["message"].splitlines()[0].endswith("… and 944 more")
    for args in (["journal", "rr"], ["lessons", "list"], ["decisions"], ["status"]):
        proc = run_failres(project.top, *args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert max(len(line) for line in proc.stdout.splitlines()) < 1000, args  # not 36,000


def test_a_restore_cut_by_its_limit_says_more_may_be_archived(repo: Path) -> None:
    lines = [json.dumps({"ts": f"2026-01-01T00:00:{n:02d}Z", "slug": "s", "task": f"t{n}", "failClass": "unknown",
                         "message": f"m {n}"}) for n in range(12)]
    (repo / "many.jsonl").write_text("\n".join(lines) + "\n")
    (repo / ".failres.toml").write_text("[policy]\nmax_lessons = 4\n")
    assert run_failres(repo, "lessons", "import", "many.jsonl").returncode == 0
    proc = run_failres(repo, "restore", "--store", "lessons", "--limit", "6")
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stdout.splitlines()
    assert line.startswith("restored 6 lessons record(s) in ") and line.endswith(" … and 3 more")
    assert proc.stderr == ("at most 6 records come back at once; the archive may hold more: run it again, "
                           "or --limit N\n")
