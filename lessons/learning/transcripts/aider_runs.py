"""Whether an aider run was started by a script, from what aider recorded and read.

aider takes a prompt from the command line (`--message`, its aliases `--msg` and `-m`,
`--message-file`/`-f`), from its environment (`AIDER_MESSAGE`, `AIDER_MESSAGE_FILE`, also
set from a `.env` file it loads) and from a `.aider.conf.yml` (`message:`, `msg:`,
`message-file:`); it sends that prompt, answers, and exits: nobody typed it. `--load` (and
`load:`, `AIDER_LOAD`) runs a file of `/commands` before the prompt: those are a script's
too, but they leave no `#### ` block of their own: aider logs each as `Executing: /cmd`,
which the reader takes as a script's, and what the person typed after them is in the input
history like any run's. `--yes-always` answers every question itself, so a "no" in such a
run is aider's.

The chat history records the command line (`> aider ...`), not the environment or the
configuration, so those are read from the files aider reads: `.aider.conf.yml` and `.env`
in the history's folder, its repository and the home folder, and a `--config`/`--env-file`
the command line names. A configuration read now may be newer than the run: a prompt found
there makes every run scripted, which loses evidence and never invents it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

CONFIG_FILE = ".aider.conf.yml"
ENV_FILE = ".env"
_MAX_CONFIG_BYTES = 1024 * 1024
# argparse takes any unambiguous prefix of a long option: `--ms`, `--message-f`, `--lo`.
_MESSAGE_OPTION = re.compile(r"^(?:--message(?:-(?:f(?:i(?:l(?:e)?)?)?)?)?|--msg?)(?:=|$)")
# A short option with its value attached or behind other short flags: `-mfix`, `-vm`.
_MESSAGE_SHORT = re.compile(r"^-v*[mf]")
_YES_OPTION = re.compile(r"^--ye(?:s(?:-(?:a(?:l(?:w(?:a(?:y(?:s)?)?)?)?)?)?)?)?$")
_CONFIG_KEY = re.compile(r"^(?P<key>message|msg|message-file|yes-always)\s*:\s*(?P<value>.*?)\s*$")
_ENV_KEY = re.compile(r"^(?:export\s+)?(?P<key>AIDER_MESSAGE|AIDER_MESSAGE_FILE|AIDER_YES_ALWAYS)\s*="
                      r"\s*(?P<value>.*?)\s*$")
_FALSE = ("", "false", "no", "off", "0", "null", "~", '""', "''")


@dataclass(frozen=True)
class RunStart:
    """What a run's start says about who drives it: `scripted` is why its prompt is a
    script's ("" when nothing says so); `yes_always` when aider answers its own questions."""

    scripted: str = ""
    yes_always: bool = False


def read_command_line(command: str) -> RunStart:
    """A run's recorded command line (`" ".join(sys.argv)`), read for the options above."""
    scripted = ""
    yes_always = False
    for token in command.split()[1:]:
        if token == "--":
            break
        if not scripted and (_MESSAGE_OPTION.match(token) or _MESSAGE_SHORT.match(token)):
            scripted = f"its command line passed {token.split('=', 1)[0][:20]}"
        yes_always = yes_always or bool(_YES_OPTION.match(token))
    return RunStart(scripted, yes_always)


def named_files(command: str) -> list[str]:
    """The configuration and `.env` files a command line names (`--config F`, `-c F`, `--env-file F`)."""
    tokens = command.split()
    named: list[str] = []
    for index, token in enumerate(tokens):
        option, _, attached = token.partition("=")
        if option in ("--config", "-c", "--env-file"):
            value = attached or (tokens[index + 1] if index + 1 < len(tokens) else "")
            if value:
                named.append(value)
    return named


def read_settings(folders: list[Path], named: list[str]) -> RunStart:
    """What the configuration and `.env` files aider would have read say: the first prompt
    setting found makes the runs scripted."""
    candidates: list[Path] = []
    for folder in folders:
        candidates += [folder / CONFIG_FILE, folder / ENV_FILE]
    for name in named:
        path = Path(name).expanduser()
        candidates += [path] if path.is_absolute() else [folder / path for folder in folders]
    scripted = ""
    yes_always = False
    seen: set[Path] = set()
    for path in candidates:
        if path in seen:
            continue
        seen.add(path)
        for key, value in _settings_in(path):
            if key in ("yes-always", "AIDER_YES_ALWAYS"):
                yes_always = yes_always or value.lower() not in _FALSE
            elif value.lower() not in _FALSE and not scripted:
                scripted = f"{path.name} sets {key}"
    return RunStart(scripted, yes_always)


def _settings_in(path: Path) -> list[tuple[str, str]]:
    """The top-level prompt and answer settings of a YAML configuration or a `.env` file."""
    try:
        if not path.is_file() or path.stat().st_size > _MAX_CONFIG_BYTES:
            return []
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        match = _CONFIG_KEY.match(line) or _ENV_KEY.match(line)
        if match:
            found.append((match["key"], match["value"].split(" #", 1)[0].strip()))
    return found
