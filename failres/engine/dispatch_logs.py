"""What each dispatch saw and said, kept where a person can read it (`git failres logs`).

Per task run, one directory per dispatch (a seat, and the gate that judged what it
did), under `<git dir>/failres/logs/<slug>/<task>/<run>/<n>/`:

    prompt.md         the exact prompt the seat got
    seat.log          what the seat printed (bounded by [output], redacted), as its
                      bytes: colours and other terminal escapes too
    seat.json         seat, binding, mode, attempt, exit code, duration
    gate.log          what the gate printed after it (bounded, redacted, as its bytes)
    gate.json         gate, command, directory, exit code, duration
    transcript*.jsonl the agent's own session files, when its recipe keeps them in
                      {dispatch_dir} (Claude Code, Codex) — redacted; `reflect` reads them
    live.log          while the seat runs: its output as it arrives (`logs --follow`)

Logs are local (they live in the git dir, not in the store): they can be large and
they are for the person at this machine. Secrets are redacted before anything is
written, as for every record. The two `.log` files are the one place failres keeps a
child's output with its terminal escapes (`less -R` shows the colours); everything else,
`git failres logs` included, shows and keeps it as plain text (`lessons.terminal`). Where an
escape could hide a secret from the redactor (`ESC[31mghp_...`), the plain text is written
instead.

A seat can reach this directory by absolute path, and `seat.log` is written after it
ends: a link it leaves at that name (to the person's `.git/config`) would carry its
output there. Every write goes through `beneath` from the git dir, so a planted name
is refused, never followed; what was refused is kept in `problems`, for the dispatch
to report as tamper.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from lessons.frozen import record
from failres import beneath
from lessons.redaction.redact import redact
from lessons.terminal import plain_text

log = logging.getLogger("failres.logs")


def logs_root(git_dir: Path) -> Path:
    return git_dir / "failres" / "logs"


def run_id(started_ts: str, event_id: str) -> str:
    """A run's directory name: when it started, then its `task-started` event's id."""
    stamp = "".join(c for c in started_ts if c.isdigit())[:14]
    return f"{stamp}-{event_id[:8]}"


@dataclass
class DispatchLog:
    """The log directory of one dispatch, written as the dispatch goes."""

    git_dir: Path
    directory: Path
    problems: list[str] = field(default_factory=list)  # names found planted: nothing was written there

    @property
    def live(self) -> Path:
        return self.directory / "live.log"

    def open_live(self) -> BinaryIO | None:
        """`live.log`, new and empty, for the seat's output as it arrives; None when it cannot be made."""
        try:
            beneath.remove_file(self.git_dir, self._relative("live.log"))
            fd = beneath.open_file(self.git_dir, self._relative("live.log"),
                                   os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except OSError as error:
            self._refused("live.log", error)
            return None
        from failres.engine.live_log import RedactingLive

        return RedactingLive(os.fdopen(fd, "wb"))  # type: ignore[return-value]

    def prompt(self, text: str) -> None:
        self._write("prompt.md", redact(text))

    def seat(self, output: str, meta: dict, *, raw: str | None = None) -> None:
        self._write("seat.log", kept_output(output, raw))
        self._write("seat.json", json.dumps(meta, indent=2, sort_keys=True) + "\n")
        try:
            beneath.remove_file(self.git_dir, self._relative("live.log"))
        except OSError as error:
            self._refused("live.log", error)

    def gate(self, output: str, meta: dict, *, raw: str | None = None) -> None:
        self._write("gate.log", kept_output(output, raw))
        self._write("gate.json", json.dumps(meta, indent=2, sort_keys=True) + "\n")

    def keep_transcripts(self, sources: Iterable[Path], root: Path | None = None) -> list[Path]:
        """Copy the agent's session files into the log, redacted; return where they went.

        The first keeps its kind's usual name (`transcript.jsonl`, or aider's
        `transcript.md`); more get a number.
        """
        from failres.hostside.transcripts import read_transcript

        kept = []
        for index, source in enumerate(sources, start=1):
            try:
                # Never through a link, at any component below the dispatches' root: the seat's
                # link to some other file of the person's is not its transcript.
                data = read_transcript(source, root=root)
            except OSError:
                continue
            suffix = ".jsonl" if source.suffix == ".jsonl" else ".md"
            name = f"transcript{suffix}" if index == 1 else f"transcript-{index}{suffix}"
            if self._write(name, redact(data.decode("utf-8", "replace"))):
                kept.append(self.directory / name)
        return kept

    def take_problems(self) -> list[str]:
        taken, self.problems = self.problems, []
        return taken

    def _relative(self, name: str) -> Path:
        return self.directory.relative_to(self.git_dir) / name

    def _write(self, name: str, text: str) -> bool:
        # Logs help a person; failing to write one must never cost the run.
        try:
            beneath.write_file(self.git_dir, self._relative(name), text.encode("utf-8", "surrogateescape"))
        except OSError as error:
            self._refused(name, error)
            return False
        return True

    def _refused(self, name: str, error: OSError) -> None:
        if isinstance(error, beneath.Planted):
            log.warning("failres: %s: the dispatch log %s was not written", error, name)
            shown = str(error).replace(str(self.git_dir), "$GIT_DIR")
            self.problems.append(f"{shown}: the dispatch log {name} was not written there")


def kept_output(plain: str, raw: str | None) -> str:
    """What a `.log` file keeps of a child's output: its raw text redacted, when that hides nothing (pure).

    The redactor reads text; an escape inside a token (`ghp_ESC[0m...`) can keep it from
    seeing one the plain text shows. The raw form is kept only when its plain text,
    redacted, is the plain text redacted: else the plain text is, redacted.
    """
    if raw is None:
        return redact(plain)
    redacted = redact(raw)
    if plain_text(redacted) == redact(plain_text(raw)):
        return redacted
    return redact(plain_text(raw))


class RunLogs:
    """The log directories of one task run, numbered in dispatch order."""

    def __init__(self, git_dir: Path, slug: str, task: str, run: str) -> None:
        self.git_dir = git_dir
        self.directory = logs_root(git_dir) / slug / task / run
        self.count = 0

    def next(self) -> DispatchLog:
        self.count += 1
        return self.current()

    def current(self) -> DispatchLog:
        return DispatchLog(self.git_dir, self.directory / str(self.count))


# ── reading, for `git failres logs` ──────────────────────────────────────


@record
class DispatchRecord:
    number: int
    directory: Path
    seat: dict
    gate: dict

    def read(self, name: str) -> str | None:
        try:
            # As bytes: a text read would turn the carriage returns of a redrawn line into line breaks.
            return (self.directory / name).read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return None


def task_runs(git_dir: Path, slug: str, task: str) -> list[Path]:
    """The task's run directories, oldest first."""
    directory = logs_root(git_dir) / slug / task
    try:
        return sorted(p for p in directory.iterdir() if p.is_dir())
    except OSError:
        return []


def dispatches(run: Path) -> list[DispatchRecord]:
    found = []
    try:
        entries = [p for p in run.iterdir() if p.is_dir() and p.name.isdigit()]
    except OSError:
        return []
    for entry in sorted(entries, key=lambda p: int(p.name)):
        found.append(DispatchRecord(int(entry.name), entry, _json(entry / "seat.json"), _json(entry / "gate.json")))
    return found


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def follow(path: Path, *, still_running, poll: float = 0.2) -> Iterator[bytes]:
    """Yield what is appended to `path` until `still_running()` is false and nothing more comes."""
    offset = 0
    while True:
        try:
            with path.open("rb") as handle:
                handle.seek(offset)
                chunk = handle.read()
        except OSError:
            chunk = b""
        if chunk:
            offset += len(chunk)
            yield chunk
            continue
        if not still_running():
            return
        time.sleep(poll)


def remove_task_logs(git_dir: Path, slug: str, task: str) -> None:
    shutil.rmtree(logs_root(git_dir) / slug / task, ignore_errors=True)
