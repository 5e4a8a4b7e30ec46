"""A world's network is its own: hostile seats against the host's loopback, abstract sockets and ports.

Every test asserts on the host side what reached it (a listener's count of accepted
connections, the commit a gate let through), not on what the seat says it saw.
"""

from __future__ import annotations

import json
import os
import random
import socket
import sys
import threading
from pathlib import Path

import pytest

from conftest import git, run_failres
from sandbox_projects import configure, one_file_repo, plan, seat
from failres.engine import ports
from failres.sandbox.probe import machine_sandbox

pytestmark = pytest.mark.skipif(not machine_sandbox().available, reason="no seat world on this machine")

OK_GATE = '[gates.ok]\ncommand = ["true"]\ncwd = "worktree"\n'


class Listener:
    """A host server that counts what it accepted and answers each connection with `reply`."""

    def __init__(self, family: int, address, reply: bytes = b"") -> None:
        self.server = socket.socket(family, socket.SOCK_STREAM)
        self.server.bind(address)
        self.server.listen(16)
        self.server.settimeout(0.2)
        self.reply, self.accepted, self._stop = reply, 0, threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self.server.getsockname()[1]

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            self.accepted += 1
            with conn:
                if self.reply:
                    conn.settimeout(5)
                    try:
                        conn.recv(65536)
                        conn.sendall(self.reply)
                    except OSError:
                        pass

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.server.close()


@pytest.fixture
def top(tmp_path: Path) -> Path:
    return one_file_repo(tmp_path / "proj")


@pytest.fixture
def loopback():
    listener = Listener(socket.AF_INET, ("127.0.0.1", 0), b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhost\n")
    yield listener
    listener.stop()


# A seat that tries every way it knows to the host's loopback port: directly, and through
# the proxy by address and by name; it reports nothing: the host's count is the verdict.
REACH_LOOPBACK = """import os, socket, sys
sys.stdin.read()
port = int(sys.argv[1])
for host in ("127.0.0.1", "localhost"):
    try:
        socket.create_connection((host, port), timeout=3).close()
    except OSError:
        pass
proxy = os.environ.get("HTTPS_PROXY", "http://127.0.0.1:3128").rsplit(":", 1)[1]
for target in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"127.0.0.2:{port}"):
    try:
        conn = socket.create_connection(("127.0.0.1", int(proxy)), timeout=3)
        conn.sendall(f"CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n".encode())
        conn.recv(4096)
        conn.close()
    except OSError:
        pass
open("src/a.py", "w").write("A = 2\\n")
"""


def test_a_seat_reaches_no_host_loopback_port_that_is_not_listed(top: Path, tmp_path: Path, cli, loopback):
    configure(top, gate=OK_GATE, implementer=[*seat(tmp_path, "reach", REACH_LOOPBACK), str(loopback.port)])
    result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/a.py"])), "--quiet")
    assert result.code == 0, result.out + result.err
    assert git(top, "show", "failres/rw/t1:src/a.py") == "A = 2\n"  # the seat ran, and tried
    assert loopback.accepted == 0


def test_a_seat_reaches_no_host_abstract_unix_socket(top: Path, tmp_path: Path, cli):
    name = f"\0failres-test-{os.getpid()}-{random.randrange(1 << 30)}"
    daemon = Listener(socket.AF_UNIX, name)
    try:
        poke = ("import socket, sys\nsys.stdin.read()\n"
                "s = socket.socket(socket.AF_UNIX)\n"
                f"try:\n    s.connect({name!r})\nexcept OSError:\n    pass\n"
                "open('src/a.py', 'w').write('A = 3\\n')\n")
        configure(top, gate=OK_GATE, implementer=seat(tmp_path, "abstract", poke))
        result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/a.py"])), "--quiet")
        assert result.code == 0, result.out + result.err
        assert git(top, "show", "failres/rw/t1:src/a.py") == "A = 3\n"
        assert daemon.accepted == 0
    finally:
        daemon.stop()


def test_a_listed_local_server_is_reached_at_the_same_address_inside(top: Path, tmp_path: Path, cli, loopback):
    fetch = ("import sys, urllib.request\nsys.stdin.read()\n"
             f"body = urllib.request.urlopen('http://127.0.0.1:{loopback.port}/', timeout=10).read()\n"
             "open('src/a.py', 'w').write('A = ' + repr(body.decode()) + '\\n')\n")
    configure(top, gate=OK_GATE, implementer=seat(tmp_path, "fetch", fetch),
              binding=f'network = ["127.0.0.1:{loopback.port}"]')
    result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/a.py"])), "--quiet")
    assert result.code == 0, result.out + result.err
    assert git(top, "show", "failres/rw/t1:src/a.py") == "A = 'host\\n'\n"
    assert loopback.accepted == 1


def test_the_proxy_connects_a_listed_name_and_refuses_one_that_is_not(top: Path, tmp_path: Path, cli, loopback):
    ask = ("import os, socket, sys\nsys.stdin.read()\n"
           "proxy = int(os.environ['HTTPS_PROXY'].rsplit(':', 1)[1])\n"
           "answers = []\n"
           f"for target in ('localhost:{loopback.port}', 'unlisted.invalid:443', 'localhost:{loopback.port + 1}'):\n"
           "    conn = socket.create_connection(('127.0.0.1', proxy), timeout=10)\n"
           "    conn.sendall(f'CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n'.encode())\n"
           "    answers.append(conn.recv(4096).split(b'\\r\\n')[0].decode())\n"
           "    conn.close()\n"
           "open('src/a.py', 'w').write(repr(answers) + '\\n')\n")
    configure(top, gate=OK_GATE, implementer=seat(tmp_path, "ask", ask),
              binding=f'network = ["localhost:{loopback.port}", "api.example.com"]')
    result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/a.py"])), "--quiet")
    assert result.code == 0, result.out + result.err
    assert git(top, "show", "failres/rw/t1:src/a.py") == repr(
        ["HTTP/1.1 200 Connection Established", "HTTP/1.1 403 Forbidden", "HTTP/1.1 403 Forbidden"]) + "\n"
    assert loopback.accepted == 1


# The gate trusts whatever answers on its FAILRES_PORT, as a gate that checks "the dev
# server is up" does. t1's seat takes both ports of the range and answers "GREEN"; t2's
# seat writes broken code once t1's squat stands (a file in a directory both may write).
# The gate trusts whatever answers on its FAILRES_PORT, as a gate that checks "the dev
# server is up" does. t1's seat takes both ports of the range and answers "GREEN"; t2's
# seat writes broken code once t1's squat stands (a file in a directory both may write).
HOSTILE = """import os, select, socket, sys, time
sys.stdin.read()
low, span, signal = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if os.environ["FAILRES_TASK"] == "t2":
    for _ in range(600):
        if os.path.exists(os.path.join(signal, "ready")):
            break
        time.sleep(0.05)
    open("src/b.py", "w").write("B = broken\\n")
    sys.exit(0)
servers = []
for port in range(low, low + span):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port)); s.listen(8); servers.append(s)
    except OSError:
        pass
open(os.path.join(signal, "ready"), "w").write(str(len(servers)))
ready, _, _ = select.select(servers, [], [], 6)
for s in ready:
    conn, _ = s.accept(); conn.sendall(b"GREEN"); conn.close()
open("src/a.py", "w").write("A = 'squatter'\\n")
"""
TRUSTING_GATE = """import os, socket, sys
try:
    conn = socket.create_connection(("127.0.0.1", int(os.environ["FAILRES_PORT"])), timeout=5)
    sys.exit(0 if conn.recv(16) == b"GREEN" else 1)
except OSError:
    sys.exit(1)
"""


def test_under_jobs_2_a_seat_holding_the_other_tasks_port_cannot_answer_its_gate(top: Path, tmp_path: Path, cli,
                                                                                monkeypatch: pytest.MonkeyPatch):
    low = random.randrange(40000, 60000, 2)
    monkeypatch.setattr(ports, "LOW", low)
    monkeypatch.setattr(ports, "SPAN", 2)
    signal = tmp_path / "signal"
    signal.mkdir()
    (tmp_path / "gate.py").write_text(TRUSTING_GATE)
    gate = "\n".join(["[gates.trusting]", f"command = {json.dumps([sys.executable, str(tmp_path / 'gate.py')])}",
                      'cwd = "worktree"', 'timeout = "60s"', "preflight = false", ""])
    configure(top, gate=gate, implementer=[*seat(tmp_path, "hostile", HOSTILE), str(low), "2", str(signal)],
              binding=f'write = ["{signal}"]')
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text('slug = "rw"\n'
                         '[[tasks]]\nid = "t1"\ntitle = "squat"\nprompt = "p"\nfiles = ["src/a.py"]\n'
                         '[[tasks]]\nid = "t2"\ntitle = "break"\nprompt = "p"\nfiles = ["src/b.py"]\n')
    result = cli(top, "run", str(plan_file), "--quiet", "--jobs", "2")
    assert (signal / "ready").read_text() == "2", result.out + result.err  # the squat stood, on both ports
    assert git(top, "rev-parse", "failres/rw/t2") == git(top, "rev-parse", "main")  # nothing committed


def test_a_binding_without_a_list_is_open_and_that_is_said_once_per_run(top: Path, tmp_path: Path):
    edit = "import os, sys\nsys.stdin.read()\nopen(os.environ['FAILRES_TASK'] + '.txt', 'w').write('x\\n')\n"
    configure(top, gate=OK_GATE, implementer=seat(tmp_path, "edit", edit))
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text('slug = "rw"\n' + "".join(
        f'[[tasks]]\nid = "{task}"\ntitle = "t"\nprompt = "p"\nfiles = ["{task}.txt"]\n' for task in ("t1", "t2")))
    done = run_failres(top, "run", str(plan_file), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if "may reach every host on the internet" in line]
    assert said == ["warning: [bindings.impl] has no network list and failres knows no API hosts for its program: "
                    "its seat world may reach every host on the internet; list them in [bindings.impl] network, "
                    'e.g. ["api.example.com"]'], done.stderr


def test_a_bad_network_value_is_one_line_and_exit_2(top: Path, tmp_path: Path, cli):
    configure(top, gate=OK_GATE, implementer=["true"], binding='network = "off"')
    config = top / ".failres.toml"
    config.write_text(config.read_text().replace('network = "off"', 'network = ["http://api.example.com/"]'))
    head = git(top, "rev-parse", "main")
    result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/a.py"])), "--quiet")
    assert result.code == 2
    assert result.err.splitlines()[0] == (f'error: {top / ".failres.toml"}: bindings.impl.network: '
                                          '"http://api.example.com/" is not a host name, "host:port" or "127.0.0.1:PORT"')
    assert git(top, "rev-parse", "main") == head and git(top, "branch", "--list", "failres/*") == ""


def test_a_gate_with_network_off_starts_no_forwarder_and_a_seat_does(top: Path, tmp_path: Path):
    from failres.config.loading import load_config
    from failres.sandbox.layout import NET_INSIDE
    from failres.sandbox.world import SeatWorld

    configure(top, gate=OK_GATE, implementer=["true"])
    world = SeatWorld.for_task(load_config(top), top=top, workspace=top, git_dir=top / ".git",
                               workspaces_root=tmp_path / "workspaces", dispatch_root=tmp_path / "t1.dispatch")
    try:
        gate = world.wrap(["true"], env={"PATH": os.environ["PATH"]}, role="gate")
        seat_argv = world.wrap(["true"], env={"PATH": os.environ["PATH"]}, network=["api.example.com"])
    finally:
        world.close()
    assert "--unshare-net" in gate and NET_INSIDE not in gate
    assert gate[gate.index("--", gate.index("--chdir")) + 1:] == ["true"]
    assert "--unshare-net" in seat_argv and NET_INSIDE in seat_argv
    tail = seat_argv[seat_argv.index("--", seat_argv.index("--chdir")) + 1:]
    assert tail[2:4] == ["-I", f"{NET_INSIDE}/forwarder.py"] and tail[-2:] == ["--", "true"]
