"""Help in git's style: grouped commands, examples that parse, one error style, --version."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from cli_words import example_words, parse_command_line
from conftest import ROOT, run_failres
from failres.cli.help_cmds import description
from failres.clidoc.model import SECTIONS, find_command


def test_the_overview_lists_every_command_under_its_group_in_order(tmp_path: Path) -> None:
    proc = run_failres(tmp_path, "help")
    assert proc.returncode == 0 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    headings = [line for line in lines if line in (*SECTIONS, "Other")]
    assert headings == list(SECTIONS)
    for heading in SECTIONS:
        start = lines.index(heading) + 1
        names = []
        for line in lines[start:]:
            if not line.startswith("   "):
                break
            names.append(line.split()[0])
        assert names == sorted(names), heading
        assert names, heading
    listed = {line.split()[0] for line in lines if line.startswith("   ")}
    visible = {c.name for c in description().visible_subcommands()}
    assert listed == visible


def test_no_args_prints_the_overview(tmp_path: Path) -> None:
    assert run_failres(tmp_path).stdout == run_failres(tmp_path, "help").stdout


def test_every_command_has_an_example_that_parses() -> None:
    for command in description().walk():
        if not command.path or command.hidden:
            continue
        assert command.examples, f"{command.full_name} has no example"
        for example in command.examples:
            words = example_words(example)
            assert find_command(description(), words)[0].path[: len(command.path)] == command.path, example
            parse_command_line(words)


def test_every_top_level_command_is_in_a_group() -> None:
    ungrouped = [c.name for c in description().visible_subcommands() if c.section not in SECTIONS]
    assert ungrouped == []


def test_dash_h_and_help_command_print_the_same_help_without_type_noise(tmp_path: Path) -> None:
    by_flag = run_failres(tmp_path, "lessons", "list", "-h")
    by_command = run_failres(tmp_path, "help", "lessons", "list")
    assert by_flag.returncode == by_command.returncode == 0
    assert by_flag.stdout == by_command.stdout
    text = by_flag.stdout
    assert text.startswith("usage: git failres lessons list [--slug SLUG] [--task TASK] [--fail-class CLASS] "
                           "[--unresolved] [--limit N] [--json]\n")
    for noise in ("<bool>", "<str>", "<int", "list[", "x>=", "╭", "{plan}"):
        assert noise not in text
    assert "\nexample:\n   git failres lessons list --unresolved\n" in text


def test_help_in_a_pipe_keeps_each_option_on_one_line(tmp_path: Path) -> None:
    text = run_failres(tmp_path, "decide", "--help").stdout
    assert "   --answer-json JSON  Answer with this JSON (any shape is recorded).\n" in text
    assert 'Answer a decision. Only an answer shaped {"scopeFiles": ["path", ...]} widens the task\'s scope.\n' in text


def test_usage_shows_positionals_first_and_repeatable_options() -> None:
    run = description().subcommand("run")
    assert run is not None
    assert run.usage_lines()[0].startswith("git failres run PLAN [--task TASK]... ")
    prompt = description().subcommand("prompt")
    assert prompt is not None and "[--mode implement|fix]" in prompt.usage_lines()[0]


def test_a_group_that_runs_alone_shows_both_usages(tmp_path: Path) -> None:
    text = run_failres(tmp_path, "decisions", "-h").stdout
    assert text.startswith("usage: git failres decisions [--open] [--json]\n"
                           "   or: git failres decisions COMMAND [ARGS]\n")
    assert "\ncommands:\n   propose  " in text


def test_version_flag_and_command_report_the_projects_version(tmp_path: Path) -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    flag = run_failres(tmp_path, "--version")
    command = run_failres(tmp_path, "version")
    assert flag.returncode == command.returncode == 0
    assert flag.stdout == command.stdout == f"git failres version {declared}\n"


@pytest.mark.parametrize(("args", "error", "hint"), [
    (["statu"], "error: 'statu' is not a command of 'git failres'", "hint: did you mean 'git failres status'?"),
    (["lessons", "lst"], "error: 'lst' is not a command of 'git failres lessons'",
     "hint: did you mean 'git failres lessons list'?"),
    (["hooks", "--force"], "error: 'git failres hooks' needs a command: install, uninstall",
     "hint: see 'git failres hooks -h'"),
    (["stauts", "--help"], "error: 'stauts' is not a command of 'git failres'",
     "hint: did you mean 'git failres status'?"),
    (["lessons", "lst", "-h"], "error: 'lst' is not a command of 'git failres lessons'",
     "hint: did you mean 'git failres lessons list'?"),
    (["journal"], "error: missing argument SLUG", "hint: see 'git failres journal -h'"),
    (["proposals", "reject", "abc"], "error: missing option --reason", "hint: see 'git failres proposals reject -h'"),
    (["lessons", "list", "--slu", "x"], "error: no such option: --slu",
     "hint: possible options: --slug; see 'git failres lessons list -h'"),
    (["help", "nosuch"], "error: 'nosuch' is not a command of 'git failres'", "hint: see 'git failres -h'"),
])
def test_bad_usage_is_one_error_line_and_a_hint_exit_2(tmp_path: Path, args: list[str], error: str,
                                                      hint: str) -> None:
    proc = run_failres(tmp_path, *args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [error, hint]


@pytest.mark.parametrize(("group", "listing"), [(["lessons"], ["lessons", "list"]), (["facts"], ["facts", "list"]),
                                                (["proposals"], ["proposals", "list"]),
                                                (["lessons", "--unresolved"], ["lessons", "list", "--unresolved"])])
def test_a_group_name_alone_prints_its_listing(repo: Path, group: list[str], listing: list[str]) -> None:
    alone, named = run_failres(repo, *group, "--json"), run_failres(repo, *listing, "--json")
    assert (alone.returncode, alone.stderr) == (0, "")
    assert alone.stdout == named.stdout and json.loads(alone.stdout) == []


def test_a_group_with_no_listing_prints_its_help_and_exit_0(tmp_path: Path) -> None:
    proc = run_failres(tmp_path, "hooks")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == run_failres(tmp_path, "hooks", "-h").stdout
    assert proc.stdout.startswith("usage: git failres hooks COMMAND")


def test_each_group_that_runs_a_listing_alone_says_so_in_its_help() -> None:
    from failres.cli.help_cmds import DEFAULT_COMMANDS

    for group, listing in DEFAULT_COMMANDS.items():
        doc = description().subcommand(group)
        assert doc is not None and doc.subcommand(listing) is not None
        assert f"Alone, it is {group} {listing}." in doc.description
