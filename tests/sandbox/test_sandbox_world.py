"""What a process sees inside the seat world: its network setting, private /tmp, read-only
environment dirs, and a program installed under /tmp still runs."""

from __future__ import annotations

import json
import shutil
import socket
import sys
import threading
from pathlib import Path

import pytest

from conftest import git
from sandbox_projects import configure, one_file_repo, plan, seat
from failres.sandbox.probe import machine_sandbox

pytestmark = pytest.mark.skipif(not machine_sandbox().available, reason="no seat world on this machine")

IDLE = "import sys\nsys.stdin.read()\n"


@pytest.fixture
def top(tmp_path: Path) -> Path:
    return one_file_repo(tmp_path / "proj")


@pytest.fixture
def listener():
    """A TCP port on the loopback that accepts: reachable only where the world has the network."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def gate_connecting_to(port: int, network: str = "") -> str:
    command = [sys.executable, "-c", f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"]
    lines = ["[gates.net]", f"command = {json.dumps(command)}", 'cwd = "worktree"', 'timeout = "60s"']
    if network:
        lines.append(f"network = {network}")
    return "\n".join(lines) + "\n"


def test_a_gate_reaches_nothing_by_default(top: Path, tmp_path: Path, cli, listener: int):
    configure(top, gate=gate_connecting_to(listener), implementer=seat(tmp_path, "idle", IDLE))
    result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/a.py"])), "--quiet")
    assert result.code == 1 and "quarantined" in result.out


def test_a_gate_that_lists_a_local_server_reaches_it(top: Path, tmp_path: Path, cli, listener: int):
    configure(top, gate=gate_connecting_to(listener, f'["127.0.0.1:{listener}"]'),
              implementer=seat(tmp_path, "idle", IDLE))
    result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/a.py"])), "--quiet")
    assert result.code == 0, result.out + result.err


def test_sandbox_network_off_holds_for_every_seat(top: Path, tmp_path: Path, cli, listener: int):
    reach = ("import socket, sys\nsys.stdin.read()\n"
             f"socket.create_connection(('127.0.0.1', {listener}), timeout=5)\n")
    configure(top, gate="[gates.ok]\ncommand = [\"true\"]\ncwd = \"worktree\"\n",
              implementer=seat(tmp_path, "reach", reach),
              extra=f'[sandbox]\nnetwork = "off"\n[bindings.impl.env]\nLOCAL = "http://127.0.0.1:{listener}"\n')
    result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/a.py"])), "--quiet")
    assert result.code == 1 and "seat-crashed" in result.out


def test_tmp_is_private_and_a_program_under_tmp_still_runs(top: Path, tmp_path: Path, cli):
    outside = Path("/tmp") / f"failres-world-test-{top.parent.name}"
    (outside / "tool").mkdir(parents=True, exist_ok=True)
    try:
        (outside / "secret").write_text("host tmp\n")
        tool = outside / "tool" / "tool.sh"  # its own directory is visible, nothing else of /tmp
        tool.write_text("#!/bin/sh\ncat >/dev/null\n"
                        f"if [ -e {outside}/secret ]; then echo 'saw host tmp' > src/a.py; fi\n"
                        "echo private > /tmp/left-by-seat\n")
        tool.chmod(0o755)
        configure(top, gate="[gates.ok]\ncommand = [\"true\"]\ncwd = \"worktree\"\n", implementer=[str(tool)])
        result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/a.py"])), "--quiet")
        assert result.code == 0, result.out + result.err
        assert git(top, "show", "failres/rw/t1:src/a.py") == "A = 1\n"
        assert not Path("/tmp/left-by-seat").exists()
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def test_the_persons_environment_dir_is_read_only_inside(top: Path, tmp_path: Path, cli):
    (top / ".venv").mkdir()
    (top / ".venv" / "marker").write_text("the person's\n")
    poke = ("import pathlib, sys\nsys.stdin.read()\n"
            "seen = pathlib.Path('.venv/marker').read_text()\n"
            "try:\n    pathlib.Path('.venv/marker').write_text('the seat\\'s')\nexcept OSError:\n    pass\n"
            "pathlib.Path('src/a.py').write_text('SEEN = ' + repr(seen) + '\\n')\n")
    configure(top, gate="[gates.ok]\ncommand = [\"true\"]\ncwd = \"worktree\"\n", implementer=seat(tmp_path, "poke", poke))
    result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/a.py"])), "--quiet")
    assert result.code == 0, result.out + result.err
    assert git(top, "show", "failres/rw/t1:src/a.py") == "SEEN = \"the person's\\n\"\n"
    assert (top / ".venv" / "marker").read_text() == "the person's\n"
