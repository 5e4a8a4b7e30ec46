"""Whatever bytes a seat prints and whatever file names it writes, the run ends cleanly.

Property-based: hypothesis writes the seat's output and the names of the files it
creates (any bytes but "/" and NUL, undecodable ones and terminal escapes included).
Every run must end with exit 0 or 1 (never 3, never a traceback), the task must not be
left `running`, every journal record must read back as JSON, and nothing the seat
named outside the task's scope may reach the task's branch.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import git
from lessons.storage.store import Store
from project import FIXED, Project
from failres.journal import read_journal

SEAT = r'''
import os, sys
sys.stdin.buffer.read()
spec = sys.argv[1]
with open(os.path.join(spec, "output"), "rb") as handle:
    sys.stdout.buffer.write(handle.read())
with open(os.path.join(spec, "names"), "rb") as handle:
    names = [n for n in handle.read().split(b"\0") if n]
for name in names:
    where = os.path.join(b"src", name) if name.startswith(b"in:") else name[4:] if name.startswith(b"out:") else name
    with open(where, "wb") as handle:
        handle.write(b"x\n")
with open("src/calc.py", "w") as handle:
    handle.write(%r)
''' % FIXED

name_bytes = st.binary(min_size=1, max_size=24).filter(
    lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..", b".git", b"src", b"tests", b"docs"))
names = st.lists(st.tuples(st.sampled_from([b"in:", b"out:"]), name_bytes).map(lambda t: t[0] + t[1]),
                 max_size=3, unique=True)
output = st.one_of(st.binary(max_size=2048),
                   st.text(max_size=400).map(lambda t: t.encode("utf-8", "surrogatepass")),
                   st.sampled_from([b"\x1b]0;owned\x07\x1b[31mred\x1b[0m", b"SCOPE-REQUEST: \xff\xfe \x1b[2J",
                                    b"{" * 5000, b"\r" * 100 + b"\x00" * 100]))


def test_any_bytes_and_any_file_names_from_a_seat_end_the_run_cleanly(tmp_path_factory, cli, seat_world):
    # Forty runs in all, half with the seat world off and half with it on.
    @settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                     HealthCheck.too_slow])
    @given(out=output, made=names)
    def run_once(out: bytes, made: list[bytes]) -> None:
        root = tmp_path_factory.mktemp("seat-bytes")
        project = Project.create(root)
        spec = root / "spec"
        spec.mkdir()
        (spec / "output").write_bytes(out)
        (spec / "names").write_bytes(b"\0".join(made))
        seat = root / "seat.py"
        seat.write_text(SEAT)
        project.configure(implementer=[{}])
        config = project.top / ".failres.toml"
        text = config.read_text()
        old = text.split("[bindings.impl]\ncommand = ", 1)[1].split("\n", 1)[0]
        config.write_text(text.replace(old, json.dumps([sys.executable, str(seat), str(spec)])))
        result = cli(project.top, "run", str(project.plan()), "--quiet")
        assert result.code in (0, 1), result.err
        assert "Traceback" not in result.err and "unexpected error" not in result.err
        journal = read_journal(Store(project.top), project.slug)
        assert journal.problems == ()
        states = json.loads(cli(project.top, "status", "--json").out)
        assert [s["state"] for s in states] in (["committed"], ["quarantined"])
        if states[0]["state"] == "committed":
            tree = git(project.top, "ls-tree", "-r", "-z", "--name-only", "failres/rr/t1").split("\0")
            outside = {os.fsdecode(n[4:]) for n in made if n.startswith(b"out:")}
            assert not outside & set(tree)  # nothing out of scope was committed
        assert not list(Path(project.workspace()).glob("*")) or states[0]["state"] == "quarantined"

    run_once()
