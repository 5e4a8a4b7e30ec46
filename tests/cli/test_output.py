"""Output for people survives pipes: one record a line, nothing split, lists as words; unknown
slugs, tasks and ids are bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_failres
from failres.cli.tables import Column, as_text, layout
from project import FIXED, Project

COLUMNS = (Column("id"), Column("state"), Column("message", wraps=True))
ROWS = [("3f9a2b1c", "quarantined", "gate tests still red after 1 fixer attempt(s): exit 1: FAILED tests/check.py"),
        ("77aa0c1d", "landed", None)]


def test_values_read_as_text_not_python() -> None:
    assert as_text(["decision-answered", "scope-widened"]) == "decision-answered, scope-widened"
    assert as_text(None) == ""
    assert as_text(True) == "true"
    assert as_text({"scopeFiles": ["a.py"]}) == '{"scopeFiles": ["a.py"]}'
    assert as_text("first line\nsecond\tline") == "first line second line"


def test_without_a_width_every_record_is_one_unwrapped_line() -> None:
    lines = layout(COLUMNS, ROWS, None)
    assert lines == [
        "id        state        message",
        "3f9a2b1c  quarantined  gate tests still red after 1 fixer attempt(s): exit 1: FAILED tests/check.py",
        "77aa0c1d  landed",
    ]


def test_on_a_narrow_terminal_free_text_is_cut_with_an_ellipsis_and_rows_stay_one_line() -> None:
    lines = layout(COLUMNS, ROWS, 60)
    assert len(lines) == 1 + len(ROWS)
    assert [len(line) for line in lines[1:]] == [60, len("77aa0c1d  landed")]
    assert lines[1].startswith("3f9a2b1c  quarantined  gate tests still red") and lines[1].endswith("…")


def test_when_free_text_cannot_make_the_room_identifiers_are_cut_too() -> None:
    wide = (Column("path"), Column("note", wraps=True))
    rows = [("src/a/very/long/path/that/is/an/identifier.py", "short note here")]
    lines = layout(wide, rows, 40)
    assert all(len(line) <= 40 for line in lines) and len(lines) == 2
    assert lines[1].startswith("src/a/very/long/path/") and "… " in lines[1] and lines[1].endswith("short note…")


def test_wide_characters_count_as_two_columns() -> None:
    lines = layout((Column("id"), Column("note", wraps=True)), [("a1", "漢字" * 20)], 30)
    from failres.cli.tables import cell_width

    assert all(cell_width(line) <= 30 for line in lines) and lines[1].endswith("…")


def test_a_long_list_is_bounded_with_a_count() -> None:
    from failres.cli.tables import bounded_list

    assert bounded_list([f"src/f{n}.py" for n in range(949)]) == "src/f0.py, src/f1.py, src/f2.py … and 946 more"
    assert bounded_list(["a", "b", "c", "d"]) == "a, b, c, d"


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """A real run with a quarantine, then a repaired run: events, a lesson, a commit."""
    tmp = tmp_path_factory.mktemp("output")
    project = Project.create(tmp)
    project.configure(implementer=[{"print": "nothing"}], fixer=[{"print": "still nothing"}])
    assert run_failres(project.top, "run", str(project.plan()), "--quiet").returncode == 1
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    assert run_failres(project.top, "run", str(project.plan()), "--quiet").returncode == 0
    return project


@pytest.mark.parametrize("args", [["journal", "rr"], ["lessons", "list"], ["status"]])
def test_piped_listings_are_a_header_and_one_line_per_record(ran: Project, args: list[str]) -> None:
    people = run_failres(ran.top, *args)
    machines = json.loads(run_failres(ran.top, *args, "--json").stdout)
    assert people.returncode == 0, people.stderr
    lines = people.stdout.splitlines()
    assert len(lines) == 1 + len(machines)
    assert "['" not in people.stdout and "│" not in people.stdout


def test_the_journal_of_an_unknown_slug_is_exit_2_naming_the_known_ones(ran: Project) -> None:
    proc = run_failres(ran.top, "journal", "r")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == ['error: no task of plan "r" has run here', 'hint: did you mean "rr"?']


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_the_journal_of_an_unknown_task_is_exit_2(ran: Project, json_flag: list[str]) -> None:
    proc = run_failres(ran.top, "journal", "rr", "--task", "t9", *json_flag)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == ['error: plan "rr" has no task "t9" that ran', "hint: tasks: t1"]


def test_status_of_an_unknown_slug_is_exit_2(ran: Project) -> None:
    proc = run_failres(ran.top, "status", "nope", "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines()[0] == 'error: no task of plan "nope" has run here'


def test_an_unknown_fact_is_exit_2(ran: Project) -> None:
    proc = run_failres(ran.top, "facts", "timeline", "judge", "command", "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines()[0] == "error: no fact judge/command is recorded"


def test_lessons_show_prints_lists_as_words(ran: Project) -> None:
    [lesson] = json.loads(run_failres(ran.top, "lessons", "list", "--json").stdout)
    shown = run_failres(ran.top, "lessons", "show", lesson["id"][:8]).stdout
    assert "\nresolved_by: \n" in shown  # not landed yet: nothing, rather than "None"
    assert "['" not in shown and "None" not in shown


def test_a_fresh_repository_has_no_tasks_and_says_so(tmp_path: Path, repo: Path) -> None:
    proc = run_failres(repo, "status")
    assert (proc.returncode, proc.stdout) == (0, "no tasks have run yet\n")
