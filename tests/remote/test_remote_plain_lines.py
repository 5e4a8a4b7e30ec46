"""`sync` and `status --remote` started without typer, at one connection to the remote each.

A person runs them many times a day: the plain lines skip building the command line, and
a look at the remote is one `git fetch`. What they answer, refuse and write stays what
the typer command answers, refuses and writes.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import git, run_failres
from failres.journal import event_put, make_event
from failres.remote.transport import RemoteClaims
from failres.remote.claims import new_claim
from lessons.storage.records import change_of
from lessons.storage.store import Store
from test_sync import make_clone, make_remote, write_lessons

# The same line through typer's parser, for comparison with the plain start.
TYPED = ("import sys, runpy; sys.argv = ['failres', *sys.argv[1:]]; import failres.cli.read_cmds as r; "
         "r.read_fast = lambda args: None; runpy.run_module('failres', run_name='__main__')")
# Whether typer was imported by a line that ran.
PROBE = ("import sys, runpy; sys.argv = ['failres', *sys.argv[1:]]\n"
         "try:\n    runpy.run_module('failres', run_name='__main__')\n"
         "except SystemExit as done:\n    print('typer' in sys.modules, done.code, file=sys.stderr)")


# Which of the modules a plain look at the remote has no use for a line that ran loaded.
UNNEEDED = ("typer", "rich", "pydantic", "_strptime", "hashlib", "pygit2")
LOADED = ("import sys, runpy; sys.argv = ['failres', *sys.argv[1:]]\n"
          "try:\n    runpy.run_module('failres', run_name='__main__')\n"
          f"finally:\n    print(sorted(set({UNNEEDED!r}) & set(sys.modules)), file=sys.stderr)")


def typed(cwd: Path, *line: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", TYPED, *line], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env)


def probed(cwd: Path, *line: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROBE, *line], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def synced(tmp_path: Path) -> tuple[Path, Path]:
    """(bare remote, a clone) whose stores are the same: a sync there changes nothing."""
    bare = make_remote(tmp_path)
    clone = make_clone(tmp_path, bare, "a")
    write_lessons(clone, 3)
    Store(clone).commit(change_of([event_put(make_event("task-started", "rr", "t1", intHead="a" * 40))]),
                        "failres: e")
    assert run_failres(clone, "sync").returncode == 0
    return bare, clone


def counting_connections(clone: Path, tmp_path: Path) -> Path:
    """Make every connection of `clone` to origin leave a line in the returned file."""
    log = tmp_path / "connections.log"
    for program in ("upload-pack", "receive-pack"):
        wrapper = tmp_path / f"counting-{program}"
        wrapper.write_text(f'#!/bin/sh\necho {program} >> "{log}"\nexec git-{program} "$@"\n')
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
        git(clone, "config", f"remote.origin.{program.replace('-', '')}", str(wrapper))
    return log


def rev(cwd: Path, name: str) -> str:
    return git(cwd, "rev-parse", name).strip()


def connections(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


SYNC_LINES = (("sync",), ("sync", "origin"), ("sync", "--json"), ("sync", "origin", "--json"),
              ("sync", "--json", "origin"), ("sync", "nowhere"), ("sync", "origin", "extra"), ("sync", "--bogus"),
              ("sync", "--json", "--json"), ("sync", "--", "origin"), ("sync", "-"))


@pytest.mark.parametrize("line", SYNC_LINES, ids=" ".join)
def test_a_plain_sync_line_answers_what_typer_answers(synced: tuple[Path, Path], line: tuple[str, ...]) -> None:
    _, clone = synced
    plain = run_failres(clone, *line)
    through_typer = typed(clone, *line)
    assert (plain.returncode, plain.stdout, plain.stderr) == (through_typer.returncode, through_typer.stdout,
                                                              through_typer.stderr)


def test_a_plain_sync_pushes_what_the_remote_lacks_without_importing_typer(synced: tuple[Path, Path]) -> None:
    bare, clone = synced
    write_lessons(clone, 2, start=10)
    tip = rev(clone, "refs/failres/store")
    done = probed(clone, "sync", "--json")
    assert done.stderr.splitlines()[-1] == "False 0", done.stderr
    assert json.loads(done.stdout)["pushed"] is True
    assert rev(bare, "refs/failres/store") == tip
    git(bare, "fsck", "--strict")


def test_a_seat_cannot_sync_through_the_plain_line(synced: tuple[Path, Path]) -> None:
    """A process started for a dispatch (its marker in the environment it was started with) is
    refused the plain line as typer's path refuses it: exit 2, and the remote's store unmoved."""
    bare, clone = synced
    write_lessons(clone, 1, start=20)
    before = rev(bare, "refs/failres/store")
    env = {**os.environ, "FAILRES_DISPATCH": "1"}
    done = run_failres(clone, "sync", "origin", env=env)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == "error: 'git failres sync' cannot be run by a seat: it changes what only " \
                                          "a person or the run decides"
    assert (done.returncode, done.stderr) == (typed(clone, "sync", "origin", env=env).returncode,
                                              typed(clone, "sync", "origin", env=env).stderr)
    assert rev(bare, "refs/failres/store") == before


def test_a_sync_that_finds_nothing_new_connects_once_and_pushes_nothing(synced: tuple[Path, Path],
                                                                        tmp_path: Path) -> None:
    _, clone = synced
    log = counting_connections(clone, tmp_path)
    done = run_failres(clone, "sync")
    assert done.returncode == 0, done.stderr
    assert connections(log) == ["upload-pack"]


def _claim(clone: Path, task: str, state: str = "held", commit: str = "") -> None:
    claims = RemoteClaims(clone, "origin", "rr")
    claim = new_claim("rr", task, host="elsewhere", pid=4242, run="r1", now=datetime.now(UTC), lease=600)
    if state != "held":
        claim = claim.finished_as(state, commit=commit)
    assert claims.swap(claims.write(claim, ""), "").accepted


def test_status_remote_reads_claims_store_and_branches_in_one_connection(synced: tuple[Path, Path],
                                                                         tmp_path: Path) -> None:
    bare, clone = synced
    other = make_clone(tmp_path, bare, "b")
    _claim(other, "t1")
    head = rev(other, "HEAD")
    _claim(other, "t2", "committed", commit=head)  # its task branch is there: trusted
    git(other, "push", "-q", "origin", f"{head}:refs/heads/failres/rr/t2")
    _claim(other, "t3", "committed", commit=head)  # no branch: not trusted
    log = counting_connections(clone, tmp_path)
    done = run_failres(clone, "status", "rr", "--remote", "origin", "--json")
    assert done.returncode == 0, done.stderr
    assert connections(log) == ["upload-pack"]
    rows = {row["task"]: row for row in json.loads(done.stdout)}
    assert (rows["t1"]["state"], rows["t1"]["holder"]["pid"]) == ("running", 4242)
    assert (rows["t2"]["state"], rows["t2"]["claimProblem"]) == ("committed", None)
    assert rows["t3"]["claimProblem"] and rows["t3"]["state"] != "committed"
    # A claim gone from the remote is gone from the next look.
    git(bare, "update-ref", "-d", "refs/failres/claims/rr/t1")
    again = {row["task"]: row for row in json.loads(run_failres(clone, "status", "rr", "--remote", "origin",
                                                                "--json").stdout)}
    assert again["t1"]["claim"] is None
    # Nothing of the look is a store this clone had: a write afterwards is not refused.
    assert run_failres(clone, "sync").returncode == 0


def test_status_remote_of_a_remote_with_no_store_and_no_claims_knows_no_task(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    clone = make_clone(tmp_path, bare, "a")
    done = run_failres(clone, "status", "--remote", "origin", "--json")
    assert (done.returncode, json.loads(done.stdout)) == (0, [])
    text = run_failres(clone, "status", "--remote", "origin")
    assert (text.returncode, text.stdout) == (0, "origin knows no task\n")


STATUS_LINES = (("status", "--remote", "origin"), ("status", "--remote=origin", "--json"),
                ("status", "rr", "--remote", "origin", "--json"), ("status", "--remote", "nowhere"),
                ("status", "--remote", "-x"), ("status", "--remote"))


@pytest.mark.parametrize("line", STATUS_LINES, ids=" ".join)
def test_a_plain_status_remote_line_answers_what_typer_answers(synced: tuple[Path, Path],
                                                               line: tuple[str, ...]) -> None:
    _, clone = synced
    plain = run_failres(clone, *line)
    through_typer = typed(clone, *line)
    assert (plain.returncode, plain.stdout, plain.stderr) == (through_typer.returncode, through_typer.stdout,
                                                              through_typer.stderr)


@pytest.mark.parametrize("line", [("status", "--remote", "origin", "--json"), ("sync", "origin", "--json")], ids=" ".join)
def test_a_plain_look_at_the_remote_loads_no_module_it_has_no_use_for(synced: tuple[Path, Path],
                                                                       line: tuple[str, ...]) -> None:
    """typer, rich and pydantic serve a person's help and tables, strptime's locale machinery and
    hashlib a fold: a runner's look at the remote after every task pays none of their imports.
    A look, and a sync that finds the remote at this store's own tip, read what they fetched
    through git, so they load no libgit2 either, whose import alone cost more than the rest."""
    _, clone = synced
    _claim(clone, "t1")
    _claim(clone, "t2", "committed", commit="c" * 40)
    done = subprocess.run([sys.executable, "-c", LOADED, *line], cwd=clone, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "[]", done.stderr
    found = json.loads(done.stdout)
    if line[0] == "status":
        assert {(task["task"], task["claim"]) for task in found} >= {("t1", "held"), ("t2", "committed")}
