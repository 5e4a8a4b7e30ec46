"""Untrusted text is shown, never obeyed: escape sequences and rich markup in file names,
records and messages print inert in every command, on the terminal and in the HTML report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failres.inert import inert, is_inert
from failres.journal import event_put, make_event
from lessons.storage.records import change_of
from lessons.storage.store import Store
from project import FIXED, Project

TITLE = "\x1b]0;pwned\x07"  # retitles a terminal window
RED = "\x1b[31m"  # colours everything after it
OWNED = f"src/{TITLE}evil.py"
COLOURED = f"src/{RED}red.py"
MARKUP = "src/[bold red]loud[/bold red].py"


def obeyable(text: str) -> list[str]:
    """The characters in `text` a terminal would act on (newlines and tabs are fine)."""
    return sorted({c for c in text if not is_inert(c, multiline=True)})


# ── the function ────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("raw", "shown"), [
    (TITLE, "\\x1b]0;pwned\\x07"),
    (RED + "x", "\\x1b[31mx"),
    ("a\x00b", "a\\x00b"),
    ("over\rwrite", "over\\x0dwrite"),
    ("csi\x9b2J", "csi\\x9b2J"),
    ("del\x7f", "del\\x7f"),
    ("abc\u202edcb.py", "abc\\u202edcb.py"),
    ("line\nbreak\ttab", "line\\x0abreak\\x09tab"),
])
def test_inert_escapes_every_control_a_terminal_obeys(raw: str, shown: str) -> None:
    assert inert(raw) == shown


def test_inert_keeps_line_breaks_and_tabs_of_a_block_but_not_carriage_returns() -> None:
    assert inert("one\n\ttwo\r\x1b[2J", multiline=True) == "one\n\ttwo\\x0d\\x1b[2J"


def test_inert_leaves_ordinary_text_including_non_ascii_unchanged() -> None:
    text = "Fix the date parser — naïve ✓ [bold] {worktree} C:\\temp"
    assert inert(text) == text and inert(text, multiline=True) == text


# ── through the real commands ───────────────────────────────────────────────


@pytest.fixture
def hostile(tmp_path: Path, cli) -> Project:
    """A run whose seat wrote out-of-scope files named with escape sequences and markup, twice:
    quarantined, with a decision listing the names."""
    project = Project.create(tmp_path)
    violate = {"write": {"src/calc.py": FIXED, OWNED: "x\n", COLOURED: "x\n", MARKUP: "x\n"}}
    project.configure(implementer=[violate, violate])
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 1, result.err
    project.run_output = result.out + result.err  # type: ignore[attr-defined]
    return project


def test_a_run_that_quarantines_on_hostile_file_names_prints_them_inert(hostile: Project) -> None:
    shown = hostile.run_output  # type: ignore[attr-defined]
    assert "fixer-scope-violation" in shown
    assert obeyable(shown) == []
    assert "\\x1b" in shown


@pytest.mark.parametrize("args", [
    ("journal", "rr"),
    ("status",),
    ("status", "rr"),
    ("decisions",),
    ("decisions", "--open"),
    ("lessons", "list"),
    ("report",),
])
def test_every_reading_command_shows_hostile_names_inert(hostile: Project, cli, args: tuple[str, ...]) -> None:
    result = cli(hostile.top, *args)
    assert result.code == 0, result.err
    assert obeyable(result.out + result.err) == [], args


def test_decisions_show_each_hostile_name_escaped_and_markup_as_written(hostile: Project, cli) -> None:
    out = cli(hostile.top, "decisions").out
    # The table folds a long cell over lines: read it without the layout.
    flat = "".join(c for c in out if not c.isspace() and c not in "│┃")
    assert "\\x1b]0;pwned\\x07evil.py" in flat
    assert "\\x1b[31mred.py" in flat
    assert "[boldred]loud[/boldred].py" in flat


def test_lessons_show_prints_the_hostile_message_inert(hostile: Project, cli) -> None:
    listed = json.loads(cli(hostile.top, "lessons", "list", "--json").out)
    shown = cli(hostile.top, "lessons", "show", listed[0]["id"])
    assert shown.code == 0 and "message:" in shown.out
    assert obeyable(shown.out) == []
    assert "\\x1b[31mred.py" in shown.out


def test_rich_markup_in_a_record_prints_as_written(tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[])
    line = {"ts": "2026-01-02T03:04:05Z", "slug": "rr", "task": "t1", "failClass": "unknown",
            "message": "[red]x[/red] and :warning: stay as written"}
    source = tmp_path / "lessons.jsonl"
    source.write_text(json.dumps(line) + "\n")
    assert cli(project.top, "lessons", "import", str(source)).code == 0
    lesson = json.loads(cli(project.top, "lessons", "list", "--json").out)[0]
    shown = cli(project.top, "lessons", "show", lesson["id"]).out
    assert "message: [red]x[/red] and :warning: stay as written" in shown


def test_json_output_carries_the_names_exactly_with_controls_escaped(hostile: Project, cli) -> None:
    out = cli(hostile.top, "decisions", "--json").out
    assert obeyable(out) == []
    files = json.loads(out)[0]["files"]
    assert OWNED in files and COLOURED in files and MARKUP in files


def test_the_html_report_holds_no_control_character(hostile: Project, cli, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    assert cli(hostile.top, "report", "--html", str(page)).code == 0
    html = page.read_text(encoding="utf-8")
    assert obeyable(html) == []


def test_journal_records_from_another_replica_print_inert_in_status_and_journal(tmp_path: Path, cli) -> None:
    """A store joined by sync holds records another machine (or a hostile one) wrote."""
    project = Project.create(tmp_path)
    project.configure(implementer=[])
    event = make_event("quarantined", "rr", f"t1{RED}", failClass=f"unknown{TITLE}", signature="x",
                       message=f"{RED}boom", intHead="0" * 40, lesson="0" * 16)
    Store(project.top).commit(change_of([event_put(event)]), "a record from elsewhere")
    for args in (("status",), ("status", "rr"), ("journal", "rr"), ("journal", "rr", "--task", f"t1{RED}")):
        result = cli(project.top, *args)
        assert result.code == 0, result.err
        assert obeyable(result.out + result.err) == [], args
        assert "\\x1b[31m" in result.out, args


def test_imported_lessons_print_inert_in_lessons_and_the_report(tmp_path: Path, cli) -> None:
    """Records are not only ours: an import brings text no seat of ours wrote."""
    project = Project.create(tmp_path)
    project.configure(implementer=[])
    line = {"ts": "2026-01-02T03:04:05Z", "slug": "rr", "task": "t1", "failClass": "unknown",
            "message": f"{RED}boom{TITLE} [link=file:///etc/passwd]click[/link]\x9b2J"}
    source = tmp_path / "lessons.jsonl"
    source.write_text(json.dumps(line) + "\n")
    assert cli(project.top, "lessons", "import", str(source)).code == 0
    for args in (("lessons", "list"), ("lessons", "relevant", "--fail-class", "unknown"), ("report",)):
        result = cli(project.top, *args)
        assert result.code == 0, result.err
        assert obeyable(result.out + result.err) == [], args


def test_an_error_quoting_hostile_input_is_one_inert_line(tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    plan = tmp_path / f"plan{RED}.toml"
    result = cli(project.top, "run", str(plan))
    assert result.code == 2
    assert obeyable(result.err) == []
    assert result.err.startswith("error: ") and "\\x1b[31m" in result.err


def test_json_output_escapes_what_json_itself_leaves_raw_and_reads_back_exactly(tmp_path: Path, cli) -> None:
    """JSON escapes C0 itself; DEL, the C1 range and bidirectional controls it writes as they are."""
    project = Project.create(tmp_path)
    project.configure(implementer=[])
    message = "csi\x9b2J del\x7f flip\u202egnp.exe sep\u2028end"
    line = {"ts": "2026-01-02T03:04:05Z", "slug": "rr", "task": "t1", "failClass": "unknown", "message": message}
    source = tmp_path / "lessons.jsonl"
    source.write_text(json.dumps(line) + "\n")
    assert cli(project.top, "lessons", "import", str(source)).code == 0
    out = cli(project.top, "lessons", "list", "--json").out
    assert obeyable(out) == [] and "\u2028" not in out
    assert json.loads(out)[0]["message"] == message


def test_logs_show_the_prompt_and_the_seat_s_output_inert(tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[{"print": f"{RED}progress{TITLE}\x9b2J done", "exit": 1}])
    plan = tmp_path / "escaped-plan.toml"
    plan.write_text('slug = "rr"\n[[tasks]]\nid = "t1"\nprompt = "Fix it \\u001b[31mnow\\u001b[0m"\n'
                    'files = ["src/calc.py"]\n')
    assert cli(project.top, "run", str(plan), "--quiet").code == 1
    shown = cli(project.top, "logs", "rr", "t1")
    assert shown.code == 0, shown.err
    assert "progress" in shown.out and "Fix it \\x1b[31mnow" in shown.out
    assert obeyable(shown.out) == []
