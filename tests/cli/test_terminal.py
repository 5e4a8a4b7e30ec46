"""A git tool's manners on a real terminal: tables fit its width (cells cut, rows never wrapped),
long output goes through the pager git would choose, and a pipe gets everything whole, unpaged."""

from __future__ import annotations

import json
import re
import os
import sys
from pathlib import Path

import pytest

from conftest import git, run_failres
from failres.cli.tables import cell_width
from project import FIXED, Project
from terminal import run_on_terminal, terminal_env

FAILRES = [sys.executable, "-m", "failres"]
BIN = str(Path(sys.executable).parent)  # where this install's `git-failres` is, for `git failres`
MARK = "sed s/^/PAGED:/"  # a pager that shows what it was given, marked, and needs no keyboard


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """A quarantine (a lesson, a long gate message), then a green run: a journal worth paging."""
    project = Project.create(tmp_path_factory.mktemp("terminal"))
    project.configure(implementer=[{"print": "nothing"}], fixer=[{"print": "still nothing"}])
    assert run_failres(project.top, "run", str(project.plan()), "--quiet").returncode == 1
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    assert run_failres(project.top, "run", str(project.plan()), "--quiet").returncode == 0
    return project


@pytest.mark.parametrize("args", [["lessons", "list"], ["journal", "rr"], ["status"], ["decisions"]])
@pytest.mark.parametrize("columns", [50, 72])
def test_tables_fit_the_terminal_one_line_per_record(ran: Project, args: list[str], columns: int) -> None:
    records = json.loads(run_failres(ran.top, *args, "--json").stdout)
    code, lines = run_on_terminal([*FAILRES, "--no-pager", *args], ran.top, terminal_env(), columns=columns)
    assert code == 0, lines
    assert all(cell_width(line) <= columns for line in lines), lines
    if args == ["status"]:
        # status ends with its totals, a sentence (on stderr) that wraps like prose.
        totals = next(i for i, line in enumerate(lines) if re.match(r"\d+ tasks? \(", line))
        lines = lines[:totals]
    if records:
        assert len(lines) == 1 + len(records), lines  # a header, then one line per record: nothing wrapped
        assert any(line.endswith("…") for line in lines[1:]), lines


def test_the_same_table_in_a_pipe_is_whole(ran: Project) -> None:
    piped = run_failres(ran.top, "journal", "rr").stdout.splitlines()
    events = json.loads(run_failres(ran.top, "journal", "rr", "--json").stdout)
    assert len(piped) == 1 + len(events) and "…" not in "".join(piped)
    messages = [e["message"].splitlines()[0] for e in events if len(e.get("message", "")) > 80]
    assert messages and all(any(m in line for line in piped) for m in messages)  # never clipped


def test_long_output_goes_through_git_pager_with_the_terminal_width(ran: Project) -> None:
    code, lines = run_on_terminal([*FAILRES, "journal", "rr"], ran.top, terminal_env(GIT_PAGER=MARK), columns=60)
    assert code == 0 and lines and all(line.startswith("PAGED:") for line in lines), lines
    assert all(cell_width(line) <= 60 + len("PAGED:") for line in lines)
    assert lines[0].startswith("PAGED:time")


@pytest.mark.parametrize(("settings", "paged"), [
    ({"GIT_PAGER": MARK, "PAGER": "cat"}, True),  # GIT_PAGER before everything
    ({"PAGER": MARK}, True),  # PAGER when git's own settings say nothing
    ({"core.pager": MARK, "PAGER": "cat"}, True),  # core.pager before PAGER
    ({"core.pager": "cat", "PAGER": MARK}, False),
    ({"GIT_PAGER": "", "PAGER": MARK}, False),  # an empty GIT_PAGER is no pager
    ({"GIT_PAGER": "cat", "PAGER": MARK}, False),
])
def test_the_pager_is_chosen_as_git_chooses_it(ran: Project, settings: dict[str, str], paged: bool,
                                               tmp_path: Path) -> None:
    env = terminal_env(**{k: v for k, v in settings.items() if "." not in k})
    if "core.pager" in settings:
        config = tmp_path / "gitconfig"
        config.write_text(f"[core]\n\tpager = {settings['core.pager']}\n")
        env["GIT_CONFIG_GLOBAL"] = str(config)
    code, lines = run_on_terminal([*FAILRES, "lessons", "list"], ran.top, env)
    assert code == 0 and lines
    assert all(line.startswith("PAGED:") for line in lines) is paged, lines
    assert any(line.startswith("PAGED:") for line in lines) is paged


@pytest.mark.parametrize("words", [["failres", "--no-pager"], ["--no-pager", "failres"], ["-P", "failres"],
                                   ["failres", "-P"]])
def test_no_pager_before_or_after_failres_under_git(ran: Project, words: list[str]) -> None:
    env = terminal_env(GIT_PAGER=MARK, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    code, lines = run_on_terminal(["git", *words, "journal", "rr"], ran.top, env)
    assert code == 0 and lines[0].startswith("time"), lines
    assert not any("PAGED:" in line for line in lines)


def test_git_failres_pages_and_a_pager_git_started_is_not_started_twice(ran: Project) -> None:
    env = terminal_env(GIT_PAGER=MARK, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    for words in (["failres"], ["-p", "failres"], ["-c", "pager.failres=true", "failres"]):
        code, lines = run_on_terminal(["git", *words, "journal", "rr"], ran.top, env, columns=70)
        assert code == 0 and lines, (words, lines)
        assert all(line.startswith("PAGED:") and not line.startswith("PAGED:PAGED:") for line in lines), lines


def test_git_failres_with_pager_failres_false_is_not_paged(ran: Project) -> None:
    env = terminal_env(GIT_PAGER=MARK, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    code, lines = run_on_terminal(["git", "-c", "pager.failres=false", "failres", "journal", "rr"], ran.top, env)
    assert code == 0 and not any("PAGED:" in line for line in lines)


def test_a_short_command_and_a_pipe_are_never_paged(ran: Project) -> None:
    code, lines = run_on_terminal([*FAILRES, "status"], ran.top, terminal_env(GIT_PAGER=MARK))
    assert code == 0 and not any("PAGED:" in line for line in lines)
    piped = run_failres(ran.top, "journal", "rr", env=terminal_env(GIT_PAGER=MARK))
    assert piped.returncode == 0 and "PAGED:" not in piped.stdout


def test_quitting_the_pager_early_is_quiet(ran: Project) -> None:
    code, lines = run_on_terminal([*FAILRES, "journal", "rr"], ran.top, terminal_env(GIT_PAGER="head -1"))
    assert code in (0, 141)  # git itself says 141 (SIGPIPE); never 1, which means "not green"
    assert len(lines) == 1 and lines[0].startswith("time"), lines


def test_a_seats_bytes_in_a_paged_diff_are_shown_inert_and_piped_exactly(tmp_path: Path) -> None:
    """`lessons show --diff` prints what a seat wrote. Piped, those are the bytes (a patch must
    apply); through a pager a person reads them, so an escape sequence is shown, not obeyed."""
    project = Project.create(tmp_path)
    hostile = "def add(a, b):\n    return a - b  # \x1b]0;pwned\x07\x1b[31mred\n"
    project.configure(implementer=[{"write": {"src/calc.py": hostile}}])
    assert run_failres(project.top, "run", str(project.plan()), "--quiet").returncode == 1
    [lesson] = json.loads(run_failres(project.top, "lessons", "list", "--json").stdout)
    args = ["lessons", "show", lesson["id"], "--diff"]
    assert "\x1b]0;pwned\x07" in run_failres(project.top, *args).stdout
    code, lines = run_on_terminal([*FAILRES, *args], project.top, terminal_env(GIT_PAGER="cat -v"), columns=200)
    shown = "\n".join(lines)
    assert code == 0 and "pwned" in shown
    assert "^[" not in shown and "^G" not in shown  # `cat -v` would show a raw ESC as ^[ and BEL as ^G
