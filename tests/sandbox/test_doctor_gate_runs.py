"""`doctor` judges a configured gate as `init` judges the gate it guesses, and names as its fix the
lines `init` writes in its place: applied, doctor says the gate runs and the dry-run preflight judges."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import git, run_failres
from sandbox_projects import python_project, the_test_site_packages


def bare_path(tmp_path: Path) -> str:
    """PATH with git, and a python3 that has no pytest (a fresh venv's), ahead of everything else."""
    bare = tmp_path / "bare-python"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    return os.pathsep.join([str(bare / "bin"), "/usr/bin", "/bin"])


def doctor(top: Path, path: str, *args: str):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAILRES_")}
    return run_failres(top, "doctor", *args, env={**env, "PATH": path})


def configure(top: Path, gates: str) -> None:
    (top / ".failres.toml").write_text(
        f'{gates}\n[bindings.impl]\ncommand = ["true"]\n[seats]\nimplementer = "impl"\n'
        f'[sandbox]\nread = {json.dumps([the_test_site_packages()])}\n')


def test_a_gate_init_would_not_write_is_a_no_with_inits_lines_as_the_fix_and_those_lines_run(tmp_path: Path):
    top = tmp_path / "project"
    top.mkdir()
    python_project(top)
    (top / "tox.ini").write_text("[tox]\nenvlist = py311\n")
    git(top, "add", "tox.ini")
    git(top, "commit", "-q", "-m", "tox")
    path = bare_path(tmp_path)
    configure(top, '[gates.tests]\ncommand = ["tox", "-q"]\n[gates.unit]\ncommand = ["python3", "-m", "pytest", "-q"]\n')
    proc = doctor(top, path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    gates = {gate["gate"]: gate for gate in json.loads(doctor(top, path, "--json").stdout)["gates"]}
    assert gates["unit"]["runs"] is False and gates["unit"]["problem"] == "python3 has no module 'pytest'"
    assert gates["tests"]["runs"] is False and gates["tests"]["problem"] is None  # not found: its own words
    lines = ('command = [".venv/bin/python", "-m", "pytest", "-q"], env = { PYTHONPATH = "src" } '
             "(pytest is installed in .venv)")
    assert gates["unit"]["instead"] == f"[gates.unit] {lines}"
    assert f"or what init writes here: [gates.tests] {lines}" in proc.stdout
    assert f"no  {'gate unit':<18} cannot run: python3 has no module 'pytest'" in proc.stdout.splitlines()

    # The fix as written, applied: doctor says both gates run, and the preflight judges the head's bug.
    applied = lines.split(" (")[0].replace("], env = ", "]\nenv = ")
    configure(top, f"[gates.tests]\n{applied}\n[gates.unit]\n{applied}\n")
    again = doctor(top, path)
    assert again.returncode == 0, again.stdout
    assert [line[:3] for line in again.stdout.splitlines() if " gate " in f" {line[4:]}"] == ["ok ", "ok "]
    (top / "plan.toml").write_text('slug = "s"\n[[tasks]]\nid = "t1"\nprompt = "p"\nfiles = ["src/calc/*.py"]\n')
    dry = run_failres(top, "run", "plan.toml", "--dry-run", "--preflight", "--json", env={**os.environ, "PATH": path})
    assert [(p["task"], p["verdict"]) for p in json.loads(dry.stdout)["preflight"]] == [("t1", "red")], dry.stdout


def test_a_configuration_without_an_implementer_seat_or_a_gate_is_a_no(repo: Path):
    (repo / ".failres.toml").write_text('[integration]\nbranch = "main"\n')
    proc = doctor(repo, os.environ["PATH"])
    assert proc.returncode == 1, proc.stdout
    checks = {check["name"]: check for check in json.loads(doctor(repo, os.environ["PATH"], "--json").stdout)["checks"]}
    assert checks["seats"]["ok"] is False and "init --force --agent claude|codex|aider" in checks["seats"]["fix"]
    assert checks["gates"]["ok"] is False and checks["gates"]["detail"] == ("no gate is configured: nothing would "
                                                                          "judge the tasks")
