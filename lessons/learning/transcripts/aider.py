"""aider's chat history (`.aider.chat.history.md`) read into the message model.

aider appends every run to one markdown file (`aider/io.py`): `# aider chat started at
<time>` opens a run; `#### ` lines are a message that reached the model through aider's
input path, one line each, every line ending in a two-space hard break, one contiguous
block a message; `> ` lines are aider's own output (its command line, notices, its
questions with the answer given); anything else is the model's reply.

A `#### ` block is not the person's because of where it sits: aider writes the architect
model's reply, relayed to the editor model, the words `/ask` repeats, `/help`'s
documentation, `/lint` output and a `--message` the same way. What the person typed is
what `.aider.input.history` (beside it) holds for that run (`aider_inputs`); a run whose
input aider did not record cannot say, so what looks typed there is untrusted. A run a
script started (`aider_runs`) holds no person's words. Output any command added to the
chat is third-party, as is a long pasted input. `aider_reader` reads one run;
docs/transcript-format.md tables every record and marker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from lessons.errors import InvalidInput
from lessons.learning.locality import DEFAULT_TRUSTED, TrustedCommands
from lessons.learning.messages import Transcript, scrub
from lessons.learning.transcripts.aider_inputs import (
    InputLedger,
    input_history_beside,
    read_input_history,
    submissions,
)
from lessons.learning.transcripts.aider_reader import Item, RunReader
from lessons.learning.transcripts.aider_runs import RunStart, named_files, read_command_line, read_settings
from lessons.storage.records import derived_id

FORMAT = "aider"
CHAT_HISTORY = ".aider.chat.history.md"
RUN_OPENING = "# aider chat started at "
MAX_BYTES = 64 * 1024 * 1024
_COMMAND_LINE = re.compile(r"^> (\S*aider\b.*?)\s*$")
NO_INPUT_HISTORY = "no .aider.input.history beside it"
UNRECORDED_RUN = "no input history for this aider run"


def is_aider_history(path: Path) -> bool:
    """Whether a file is an aider chat history: by its name, or by its opening line."""
    if path.name.endswith(CHAT_HISTORY) or path.name == "aider.chat.history.md":
        return True
    try:
        with path.open("rb") as stream:
            head = stream.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    return head.lstrip().startswith(RUN_OPENING)


def load_aider(path: Path | str, *, trusted: TrustedCommands = DEFAULT_TRUSTED) -> Transcript:
    """Read one aider chat history, and the input history beside it; InvalidInput when the
    chat cannot be read or holds no run.

    `trusted` is accepted like every adapter's and not consulted: aider's chat history
    keeps no command's output, only that some entered the chat, so none is the tree's own.
    """
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            msg = f"{path} is larger than {MAX_BYTES} bytes"
            raise InvalidInput(msg)
        text = scrub(path.read_bytes().decode("utf-8", "replace"))
    except OSError as exc:
        msg = f"cannot read transcript {path}: {exc.strerror or exc}"
        raise InvalidInput(msg) from exc
    runs = _runs(text)
    if not runs:
        msg = f"{path} is not an aider chat history: no {RUN_OPENING.strip()!r} line"
        raise InvalidInput(msg)
    root = _root_of(path)
    entries = read_input_history(input_history_beside(path))
    named = [name for run in runs for name in named_files(run.command)]
    settings = read_settings(list(dict.fromkeys([path.resolve().parent, Path(root), Path.home()])), named)
    # aider ends every line it writes with a two-space hard break; where the file still
    # has them, a `####` line without one is the model's markdown heading, not an input.
    hard_breaks = any(line.startswith("> ") and line.endswith("  ") for run in runs for line in run.lines)
    reader = RunReader()
    for number, run in enumerate(runs):
        start = read_command_line(run.command)
        start = RunStart(start.scripted or settings.scripted, start.yes_always or settings.yes_always)
        end = runs[number + 1].started if number + 1 < len(runs) else None
        ledger, missing = None, NO_INPUT_HISTORY
        if entries is not None and run.started is not None:
            inputs = submissions(entries, run.started, end)
            ledger, missing = (InputLedger(inputs), "") if inputs else (None, UNRECORDED_RUN)
        reader.read_run(run.first_line, _items(run, hard_breaks), start, ledger, missing)
    messages, problems, typed = reader.finish()
    return Transcript(session_id=f"aider/{derived_id('aider', str(path.resolve()))}", messages=messages,
                      source_path=str(path), format=FORMAT, kind="interactive" if typed else "batch",
                      derived_reason="" if typed else "no run holds words a person typed: a script gave each its prompt",
                      problems=problems)


@dataclass
class _Run:
    first_line: int
    started: datetime | None
    lines: list[str]
    command: str = ""


def _runs(text: str) -> list[_Run]:
    runs: list[_Run] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith(RUN_OPENING):
            runs.append(_Run(number, _started(line[len(RUN_OPENING):]), []))
        elif runs:
            runs[-1].lines.append(line)
    for run in runs:
        run.command = next((m[1] for ln in run.lines if (m := _COMMAND_LINE.match(ln))), "")
    return runs


def _started(text: str) -> datetime | None:
    try:
        return datetime.strptime(text.strip(), "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None


def _root_of(path: Path) -> str:
    """The tree the chat worked in: the git repository holding the history file, else its folder."""
    folder = path.resolve().parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return str(candidate)
    return str(folder)


def _is_input(raw: str, hard_breaks: bool) -> bool:
    return raw.startswith("####") and (len(raw) == 4 or raw[4] == " ") and (not hard_breaks or raw.endswith("  "))


def _is_notice(raw: str) -> bool:
    return raw.startswith("> ") or raw.rstrip() == ">"


def _items(run: _Run, hard_breaks: bool) -> list[Item]:
    """A run's lines as replies, inputs (one contiguous `####` block each) and notices."""
    lines = run.lines
    items: list[Item] = []
    index = 0
    while index < len(lines):
        raw = lines[index]
        line = run.first_line + 1 + index
        if _is_input(raw, hard_breaks):
            end = index
            while end < len(lines) and _is_input(lines[end], hard_breaks):
                end += 1
            words = [_input_words(text) for text in lines[index:end]]
            items.append(Item("input", line, "\n".join(words).strip("\n"), "\n".join(lines[index:end])))
            index = end
        elif _is_notice(raw):
            items.append(Item("notice", line, raw[2:].strip()))
            index += 1
        elif not raw.strip():
            index += 1
        else:
            end = index
            while end < len(lines) and not _is_input(lines[end], hard_breaks) and not _is_notice(lines[end]):
                end += 1
            items.append(Item("reply", line, "\n".join(lines[index:end]).strip()))
            index = end
    return items


def _input_words(raw: str) -> str:
    """One line of an input as it was typed: aider wrote `#### `, the line, a hard break."""
    words = raw[4:]
    return (words[1:] if words.startswith(" ") else words).rstrip()
