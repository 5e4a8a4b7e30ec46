"""The agent author's and plan writer's contract, as the manual page and the README write it, is
what the code does: each SCOPE-REQUEST example is a request the parser reads, the plan example is
a plan the loader takes, the seat's variables are the ones a seat gets, the FILES are where
failres keeps things."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT
from failres.cli.help_cmds import description
from failres.clidoc.contract import PLAN_EXAMPLE, SCOPE_REQUEST_EXAMPLES, SEATS
from failres.clidoc.roff import render_manpage

README = (ROOT / "README.md").read_text()


def page() -> str:
    return render_manpage(description(), version="1", date="2026-12-01")


def readme_section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end]


@pytest.mark.parametrize("line", SCOPE_REQUEST_EXAMPLES)
def test_each_documented_scope_request_is_one_the_parser_reads(line: str) -> None:
    from failres.engine.taxonomy import parse_scope_requests

    [request] = parse_scope_requests(f"some prose\n{line}\nmore prose")
    assert request.file in line and not request.file.startswith(('"', "'"))
    assert request.reason and request.reason in line


def test_the_readme_shows_the_scope_request_line_and_it_parses() -> None:
    from failres.engine.taxonomy import parse_scope_requests

    section = readme_section("Writing your own seat")
    lines = [line.strip() for line in section.splitlines() if line.strip().startswith("SCOPE-REQUEST:")]
    assert lines
    for line in lines:
        assert len(parse_scope_requests(line)) == 1, line


def test_the_documented_plan_is_a_plan_the_loader_takes(tmp_path: Path) -> None:
    from failres.config.loading import parse_config
    from failres.engine.plan import parse_plan

    config = parse_config('[gates.tests]\ncommand = ["true"]\n[bindings.a]\ncommand = ["true"]\n'
                          '[seats]\nimplementer = "a"\n', "test.toml")
    plan = parse_plan(PLAN_EXAMPLE, tmp_path / "plan.toml", config)
    assert [(t.id, t.gate, t.after) for t in plan.tasks] == [("t1", "tests", ()), ("t2", "tests", ("t1",))]
    assert "[[tasks]]" in page() and 'after = ["t1"]' in page()


def test_every_variable_a_seat_gets_is_documented_in_the_page_and_the_readme() -> None:
    from failres.engine.seats import seat_env

    values = {"slug": "s", "task": "t", "mode": "fix", "attempt": "2", "worktree": "/w", "prompt_file": "/p",
              "dispatch_dir": "/d"}
    given = {name for name in seat_env(values, {}) if name.startswith("FAILRES_")}
    documented = {name for name, _ in SEATS.terms}
    assert given == documented
    section = readme_section("Writing your own seat")
    assert all(f"`{name}`" in section for name in given)


def test_the_files_section_says_where_workspaces_really_are(tmp_path: Path, monkeypatch) -> None:
    from failres.gitops.workspace import default_root

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    root = default_root(tmp_path / "repo" / ".git", tmp_path / "repo")
    assert root.parent == tmp_path / ".cache" / "failres" / "workspaces"
    text = page()
    files = text[text.index('.SH "FILES"'):text.index('.SH "ENVIRONMENT"')]
    assert "~/.cache/failres/workspaces/" in files.replace("\\-", "-")
    assert not re.search(r"GIT_DIR/failres/\S*\n.*[Ww]orkspaces,", files)  # the old claim


def test_the_readme_names_the_exit_codes_a_seat_and_failres_have() -> None:
    section = readme_section("Writing your own seat")
    for words in ("seat-crashed", "seat-timeout", "wrapper-engine-down", "exit 0", "[engine_down]"):
        assert words in section, words
