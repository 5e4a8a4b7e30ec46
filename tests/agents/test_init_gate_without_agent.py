"""Plain `init`, with no agent named yet, writes the gate `init --agent` writes: guessed from the
project, checked to run here, said in the same one line, and judged by the dry-run preflight it offers."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tomllib
from pathlib import Path

from conftest import git, run_failres
from sandbox_projects import python_project, the_test_site_packages

BARE_PATH = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])  # no tox here


def tox_project(top: Path) -> None:
    """A src layout with `.venv/` and an editable install, whose tox.ini declares tox (not installed)."""
    top.mkdir()
    python_project(top)
    (top / "tox.ini").write_text("[tox]\nenvlist = py311\n[testenv]\ncommands = pytest\n")
    git(top, "add", "tox.ini")
    git(top, "commit", "-q", "-m", "tox")


def test_plain_init_writes_and_checks_the_gate_init_agent_writes_and_the_preflight_it_offers_judges(tmp_path: Path):
    top = tmp_path / "project"
    tox_project(top)
    env = {**os.environ, "PATH": BARE_PATH}
    plain = run_failres(top, "init", "--no-hooks", env=env)
    assert plain.returncode == 0, plain.stderr
    text = (top / ".failres.toml").read_text()
    written = tomllib.loads(text)
    assert "seats" not in written and "bindings" not in written  # the agent is still the person's to name
    assert written["gates"]["tests"]["command"] == [".venv/bin/python", "-m", "pytest", "-q"]
    note = ('note: the gate guessed (tox -q: the project declares tox) cannot run here: "tox" is not on PATH; wrote '
            ".venv/bin/python -m pytest -q instead (pytest is installed in .venv)")
    assert plain.stderr.splitlines()[0] == note
    steps = plain.stdout.splitlines()
    assert steps[-1].endswith(": git failres run plan.toml --dry-run --preflight")
    assert "[bindings.NAME]" in steps[-4] and "[gates.tests]" in steps[-4]

    with (top / ".failres.toml").open("a") as config:
        config.write(f'\n[sandbox]\nread = {json.dumps([the_test_site_packages()])}\n')
    (top / "plan.toml").write_text('slug = "s"\n[[tasks]]\nid = "t1"\nprompt = "p"\nfiles = ["src/calc/*.py"]\n')
    dry = run_failres(top, "run", "plan.toml", "--dry-run", "--preflight", "--json", env=env)
    doc = json.loads(dry.stdout)
    # red, not unavailable: the gate written runs and judges the head's bug; no seat is what is left.
    assert [(p["task"], p["verdict"]) for p in doc["preflight"]] == [("t1", "red")], doc
    assert "no implementer seat is configured" in dry.stdout + dry.stderr

    with_agent = run_failres(top, "init", "--no-hooks", "--force", "--agent", "script", env=env)
    assert with_agent.returncode == 0, with_agent.stderr
    # One path for both: the same gate, the same line about the tox that is not here.
    assert tomllib.loads((top / ".failres.toml").read_text())["gates"] == written["gates"]
    assert with_agent.stderr.splitlines()[0] == note


def test_plain_init_json_says_the_gate_note_as_init_agent_does(tmp_path: Path):
    top = tmp_path / "project"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / "tox.ini").write_text("[tox]\nenvlist = py311\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "tox only")
    only_git = tmp_path / "bin"
    only_git.mkdir()
    (only_git / "git").symlink_to(shutil.which("git"))  # no python3, no tox: nothing here runs the tests
    proc = run_failres(top, "init", "--no-hooks", "--json", env={**os.environ, "PATH": str(only_git)})
    doc = json.loads(proc.stdout)
    assert doc["gatePlaceholder"] is True and doc["gateNote"].startswith('the gate guessed (tox -q')
    assert "# PLACEHOLDER: the gate guessed" in (top / ".failres.toml").read_text()
