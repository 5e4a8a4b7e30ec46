"""Claude Code's `SessionEnd` hook: note the session's transcript for the next `reflect`.

`git failres init --agent claude --session-hooks` installs `<python> -m
failres.agents.session_hook` as the hook (`failres.agents.claude_settings`). Claude Code
gives it one JSON object on stdin (`session_id`, `transcript_path`, `cwd`,
`hook_event_name`, `reason`) and does not wait long for it, so the hook only writes a
small note, one file per transcript under `<git common dir>/failres/sessions/`, and
returns; `git failres reflect` mines the noted transcripts and removes the notes it
consumed (`failres.knowledge.session_notes`).

What it must never do is hang or fail the person's session: stdin is read with a
deadline and a size bound (a writer that never closes it costs two seconds, not the
session), anything unexpected is dropped, and it always exits 0. Standard library
only: it runs at the end of every session and must start fast.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

NOTES_DIR = ("failres", "sessions")  # under the git common directory
HOOK_MODULE = "failres.agents.session_hook"
MAX_INPUT_BYTES = 256 * 1024
READ_SECONDS = 2.0


def read_bounded(fd: int, limit: int = MAX_INPUT_BYTES, seconds: float = READ_SECONDS) -> bytes:
    """What arrives on `fd` until EOF, `limit` bytes, a complete JSON document, or `seconds`."""
    deadline = time.monotonic() + seconds
    data = b""
    while len(data) < limit:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, min(65536, limit - len(data)))
        if not chunk:
            break
        data += chunk
        if _complete(data):  # the object is whole: no need to wait for an EOF that may never come
            break
    return data


def _complete(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def session_note(payload: bytes) -> dict | None:
    """The note for one hook input, or None when it names no transcript worth noting."""
    try:
        event = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(event, dict):
        return None
    transcript = event.get("transcript_path")
    if not isinstance(transcript, str) or not os.path.isabs(transcript) or "\0" in transcript:
        return None
    note = {"transcript_path": transcript}
    for key in ("session_id", "cwd", "reason", "hook_event_name"):
        value = event.get(key)
        if isinstance(value, str) and len(value) <= 4096:
            note[key] = value
    return note


def note_name(transcript_path: str) -> str:
    """One note per transcript: a session resumed and ended again rewrites its own note."""
    return hashlib.sha256(transcript_path.encode("utf-8", "surrogateescape")).hexdigest()[:24] + ".json"


def git_common_dir(start: str) -> Path | None:
    try:
        proc = subprocess.run(["git", "-C", start, "rev-parse", "--path-format=absolute", "--git-common-dir"],
                              capture_output=True, text=True, timeout=5, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    found = proc.stdout.strip()
    return Path(found) if proc.returncode == 0 and found else None


def write_note(common_dir: Path, note: dict) -> Path:
    """Write the note atomically (a reader never sees half of one)."""
    folder = common_dir.joinpath(*NOTES_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / note_name(note["transcript_path"])
    tmp = folder / f".{path.name}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(note, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def main(stdin_fd: int = 0, environ: dict[str, str] | None = None) -> int:
    environ = dict(os.environ if environ is None else environ)
    try:
        note = session_note(read_bounded(stdin_fd))
        if note is None:
            return 0
        start = environ.get("CLAUDE_PROJECT_DIR") or note.get("cwd") or os.getcwd()
        common = git_common_dir(start)
        if common is not None:
            write_note(common, note)
    except Exception:  # noqa: BLE001 - a person's session never fails because of failres
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
