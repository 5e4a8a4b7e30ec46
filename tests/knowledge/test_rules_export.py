"""`git failres rules export` and `[learning] export`: the rules in force reach the file the
person's own agent reads, as a working-tree change only inside failres's block, refused
(exit 2, the file unchanged) where the block or the file is not failres's to write."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import git
from lessons.rulebook.managed_block import BEGIN_MARKER, END_MARKER
from lessons.storage.store import Change, Store
from steered_session import STEER, steered_session

BEGIN, END = BEGIN_MARKER.encode(), END_MARKER.encode()


def put_user_rules(repo: Path, *texts: str) -> None:
    body = "".join(f"[[rules]]\ntext = {json.dumps(t)}\n" for t in texts)
    Store(repo).commit(Change({"rules/behavior.user.toml": body.encode()}), "failres: a person's rules")


def export(cli, repo: Path, *args: str) -> dict:
    out = cli(repo, "rules", "export", *args, "--json")
    assert out.code == 0, out.err
    return json.loads(out.out)


def heads(repo: Path) -> tuple[str, str, str]:
    """HEAD, the index's tree and the store tip: what an export must never move."""
    return (git(repo, "rev-parse", "HEAD"), git(repo, "write-tree"), git(repo, "rev-parse", "refs/failres/store"))


def test_export_writes_the_block_and_a_second_export_writes_nothing(repo: Path, cli) -> None:
    put_user_rules(repo, "Run the tests before you finish.")
    before = heads(repo)
    first = export(cli, repo)
    target = repo / "AGENTS.md"
    assert (first["path"], first["chosenBy"], first["changed"], first["created"], first["rules"]) == \
        ("AGENTS.md", "default", True, True, 1)
    data = target.read_bytes()
    assert data.startswith(BEGIN + b"\n") and data.endswith(END + b"\n")
    assert b"- Run the tests before you finish.\n" in data
    assert heads(repo) == before  # a working-tree change for the person to commit, nothing more
    assert git(repo, "status", "--porcelain") == "?? AGENTS.md\n"
    stamp = target.stat().st_mtime_ns
    os.utime(target, ns=(stamp - 10**9, stamp - 10**9))
    second = export(cli, repo)
    assert second["changed"] is False
    assert target.read_bytes() == data and target.stat().st_mtime_ns == stamp - 10**9


def test_a_hand_edit_outside_the_block_is_kept_byte_for_byte(repo: Path, cli) -> None:
    put_user_rules(repo, "First rule.")
    target = repo / "AGENTS.md"
    target.write_bytes(b"# Agents\r\n\r\nBuild with make.\r\n")
    export(cli, repo)
    exported = target.read_bytes()
    start, end = exported.index(BEGIN), exported.index(END) + len(END)
    edited = b"# Agents, edited\r\n" + exported[len(b"# Agents\r\n"):start] + exported[start:end] + \
        b"\r\nA note after the block, no final newline"
    target.write_bytes(edited)
    git(repo, "add", "AGENTS.md")  # the person's edit, staged: the diff below is the export's alone
    put_user_rules(repo, "First rule.", "Second rule.")
    assert export(cli, repo)["changed"] is True
    again = target.read_bytes()
    assert again[:again.index(BEGIN)] == edited[:edited.index(BEGIN)]
    assert again[again.index(END):] == edited[edited.index(END):]
    diff = git(repo, "diff", "-U0", "AGENTS.md").splitlines()
    changed = [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed == ["+- Second rule."] and b"\n- Second rule.\r\n" in again  # (the CRLF read as text)


def test_an_empty_rule_set_and_no_file_writes_nothing(repo: Path, cli) -> None:
    result = export(cli, repo)
    assert (result["changed"], result["rules"]) == (False, 0)
    assert not (repo / "AGENTS.md").exists()
    plain = cli(repo, "rules", "export")
    assert plain.code == 0 and "no rules to export; nothing written" in plain.out


def test_the_agent_in_the_configuration_chooses_the_file(repo: Path, cli) -> None:
    put_user_rules(repo, "A rule.")
    (repo / ".failres.toml").write_text('[bindings.claude]\ncommand = ["claude", "-p"]\n\n'
                                        '[seats]\nimplementer = "claude"\n')
    assert export(cli, repo)["path"] == "CLAUDE.md" and (repo / "CLAUDE.md").is_file()
    (repo / ".failres.toml").write_text('[learning]\nexport = "CONVENTIONS.md"\n')
    assert export(cli, repo)["chosenBy"] == "learning.export" and (repo / "CONVENTIONS.md").is_file()
    (repo / "docs").mkdir()
    assert export(cli, repo / "docs", "--to", "AGENTS.md")["path"] == "docs/AGENTS.md"


@pytest.mark.parametrize("value", ['"README.md"', "true", '"agents.md"'])
def test_a_bad_export_setting_is_one_line_and_exit_2(repo: Path, cli, value: str) -> None:
    (repo / ".failres.toml").write_text(f"[learning]\nexport = {value}\n")
    out = cli(repo, "rules", "export")
    assert out.code == 2
    assert out.err.splitlines()[0].startswith(f"error: {repo / '.failres.toml'}: learning.export: ")
    assert not (repo / "AGENTS.md").exists()


def test_a_link_out_of_the_repository_is_refused_and_its_target_untouched(repo: Path, tmp_path: Path, cli) -> None:
    put_user_rules(repo, "A rule.")
    shared = tmp_path / "dotfiles" / "AGENTS.md"
    shared.parent.mkdir()
    shared.write_bytes(b"my shared notes\n")
    (repo / "AGENTS.md").symlink_to(shared)
    out = cli(repo, "rules", "export")
    assert out.code == 2 and out.err.startswith("error: AGENTS.md is a symbolic link out of the repository")
    assert shared.read_bytes() == b"my shared notes\n" and (repo / "AGENTS.md").is_symlink()
    outside = cli(repo, "rules", "export", "--to", str(shared))
    assert outside.code == 2 and "is outside the repository" in outside.err
    assert shared.read_bytes() == b"my shared notes\n"
    assert cli(repo, "rules", "export", "--to", ".git/AGENTS.md").code == 2
    assert not (repo / ".git" / "AGENTS.md").exists()


def test_a_link_inside_the_repository_is_followed_and_stays_a_link(repo: Path, cli) -> None:
    put_user_rules(repo, "A rule.")
    (repo / "docs").mkdir()
    (repo / "docs" / "agents.md").write_bytes(b"docs\n")
    (repo / "CLAUDE.md").symlink_to("docs/agents.md")
    export(cli, repo, "--to", "CLAUDE.md")
    assert (repo / "CLAUDE.md").is_symlink()
    assert (repo / "docs" / "agents.md").read_bytes().startswith(b"docs\n\n" + BEGIN)


def test_two_begin_markers_are_refused_and_the_file_is_unchanged(repo: Path, cli) -> None:
    put_user_rules(repo, "A rule.")
    person = b"x\n" + BEGIN + b"\n" + BEGIN + b"\n" + END + b"\n"
    (repo / "AGENTS.md").write_bytes(person)
    out = cli(repo, "rules", "export")
    assert out.code == 2
    assert out.err.splitlines()[0] == "error: AGENTS.md has 2 failres rules begin markers (lines 2 and 3)"
    assert (repo / "AGENTS.md").read_bytes() == person
    assert sorted(p.name for p in repo.iterdir()) == [".git", "AGENTS.md", "README.md"]  # no temp file left


def a_pending_proposal(repo: Path, tmp_path: Path, cli) -> str:
    """Reflect a session where a person steered, and learn: one pending proposal."""
    session = steered_session(tmp_path / "t" / "s.jsonl")
    assert cli(repo, "reflect", str(session), "--no-edits").code == 0
    out = cli(repo, "learn", "--json")
    assert out.code == 0, out.err
    return json.loads(out.out)[0]["proposal"]["id"]


def test_accepting_a_proposal_exports_at_once_when_the_configuration_says_so(repo: Path, tmp_path: Path,
                                                                             cli) -> None:
    (repo / ".failres.toml").write_text('[learning]\nexport = "AGENTS.md"\n')
    pid = a_pending_proposal(repo, tmp_path, cli)
    out = cli(repo, "proposals", "accept", pid, "--json")
    assert out.code == 0, out.err
    exported = json.loads(out.out)["export"]
    assert (exported["path"], exported["changed"], exported["rules"]) == ("AGENTS.md", True, 1)
    assert STEER in (repo / "AGENTS.md").read_text()


def test_an_acceptance_whose_export_would_be_refused_is_refused_whole(repo: Path, tmp_path: Path, cli) -> None:
    (repo / ".failres.toml").write_text('[learning]\nexport = "AGENTS.md"\n')
    pid = a_pending_proposal(repo, tmp_path, cli)
    person = BEGIN + b"\n" + BEGIN + b"\n" + END + b"\n"
    (repo / "AGENTS.md").write_bytes(person)
    tip = git(repo, "rev-parse", "refs/failres/store")
    out = cli(repo, "proposals", "accept", pid)
    assert out.code == 2 and "AGENTS.md has 2 failres rules begin markers" in out.err
    assert git(repo, "rev-parse", "refs/failres/store") == tip  # the proposal still waits
    assert (repo / "AGENTS.md").read_bytes() == person
