"""The README's examples are the tool's: every failres command it shows parses, and the
shell examples run, in the demo's repository, without a usage error or an internal one."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cli_words import commands_in, parse_command_line
from conftest import ROOT, git, run_failres
from failres.cli.help_cmds import description
from failres.clidoc.model import find_command

README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```bash\n(.*?)```", README, re.S)
# Placeholders the prose uses for "a value of your own".
PLACEHOLDERS = {"SLUG": "rel", "TASK": "t1", "ID": "3f9a2b", "C": "gate-not-green-after-fixer", "DIR": "/tmp/x",
                "FILE...": "a.jsonl", "[REMOTE]": "origin", "...": "status"}

# Examples that need something the demo repository does not have; each still has to parse.
NOT_RUN = {
    ("run", "plan.toml", "--task", "t1", "--patch", "approved.diff"): "needs an approved patch file",
    ("decide", "3f9a2b", "--scope-files", "src/util/dates.py"): "the demo's only decision is answered already",
    ("decide", "3f9a2b", "--answer-json", '{"note": "no"}'): "the demo's only decision is answered already",
    ("decisions", "propose", "3f9a2b"): "the demo configures no resolver seat",
    ("decide", "3f9a2b", "--accept-proposal"): "the demo configures no resolver, so no proposal waits "
                                                "(tests/decisions/test_decisions.py accepts one)",
    ("cancel", "release-readiness", "t1"): "nothing runs in the demo's repository to cancel "
                                           "(tests/containment/test_containment.py cancels a live run)",
    ("reflect", "~/.claude/projects/my-repo"): "needs Claude Code's transcripts of a real project",
    ("proposals", "show", "ID"): "the demo has no proposal",
    ("proposals", "accept", "ID"): "the demo has no proposal",
    ("proposals", "accept", "ID", "--only", "RULE_ID"): "the demo has no proposal",
    ("--help",): "opens the manual page with man (tests/clidoc/test_manpage.py runs it from a fresh venv)",
    ("init", "--agent", "claude"): "the demo's repository is initialised already (tests/cli/test_first_run.py and "
                                   "the agent recipes' tests run init)",
    ("demo",): "tests/demo/test_demo.py runs the demo",
    ("init", "--agent", "claude", "--session-hooks"): "the demo's repository is initialised already "
                                                      "(tests/agents/test_session_hooks.py runs it, and a real "
                                                      "Claude Code session that ends)",
    ("run", "plan.toml", "--remote", "origin", "--jobs", "2"): "tests/remote/test_remote_run.py runs three runners of a "
                                                               "plan on one bare remote",
}


def block_commands() -> list[list[str]]:
    return [words for block in BLOCKS for line in block.splitlines() for words in commands_in(line)]


def inline_commands() -> list[list[str]]:
    found = []
    for span in re.findall(r"`(git failres [^`]+)`", README):
        for words in commands_in(span):
            found.append([PLACEHOLDERS.get(word, word) for word in words])
    return found


def test_the_readme_shows_the_commands_people_need() -> None:
    shown = {tuple(words[:1]) for words in block_commands()}
    for command in ("run", "status", "journal", "decisions", "decide", "learn", "report", "gc", "help", "sync"):
        assert (command,) in shown


@pytest.mark.parametrize("words", block_commands() + inline_commands(), ids=" ".join)
def test_every_failres_command_in_the_readme_parses(words: list[str]) -> None:
    if set(words) & {"-h", "--help", "--version"}:
        assert not find_command(description(), [w for w in words if not w.startswith("-")])[1]
        return
    parse_command_line(words)


@pytest.fixture(scope="module")
def readme_repo(kept_demo: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A copy of the demo's repository with the remotes the README syncs with, and what the
    README's placeholders stand for there."""
    root = tmp_path_factory.mktemp("readme") / "repo"
    shutil.copytree(kept_demo, root, symlinks=True)
    for remote in ("origin", "backup"):
        bare = root.parent / f"{remote}.git"
        git(root.parent, "init", "-q", "--bare", str(bare))
        git(root, "remote", "add", remote, str(bare))
    values = {"release-readiness": "demo", "plan.toml": ".failres-demo/plan.toml"}
    return root, values


RUNNABLE = [words for words in block_commands() if tuple(words) not in NOT_RUN]


@pytest.mark.parametrize("words", RUNNABLE, ids=" ".join)
def test_every_readme_example_runs_in_the_demo_repository(readme_repo, words: list[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    root, values = readme_repo
    monkeypatch.setenv("SHELL", "/bin/bash")  # a person's terminal names their shell; CI's may not
    args = [values.get(word, word) for word in words]
    if "<commit>" in args:
        args[args.index("<commit>")] = git(root, "rev-parse", "refs/failres/store").strip()
    proc = run_failres(root, *args)
    assert proc.returncode in (0, 1), f"git failres {' '.join(args)}: {proc.returncode}\n{proc.stderr[-1500:]}"
    assert "error:" not in proc.stderr and "Traceback" not in proc.stderr


def test_the_readme_says_why_each_example_it_does_not_run_is_not_run() -> None:
    shown = {tuple(words) for words in block_commands()}
    assert set(NOT_RUN) <= shown, sorted(set(NOT_RUN) - shown)  # no stale exemption
