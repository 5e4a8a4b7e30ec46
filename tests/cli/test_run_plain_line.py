"""`run PLAN [--task T]... [--quiet] [--json]` started without typer answers what typer answers.

Every task of a plan is a process; the plain line skips building the command line. What it
runs, prints, exits with and refuses must stay what the typer command's would be.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import git
from project import FIXED, Project

# The same line through typer's parser, and a plain line that says whether typer was imported.
TYPED = ("import sys, runpy; sys.argv = ['failres', *sys.argv[1:]]; import failres.cli.read_cmds as r; "
         "r.read_fast = lambda args: None; runpy.run_module('failres', run_name='__main__')")
PROBE = ("import sys, runpy; sys.argv = ['failres', *sys.argv[1:]]\n"
         "try:\n    runpy.run_module('failres', run_name='__main__')\n"
         "except SystemExit as done:\n    print('typer' in sys.modules, done.code, file=sys.stderr)\n    raise")


def started(code: str, cwd: Path, *line: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *line], cwd=cwd, capture_output=True, text=True, timeout=300)


def two_task_project(root: Path) -> tuple[Project, Path]:
    root.mkdir()
    project = Project.create(root)
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    plan = root / "plan.toml"
    plan.write_text('slug = "rr"\n' + "".join(
        f'[[tasks]]\nid = "{t}"\nprompt = "Fix add."\nfiles = ["src/calc.py"]\n' for t in ("t1", "t2")))
    return project, plan


def refs(top: Path) -> str:
    return git(top, "for-each-ref", "--format=%(refname) %(objectname)")


def test_a_plain_run_line_runs_only_its_task_without_typer_as_the_typed_line_does(tmp_path: Path) -> None:
    plain, plain_plan = two_task_project(tmp_path / "plain")
    typed, typed_plan = two_task_project(tmp_path / "typed")
    ran = started(PROBE, plain.top, "run", str(plain_plan), "--task=t1", "--quiet")
    *err, probe = ran.stderr.splitlines()
    assert probe == "False 0", ran.stderr
    other = started(TYPED, typed.top, "run", str(typed_plan), "--task=t1", "--quiet")
    assert (ran.returncode, ran.stdout, "\n".join(err).replace(str(tmp_path / "plain"), "ROOT")) == (
        other.returncode, other.stdout, other.stderr.rstrip("\n").replace(str(tmp_path / "typed"), "ROOT"))
    assert ran.stdout == "rr/t1: committed\n"
    for project in (plain, typed):
        assert project.branch_file("src/calc.py") == FIXED
        assert "failres/rr/t2" not in git(project.top, "branch", "--list")


# Each refused before anything runs: typer's usage errors and failres's own (an unknown task, no plan file).
LINES = (("run",), ("run", "missing.toml"), ("run", "PLAN", "--task"), ("run", "PLAN", "--task", "nope", "--quiet"),
         ("run", "PLAN", "extra"), ("run", "PLAN", "--bogus"))


def test_a_run_line_that_cannot_run_is_refused_as_typer_refuses_it_with_nothing_written(tmp_path: Path) -> None:
    project, plan = two_task_project(tmp_path / "p")
    before = refs(project.top)
    for line in LINES:
        line = tuple(str(plan) if word == "PLAN" else word for word in line)
        plain = started(PROBE, project.top, *line)
        typed = started(TYPED, project.top, *line)
        *err, _ = plain.stderr.splitlines()
        assert plain.returncode == typed.returncode == 2, (line, plain.stderr, typed.stderr)
        assert (plain.stdout, "\n".join(err)) == (typed.stdout, typed.stderr.rstrip("\n")), line
    assert refs(project.top) == before
