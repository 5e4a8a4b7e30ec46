"""Which git repository a session's lessons belong to: the one holding the files it touched.

A session is filed by the directory it started in, but people start their agent
wherever they are: in their home directory, in a parent folder of several
checkouts. What a person taught the agent there is about the repository whose
files the agent read and changed, so that is where its lessons belong, and a store
mining every session on the machine must leave the others' to their own stores.

The answer is read from the calls' own arguments (the paths file tools named) and
this machine's file system (the nearest directory holding `.git`), never from what
anyone said. A session whose files are not on this machine, or which touched none,
belongs to no repository that can be named: "" (the caller decides).
"""

from __future__ import annotations

import json
import posixpath
from collections import Counter
from pathlib import Path

from lessons.learning.messages import Transcript

_PATH_ARGUMENTS = ("file_path", "notebook_path", "path")
_MAX_PATHS = 500


def session_repository(transcript: Transcript) -> str:
    """The top of the git repository most of the session's named files lie in, or ""."""
    tops: Counter[str] = Counter()
    known: dict[str, str] = {}
    seen = 0
    for message in transcript.messages:
        for block in message.tool_uses():
            try:
                arguments = json.loads(block.tool_input)
            except ValueError:
                continue
            if not isinstance(arguments, dict):
                continue
            for key in _PATH_ARGUMENTS:
                value = arguments.get(key)
                if isinstance(value, str) and posixpath.isabs(value) and seen < _MAX_PATHS:
                    seen += 1
                    folder = posixpath.dirname(posixpath.normpath(value))
                    if folder not in known:
                        known[folder] = _git_top(folder)
                    top = known[folder]
                    if top:
                        tops[top] += 1
    return tops.most_common(1)[0][0] if tops else ""


def _git_top(path: str) -> str:
    current = Path(path)
    for candidate in (current, *current.parents):
        try:
            if (candidate / ".git").exists():
                return str(candidate)
        except OSError:
            return ""
    return ""
