"""Running a command the way a person does: on a real terminal (a pty) of a given size."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[=>]")


def run_on_terminal(args: list[str], cwd: Path, env: dict[str, str], *, columns: int = 60, rows: int = 40,
                    timeout: float = 120, stdin_text: str = "") -> tuple[int, list[str]]:
    """Run `args` with stdin, stdout and stderr on a new pty of `columns` x `rows` (set by the
    TIOCSWINSZ ioctl, as a terminal emulator sets it); return the exit code and the lines shown,
    escape sequences removed. `stdin_text` is typed in first, as keys."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    if stdin_text:
        os.write(master, stdin_text.encode())
    chunks: list[bytes] = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                proc.kill()
                raise AssertionError(f"{args} printed nothing for {timeout}s")
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every process holding the terminal has closed it
                break
            if not data:
                break
            chunks.append(data)
        code = proc.wait(timeout=timeout)
    finally:
        os.close(master)
    text = _ESCAPES.sub("", b"".join(chunks).decode("utf-8", "replace"))
    return code, text.replace("\r\n", "\n").splitlines()


def terminal_env(**extra: str) -> dict[str, str]:
    """The environment with nothing that tells a program its width or pager but the terminal itself."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "LINES", "GIT_PAGER", "PAGER", "GIT_PAGER_IN_USE", "LESS")}
    env["TERM"] = "xterm"
    env.update(extra)
    return env
