"""A login the agent left in its dispatch home reaches the person's file only for the same account."""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path

import pytest

from conftest import git
from failres.agents.homes import HomeLink
from failres.hostside.logins import account_identity, carry_back_logins, prepare_agent_homes, same_account
from project import FIXED, Project


def codex_login(account: str, token: str) -> str:
    claims = base64.urlsafe_b64encode(json.dumps({"sub": f"user-{account}"}).encode()).decode().rstrip("=")
    return json.dumps({"OPENAI_API_KEY": None, "last_refresh": token,
                       "tokens": {"id_token": f"h.{claims}.s", "access_token": token, "refresh_token": token,
                                  "account_id": account}})


CLAUDE_LOGIN = json.dumps({"claudeAiOauth": {"accessToken": "sk-ant-oat01-old", "refreshToken": "sk-ant-ort01-old",
                                             "expiresAt": 1, "scopes": ["user:inference"]}})


def test_the_account_is_read_from_the_fields_and_the_id_token():
    assert account_identity(codex_login("acct-1", "t").encode()) == frozenset(
        {("account_id", "acct-1"), ("sub", "user-acct-1")})
    assert account_identity(CLAUDE_LOGIN.encode()) is None
    assert account_identity(b'{"tor') is None and account_identity(b"[1]") is None


def test_only_the_same_named_account_is_the_same_account():
    mine = codex_login("acct-1", "old").encode()
    assert same_account(mine, codex_login("acct-1", "rotated").encode())
    assert not same_account(mine, codex_login("acct-2", "rotated").encode())
    assert not same_account(CLAUDE_LOGIN.encode(), CLAUDE_LOGIN.replace("old", "new").encode())
    assert not same_account(None, mine)


def linked(tmp_path: Path, text: str) -> HomeLink:
    home, dispatch = tmp_path / "home", tmp_path / "ws" / "t1.dispatch" / "1"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "auth.json").write_text(text)
    (tmp_path / "ws").mkdir()
    (made,) = prepare_agent_homes({"CODEX_HOME": str(dispatch / "codex")}, {}, home, root=tmp_path / "ws")
    return made


def rewrite_by_rename(link: HomeLink, text: str) -> None:
    staged = link.target.with_name("fresh")
    staged.write_text(text)
    staged.replace(link.target)  # what a CLI that writes atomically does to the link


def test_a_login_of_the_same_account_rewritten_by_rename_is_carried_back_owner_only(tmp_path: Path):
    link = linked(tmp_path, codex_login("acct-1", "old"))
    rewrite_by_rename(link, codex_login("acct-1", "rotated"))
    assert carry_back_logins([link], root=tmp_path / "ws") == (link.source,)
    assert json.loads(link.source.read_text())["tokens"]["access_token"] == "rotated"
    assert oct(os.stat(link.source).st_mode & 0o777) == "0o600"


def test_another_accounts_login_leaves_the_persons_file_byte_identical_and_says_so(tmp_path: Path, caplog):
    link = linked(tmp_path, codex_login("acct-1", "old"))
    before = link.source.read_bytes()
    rewrite_by_rename(link, codex_login("acct-2", "theirs"))
    assert carry_back_logins([link], root=tmp_path / "ws") == ()
    assert link.source.read_bytes() == before
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "does not name the account" in caplog.records[0].getMessage()


def test_a_login_that_names_no_account_is_never_carried_back(tmp_path: Path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text(CLAUDE_LOGIN)
    ws.mkdir()
    (link,) = prepare_agent_homes({"CLAUDE_CONFIG_DIR": str(ws / "t1.dispatch/1/claude")}, {}, home, root=ws)
    rewrite_by_rename(link, CLAUDE_LOGIN.replace("old", "someone-elses"))
    assert carry_back_logins([link], root=ws) == ()
    assert link.source.read_text() == CLAUDE_LOGIN


def test_a_login_behind_a_planted_directory_link_is_not_read(tmp_path: Path):
    """The seat swaps its whole config dir for a link to a directory holding the same account's
    file: what sits behind a link is not the dispatch's, and is not carried."""
    link = linked(tmp_path, codex_login("acct-1", "old"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "auth.json").write_text(codex_login("acct-1", "planted"))
    home_dir = link.target.parent
    link.target.unlink()
    home_dir.rmdir()
    home_dir.symlink_to(elsewhere)
    assert carry_back_logins([link], root=tmp_path / "ws") == ()
    assert json.loads(link.source.read_text())["tokens"]["access_token"] == "old"


def test_a_link_failres_placed_and_left_alone_is_not_copied(tmp_path: Path):
    link = linked(tmp_path, codex_login("acct-1", "old"))
    assert carry_back_logins([link], root=tmp_path / "ws") == ()


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


@pytest.mark.usefixtures("seat_world")
def test_a_seat_that_leaves_another_accounts_login_changes_nothing_of_the_persons(project: Project, cli,
                                                                                 isolated_home: Path):
    person = isolated_home / ".codex" / "auth.json"
    person.parent.mkdir()
    person.write_text(codex_login("acct-person", "old"))
    before = person.read_bytes()
    theirs = codex_login("acct-other", "stolen")
    swap = (f"printf %s {json.dumps(theirs)!r} > \"$CODEX_HOME/fresh\" && "
            "mv -f \"$CODEX_HOME/fresh\" \"$CODEX_HOME/auth.json\"")
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}, "shell": [swap]}],
                      extra='[bindings.impl.env]\nCODEX_HOME = "{dispatch_dir}/codex"\n')
    result = project_run(cli, project)
    assert result.code == 0, result.out + result.err
    assert person.read_bytes() == before
    assert git(project.top, "show", f"failres/{project.slug}/t1:src/calc.py") == FIXED


def project_run(cli, project: Project):
    return cli(project.top, "run", str(project.plan()), "--quiet")


