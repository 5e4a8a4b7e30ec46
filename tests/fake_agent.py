"""A scripted fake agent: the only thing the tests fake.

Run as `python fake_agent.py SCRIPT.json`. The script is a list of turns; each
invocation plays the next one (a counter file beside the script remembers where it
is) and then exits with the turn's exit code. A turn is a dict of actions, applied in
this order:

    write     {path: text}      write files (parents created)
    delete    [path]            remove files
    mkdir     [path]            create directories
    symlink   {path: target}    create symlinks
    chmod_x   [path]            make files executable
    git       [[args...]]       run git commands (commit, checkout, reset ...)
    shell     [command]         run bash commands (background processes, setsid, absolute paths ...)
    print     text              print to stdout
    stderr    text              print to stderr
    spew      n                 write n bytes of invalid UTF-8 to stdout
    sleep     seconds           sleep (to be killed by a timeout)
    exit      code              exit code (default 0)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def play(turn: dict) -> int:
    for path, text in turn.get("write", {}).items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    for path in turn.get("delete", []):
        Path(path).unlink()
    for path in turn.get("mkdir", []):
        Path(path).mkdir(parents=True, exist_ok=True)
    for path, target in turn.get("symlink", {}).items():
        os.symlink(target, path)
    for path in turn.get("chmod_x", []):
        os.chmod(path, 0o755)
    for args in turn.get("git", []):
        subprocess.run(["git", "-c", "user.name=agent", "-c", "user.email=agent@example.com", *args], check=True,
                       capture_output=True)
    for command in turn.get("shell", []):
        subprocess.run(["bash", "-c", command], check=True)
    if "print" in turn:
        print(turn["print"], flush=True)
    if "stderr" in turn:
        print(turn["stderr"], file=sys.stderr, flush=True)
    if "spew" in turn:
        chunk = bytes(range(128, 256)) * 512
        left = int(turn["spew"])
        while left > 0:
            sys.stdout.buffer.write(chunk[:left])
            left -= len(chunk)
        sys.stdout.flush()
    if "sleep" in turn:
        time.sleep(float(turn["sleep"]))
    return int(turn.get("exit", 0))


def main() -> int:
    script = Path(sys.argv[1])
    turns = json.loads(script.read_text())
    counter = script.with_suffix(".count")
    n = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(n + 1))
    sys.stdin.read()  # agents read their prompt; so does this one
    turn = turns[n] if n < len(turns) else turns[-1]
    return play(turn)


if __name__ == "__main__":
    sys.exit(main())
