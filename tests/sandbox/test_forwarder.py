"""The in-world forwarder: it becomes the command, and carries its listeners' connections to unix sockets.

Run here without a world (on a free host port), which is all it needs: what it must not
change is what the command is, and what it must do is carry bytes both ways.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from failres.sandbox.bridge import FORWARDER


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def forwarded(directory: Path, port: int, *command: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-S", "-I", str(FORWARDER), str(directory), f"{port}=echo", "--",
                             *command], stdout=subprocess.PIPE, text=True)


def test_the_command_is_the_process_started_with_its_own_exit_status(tmp_path: Path):
    child = forwarded(tmp_path, free_port(), "sh", "-c", 'echo $$; exit 7')
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 7
    assert out.strip() == str(child.pid)  # exec'd, not a child of the forwarder


def test_a_signal_that_ends_the_command_is_its_own(tmp_path: Path):
    child = forwarded(tmp_path, free_port(), "sh", "-c", "kill -TERM $$")
    child.communicate(timeout=60)
    assert child.returncode == -signal.SIGTERM


def test_the_command_has_no_child_it_did_not_start(tmp_path: Path):
    child = forwarded(tmp_path, free_port(), sys.executable, "-c",
                      "import os; print(len(os.listdir(f'/proc/{os.getpid()}/task')), "
                      "open(f'/proc/{os.getpid()}/task/{os.getpid()}/children').read().strip() or '-')")
    out, _ = child.communicate(timeout=60)
    assert out.split()[1] == "-"


def test_a_connection_to_the_port_reaches_the_unix_socket_and_back(tmp_path: Path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "echo"))
    server.listen(4)

    def echo() -> None:
        conn, _ = server.accept()
        with conn:
            data = b""
            while chunk := conn.recv(65536):
                data += chunk
            conn.sendall(data[::-1])

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    port = free_port()
    script = (f"import socket\ns = socket.create_connection(('127.0.0.1', {port}))\n"
              "s.sendall(b'x' * 300000 + b'end'); s.shutdown(socket.SHUT_WR)\n"
              "data = b''\nwhile chunk := s.recv(65536):\n    data += chunk\n"
              "print(len(data), data[:3].decode())\n")
    child = forwarded(tmp_path, port, sys.executable, "-c", script)
    out, _ = child.communicate(timeout=60)
    thread.join(timeout=60)
    server.close()
    assert out.split() == ["300003", "dne"]
