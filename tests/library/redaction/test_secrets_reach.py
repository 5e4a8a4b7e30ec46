"""Secrets that used to reach git around redaction: cut by a clip before redaction saw
them, carried in a task title, or pushed with a snapshot to a remote."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import git
from lessons.redaction.redact import is_secret_bearing_path, redacted_head, redacted_tail, without_cut_word
from project import Project

HEAD_CUT = "ghp_R4nd0mT0k3nV4lu3Zq8Wn2Lk5Pd7Xc9Vb1Mj4"  # its first 19 characters fit a 200-character summary
TAIL_CUT = "ghp_Hs7Kd2Lq9Wm4Xn8Bv3Cz6Tr1Yp5Gf0Je2Ua7"  # a 2000-character tail starts inside it


def leaky_gate(tmp_path: Path) -> Path:
    """A red gate whose output puts one token across the tail window's start and another
    across the summary's cut of its last line."""
    script = tmp_path / "leaky_gate.py"
    lines = ["collecting ...", "pad " + "p" * 400]
    last = "x" * 180 + " " + HEAD_CUT + " in the failing request"
    body = "\n".join(lines) + "\n"
    # Everything after the first 20 characters of TAIL_CUT is inside the last 2000 characters.
    after = "\n" + "y" * (2000 - (len(TAIL_CUT) - 20) - len(last) - 2) + "\n" + last + "\n"
    output = body + "token " + TAIL_CUT + after
    script.write_text(f"import sys\nsys.stdout.write({output!r})\nsys.exit(1)\n")
    return script


def test_a_token_cut_by_the_summary_or_the_tail_window_leaves_no_part_of_itself_in_git(
        tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    gate = leaky_gate(tmp_path)
    project.configure(implementer=[{"print": "nothing to do"}],
                      extra=f'[gates.leaky]\ncommand = {json.dumps([sys.executable, str(gate)])}\n')
    plan = tmp_path / "leaky-plan.toml"
    plan.write_text('slug = "rr"\n[[tasks]]\nid = "t1"\nprompt = "p"\nfiles = ["src/calc.py"]\ngate = "leaky"\n')
    assert cli(project.top, "run", str(plan), "--quiet").code == 1
    held = git(project.top, "log", "-p", "refs/failres/store")
    assert "still red" in held or "quarantined" in held  # the message really reached the store
    for token in (HEAD_CUT, TAIL_CUT):
        for start in range(0, len(token) - 12):
            assert token[start:start + 12] not in held, token[start:start + 12]


def test_redacting_before_clipping_never_leaves_a_fragment() -> None:
    text = "x" * 180 + " " + HEAD_CUT + " tail"
    assert "ghp_R4nd0m" not in redacted_head(text, 200)
    assert "T0k3n" not in redacted_tail("start " + HEAD_CUT + "\n" + "z" * 30, 50)


@pytest.mark.parametrize(("text", "cut_at", "kept"), [
    ("done ghp_R4nd0mT0k3n", "end", "done "),
    ("done\n", "end", "done\n"),
    ("Zq8Wn2Lk5 more output", "start", " more output"),
    ("\nmore", "start", "\nmore"),
    ("x" * 5000, "end", "x" * 5000),  # a 5,000-character run is data, not a cut credential
])
def test_the_word_a_cut_went_through_is_left_out(text: str, cut_at: str, kept: str) -> None:
    assert without_cut_word(text, cut_at=cut_at) == kept


def test_a_task_title_holding_a_token_lands_in_the_merge_message_redacted(tmp_path: Path, cli) -> None:
    from project import FIXED

    project = Project.create(tmp_path)
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    plan = tmp_path / "titled.toml"
    plan.write_text('slug = "rr"\n[[tasks]]\nid = "t1"\n'
                    f'title = "Rotate the deploy key (was {HEAD_CUT})"\nprompt = "p"\nfiles = ["src/calc.py"]\n')
    assert cli(project.top, "run", str(plan), "--quiet").code == 0
    landed = cli(project.top, "land", "rr", "t1")
    assert landed.code == 0, landed.err
    message = git(project.top, "log", "-1", "--format=%B", "main")
    assert "Rotate the deploy key" in message and HEAD_CUT not in message
    assert HEAD_CUT not in git(project.top, "log", "-p", "refs/failres/store")


@pytest.mark.parametrize("path", [".env", ".env.local", "config/.env.production", ".envrc", "certs/server.pem",
                                  "tls.key", "id_rsa", "keys/id_ed25519", ".netrc", ".npmrc", ".pypirc",
                                  ".git-credentials", ".aws/credentials", "deploy.p12", "prod.tfvars"])
def test_a_file_that_holds_credentials_by_its_nature_is_secret_bearing(path: str) -> None:
    assert is_secret_bearing_path(path)


@pytest.mark.parametrize("path", ["src/main.py", "id_rsa.pub", "src/id_mapping.py", "environment.py", "keys.py",
                                  "README.md", ".ssh/known_hosts"])
def test_an_ordinary_file_is_not_secret_bearing(path: str) -> None:
    assert not is_secret_bearing_path(path)


def test_sync_keeps_snapshots_home_unless_configured_to_send_them(tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[{"print": "nothing"}])
    assert cli(project.top, "run", str(project.plan()), "--quiet").code == 1  # a quarantine: a snapshot
    assert git(project.top, "for-each-ref", "refs/failres/snapshots")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(project.top, "remote", "add", "origin", str(bare))
    done = cli(project.top, "sync", "--json")
    assert done.code == 0, done.err
    assert json.loads(done.out)["snapshots"]["pushed"] == 0
    assert git(bare, "for-each-ref", "refs/failres/store") and not git(bare, "for-each-ref", "refs/failres/snapshots")
    config = project.top / ".failres.toml"
    config.write_text(config.read_text() + "[sync]\nsnapshots = true\n")
    again = cli(project.top, "sync", "--json")
    assert again.code == 0 and json.loads(again.out)["snapshots"]["pushed"] >= 1
    assert git(bare, "for-each-ref", "refs/failres/snapshots")
