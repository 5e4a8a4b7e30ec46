"""Learning without a command: `init --agent claude --session-hooks` puts a SessionEnd hook in
Claude Code's local settings (merged, idempotent, never the committed file), the hook notes
the transcript Claude Code names on its stdin and returns at once whatever stdin does, and
the next `reflect` mines the noted session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_runs import agent_binary, model_server  # noqa: F401 - model_server is a fixture
from conftest import git
from failres.agents.claude_settings import hook_command
from model_server import say
from steered_session import STEER, steered_session

PERSON_SETTINGS = {
    "permissions": {"allow": ["Bash(make:*)"]},
    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}],
              "SessionEnd": [{"hooks": [{"type": "command", "command": "echo bye >> /tmp/never"}]}]},
}


def notes(repo: Path) -> list[Path]:
    return sorted((repo / ".git" / "failres" / "sessions").glob("*.json"))


def hook_input(transcript: Path, cwd: Path, session: str = "s-hook") -> bytes:
    """The JSON object Claude Code writes to a SessionEnd hook's stdin."""
    return json.dumps({"session_id": session, "transcript_path": str(transcript), "cwd": str(cwd),
                       "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}).encode()


def run_hook(repo: Path, stdin: bytes) -> subprocess.CompletedProcess:
    """The installed hook command, run the way Claude Code runs it: through a shell, in the project."""
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(repo)}
    return subprocess.run(["/bin/sh", "-c", hook_command()], cwd=repo, input=stdin, capture_output=True,
                          env=env, timeout=60)


def init_hooks(cli, repo: Path):
    return cli(repo, "init", "--agent", "claude", "--session-hooks", "--no-completion")


def test_init_merges_the_hook_into_the_local_settings_and_keeps_the_persons_own(plain_repo: Path, cli) -> None:
    local = plain_repo / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps(PERSON_SETTINGS))
    shared = plain_repo / ".claude" / "settings.json"
    shared.write_text('{"model": "team-choice"}\n')
    out = init_hooks(cli, plain_repo)
    assert out.code == 0, out.err
    merged = json.loads(local.read_text())
    assert merged["permissions"] == PERSON_SETTINGS["permissions"]
    assert merged["hooks"]["PreToolUse"] == PERSON_SETTINGS["hooks"]["PreToolUse"]
    assert merged["hooks"]["SessionEnd"] == [*PERSON_SETTINGS["hooks"]["SessionEnd"],
                                             {"hooks": [{"type": "command", "command": hook_command(),
                                                         "timeout": 10}]}]
    assert shared.read_text() == '{"model": "team-choice"}\n'  # the committed settings are the team's
    assert "?? .claude/" not in git(plain_repo, "status", "--porcelain", "--untracked-files=all").replace(
        "?? .claude/settings.json", "")  # the machine's own file is never offered to `git add`
    written, stamp = local.read_bytes(), local.stat().st_mtime_ns
    again = init_hooks(cli, plain_repo)
    assert again.code == 0 and "already in .claude/settings.local.json" in again.out
    assert local.read_bytes() == written and local.stat().st_mtime_ns == stamp


def test_unparsable_local_settings_refuse_the_whole_init_and_stay_as_they_were(plain_repo: Path, cli) -> None:
    local = plain_repo / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_bytes(b'{"permissions": {"allow": [}\n')
    out = init_hooks(cli, plain_repo)
    assert out.code == 2
    assert out.err.splitlines()[0].startswith("error: .claude/settings.local.json is not valid JSON")
    assert local.read_bytes() == b'{"permissions": {"allow": [}\n'
    assert not (plain_repo / ".failres.toml").exists()  # nothing else of init was written either
    assert git(plain_repo, "for-each-ref", "refs/failres") == ""


def test_local_settings_that_lead_out_of_the_repository_are_refused(plain_repo: Path, tmp_path: Path, cli) -> None:
    elsewhere = tmp_path / "dotfiles-claude"
    elsewhere.mkdir()
    (plain_repo / ".claude").symlink_to(elsewhere)
    out = init_hooks(cli, plain_repo)
    assert out.code == 2 and "leads out of the repository" in out.err.splitlines()[0]
    assert list(elsewhere.iterdir()) == [] and not (plain_repo / ".failres.toml").exists()


@pytest.mark.parametrize("agent", ["codex", "aider", None])
def test_session_hooks_for_an_agent_without_one_are_refused(plain_repo: Path, cli, agent: str | None) -> None:
    out = cli(plain_repo, "init", *(["--agent", agent] if agent else []), "--session-hooks", "--no-completion")
    assert out.code == 2 and out.err.startswith("error: --session-hooks")
    assert len([line for line in out.err.splitlines() if line.startswith("error:")]) == 1
    assert not (plain_repo / ".failres.toml").exists() and not (plain_repo / ".claude").exists()


def test_the_hook_notes_the_transcript_and_reflect_mines_it_once(repo: Path, tmp_path: Path, cli) -> None:
    # Not where reflect looks by itself: only the note leads there.
    transcript = steered_session(tmp_path / "elsewhere" / "s-hook.jsonl", "s-hook")
    done = run_hook(repo, hook_input(transcript, repo))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    (note,) = notes(repo)
    assert json.loads(note.read_text())["transcript_path"] == str(transcript)
    first = cli(repo, "reflect", "--no-edits", "--json")
    assert first.code == 0, first.err
    assert [(d["trigger"], d["intervention"], d["session_id"]) for d in json.loads(first.out)] == [
        ("steer", STEER, "s-hook")]
    assert notes(repo) == []  # consumed
    assert json.loads(cli(repo, "reflect", "--no-edits", "--json").out) == []


def test_a_note_whose_transcript_is_gone_is_dropped_with_a_warning(repo: Path, tmp_path: Path, cli) -> None:
    transcript = steered_session(tmp_path / "gone" / "s.jsonl")
    assert run_hook(repo, hook_input(transcript, repo)).returncode == 0
    transcript.unlink()
    out = cli(repo, "reflect", "--no-edits", "--json")
    assert out.code == 0 and json.loads(out.out) == []
    assert "the noted session's transcript is gone" in out.err and notes(repo) == []


def test_a_note_naming_a_fifo_or_a_folder_is_dropped_and_reflect_does_not_block(repo: Path, tmp_path: Path,
                                                                                 cli) -> None:
    """A note is data like any other: one naming something that is not a transcript file
    (a FIFO that would block a reader forever, a directory) is dropped, not opened."""
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    for path in (fifo, folder):
        assert run_hook(repo, hook_input(path, repo, session=path.name)).returncode == 0
    assert len(notes(repo)) == 2
    out = cli(repo, "reflect", "--no-edits", "--json")
    assert out.code == 0 and json.loads(out.out) == [] and notes(repo) == []


@pytest.mark.parametrize("stdin", [b"", b"not json", b'{"transcript_path": "relative/x.jsonl"}', b"[1, 2]",
                                   b'{"transcript_path": 7}', b"\xff\xfe" * 1000])
def test_the_hook_ignores_input_that_names_no_transcript(repo: Path, stdin: bytes) -> None:
    done = run_hook(repo, stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert notes(repo) == []


def test_the_hook_returns_when_stdin_never_ends(repo: Path, tmp_path: Path) -> None:
    """A writer that keeps stdin open: a whole object is noted at once, half of one is given up on."""
    transcript = steered_session(tmp_path / "t" / "s.jsonl")
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(repo)}
    for stdin, noted in ((hook_input(transcript, repo), 1), (b'{"transcript_path": "/x', 1)):
        proc = subprocess.Popen([sys.executable, "-m", "failres.agents.session_hook"], cwd=repo, env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            proc.stdin.write(stdin)
            proc.stdin.flush()  # and never closed while the hook runs
            assert proc.wait(timeout=60) == 0
        finally:
            proc.stdin.close()
            if proc.poll() is None:
                proc.kill()
        assert len(notes(repo)) == noted


def test_a_claude_code_session_that_ends_is_found_by_the_next_reflect(plain_repo: Path, isolated_home: Path,
                                                                      model_server, cli) -> None:
    """The real, pinned Claude Code in print mode, its transcripts in a config dir reflect does
    not search by itself: only the hook can tell it where the session went."""
    claude = agent_binary("claude")
    assert init_hooks(cli, plain_repo).code == 0
    server = model_server([say("Hello from the scripted model.")])
    config_dir = isolated_home / "claude-config"
    config_dir.mkdir()
    (config_dir / "settings.json").write_text(json.dumps({
        "apiKeyHelper": "echo person-key",
        "env": {"ANTHROPIC_BASE_URL": server.base_url, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1"}}))
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config_dir),
           "PATH": f"{claude.parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([str(claude), "-p", "say hello", "--output-format", "json"], cwd=plain_repo, env=env,
                          capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    session_id = json.loads(done.stdout)["session_id"]
    (note,) = notes(plain_repo)
    noted = json.loads(note.read_text())
    assert noted["session_id"] == session_id and noted["hook_event_name"] == "SessionEnd"
    transcript = Path(noted["transcript_path"])
    assert transcript.is_file() and transcript.is_relative_to(config_dir)
    out = cli(plain_repo, "reflect", "--no-edits")
    assert out.code == 0, out.err
    assert out.out.startswith("mined 1 new session(s)")
    assert notes(plain_repo) == []
