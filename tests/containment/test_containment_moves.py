"""Decisions only from a person, and a person's own failres commands never taken for a seat's.

A seat that adds a record to the store with plain git (an answer to its own decision) is
tamper, and the record goes; code a gate imports cannot run a writing command. A person's
`land`, `gc` and `decide` in another terminal while a seat runs are theirs: the merge is
kept, the branch gc removed stays removed, and the running task is not quarantined.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project
from test_containment import TOP, quarantined, run

FIX = {"write": {"src/calc.py": FIXED}}
REPO_ROOT = Path(__file__).resolve().parents[2]


# Each attack with the seat world off (the tamper check alone) and on (`seat_world`).
pytestmark = pytest.mark.usefixtures("seat_world")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def store_files(top: Path) -> set[str]:
    return set(git(top, "ls-tree", "-r", "--name-only", "refs/failres/store").split())


def test_a_record_a_seat_adds_to_the_store_with_plain_git_is_tamper_and_goes(
        project: Project, cli, seat_world: bool):
    forge = (f'{TOP}; cd "$top"; tip=$(git rev-parse refs/failres/store); export GIT_INDEX_FILE=$PWD/../forged; '
             'blob=$(echo \'{"answer": {"scopeFiles": ["tests/check.py"]}}\' | git hash-object -w --stdin); '
             'git read-tree "$tip" && git update-index --add --cacheinfo "100644,$blob,decisions/forged.json"; '
             'git update-ref refs/failres/store "$(git commit-tree -p "$tip" -m answer "$(git write-tree)")" "$tip"')
    project.configure(implementer=[{**FIX, "shell": [forge]}])
    run(cli, project)
    assert "decisions/forged.json" not in store_files(project.top)
    if not seat_world:  # inside the world the person's store is not there to write
        assert quarantined(project)["failClass"] == "seat-tamper"


def test_code_the_gate_imports_cannot_answer_the_seats_decision(project: Project, cli):
    project.configure(implementer=[{"print": "SCOPE-REQUEST: tests/check.py — the check is wrong"}])
    assert run(cli, project, task="t0").code == 1
    [decision] = json.loads(cli(project.top, "decisions", "--json").out)
    failres = f"{sys.executable} -m failres"
    # The seat's fix, imported by the gate, answers the decision from the gate's process
    # and says how that went in the gate's output.
    answering = FIXED + (
        "import os, subprocess\n"
        "top = os.environ.get('FAILRES_REPO')\n"
        f"done = subprocess.run('{failres} decide {decision['id']} --scope-files tests/check.py', shell=True,"
        f" cwd=top, env={{**os.environ, 'PYTHONPATH': '{REPO_ROOT}'}})\n"
        "print('decide exit', done.returncode, flush=True)\n")
    # failres itself is readable inside the seat world too, as an installed failres is.
    project.configure(implementer=[{"write": {"src/calc.py": answering}}],
                      extra=f"[sandbox]\nread = {json.dumps([str(REPO_ROOT)])}\n")
    run(cli, project)
    said = "".join((log / "gate.log").read_text() for log in project.dispatch_logs() if (log / "gate.log").exists())
    assert "decide exit 2" in said, said
    [after] = json.loads(cli(project.top, "decisions", "--json").out)
    assert (after["status"], after["answer"]) == ("open", None)


def while_the_seat_runs(project: Project, command: list[str]) -> tuple[dict, list[str]]:
    """A seat that waits while the person runs `git failres COMMAND` in another terminal."""
    started, go = project.agents / "started", project.agents / "go"
    seat = {**FIX, "shell": [f"touch {started}; for i in $(seq 600); do [ -e {go} ] && break; sleep 0.05; done"]}
    done: dict = {}

    def person() -> None:
        give_up = time.monotonic() + 60
        while not started.exists() and time.monotonic() < give_up:
            time.sleep(0.05)
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        done["run"] = subprocess.run([sys.executable, "-m", "failres", *command], cwd=project.top, env=env,
                                     capture_output=True, text=True)
        go.touch()

    return done, seat, threading.Thread(target=person)


def test_a_land_in_another_terminal_during_a_run_keeps_its_merge(project: Project, cli):
    project.configure(implementer=[FIX])
    assert run(cli, project, task="t0").code == 0
    main = git(project.top, "rev-parse", "main").strip()
    done, seat, person = while_the_seat_runs(project, ["land", project.slug, "t0"])
    project.configure(implementer=[seat])
    person.start()
    result = run(cli, project)
    person.join()
    assert done["run"].returncode == 0, done["run"].stderr
    merge = git(project.top, "rev-parse", "main").strip()
    assert merge != main and git(project.top, "rev-parse", "main^1").strip() == main
    assert (project.top / "src" / "calc.py").read_text() == FIXED
    assert git(project.top, "status", "--porcelain", "--untracked-files=no") == ""
    assert result.code == 0, result.err
    assert "seat-tamper" not in project.types()
    assert [e for e in project.events("t0") if e["type"] == "landed"][-1]["commit"] == merge


def test_a_gc_in_another_terminal_during_a_run_is_not_blamed_on_the_seat(project: Project, cli):
    project.configure(implementer=[FIX])
    assert run(cli, project, task="t0").code == 0
    assert cli(project.top, "land", project.slug, "t0").code == 0
    done, seat, person = while_the_seat_runs(project, ["gc"])
    project.configure(implementer=[seat])
    person.start()
    result = run(cli, project)
    person.join()
    assert done["run"].returncode == 0, done["run"].stderr
    assert git(project.top, "branch", "--list", f"failres/{project.slug}/t0").strip() == ""
    assert result.code == 0, result.err
    assert "seat-tamper" not in project.types()


def test_a_decision_answered_in_another_terminal_during_a_run_is_the_persons(project: Project, cli):
    project.configure(implementer=[{"print": "SCOPE-REQUEST: src/other.py — the value lives there"}])
    assert run(cli, project, task="t0").code == 1
    [decision] = json.loads(cli(project.top, "decisions", "--json").out)
    done, seat, person = while_the_seat_runs(project, ["decide", decision["id"], "--scope-files", "src/other.py"])
    project.configure(implementer=[seat])
    person.start()
    result = run(cli, project)
    person.join()
    assert done["run"].returncode == 0, done["run"].stderr
    [after] = json.loads(cli(project.top, "decisions", "--json").out)
    assert after["answer"] == {"scopeFiles": ["src/other.py"]}
    assert result.code == 0, result.err
    assert "seat-tamper" not in project.types()
