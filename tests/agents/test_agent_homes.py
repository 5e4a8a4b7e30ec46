"""Per-dispatch agent homes: the person's login and settings linked in, transcripts looked for where each agent writes them.

A refreshed login carried back is `tests/hostside/test_logins.py`."""

from __future__ import annotations

from pathlib import Path

from failres.agents.homes import HomeLink, TranscriptPlace, home_links, transcript_places
from failres.hostside.logins import prepare_agent_homes
from failres.hostside.transcripts import find_transcripts

HOME = Path("/home/person")
DISPATCH = Path("/cache/failres/dispatch/7")


def test_a_moved_claude_config_dir_gets_the_persons_credentials_and_settings():
    links = home_links({"CLAUDE_CONFIG_DIR": f"{DISPATCH}/claude"}, {}, HOME)
    assert links == (
        HomeLink(HOME / ".claude/.credentials.json", DISPATCH / "claude/.credentials.json", login=True),
        HomeLink(HOME / ".claude/settings.json", DISPATCH / "claude/settings.json", login=False),
    )


def test_a_moved_codex_home_gets_the_persons_auth_and_config_from_their_own_codex_home():
    links = home_links({"CODEX_HOME": f"{DISPATCH}/codex"}, {"CODEX_HOME": "/srv/codex"}, HOME)
    assert links == (
        HomeLink(Path("/srv/codex/auth.json"), DISPATCH / "codex/auth.json", login=True),
        HomeLink(Path("/srv/codex/config.toml"), DISPATCH / "codex/config.toml", login=False),
    )


def test_a_seat_that_keeps_the_persons_own_config_dir_needs_no_links():
    assert home_links({"CLAUDE_CONFIG_DIR": str(HOME / ".claude")}, {}, HOME) == ()
    assert home_links({"CODEX_HOME": "/srv/codex"}, {"CODEX_HOME": "/srv/codex"}, HOME) == ()
    assert home_links({"PATH": "/usr/bin"}, {}, HOME) == ()


def test_transcripts_are_looked_for_where_each_agent_writes_them():
    argv = ["aider", "--chat-history-file", f"{DISPATCH}/aider.chat.history.md",
            "--llm-history-file", f"{DISPATCH}/aider.llm.history"]
    env = {"CLAUDE_CONFIG_DIR": f"{DISPATCH}/claude", "CODEX_HOME": f"{DISPATCH}/codex"}
    assert transcript_places(argv, env) == (
        TranscriptPlace("claude", DISPATCH / "claude", "projects/*/*.jsonl"),
        TranscriptPlace("codex", DISPATCH / "codex", "sessions/*/*/*/rollout-*.jsonl"),
        TranscriptPlace("aider", DISPATCH, "aider.chat.history.md"),
        TranscriptPlace("aider", DISPATCH, "aider.llm.history"),
    )


def test_preparing_links_the_files_the_person_has_and_creates_the_homes(tmp_path: Path):
    home, dispatch = tmp_path / "home", tmp_path / "dispatch"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "auth.json").write_text('{"OPENAI_API_KEY": "k"}')
    env = {"CODEX_HOME": str(dispatch / "codex"), "CLAUDE_CONFIG_DIR": str(dispatch / "claude")}

    made = prepare_agent_homes(env, {}, home)

    assert [link.target for link in made] == [dispatch / "codex" / "auth.json"]
    assert (dispatch / "codex" / "auth.json").readlink() == home / ".codex" / "auth.json"
    assert (dispatch / "claude").is_dir() and list((dispatch / "claude").iterdir()) == []
    assert not (dispatch / "codex" / "config.toml").exists()


def test_preparing_twice_keeps_what_the_first_time_made(tmp_path: Path):
    home, dispatch = tmp_path / "home", tmp_path / "dispatch"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text("{}")
    env = {"CLAUDE_CONFIG_DIR": str(dispatch / "claude")}
    assert len(prepare_agent_homes(env, {}, home)) == 1
    assert prepare_agent_homes(env, {}, home) == ()


def test_transcripts_present_are_found_in_a_stable_order(tmp_path: Path):
    sessions = tmp_path / "codex" / "sessions" / "2026" / "11" / "30"
    sessions.mkdir(parents=True)
    (sessions / "rollout-b.jsonl").write_text("{}\n")
    (sessions / "rollout-a.jsonl").write_text("{}\n")
    (sessions / "other.txt").write_text("")
    places = transcript_places([], {"CODEX_HOME": str(tmp_path / "codex"), "CLAUDE_CONFIG_DIR": str(tmp_path / "none")})
    assert find_transcripts(places) == (("codex", sessions / "rollout-a.jsonl"), ("codex", sessions / "rollout-b.jsonl"))
