"""A config directory of its own for each dispatch, with the person still logged in.

The recipes point Claude Code's `CLAUDE_CONFIG_DIR` and Codex's `CODEX_HOME` into the
dispatch directory, so an agent's state and session transcript stay out of the
workspace and each dispatch's transcript is found beside its logs. Those directories
are also where the CLIs keep the person's login (`.credentials.json`, `auth.json`)
and settings (`settings.json`, `config.toml`: the model, the provider, an
`apiKeyHelper`): a fresh directory alone would log the person out. So the person's
files are linked in (`home_links`, pure), and a login the agent refreshed during the run
(OAuth tokens rotate; a CLI that rewrites its file by rename leaves a new file where the
link was) is carried back to the person's file for the same account only; the shell that
does both runs on the host after the seat, and lives in `failres/hostside/logins.py`.

Where each CLI leaves its transcript, measured (tests/agents/): Claude Code under
`$CLAUDE_CONFIG_DIR/projects/<cwd with "/" and "." as "-">/<session>.jsonl`; Codex
under `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl`; aider in the
files its `--chat-history-file` and `--llm-history-file` name (`transcript_places`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from lessons.frozen import record


@record
class AgentHome:
    """Where one CLI keeps its state, and which of the person's files it needs there."""

    agent: str
    variable: str                   # the environment variable naming the directory
    default: str                    # relative to HOME when the variable is unset
    login_files: tuple[str, ...]    # linked in, and carried back when the agent refreshes them
    config_files: tuple[str, ...]   # linked in: the person's model, provider and key helper
    transcripts: str                # glob, relative to the directory


AGENT_HOMES: tuple[AgentHome, ...] = (
    AgentHome("claude", "CLAUDE_CONFIG_DIR", ".claude", (".credentials.json",), ("settings.json",),
              "projects/*/*.jsonl"),
    AgentHome("codex", "CODEX_HOME", ".codex", ("auth.json",), ("config.toml",),
              "sessions/*/*/*/rollout-*.jsonl"),
)

# aider's transcripts are files its command line names, not a directory.
_AIDER_TRANSCRIPT_FLAGS = ("--chat-history-file", "--llm-history-file")


@record
class HomeLink:
    """One of the person's files, and where the agent looks for it in its dispatch's home."""

    source: Path
    target: Path
    login: bool


@record
class TranscriptPlace:
    """Where a dispatch's transcript will be: files matching `pattern` under `directory`."""

    agent: str
    directory: Path
    pattern: str


def _person_home_of(agent_home: AgentHome, person_env: Mapping[str, str], home: Path) -> Path:
    configured = person_env.get(agent_home.variable)
    return Path(configured).expanduser() if configured else home / agent_home.default


def dispatch_homes(seat_env: Mapping[str, str], person_env: Mapping[str, str],
                   home: Path) -> tuple[tuple[AgentHome, Path], ...]:
    """The agent homes a seat's environment moves away from the person's own."""
    moved = []
    for agent_home in AGENT_HOMES:
        value = seat_env.get(agent_home.variable)
        if not value:
            continue
        own = Path(value).expanduser()
        if own != _person_home_of(agent_home, person_env, home):
            moved.append((agent_home, own))
    return tuple(moved)


def home_links(seat_env: Mapping[str, str], person_env: Mapping[str, str], home: Path) -> tuple[HomeLink, ...]:
    """The person's login and settings files to link into each moved agent home.

    `seat_env` is the seat's environment with placeholders filled; `person_env` and
    `home` are failres's own (the person's). A home the seat leaves where it is needs
    nothing: the agent reads the person's files in place.
    """
    links = []
    for agent_home, own in dispatch_homes(seat_env, person_env, home):
        person = _person_home_of(agent_home, person_env, home)
        links += [HomeLink(person / name, own / name, login=True) for name in agent_home.login_files]
        links += [HomeLink(person / name, own / name, login=False) for name in agent_home.config_files]
    return tuple(links)


def transcript_places(argv: Sequence[str], seat_env: Mapping[str, str]) -> tuple[TranscriptPlace, ...]:
    """Where the transcripts of a dispatch run as `argv` with `seat_env` will be."""
    places = [TranscriptPlace(agent_home.agent, Path(seat_env[agent_home.variable]).expanduser(), agent_home.transcripts)
              for agent_home in AGENT_HOMES if seat_env.get(agent_home.variable)]
    for flag, value in zip(argv, argv[1:], strict=False):
        if flag in _AIDER_TRANSCRIPT_FLAGS:
            path = Path(value)
            places.append(TranscriptPlace("aider", path.parent, path.name))
    return tuple(places)
