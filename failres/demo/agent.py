"""The demo's scripted agent: a stand-in for Claude Code, Codex or aider.

It reads which task and mode it was dispatched for (FAILRES_TASK, FAILRES_MODE) and
plays the next turn of that task's script from `script.json` beside it: edit files,
print lines, exit with a code. Nothing else; the engine around it is real.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def _state_dir(here: Path) -> Path:
    """Where the turns are counted: the directory the demo's bindings name (outside the demo
    repository, writable in the seat world too); beside this file when run by hand."""
    return Path(os.environ.get("DEMO_AGENT_STATE") or here)


def main() -> int:
    here = Path(__file__).resolve().parent
    script = json.loads((here / "script.json").read_text())
    role = sys.argv[1] if len(sys.argv) > 1 else "agent"
    key = f"{role}:{os.environ.get('FAILRES_TASK', '')}:{os.environ.get('FAILRES_MODE', '')}"
    counter = _state_dir(here) / "calls.json"
    calls = json.loads(counter.read_text()) if counter.exists() else {}
    n = calls.get(key, 0)
    calls[key] = n + 1
    counter.write_text(json.dumps(calls))
    sys.stdin.read()
    turns = script.get(key, [{"print": "nothing to do here"}])
    turn = turns[min(n, len(turns) - 1)]
    for path, edits in turn.get("replace", {}).items():
        text = Path(path).read_text()
        for old, new in edits:
            text = text.replace(old, new)
        Path(path).write_text(text)
    if "print" in turn:
        print(turn["print"])
    if "stderr" in turn:
        print(turn["stderr"], file=sys.stderr)
    return int(turn.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
