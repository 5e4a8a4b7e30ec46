"""Running a seat: its environment, its command, its process, and the probe of a binding.

Everything here is one step of the loop with its side effects (a subprocess, files);
what the step means — scope, classification, what to do next — is decided by the pure
functions in `scope`, `taxonomy` and `resolver`, and by the loop.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

from lessons.frozen import record
from failres.agents.keys import CI_CREDENTIALS
from failres.config.model import Config
from failres.containment.locks import DISPATCH_MARKER
from failres.processes.process import ProcessResult, run_process
from failres.engine.taxonomy import ScopeRequest, parse_scope_requests
from failres.gitops.git import REPOSITORY_LOCATING_VARIABLES
from failres.config.placeholders import render_command, render_value

# How much of a dispatch's output a follower (`logs --follow`) can read while it runs.
LIVE_OUTPUT_LIMIT = 4 * 1024 * 1024


@record
class SeatRun:
    """One process run of a seat, the scope requests it made in its own words, and its transcripts."""

    seat: str
    binding: str
    result: ProcessResult
    requests: tuple[ScopeRequest, ...]
    transcripts: tuple[Path, ...] = ()
    transcript_root: Path | None = None  # where the dispatches are: the transcripts are read again beneath it

    @property
    def failed(self) -> bool:
        return self.result.timed_out or self.result.exit_code != 0


# Handles to daemons of the person's: a process started through one (`tmux new-window`,
# an ssh-agent signature, a D-Bus activation, an X client, a container) lives outside
# the dispatch, where no supervisor ends it. A binding that needs one names it in `env`.
DAEMON_HANDLES = frozenset({
    "TMUX", "TMUX_PANE", "STY", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS",
    "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DOCKER_HOST", "CONTAINER_HOST", "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET", "ZELLIJ", "ZELLIJ_SESSION_NAME", "NVIM", "NVIM_LISTEN_ADDRESS", "EMACS_SOCKET_NAME",
    "VSCODE_IPC_HOOK_CLI", "GNOME_KEYRING_CONTROL", "XDG_RUNTIME_DIR",
})


def seat_env(values: Mapping[str, str], extra: Mapping[str, str], *, marker: str = "") -> dict[str, str]:
    """The seat's environment: ours, the binding's own, and the contract's FAILRES_* variables.

    Nothing in it says where the person's repository is: no `FAILRES_REPO`, and none of
    git's repository-locating variables (inside a hook they point at the person's
    repository, and a seat's git would act on it). Nor does it hold a handle to a daemon
    of the person's (`DAEMON_HANDLES`) unless the binding's `env` names it, nor a CI job's
    own credential (`CI_CREDENTIALS`). The FAILRES_ prefix also keeps out the push token
    a `git failres ci` workflow gives failres's own git calls (FAILRES_PUSH_TOKEN).
    """
    env = {k: v for k, v in os.environ.items()
           if k not in REPOSITORY_LOCATING_VARIABLES and not k.startswith("FAILRES_") and k not in DAEMON_HANDLES
           and k not in CI_CREDENTIALS}
    env.update({name: render_value(value, values) for name, value in extra.items()})
    env.update({
        "FAILRES_SLUG": values["slug"],
        "FAILRES_TASK": values["task"],
        "FAILRES_MODE": values["mode"],
        "FAILRES_ATTEMPT": values["attempt"],
        "FAILRES_WORKTREE": values["worktree"],
        "FAILRES_PROMPT_FILE": values["prompt_file"],
    })
    if values.get("port"):
        env["FAILRES_PORT"] = values["port"]  # this workspace's own (see `ports`)
    if values.get("dispatch_dir"):
        env["FAILRES_DISPATCH_DIR"] = values["dispatch_dir"]
    if marker:
        env[DISPATCH_MARKER] = marker
    return env


def seat_values(values: Mapping[str, str]) -> dict[str, str]:
    """The placeholder values a seat's command may use: everything but the repository."""
    return {k: v for k, v in values.items() if k != "repo"}


def run_seat(*, config: Config, seat: str, binding_name: str, cwd: Path, prompt: str, values: Mapping[str, str],
             marker: str, cancelled: Callable[[], bool] | None, on_start: Callable[[int], None] | None,
             live: BinaryIO | None, world=None, kept: Sequence[str] = ()) -> SeatRun:
    """Run the seat once in its workspace; read only its own words for scope requests.

    An agent whose recipe moves its config dir into `{dispatch_dir}` gets the person's
    login and settings linked in first, and a login it refreshed carried back after.
    `live`, when given, receives the output as it arrives and is closed at the end.
    `world` (a `sandbox.world.SeatWorld`), when given, is where the seat runs: it sees
    the workspace at the repository top, and its placeholders say so; the `kept` paths
    of the workspace are read-only there.
    """
    from failres.agents.homes import transcript_places
    from failres.hostside.logins import carry_back_logins, prepare_agent_homes
    from failres.hostside.transcripts import find_transcripts

    binding = config.bindings[binding_name]
    own_values = seat_values(values if world is None else world.inside_values(values))
    argv = render_command(binding.command, own_values)
    env = seat_env(own_values, binding.env, marker=marker)
    root = dispatches_root(values)
    links = prepare_agent_homes(env, os.environ, Path.home(), root=root)
    command = argv
    if world is not None:
        reads = [*binding.read, *world.agent_reads(argv[0], (link.source for link in links))]
        command = world.wrap(argv, env=env, network=binding.network, who=f"[bindings.{binding_name}]", read=reads,
                             write=[values.get("dispatch_dir") or "", *binding.write], kept=kept)
    try:
        result = run_process(
            command,
            cwd=cwd,
            env=env,
            stdin_data=prompt.encode("utf-8"),
            timeout=binding.timeout,
            head_bytes=config.output.head_bytes,
            tail_bytes=config.output.tail_bytes,
            cancelled=cancelled,
            on_start=on_start,
            live=live,
            live_limit=LIVE_OUTPUT_LIMIT,
            # In a world its PID namespace is what the supervisor would be: everything the
            # seat starts ends with it, and with failres (`--die-with-parent`).
            supervised=world is None or list(command[:1]) != [world.bwrap],
        )
    finally:
        if live is not None:
            live.close()
        carry_back_logins(links, root=root)
    result = replace(result, argv=tuple(argv))  # the seat's own command, not the world's wrapping
    transcripts = tuple(path for _, path in find_transcripts(transcript_places(argv, env), root=root))
    return SeatRun(seat, binding_name, result, own_requests(result.text, prompt), transcripts, root)


def dispatches_root(values: Mapping[str, str]) -> Path | None:
    """The directory failres made the task's dispatch directories in (`<task>.dispatch/<n>`'s
    grandparent), from which the host side reads them without following a link; None without one."""
    dispatch_dir = values.get("dispatch_dir")
    return Path(dispatch_dir).parent.parent if dispatch_dir else None


def own_requests(output: str, prompt: str) -> tuple[ScopeRequest, ...]:
    """The `SCOPE-REQUEST:` lines the seat wrote itself, never one echoed from its prompt.

    Agents echo their prompt (aider prints it back), and a prompt quotes the example
    line and earlier failures: a line that stands in the prompt is failres's own text.
    """
    prompt_lines = {line.strip() for line in prompt.splitlines() if line.strip()}
    own = "\n".join(line for line in agent_words(output).splitlines() if line.strip() not in prompt_lines)
    return parse_scope_requests(own)


def agent_words(output: str) -> str:
    """What the agent said, as lines: Claude Code's JSON result is decoded to its text.

    With `--output-format json` (the recipe's) Claude Code prints its last message
    inside one JSON object on one line: read as it stands, a request's reason would run
    on into the rest of the object (session id, usage, cost) — seen with the real CLI.
    """
    from failres.agents.claude_result import claude_result

    result = claude_result(output)
    return output if result is None else result.result_text
